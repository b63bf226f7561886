"""interpolated_steps: which step MLPs may interpolate between values instead of stepping.

A categorical view of a width or a mean (numeric_mlp.py) is exact by flat steps, two hidden units
per step; the polyline through the same values (numeric_mlp.interpolation_mlp) needs one unit
per value but passes on what the input strays, multiplied by its slope (1/gap), and adds float32
rounding. We use it where the error provably cannot matter: the one-hot is read only by the
scores of categorical aggregates, whose selected keys lead by S (BOS by S/2).

The bound. Let every coordinate of the one-hot be off by at most e. A reader head scores
sum_j q_j k_j; with the one-hot on (say) the key side, column j's key moves by at most
e * c_j, c_j the sum of |coefficients| of the one-hot's coordinates in it, so the score moves by
at most e * B with B = max over query values of sum_j |q_j| c_j (enumerated; the query side must
read only categorical variables). Allowing INTERPOLATED_SCORE_ERROR of S gives e = that / B; half
of it goes to float32 (interpolation_error must stay below e/2) and half to the input's error: the
head writing the input gets window e/2, so its leak moves the input by at most e/2 of a gap and
the polyline by at most e/2. Otherwise the steps stay flat. A mean's input also carries rounding
(precision.py: in proportion to the magnitudes it went through); then the window is e/4 and the
rounding must stay below e/4 of the smallest gap. (A width's input, BOS's share, is a softmax
weight: its rounding is relative, and interpolation_error's margin covers it.)
"""

from __future__ import annotations

from itertools import product

import numpy as np

from .. import ir
from .margins import CATEGORICAL_LEAK, INTERPOLATED_SCORE_ERROR, smallest_gap
from .numeric_mlp import interpolation_error, step_output_error
from .ops import Attend, GatedMap, Linear, NumericMLP, Op, Var, readers_of
from .readout import Readout
from .precision import ROUNDINGS, carried_magnitudes, unit_roundoff
from .scores import CONSTANT

MAX_QUERY_ASSIGNMENTS = 10_000
"""The reader's other side is enumerated value by value up to this many combinations."""


def choose_interpolated_steps(ops: list[Op], readout: Readout) -> None:
    """Mark the NumericMLPs (and GatedMaps' pieces) that may interpolate and tighten their input
    heads' windows."""
    readers = readers_of(ops)
    writer = {op.out: op for op in ops}
    carried = carried_magnitudes(ops)
    answer = set(readout.inputs) if readout.classes is None else set()  # a numerical answer's variables
    for op in ops:
        if isinstance(op, NumericMLP) and op.out.encoding == ir.NUMERICAL and _only_answers(op.out, readers, answer):
            op.interpolated = _interpolation_is_closer(op)
            continue
        if isinstance(op, GatedMap) and not op.affine and op.out.encoding == ir.NUMERICAL:
            if _only_answers(op.out, readers, answer):
                op.interpolated = frozenset(g for g in op.gate.values if _interpolation_is_closer(op.piece(g)))
            continue
        if not isinstance(op, NumericMLP) or op.out.encoding != ir.CATEGORICAL or op.out in readout.inputs:
            continue
        head = writer.get(op.input)
        if not isinstance(head, Attend) or not readers.get(op.out):
            continue
        bounds = [_score_bound(op.out, reader) for reader in readers[op.out]]
        if any(b is None for b in bounds):
            continue
        tolerance = INTERPOLATED_SCORE_ERROR / max(max(bounds), 1e-12)
        points = op.input.values
        encoded = [_one_hot(op.out, op.fn(p)) for p in points]
        rounding = min(interpolation_error(points, encoded, rising) for rising in (True, False))
        if rounding > tolerance / 2:
            continue
        input_share = tolerance / 2
        if head.kind == "numerical":
            input_share = tolerance / 4
            carried_rounding = ROUNDINGS * unit_roundoff(np.float32) * carried[op.input]
            if carried_rounding > input_share * smallest_gap(points):
                continue
        op.interpolated = True
        head.window = min(head.window, input_share)


def _one_hot(var: Var, value) -> np.ndarray:
    out = np.zeros(len(var.values))
    if value is not None:
        out[var.position[value]] = 1.0
    return out


def _score_bound(var: Var, reader: Op) -> float | None:
    """B above for one reader, or None when the reader is not a categorical aggregate's score
    reading `var` on one side against categorical variables on the other."""
    if not isinstance(reader, Attend) or reader.kind != "categorical" or reader.value is var:
        return None
    columns = reader.score.columns
    on_key = any(f is not CONSTANT and f[0] is var for c in columns for f in c.k)
    on_query = any(f is not CONSTANT and f[0] is var for c in columns for f in c.q)
    if on_key == on_query:
        return None
    mine = [c.k if on_key else c.q for c in columns]
    other = [c.q if on_key else c.k for c in columns]
    weight = [sum(abs(a) for f, a in form.items() if f is not CONSTANT and f[0] is var) for form in mine]
    other_vars = list(dict.fromkeys(f[0] for form in other for f in form if f is not CONSTANT))
    if any(v.encoding != ir.CATEGORICAL for v in other_vars):
        return None
    domains = [v.domain for v in other_vars]
    if np.prod([len(d) for d in domains], dtype=float) > MAX_QUERY_ASSIGNMENTS:
        return None
    worst = 0.0
    for assignment in product(*domains):
        active = {CONSTANT} | {(v, value) for v, value in zip(other_vars, assignment) if value is not None}
        total = sum(abs(sum(a for f, a in form.items() if f in active)) * w for form, w in zip(other, weight))
        worst = max(worst, total)
    return worst


def _only_answers(var: Var, readers: dict, answer: set) -> bool:
    """Whether `var` is the numerical answer, or read only by linear maps that are (x*x + 1)."""
    if var in answer:
        return True
    reading = readers.get(var, [])
    return bool(reading) and all(isinstance(r, Linear) and r.out in answer for r in reading)


def _interpolation_is_closer(op: NumericMLP) -> bool:
    """For a numerical answer: whether the polyline's float32 error, plus its input's leak
    (CATEGORICAL_LEAK) times its steepest slope, is below the flat steps' rounding."""
    points = op.input.values
    answers = [float(op.fn(p)) for p in points]
    encoded = [np.array([a]) for a in answers]
    rounding = min(interpolation_error(points, encoded, rising) for rising in (True, False))
    steepest = max((abs(b - a) / (q - p) for p, q, a, b in zip(points, points[1:], answers, answers[1:])), default=0.0)
    return rounding + steepest * CATEGORICAL_LEAK < step_output_error(points, answers)
