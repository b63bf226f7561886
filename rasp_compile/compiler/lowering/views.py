"""Categorical views: a one-hot copy of a number, for a primitive that reads values one by one
(a select's table, a table MLP), written by an exact step MLP of the number."""

from __future__ import annotations

from typing import Callable

from ... import ir
from ..ops import NumericMLP
from ..variables import Var
from .rewrites import first_answer
from .state import LoweringState


def categorical_view(state: LoweringState, var: Var, signature: Callable = ir.identity) -> Var:
    """`var` itself if categorical; else a categorical copy written by an exact step MLP.

    Plainly the copy has a dimension per value of `var`. `signature` is what the consumer
    computes from a value (the row of a sequence_map's table, say): a `view_classes` rewrite
    (passes/value_classes.py) may merge values of equal signature into one dimension, named
    by the first of them, and a `view_source` rewrite (passes/compose_views.py) may read
    another number than `var` itself. The split answer's table inputs (passes/split_keys.py)
    keep one dimension per value: one view serves all of the split's heads."""
    if var.encoding == ir.CATEGORICAL:
        return var
    classes = None if var in state.split_inputs else first_answer(state.rewrites.view_classes, state, var, signature)
    signature = classes or ir.identity
    first_of: dict = {}
    representative = {x: first_of.setdefault(signature(x), x) for x in var.values}
    key = (var, tuple(representative[x] for x in var.values))
    if ("view", key) not in state.cache:
        view = state.new_var(f"{var.label}.cat", ir.CATEGORICAL, first_of.values(), loc=var.loc)
        classify = representative.__getitem__
        number, classify = first_answer(state.rewrites.view_source, state, var, classify) or (var, classify)
        state.cache[("view", key)] = state.emit(NumericMLP(view, number, classify))
        if var in state.split_inputs:
            state.split_inputs.add(view)
    return state.cache[("view", key)]


def viewed_number(state: LoweringState, var: Var) -> NumericMLP | None:
    """The step MLP whose one-hot `var` is, when var is a categorical view of a number."""
    writer = state.writer.get(var)
    if var.encoding == ir.CATEGORICAL and isinstance(writer, NumericMLP):
        return writer
    return None
