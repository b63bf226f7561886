"""Variables the lowering adds for a primitive that the program does not spell out: numerical
features linear in a one-hot (written by that one-hot's writer), and joint (tuple-valued)
variables of several categorical ones (one table MLP)."""

from __future__ import annotations

from itertools import product
from typing import Any
from collections.abc import Callable

from ... import ir
from ..ops import Linear, TableMLP
from ..variables import Var
from .linear import linear_form
from .state import LoweringState


def linear_feature(state: LoweringState, label: str, var: Var, fn: Callable[[Any], Any]) -> Var:
    """A numerical variable sum_v fn(v) x[var = v], written by var's own writer."""
    table = tuple(fn(v) for v in var.values)

    def make() -> Linear:
        out = state.new_var(label, ir.NUMERICAL, table)
        form = linear_form(out, fn, (var,), state.writer.get)
        assert form is not None  # `var` is one-hot (a selector term's side): every function of it is linear
        return form

    return state.cached("linear feature", (var, table), make)


def joint(state: LoweringState, parts: tuple[Var, ...]) -> Var:
    """A categorical variable holding the tuple of `parts` (none components included)."""
    if len(parts) == 1:
        return parts[0]

    def make() -> TableMLP:
        values = list(product(*(p.domain for p in parts)))
        label = "(" + ",".join(p.label for p in parts) + ")"
        var = state.new_var(label, ir.CATEGORICAL, values)
        return TableMLP(var, parts, lambda *vs: tuple(vs), covers_none=True)

    return state.cached("joint", parts, make)
