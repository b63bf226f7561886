"""Categorical views: a one-hot copy of a number, for a primitive that reads values one by one
(a select's table, a table MLP), written by an exact step MLP of the number.

Plainly the copy has a dimension per value of the number. With the lowering's `reader_classes`
option (the optimisation value-classes) it keeps only the values its reader tells apart: the
reader often computes the same thing from many values (a select's row of answers, a
sequence_map's row of its table), and values of equal `signature` share one dimension, named by
the first of them; a reader computing on that value gets what it would on any other.
"""

from __future__ import annotations

from typing import Any
from collections.abc import Callable

from ... import ir
from ..ops import NumericMLP
from ..variables import Var
from .rewrites import ViewSite
from .state import LoweringState


def categorical_view(state: LoweringState, var: Var, signature: Callable[[Any], Any] = ir.identity, whole: bool = False,
                     name: str = "cat") -> Var:
    """`var` itself if categorical; else a categorical copy written by an exact step MLP.

    `signature` is what the consumer computes from a value (the row of a sequence_map's table,
    say), by which `reader_classes` merges values; `whole`: one dimension per value all the same
    (a split answer's table inputs, passes/split_keys.py: one view serves all of its heads); `name`:
    the view's label after the number's (`x.cat`; digit_views.py's `x.high`, `x.low`). A
    `ViewSite` rewrite (passes/compose_views.py) may write the view from another number than
    `var` itself."""
    if var.encoding == ir.CATEGORICAL:
        return var
    if whole or not state.options.reader_classes:
        signature = ir.identity
    first_of: dict[Any, Any] = {}  # a signature -> the first value that has it
    representative = {x: first_of.setdefault(signature(x), x) for x in var.values}
    key = (var, tuple(representative[x] for x in var.values))
    if ("view", key) not in state.cache:
        view = state.new_var(f"{var.label}.{name}", ir.CATEGORICAL, first_of.values(), loc=var.loc)
        classify = representative.__getitem__
        steps = state.rewritten(ViewSite(view, var, classify)) or NumericMLP(view, var, classify)
        state.cache[("view", key)] = state.emit(steps)
    return state.cache[("view", key)]


def whole_view(state: LoweringState, var: Var) -> Var | None:
    """The view of `var` with a dimension per value, if one is made (`var` itself if categorical)."""
    if var.encoding == ir.CATEGORICAL:
        return var
    return state.cache.get(("view", (var, var.values)))


def viewed_number(state: LoweringState, var: Var) -> NumericMLP | None:
    """The step MLP whose one-hot `var` is, when var is a categorical view of a number."""
    writer = state.writer.get(var)
    if var.encoding == ir.CATEGORICAL and isinstance(writer, NumericMLP):
        return writer
    return None
