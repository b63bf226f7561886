"""compose-views: a numerical s-op that a step MLP writes is read categorically from that MLP's
input, a sub-layer sooner.

A categorical view of y = f(x), y written by a step MLP of x, is itself a step MLP: of y
plainly, one sub-layer after y's. Composed, the view's steps read x directly (classify o f),
in the same sub-layer as y.

Needs: nothing from earlier passes; runs as the `ViewSite` rewrite of the lowering.
Guarantees: the view holds the same one-hot at every position, exact as any step MLP.
"""

from __future__ import annotations

from ...element_fn import composed
from ..lowering.rewrites import ViewSite
from ..lowering.state import LoweringState
from ..ops import NumericMLP


def through_steps(state: LoweringState, site: ViewSite) -> NumericMLP | None:
    """The view's steps reading x, classify o f, when a step MLP writes its number = f(x); None
    otherwise."""
    steps = state.writer.get(site.number)
    if not isinstance(steps, NumericMLP):
        return None
    return NumericMLP(site.view, steps.input, composed(site.classify, steps.fn))
