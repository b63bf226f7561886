"""The hooks through which optimisations rewrite what the lowering builds, while it builds it.

The lowering (lower.py) builds each s-op's plain construction. Where an optimisation chooses a
different construction for one s-op, the choice must be made as that s-op is lowered: the ops
built for later s-ops look at how earlier ones were built (whether a variable is embedded, is a
step MLP's one-hot, is linear), and the labels handed out follow that order. So such an
optimisation is a rewrite the driver hands to the lowering here, one tuple per construction, in
the order the driver lists them; each returns its construction, or None to pass. An empty
`Rewrites()` is the plain lowering of `--no-opt` every pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Rewrites:
    """Per construction, the rewrites to try, first match wins (signatures in lower.py,
    views.py, selectors.py and scores.py)."""

    map: tuple[Callable, ...] = ()  # (state, out, fn, inner) -> Op | None
    sequence_map: tuple[Callable, ...] = ()  # (state, out, fn, first, second) -> Op | None
    aggregate: tuple[Callable, ...] = ()  # (state, node, out, whole Attend) -> Op | None
    width: tuple[Callable, ...] = ()  # (state, selector, out) -> Op | None
    view_classes: tuple[Callable, ...] = ()  # (state, var, signature) -> signature | None
    view_source: tuple[Callable, ...] = ()  # (state, var, classify) -> (number, classify) | None
    term: tuple[Callable, ...] = ()  # (state, term) -> Term, each applied in turn
    score_blocks: tuple[Callable, ...] = ()  # (feature, term index) -> block | None


def first_answer(rewrites: tuple[Callable, ...], *args):
    """The first rewrite's answer that is not None, or None."""
    for rewrite in rewrites:
        answer = rewrite(*args)
        if answer is not None:
            return answer
    return None
