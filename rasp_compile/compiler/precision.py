"""precision: refuse a model whose float dtype cannot hold its numbers exactly enough, and record
by how much every read-out stays within what it tolerates.

Every value the model hands out, or decodes on the way, is a *read-out* with an error bound
(error_bounds.py: propagated op by op, rounding charged to the carried magnitudes) and a
tolerance:

    kind            what is read                         tolerance
    step            a number read by a step MLP          a quarter of the smallest gap where its
                    (numeric_mlp.step_mlp)               reader's answer changes (the flat steps)
    numerical       a numerical answer (unembed copies   OUTPUT_TOLERANCE relative or absolute, as
                    the number: docs/format.md)          --accuracy compares: 1e-5 max(1, |v|),
                                                         at the output's smallest |v|
    nearest-value   a number read as its nearest class   3/8 of the smallest gap g between classes:
                    (passes/number_readout.py)           off by e, the nearest class's logit leads by
                                                         1 - 2e/g, of which rounding may take 1/4
                                                         (e counts the read-out's offset: how far
                                                         a value lies from its class before any error)
    categorical     an arg-max over one-hots (a plain    READOUT_MARGIN (1/2) against the logits'
                    or linear read-out)                  change: twice sum |w| times each one-hot's error

A bound above its tolerance is a `RaspPrecisionError` at the s-op. The checks precision.py made
before stay (with their messages): a step's rounding alone within STEP_WINDOW of its gap (the other
half is its head's leak, tolerances.py) and every value within the dtype's range. The message names
what would work: the dtype that would hold the numbers only when that dtype passes these checks and
the size budget (or why it would not); for a numerical answer, a smaller max_len (the largest of
max_len / 2, / 4, ... at which the program compiles, every-input check included, when the caller
can compile it there) and rounding the answer (which reads it by steps, a quarter of a gap instead
of 1e-5). In float32 that happens for large
numbers (around 10^5 with gaps of a fraction), cancellations, and sums whose error grows with
max_len (a running sum kept as a number); in float64 practically never.

`check_precision` returns the read-outs as meta.margins (docs/format.md), worst margin first.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import DTypeLike

from .. import ir
from ..errors import RaspError, RaspPrecisionError
from ..float_arrays import floats
from .budget import check_budget
from .error_bounds import (as_decode, carried_magnitudes, decode_errors, error_bounds, pointwise, relative_roundings,
                           rounding_counts, rounding_error)
from .layout import lay_out
from .ops import GatedMap, Graph, NumericMLP, Readout
from .tolerances import NEAREST_VALUE_ROUNDING_SHARE, OUTPUT_TOLERANCE, READOUT_MARGIN, STEP_WINDOW, smallest_gap
from .variables import Var


class ImpreciseAnswer(RaspPrecisionError):
    """A numerical answer whose bound passes its tolerance: a smaller max_len or rounding may help
    (_advice), and a program with few inputs may still be exact on each (every_input.py).
    `margins`: the read-outs checked before the answer, all within their tolerance."""

    margins: list[Margin] = []


@dataclass(frozen=True)
class Margin:
    """One read-out: `var` read as `kind` by `reader`, off by at most `bound`, allowed `tolerance`."""

    var: Var
    reader: Var
    kind: str
    bound: float
    tolerance: float

    def as_meta(self) -> dict[str, Any]:
        return {"readout": self.reader.label, "kind": self.kind, "reads": self.var.label,
                "bound": float(self.bound), "tolerance": float(self.tolerance), "proof": "analysis"}


def check_precision(graph: Graph, dtype: DTypeLike, compiles: Callable[[int], bool] | None = None,
                    answer_checked_elsewhere: bool = False, advise: bool = True,
                    ) -> tuple[list[dict[str, Any]], ImpreciseAnswer | None]:
    """Raise RaspPrecisionError where `dtype` cannot decode or output a number exactly, with
    advice that is checked to work (`refusal`; without `advise`, the bare error, for a caller
    that tries something else first); else the read-outs as meta.margins, worst first, and None.
    With `answer_checked_elsewhere` (the caller runs every input: every_input.py), a numerical
    answer beyond its bound is returned instead of raised, beside the other read-outs."""
    try:
        margins, unproven = _check(graph, dtype), None
    except ImpreciseAnswer as error:
        if not answer_checked_elsewhere:
            raise (refusal(graph, dtype, compiles, error) if advise else error) from None
        margins, unproven = error.margins, error
    except RaspPrecisionError as error:
        raise (refusal(graph, dtype, compiles, error) if advise else error) from None
    margins.sort(key=lambda m: -(m.bound / m.tolerance))
    return [m.as_meta() for m in margins], unproven


def proven(graph: Graph, dtype: DTypeLike) -> bool:
    """Whether the analysis proves every read-out of `graph` within its tolerance in `dtype`
    (what check_precision checks, without advice or the every-input check)."""
    try:
        _check(graph, dtype)
    except RaspPrecisionError:
        return False
    return True


def refusal(graph: Graph, dtype: DTypeLike, compiles: Callable[[int], bool] | None, error: RaspPrecisionError) -> RaspPrecisionError:
    """`error` with the advice that is checked to work (_advice; `compiles(max_len)`: whether the
    program compiles at another max_len, every check included, for the smaller max_len that would do)."""
    return RaspPrecisionError(error.message + _advice(graph, dtype, compiles, error), error.loc)


def _advice(graph: Graph, dtype: DTypeLike, compiles: Callable[[int], bool] | None, error: RaspPrecisionError) -> str:
    """"; compile with --dtype float64" when float64 would compile the graph (its precision and its
    size checked here, as the compiler checks them next), else why float64 would not do either;
    for a numerical answer, also a smaller max_len that passes and rounding the answer."""
    advice = _dtype_advice(graph, dtype)
    if not isinstance(error, ImpreciseAnswer):
        return advice
    smaller = _smaller_max_len(graph, compiles)
    if smaller is not None:
        advice += f"; or compile with --max-len {smaller} (or less)"
    return advice + "; or round the answer (e.g. map(lambda x: round(x, 4), ...)), which reads it by steps"


def _dtype_advice(graph: Graph, dtype: DTypeLike) -> str:
    if np.dtype(dtype) == np.float64:
        return ""
    try:
        _check(graph, np.float64)
        check_budget(graph, lay_out(graph))
    except RaspError as wider:
        return f"; float64 would not do either: {wider.message}"
    return "; compile with --dtype float64 (dtype=numpy.float64 from Python), which holds them"


def _smaller_max_len(graph: Graph, compiles: Callable[[int], bool] | None) -> int | None:
    """The largest of max_len / 2, / 4, ... at which the program compiles, when `compiles` is given."""
    max_len = graph.program.max_len // 2
    while compiles is not None and max_len >= 1:
        if compiles(max_len):
            return max_len
        max_len //= 2
    return None


def _check(graph: Graph, dtype: DTypeLike) -> list[Margin]:
    carried = carried_magnitudes(graph.ops)
    for var, largest in carried.items():
        if not largest <= float(np.finfo(dtype).max):  # also NaN
            raise RaspPrecisionError(
                f"{_name(var)} takes or goes through the value {largest:.6g}, which "
                f"{np.dtype(dtype).name} cannot hold",
                var.loc,
            )
    bounds = error_bounds(graph, dtype)
    margins: list[Margin] = []
    for op in graph.ops:
        if isinstance(op, NumericMLP) and not op.interpolated:
            margins += _steps(op.input, op.answers, carried, bounds, dtype, reader=op.out)
        elif isinstance(op, GatedMap) and not op.affine:
            for g in (g for g in op.gate.values if g not in op.interpolated):
                margins += _steps(op.input, list(op.answers[g]), carried, bounds, dtype, reader=op.out)
    try:
        margins.append(_answer(graph, bounds, carried, dtype))
    except ImpreciseAnswer as error:
        error.margins = margins
        raise
    return margins


def _steps(number: Var, answers: list[Any], carried: dict[Var, float], bounds: dict[Var, float], dtype: DTypeLike,
           reader: Var) -> list[Margin]:
    """Every step of `number` (sorted values) where `answers` changes must outlast rounding (within
    STEP_WINDOW of the gap) and the whole error (within the flat quarter gap)."""
    points = number.values
    gaps = [b - a for a, b, x, y in zip(points, points[1:], answers, answers[1:]) if x != y]
    if not gaps:
        return []
    error = rounding_error(number, carried, dtype)
    if not error <= STEP_WINDOW * min(gaps):
        raise RaspPrecisionError(
            f"{_name(reader)} must tell apart values of {_name(number)} only {min(gaps):.3g} apart, but "
            f"they are computed through numbers as large as {carried[number]:.6g}, which "
            f"{np.dtype(dtype).name} rounds by up to {error:.2g}",
            reader.loc or number.loc,
        )
    margin = Margin(number, reader, "step", bounds[number], 2 * STEP_WINDOW * min(gaps))
    _within(margin, dtype, f"{_name(reader)} must tell apart values of {_name(number)} only {min(gaps):.3g} apart")
    return [margin]


def _answer(graph: Graph, bounds: dict[Var, float], carried: dict[Var, float], dtype: DTypeLike) -> Margin:
    """The read-out of the answer (module docstring's table), checked."""
    readout, output = graph.readout, graph.output
    first = readout.inputs[0]
    if readout.classes is None:
        margin = _numerical_answer(graph, bounds, carried, dtype)
        _within(margin, dtype, f"the answer {_name(output)} must be within {margin.tolerance:.2g} of its value "
                f"(1e-5 relative, as --accuracy compares numbers), but it is computed through numbers as large "
                f"as {carried.get(first, 0.0):.6g}", numerical_answer=True)
        return margin
    if first.encoding == ir.NUMERICAL:
        gap = smallest_gap([c for c in readout.classes if c is not None])
        margin = Margin(first, output, "nearest-value", _nearest_value_error(graph, bounds, gap, dtype) + readout.offset,
                        nearest_value_tolerance(gap))
        _within(margin, dtype, f"the answer {_name(output)} is read as the nearest of values only {gap:.3g} apart")
        return margin
    rows, change = 0, np.zeros(len(readout.classes))
    for var in readout.inputs:
        width = len(var.values) if var.encoding == ir.CATEGORICAL else 1
        change += bounds.get(var, 0.0) * np.abs(readout.weights[rows:rows + width]).sum(axis=0)
        rows += width
    margin = Margin(first, output, "categorical", 2 * float(change.max(initial=0.0)), READOUT_MARGIN)
    _within(margin, dtype, f"the answer {_name(output)}'s logits must keep their margin")
    return margin


def _numerical_answer(graph: Graph, bounds: dict[Var, float], carried: dict[Var, float], dtype: DTypeLike) -> Margin:
    """The answer's margin at its worst value v: error bound over 1e-5 max(1, |v|). The bound's
    rounding part is ROUNDINGS u |v| when it is relative (error_bounds.relative_roundings); a
    decode's bound is taken value by value (error_bounds.decode_errors)."""
    writers = graph.writers()
    relative, counts = relative_roundings(graph.ops), rounding_counts(graph)
    number = graph.readout.inputs[0]
    writer = writers[number]
    decode = as_decode(writer, writers)
    decodes = [decode] if decode is not None else []
    if isinstance(writer, GatedMap) and not writer.affine:  # each gate value's piece (+ the gate's error)
        decodes = [(writer.input, list(writer.answers[g]), g in writer.interpolated) for g in writer.gate.values]
    if decodes:
        gate = bounds[number] - max(float(np.max(decode_errors(*d, number, bounds.get(d[0], 0.0), dtype)))
                                    for d in decodes) if isinstance(writer, GatedMap) else 0.0
        errors = pointwise(writers[decodes[0][0]], bounds, carried, writers, relative, dtype, counts)
        bound = np.concatenate([decode_errors(*d, number, errors, dtype) + gate for d in decodes])
        values = np.abs(np.array([float(a) for d in decodes for a in d[1]]))
    else:
        values = np.abs(floats(number.values or [0.0]))
        bound = pointwise(writer, bounds, carried, writers, relative, dtype, counts)
    tolerance = OUTPUT_TOLERANCE * np.maximum(1.0, values)
    bound = np.broadcast_to(bound, values.shape)
    worst = int(np.argmax(bound / tolerance))
    return Margin(number, graph.output, "numerical", float(bound[worst]), float(tolerance[worst]))


def _nearest_value_error(graph: Graph, bounds: dict[Var, float], gap: float, dtype: DTypeLike) -> float:
    """How far a nearest-value read-out's number may stray, in its own units: the number's error,
    plus B gap times the high digit's for a two-digit read-out, taken value by value where both are
    step MLPs of one input (passes/number_readout.py writes them so)."""
    readout, writers = graph.readout, graph.writers()
    if len(readout.inputs) == 1:
        return bounds[readout.inputs[0]]
    decodes = [d for d in (as_decode(writers[v], writers) for v in readout.inputs) if d is not None]
    if len(decodes) == len(readout.inputs) and len({d[0] for d in decodes}) == 1:
        number, high = (decode_errors(*d, v, bounds.get(d[0], 0.0), dtype) for d, v in zip(decodes, readout.inputs))
        return float(np.max(number + high * gap * digit_base(readout)))
    return bounds[readout.inputs[0]] + sum(bounds[v] for v in readout.inputs[1:]) * gap * digit_base(readout)


def nearest_value_tolerance(gap: float) -> float:
    """How far a number read as its nearest class, classes `gap` apart, may stray (module docstring)."""
    return (1 - NEAREST_VALUE_ROUNDING_SHARE) / 2 * gap


def digit_base(readout: Readout) -> int:
    """B of a two-digit read-out (passes/number_readout.py): an error in the high digit moves the
    low one by B; 1 for a read-out of one number."""
    if len(readout.inputs) <= 1:
        return 1
    assert readout.classes is not None  # a nearest-value read-out has its values' classes
    return math.isqrt(len(readout.classes) - 1) + 1


def _within(margin: Margin, dtype: DTypeLike, what: str, numerical_answer: bool = False) -> None:
    if margin.bound <= margin.tolerance:
        return
    kind = ImpreciseAnswer if numerical_answer else RaspPrecisionError
    raise kind(f"{what}, and in {np.dtype(dtype).name} it may be off by up to {margin.bound:.2g} "
               f"(allowed {margin.tolerance:.2g})", margin.reader.loc or margin.var.loc)


def _name(var: Var) -> str:
    return f"'{var.label}'"
