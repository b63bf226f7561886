"""error_bounds: how far every residual variable may stray from its exact value, op by op.

`error_bounds(graph, dtype)` gives every variable one number, its *error bound*:

    numerical      how far its coordinate may be from the value the program means
    categorical    how far any coordinate of its one-hot may be from 0 / 1

propagated through the graph in order (each op after its inputs' writers):

    Embed          fresh: only storing the value in the dtype, |v - dtype(v)| (0 for integers)
    TableMLP       its inputs' one-hot errors, summed (the firing unit reads each once), times
                   the largest value written (numerical), plus rounding
    NumericMLP     steps: fresh (their input is checked to land on the flat quarter-gap around
                   each value, precision.py); a number written by steps rounds by
                   numeric_mlp.step_output_errors (no hidden-layer rounding where a step's two
                   units provably cancel to exactly 1 at the input's values,
                   numeric_mlp.exact_partners; their magnitudes in the output's sum still).
                   A polyline passes its input's error on times its steepest slope, plus
                   numeric_mlp.interpolation_error (the worse orientation)
    GatedMap       affine pieces a x + b: max |a| times the input's error, plus rounding; step and
                   polyline pieces as NumericMLP, the worst gate value
    Linear         sum of |coefficient| times each input coordinate's error, plus rounding; one
                   stored in one embedding (`stored_once`: its inputs all embedded from one
                   source) is an Embed: storing its value, plus the float64 sums of its folds
    Attend         a mean: its values' error; plus the weight its softmax may leave off the
                   selected keys times the spread of the values and default (the leak each head is
                   built to, primitives/numerical_attn.py); plus the tilt, when the score's features
                   carry errors, between the weights of keys meant to be equal (exp(2 d) - 1 times
                   the spread, d the largest score error, bounded from the head's columns); plus
                   rounding. A categorical aggregate: CATEGORICAL_LEAK / amplification plus its
                   values' error. A width head: its leak (primitives/selector_width.py), the tilt
                   and rounding of BOS's share

Rounding is charged as precision.py always has: ROUNDINGS roundings of u times the *carried
magnitude* (carried_magnitudes below), the largest number the value went through since it was
last written fresh; where a mean's weighted sum over n + 1 keys is among them, MEAN_ROUNDINGS_PER_KEY
(n + 1) more (rounding_counts). That count is a measured model, not a proof: a
strictly sequential sum of n adversarial terms could meet n / 2 roundings (float32 would then be
refused for every mean past ~300 keys); tests/test_error_bounds.py measures every read-out
through rc.trace up to max_len 1,024 against its bound, and broke the fixed count this replaced.
A categorical one-hot's own rounding is not counted (its readers tolerate 1/2, a million times more).
Where a bound could not be derived exactly it is taken larger: a table's output scales with the
largest value rather than the spread, a polyline's with its steepest slope.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np
from numpy.typing import DTypeLike

from .. import ir
from ..float_arrays import floats
from .ops import Attend, Embed, EmbedSource, GatedMap, Graph, HeadKind, Linear, NumericMLP, Op, TableMLP, op_inputs
from .primitives.numeric_mlp import interpolation_errors, step_output_errors
from .primitives.numerical_attn import numerical_sharpness
from .primitives.selector_width import width_sharpness
from .tolerances import CATEGORICAL_LEAK, FLOAT32_U, MEAN_ROUNDINGS_PER_KEY, ROUNDINGS, smallest_gap, spread
from .variables import CONSTANT, Var


def unit_roundoff(dtype: DTypeLike) -> float:
    """u: half the gap between 1 and the next float of `dtype`."""
    return float(np.finfo(dtype).eps) / 2


def largest_magnitude(values: Iterable[Any]) -> float:
    """The largest magnitude among `values` (NaN if one is NaN)."""
    magnitudes = np.abs(floats(values))
    return float(magnitudes.max()) if len(magnitudes) else 0.0


def carried_magnitudes(ops: Iterable[Op]) -> dict[Var, float]:
    """Every numerical variable -> the largest magnitude its value went through since it was
    last written fresh (by an embedding, a table, a step MLP or a width head: its own values)."""
    carried: dict[Var, float] = {}
    for op in ops:
        if op.out.encoding != ir.NUMERICAL:
            continue
        largest = largest_magnitude(op.out.values)
        if isinstance(op, Attend) and op.kind is HeadKind.NUMERICAL:
            value = carried.get(op.value, 0.0) if op.value is not None else 0.0
            largest = max(largest, value, abs(float(op.default)))
        elif isinstance(op, Linear):
            terms = [abs(c) * carried.get(var, 1.0) for (var, _), row in op.weights.items() for c in row.values()]
            largest = max([largest, *terms, *(abs(b) for b in op.bias.values())])
        elif isinstance(op, GatedMap) and op.affine:  # its units hold a x + b - lo, and lo
            x = carried.get(op.input, 1.0)
            largest = max([largest, *(abs(a) * x + 2 * abs(b) for a, b in op.affine.values())])
        carried[op.out] = largest
    return carried


def relative_roundings(ops: Iterable[Op]) -> frozenset[Var]:
    """The numerical variables whose rounding is at most ROUNDINGS u times their own value's
    magnitude, not their carried magnitude: written fresh (embeddings, tables, steps, which store
    each value once; a Linear reading one one-hot, whose one coordinate near 1 picks its value), or
    a mean of such values all of one sign, default included (its weighted sum then rounds by u
    times the sum of |w v|, which is |the mean|), or a sum of such values with no cancellation.
    A numerical answer's tolerance is relative too, so these stay accepted however large they are."""
    relative: set[Var] = set()
    for op in ops:
        if op.out.encoding != ir.NUMERICAL:
            continue
        if isinstance(op, Embed | TableMLP) or (isinstance(op, NumericMLP) and not op.interpolated):
            relative.add(op.out)
        elif isinstance(op, GatedMap) and not op.affine and not op.interpolated:
            relative.add(op.out)
        elif isinstance(op, GatedMap) and op.affine and op.input in relative:
            if all(b == 0 for _, b in op.affine.values()):
                relative.add(op.out)
        elif isinstance(op, Linear) and _one_signed(op, relative):
            relative.add(op.out)
        elif isinstance(op, Attend) and op.kind is HeadKind.NUMERICAL and op.value in relative:
            signs = {np.sign(float(v)) for v in op.value.values + (op.default,)} - {0.0}
            if len(signs) <= 1:
                relative.add(op.out)
    return frozenset(relative)


def _one_signed(op: Linear, relative: set[Var]) -> bool:
    """Whether the Linear adds terms of one sign only (every coefficient times every value of its
    input, and the bias), each relative itself: a sum without cancellation, whose rounding is then
    relative to the result. One one-hot read alone counts: its one coordinate near 1 picks a value."""
    if len(op.inputs) == 1 and op.inputs[0].encoding != ir.NUMERICAL and not any(op.bias.values()):
        return True
    if not all(var in relative for var in op.inputs):
        return False
    terms = [c * float(v) for (var, _), row in op.weights.items() for c in row.values() for v in var.values]
    return len({np.sign(t) for t in terms + list(op.bias.values())} - {0.0}) <= 1


def rounding_error(var: Var, carried: dict[Var, float], dtype: DTypeLike, count: float = ROUNDINGS) -> float:
    """What float rounding may have moved `var`'s coordinate by (0 for a categorical one-hot,
    whose readers allow 1/2): `count` roundings (rounding_counts) of u times its carried magnitude."""
    return count * unit_roundoff(dtype) * carried.get(var, 0.0)


def rounding_counts(graph: Graph) -> dict[Var, float]:
    """Every numerical variable -> the roundings of u its carried magnitude may meet: ROUNDINGS,
    plus MEAN_ROUNDINGS_PER_KEY per key (max_len + 1, BOS included) where a mean's weighted sum
    is among them (a mean, or a line or affine piece of one, not yet written fresh)."""
    extra = MEAN_ROUNDINGS_PER_KEY * (graph.program.max_len + 1)
    summed: set[Var] = set()
    for op in graph.ops:
        if isinstance(op, Attend) and op.kind is HeadKind.NUMERICAL:
            summed.add(op.out)
        elif isinstance(op, Linear) and summed.intersection(op.inputs):
            summed.add(op.out)
        elif isinstance(op, GatedMap) and op.affine and op.input in summed:
            summed.add(op.out)
    return {op.out: ROUNDINGS + (extra if op.out in summed else 0.0) for op in graph.ops if op.out.encoding == ir.NUMERICAL}


def error_bounds(graph: Graph, dtype: DTypeLike) -> dict[Var, float]:
    """Every variable the ops write -> its error bound (module docstring): what it took on since
    its inputs were written fresh (leaks, tilts, decodes' own errors, scaled as the ops pass them
    on; `fresh` below), plus its rounding, charged once to its carried magnitude."""
    carried = carried_magnitudes(graph.ops)
    writers = graph.writers()
    relative = relative_roundings(graph.ops)
    counts = rounding_counts(graph)
    fresh: dict[Var, float] = {}
    bounds: dict[Var, float] = {}
    for op in graph.ops:
        decode = as_decode(op, writers)
        if decode is not None:  # its own bound counts its rounding
            number, answers, interpolated = decode
            errors = pointwise(writers[number], bounds, carried, writers, relative, dtype, counts)
            fresh[op.out] = float(np.max(decode_errors(number, answers, interpolated, op.out, errors, dtype), initial=0.0))
        elif stored_once(op, writers):  # an embedding: its value stored once, after float64 sums of its folds
            fresh[op.out] = _stored_error(op.out, dtype) + len(op_inputs(op)) * unit_roundoff(np.float64) * carried[op.out]
        else:
            fresh[op.out] = _op_error(op, fresh, bounds, graph.program.max_len, dtype)
        bounds[op.out] = fresh[op.out] + charged_rounding(op, carried, writers, dtype, counts)
    return bounds


def pointwise(writer: Op, bounds: dict[Var, float], carried: dict[Var, float], writers: dict[Var, Op],
              relative: frozenset[Var], dtype: DTypeLike, counts: dict[Var, float]) -> np.ndarray:
    """The error bound of what `writer` writes, at each of its values: its rounding part
    ROUNDINGS u |v| where that is relative (relative_roundings), else its bound everywhere."""
    var = writer.out
    values = np.abs(floats(var.values or [0.0]))
    if var not in relative:
        return np.full(values.shape, bounds[var])
    charged = charged_rounding(writer, carried, writers, dtype, counts)
    return bounds[var] - charged + np.minimum(charged, counts.get(var, ROUNDINGS) * unit_roundoff(dtype) * values)


def as_decode(op: Op, writers: dict[Var, Op]) -> tuple[Var, list[Any], bool] | None:
    """(number, answers at its values, interpolated) when `op` is a map of one number by a
    NumericMLP, or a numerical line c y + b of such a map's output (which that MLP's own output
    weights write, assemble.py: the same steps or polyline with answers c a + b); else None."""
    if isinstance(op, NumericMLP):
        return op.input, op.answers, op.interpolated
    if not (isinstance(op, Linear) and op.out.encoding == ir.NUMERICAL and len(op.weights) == 1):
        return None
    (var, _), row = next(iter(op.weights.items()))
    writer = writers.get(var)
    if not (isinstance(writer, NumericMLP) and var.encoding == ir.NUMERICAL):
        return None
    c, b = sum(row.values()), sum(op.bias.values())
    return writer.input, [c * float(a) + b for a in writer.answers], writer.interpolated


def charged_rounding(op: Op, carried: dict[Var, float], writers: dict[Var, Op], dtype: DTypeLike,
                     counts: dict[Var, float]) -> float:
    """The rounding error_bounds adds to what `op` writes: rounding_error, except for embeddings
    (stored once: their error is exact) and decodes (steps and polylines, or a line of one:
    as_decode), whose own bounds (numeric_mlp) count every rounding of their output."""
    if isinstance(op, Embed) or stored_once(op, writers) or (isinstance(op, GatedMap) and not op.affine) or as_decode(op, writers):
        return 0.0
    return rounding_error(op.out, carried, dtype, counts.get(op.out, ROUNDINGS))


def stored_once(op: Op, writers: dict[Var, Op]) -> bool:
    """Whether `op` is a numerical Linear that one embedding stores whole (folds.py): its
    inputs all embedded from one source, and its bias, which the position embedding carries, 0
    unless that source is the position's. Its coordinate is then that embedding's entry, added
    to zeros: nothing rounds it but storing it."""
    if not (isinstance(op, Linear) and op.out.encoding == ir.NUMERICAL):
        return False
    sources = {w.source if isinstance(w, Embed) else None for w in (writers.get(var) for var in op.inputs)}
    if len(sources) != 1 or None in sources:
        return False
    return sources != {EmbedSource.TOKENS} or not any(op.bias.values())


def _stored_error(out: Var, dtype: DTypeLike) -> float:
    """Storing each of `out`'s values in the dtype: |v - dtype(v)| (0 for integers)."""
    return max((abs(float(v) - float(np.asarray(v, dtype))) for v in out.values), default=0.0)


def _op_error(op: Op, fresh: dict[Var, float], bounds: dict[Var, float], max_len: int, dtype: DTypeLike) -> float:
    """What `op`'s output takes on besides the rounding carried_magnitudes charges: from `fresh`,
    its inputs' such errors (carried through lines and means, whose rounding the carried magnitude
    already counts), or `bounds`, their whole errors (read by a polyline, which starts afresh)."""
    numerical = op.out.encoding == ir.NUMERICAL
    if isinstance(op, Embed):
        return _stored_error(op.out, dtype) if numerical else 0.0
    if isinstance(op, TableMLP):
        inputs = sum(bounds.get(var, 0.0) for var in op.inputs)
        return inputs * largest_magnitude(op.out.values) if numerical else inputs
    if isinstance(op, GatedMap):
        return _gated_error(op, fresh, bounds, dtype)
    if isinstance(op, Linear):
        return _linear_error(op, fresh, dtype)
    assert isinstance(op, Attend)  # a NumericMLP is a decode (as_decode), never measured here
    return _attend_error(op, fresh, bounds, max_len, dtype)


def _decode_error(number: Var, answers: list[Any], interpolated: bool, out: Var, bounds: dict[Var, float],
                  dtype: DTypeLike) -> float:
    """A map of `number` taking `answers` at its values: flat steps, or the polyline (worst value)."""
    return float(np.max(decode_errors(number, answers, interpolated, out, bounds.get(number, 0.0), dtype), initial=0.0))


def decode_errors(number: Var, answers: list[Any], interpolated: bool, out: Var, errors: float | np.ndarray,
                  dtype: DTypeLike) -> np.ndarray:
    """_decode_error at each of `number`'s values: steps write each answer to their own rounding
    (0 for a one-hot: its readers allow 1/2); a polyline passes the input's error on times its
    steeper slope beside that value, plus its rounding there. `errors`: the input's error bound,
    at each of its values or one for all. [len(number.values)]"""
    scale = unit_roundoff(dtype) / FLOAT32_U  # numeric_mlp's bounds are written for float32's u
    numerical = out.encoding == ir.NUMERICAL
    if not interpolated:
        return step_output_errors(number.values, answers, errors, dtype) * scale if numerical else np.zeros(len(answers))
    if numerical:
        encoded = [np.array([float(a)]) for a in answers]
        rises = np.abs(np.diff([float(a) for a in answers]))
    else:
        encoded = [np.eye(len(out.values))[out.position[a]] if a is not None else np.zeros(len(out.values))
                   for a in answers]
        rises = np.array([float(a != b) for a, b in zip(answers, answers[1:])])
    slopes = rises / np.diff(np.asarray(number.values, dtype=float))
    beside = np.maximum(np.append(0.0, slopes), np.append(slopes, 0.0))  # the steeper of the two sides
    errors = np.broadcast_to(np.asarray(errors, dtype=float), beside.shape)
    if errors.max(initial=0.0) >= smallest_gap(number.values):  # it may cross more than one side
        beside[:] = slopes.max(initial=0.0)
    polyline = interpolation_errors(number.values, encoded).max(axis=1) + 2 * FLOAT32_U * np.abs(encoded[0]).max()
    return beside * errors + polyline * scale  # (+ the output bias's addition)


def _gated_error(op: GatedMap, fresh: dict[Var, float], bounds: dict[Var, float], dtype: DTypeLike) -> float:
    """A GatedMap: the worst of its pieces, plus its gate's error times what a piece may write."""
    gate = bounds.get(op.gate, 0.0)
    if op.out.encoding == ir.NUMERICAL:
        gate *= 2 * max(1.0, largest_magnitude(op.out.values))
    if op.affine:
        slope = max(abs(a) for a, _ in op.affine.values())
        return slope * fresh.get(op.input, 0.0) + gate
    pieces = [_decode_error(op.input, list(op.answers[g]), g in op.interpolated, op.out, bounds, dtype)
              for g in op.gate.values]
    return max(pieces, default=0.0) + gate


def _linear_error(op: Linear, fresh: dict[Var, float], dtype: DTypeLike) -> float:
    """sum |c| err over each output coordinate, the worst coordinate (a one-hot's: plus the rounding
    of its coefficients' sums, which no carried magnitude counts)."""
    per_output: dict[str, float] = {}
    for (var, _), row in op.weights.items():
        for label, c in row.items():
            per_output[label] = per_output.get(label, 0.0) + abs(c) * fresh.get(var, 0.0)
    rounding = 0.0
    if op.out.encoding != ir.NUMERICAL:
        sizes = [sum(abs(c) for c in row.values()) for row in op.weights.values()]
        rounding = ROUNDINGS * unit_roundoff(dtype) * (max(sizes, default=0.0) + max(map(abs, op.bias.values()), default=0.0))
    return max(per_output.values(), default=0.0) + rounding


def _attend_error(op: Attend, fresh: dict[Var, float], bounds: dict[Var, float], max_len: int, dtype: DTypeLike) -> float:
    """An aggregate or a width head (module docstring); the tilt reads the score's features' whole errors."""
    value_error = fresh.get(op.value, 0.0) if op.value is not None else 0.0
    if op.kind is HeadKind.CATEGORICAL:
        return CATEGORICAL_LEAK / op.amplification + value_error
    if op.kind is HeadKind.WIDTH:
        sharpness, leak = width_sharpness(op, max_len)
        return leak + _tilt(op, bounds, sharpness)
    sharpness, leak = numerical_sharpness(op, max_len)
    assert op.value is not None  # an aggregate's head reads a value (numerical_sharpness asserts it)
    values = op.value.values + (op.default,)
    default = abs(float(op.default) - float(np.asarray(op.default, dtype)))
    weights = 1 + 2 * (max_len + 2) * unit_roundoff(dtype)  # the softmax's weights sum to 1, rounded
    return weights * max(value_error, default) + leak + _tilt(op, bounds, sharpness) * spread(values)


def _tilt(op: Attend, bounds: dict[Var, float], sharpness: float) -> float:
    """How far the weights of two keys meant to score alike may differ, relatively: exp(2 d) - 1,
    d bounding the change of any score (q . k, in units of `sharpness` on q) by its features'
    errors. 0 when every feature is exact: equal scores then come from the same float products."""
    if not any(bounds.get(var, 0.0) for var in op.score.reads()):
        return 0.0  # every feature exact (a head over embedded one-hots: thousands of columns not to walk)
    change = 0.0
    for column in op.score.columns:
        q_size, q_error = _form(column.q, bounds)
        k_size, k_error = _form(column.k, bounds)
        change += q_error * (k_size + k_error) + q_size * k_error
    if change == 0.0:
        return 0.0
    return math.expm1(min(2 * sharpness * change, 700.0))


def _form(form: dict[Any, float], bounds: dict[Var, float]) -> tuple[float, float]:
    """A linear form {feature: coefficient}: the largest it can be and the most its features'
    errors can move it. A number's term is at most |c| times its largest value; a one-hot holds 1 in
    one coordinate at most (none: in none), so its terms are at most its largest |c|, and each
    coordinate's error counts with its own |c|."""
    size = error = 0.0
    one_hots: dict[Var, float] = {}
    for feature, c in form.items():
        if feature is CONSTANT:
            size += abs(c)
            continue
        var = feature[0]
        if var.encoding == ir.NUMERICAL:
            size += abs(c) * largest_magnitude(var.values)
        else:
            one_hots[var] = max(one_hots.get(var, 0.0), abs(c))
        error += abs(c) * bounds.get(var, 0.0)
    return size + sum(one_hots.values()), error
