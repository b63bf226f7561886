"""gated-maps: a sequence_map of a number x and an exact one-hot g is one small MLP of x per value
of g (primitives/gated_map.py), instead of a table over a categorical view of x.

As a table, f(x, g) needs a categorical view of x first (a step MLP: one more MLP sub-layer) and
then one hidden unit per (x, g) pair: 19,600 units for the running count `frac * length` at
max_len 40. Gated, each value g gets its own exact function of x: affine pieces when the output
is a number affine in x for every g, else steps (or, for a numerical answer, polylines:
passes/interpolated_steps.py).

Needs: the variables written so far; runs as a `SequenceMapSite` rewrite, after fold-linear and
fold-embeddings. Guarantees: the gate's one-hot is exactly 0 or 1 and never none (the units of
the other values are switched off by it); for a number the embedding holds, a categorical copy
is embedded beside it.
"""

from __future__ import annotations

from typing import Any
from collections.abc import Callable, Sequence

import numpy as np

from ... import ir
from ...frontend.infer import is_number
from ..lowering.pairs import meeting, within_pair_limit
from ..lowering.rewrites import SequenceMapSite
from ..lowering.state import LoweringState
from ..ops import Embed, GatedMap, Linear, Op, TableMLP, replaced
from ..tolerances import LINEAR_TOLERANCE
from ..variables import Var


def gated_map(state: LoweringState, site: SequenceMapSite) -> GatedMap | None:
    """`out = fn(first, second)` as a GatedMap, when one input is a number and the other has an
    exact one-hot that is never none."""
    out, fn, first, second = site.out, site.fn, site.first, site.second
    for x, gate, x_first in ((first, second, True), (second, first, False)):
        if x.encoding != ir.NUMERICAL:
            continue
        meeting_values = meeting(state, x, gate)
        exact_gate = exact_categorical(state, gate)
        if exact_gate is None or exact_gate.may_be_none:
            continue
        op = GatedMap(out, x, exact_gate, fn if x_first else ir.swapped(fn))
        pieces = meeting_affine_pieces(op.fn, meeting_values) if meeting_values and out.encoding == ir.NUMERICAL else None
        if pieces is not None:  # lines through the values that meet: no answer elsewhere is needed
            return replaced(op, affine=pieces)
        if not within_pair_limit(x, exact_gate):
            return None  # its answers at every pair: the plain construction refuses it (lowering/pairs.py)
        if out.encoding == ir.NUMERICAL:
            op = replaced(op, affine=affine_pieces(op))  # from the same table of answers the steps would use
        return op
    return None


def exact_categorical(state: LoweringState, var: Var) -> Var | None:
    """`var` itself if its one-hot is exact; for a number the embedding holds (a map of the
    position, say), a categorical copy embedded beside it; else None."""
    writer = state.writer.get(var)
    if var.encoding == ir.CATEGORICAL:
        return var if exact_one_hot(var, state.writer.get) else None
    if not isinstance(writer, Embed):
        return None

    def make() -> Embed:
        copy = state.new_var(f"{var.label}.cat", ir.CATEGORICAL, var.values, loc=var.loc)
        return Embed(copy, writer.source, writer.fn)

    return state.cached("embedded copy", (writer.source, var.values, writer.fn), make)


def exact_one_hot(var: Var, writer_of: Callable[[Var], Op | None]) -> bool:
    """Whether `var`'s one-hot is exactly 0 or 1 at every position: written by an embedding, or
    by tables and linear folds of such one-hots only (attention and step MLPs are off by a little)."""
    writer = writer_of(var)
    if isinstance(writer, Embed):
        return True
    if isinstance(writer, TableMLP | Linear):
        return all(v.encoding == ir.CATEGORICAL and exact_one_hot(v, writer_of) for v in writer.inputs)
    return False


def affine_pieces(op: GatedMap) -> dict[Any, tuple[float, float]] | None:
    """gate value -> (a, b) when f(x, g) = a x + b on x's values (to LINEAR_TOLERANCE, relative)
    for every value g of the gate (op.answers); None when some g's values are not numbers on one line."""
    lines = {g: _line(op.input.values, answers) for g, answers in op.answers.items()}
    pieces = {g: line for g, line in lines.items() if line is not None}
    return pieces if len(pieces) == len(lines) else None


def meeting_affine_pieces(fn: Callable[[Any, Any], Any], meeting: dict[Any, Any],
                          ) -> dict[Any, tuple[float, float]] | None:
    """gate value g -> (a, b) when fn(x, g) = a x + b on the values x that meet g (`meeting`:
    {g: sorted x values}); None when for some g they are not numbers on one line."""
    pieces = {}
    for g, points in meeting.items():
        line = _line(points, [fn(p, g) for p in points])
        if line is None:
            return None
        pieces[g] = line
    return pieces


def _line(points: Sequence[Any], answers: Sequence[Any]) -> tuple[float, float] | None:
    """(a, b) with answers = a p + b at every point p (sorted), to LINEAR_TOLERANCE relative;
    None when some answer is not a number or off that line."""
    if not set(map(type, answers)) <= {int, float, bool} and not all(is_number(y) for y in answers):
        return None
    xs, ys = np.array(points, dtype=float), np.array(answers, dtype=float)
    a = float((ys[-1] - ys[0]) / (xs[-1] - xs[0])) if len(xs) > 1 else 0.0
    b = float(ys[0] - a * xs[0])
    if np.any(np.abs(ys - (a * xs + b)) > LINEAR_TOLERANCE * np.maximum(1.0, np.maximum(np.abs(ys), np.abs(a * xs)))):
        return None
    return a, b
