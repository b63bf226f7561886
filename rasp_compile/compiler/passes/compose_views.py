"""compose-views: a numerical s-op that a step MLP writes is read categorically from that MLP's
input, a sub-layer sooner.

A categorical view of y = f(x), y written by a step MLP of x, is itself a step MLP: of y
plainly, one sub-layer after y's. Composed, the view's steps read x directly (classify o f),
in the same sub-layer as y.

Needs: nothing from earlier passes; runs as the `view_source` rewrite of the lowering.
Guarantees: the view holds the same one-hot at every position, exact as any step MLP.
"""

from __future__ import annotations

from typing import Callable

from ...element_fn import composed
from ..lowering.state import LoweringState
from ..ops import NumericMLP
from ..variables import Var


def through_steps(state: LoweringState, var: Var, classify: Callable) -> tuple[Var, Callable] | None:
    """(x, classify o f) when a step MLP writes `var` = f(x); None otherwise."""
    steps = state.writer.get(var)
    if not isinstance(steps, NumericMLP):
        return None
    return steps.input, composed(classify, steps.fn)
