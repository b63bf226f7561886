"""precision: refuse a model whose float dtype cannot hold its numbers exactly enough.

A numerical variable is one residual coordinate holding its value, and every float sum rounds
to u (2^-24 in float32, 2^-53 in float64) of its largest term. So a coordinate carries an error
in proportion to the largest magnitude its computation went through since the last table or
step MLP wrote a fresh value: its *carried magnitude*. A mean of 1,000,000 + i carries 10^6
even after a map subtracts the 10^6 again (folded into the same weights: passes/fold_linear.py).

We allow ROUNDINGS roundings of u times the carried magnitude (a mean's weighted sum, its
c_proj, the residual's additions, a fold's sum, with room to spare) and check, per dtype:

    a step MLP reading it (numeric_mlp.step_mlp)        error <= STEP_WINDOW * the gap of every
    a nearest-value read-out (passes/number_readout)   step where its reader's answer changes
    an interpolated decode (passes/interpolated_steps) error <= its head's window * every gap
                                                       (else it keeps flat steps)
    every value                                        finite and within the dtype's range

A numerical output is not checked: it is compared with a relative tolerance, and a mean's
rounding is relative to the values it averages, which this bound (the largest of them) would
overstate; only a map cancelling a large constant can lose it, and that is left to the user.

The step windows leave the other half of the flat quarter-gap to attention leak (tolerances.py).
A failing check is a `RaspPrecisionError` at the s-op, naming the values, and the dtype that
would hold them only when that dtype passes these checks and the size budget (or why it would
not); in float32 that happens only for large numbers (around 10^5 with gaps of a
fraction) or cancellations, in float64 practically never.
"""

from __future__ import annotations

import numpy as np

from .. import ir
from ..errors import RaspError, RaspPrecisionError
from .budget import check_budget
from .layout import lay_out
from .ops import Attend, GatedMap, Graph, Linear, NumericMLP, Op
from .tolerances import ROUNDINGS, STEP_WINDOW
from .variables import Var



def unit_roundoff(dtype) -> float:
    """u: half the gap between 1 and the next float of `dtype`."""
    return float(np.finfo(dtype).eps) / 2


def carried_magnitudes(ops: list[Op]) -> dict[Var, float]:
    """Every numerical variable -> the largest magnitude its value went through since it was
    last written fresh (by an embedding, a table, a step MLP or a width head: its own values)."""
    carried: dict[Var, float] = {}
    for op in ops:
        if op.out.encoding != ir.NUMERICAL:
            continue
        largest = largest_magnitude(op.out.values)
        if isinstance(op, Attend) and op.kind == "numerical":
            largest = max(largest, carried.get(op.value, 0.0), abs(float(op.default)))
        elif isinstance(op, Linear):
            terms = [abs(c) * carried.get(var, 1.0) for (var, _), row in op.weights.items() for c in row.values()]
            largest = max([largest, *terms, *(abs(b) for b in op.bias.values())])
        elif isinstance(op, GatedMap) and op.affine:  # its units hold a x + b - lo, and lo
            x = carried.get(op.input, 1.0)
            largest = max([largest, *(abs(a) * x + 2 * abs(b) for a, b in op.affine.values())])
        carried[op.out] = largest
    return carried


def rounding_error(var: Var, carried: dict[Var, float], dtype) -> float:
    """What float rounding may have moved `var`'s coordinate by (0 for a categorical one-hot,
    whose readers allow 1/2)."""
    return ROUNDINGS * unit_roundoff(dtype) * carried.get(var, 0.0)


def check_precision(graph: Graph, dtype) -> None:
    """Raise RaspPrecisionError where `dtype` cannot decode or output a number exactly, with
    advice that is checked to work (_advice)."""
    try:
        _check(graph, dtype)
    except RaspPrecisionError as error:
        raise RaspPrecisionError(error.message + _advice(graph, dtype), error.loc) from None


def _advice(graph: Graph, dtype) -> str:
    """"; compile with --dtype float64" when float64 would compile the graph (its precision and its
    size checked here, as the compiler checks them next), else why float64 would not do either."""
    if np.dtype(dtype) == np.float64:
        return ""
    try:
        _check(graph, np.float64)
        check_budget(graph, lay_out(graph))
    except RaspError as wider:
        return f"; float64 would not do either: {wider.message}"
    return "; compile with --dtype float64 (dtype=numpy.float64 from Python), which holds them"


def _check(graph: Graph, dtype) -> None:
    carried = carried_magnitudes(graph.ops)
    for var, largest in carried.items():
        if not largest <= float(np.finfo(dtype).max):  # also NaN
            raise RaspPrecisionError(
                f"{_name(var)} takes or goes through the value {largest:.6g}, which "
                f"{np.dtype(dtype).name} cannot hold",
                var.loc,
            )
    for op in graph.ops:
        if isinstance(op, NumericMLP) and not op.interpolated:
            answers = [op.fn(p) for p in op.input.values]
            _check_steps(op.input, answers, carried, dtype, reader=op.out)
        elif isinstance(op, GatedMap) and not op.affine:
            for g in (g for g in op.gate.values if g not in op.interpolated):
                _check_steps(op.input, list(op.answers[g]), carried, dtype, reader=op.out)
    readout = graph.readout
    if readout.classes is not None and readout.inputs[0].encoding == ir.NUMERICAL:
        number = readout.inputs[0]
        _check_steps(number, list(number.values), carried, dtype, reader=graph.output)


def _check_steps(number: Var, answers: list, carried: dict[Var, float], dtype, reader: Var) -> None:
    """Every step of `number` (sorted values) where `answers` changes must outlast rounding."""
    points = number.values
    gaps = [b - a for a, b, x, y in zip(points, points[1:], answers, answers[1:]) if x != y]
    error = rounding_error(number, carried, dtype)
    if not gaps or error <= STEP_WINDOW * min(gaps):
        return
    raise RaspPrecisionError(
        f"{_name(reader)} must tell apart values of {_name(number)} only {min(gaps):.3g} apart, but "
        f"they are computed through numbers as large as {carried[number]:.6g}, which "
        f"{np.dtype(dtype).name} rounds by up to {error:.2g}",
        reader.loc or number.loc,
    )


def largest_magnitude(values) -> float:
    """The largest magnitude among `values` (NaN if one is NaN)."""
    magnitudes = [abs(float(v)) for v in values]
    return float(np.max(magnitudes)) if magnitudes else 0.0


def _name(var: Var) -> str:
    return f"'{var.label}'"
