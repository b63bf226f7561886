"""interpolated-steps: which step MLPs may interpolate between values instead of stepping.

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

A numerical answer (or a line of it) written by steps is interpolated where the polyline's float32
error plus its input's leak times its slope is below the steps' rounding; `answer_by_steps` undoes
that where the input carries more than its leak (the driver asks the precision analysis, for a
program with too many inputs for the every-input check).

Needs: the read-out chosen and dead ops dropped (every reader is known). Guarantees: every
interpolated decode's readers see at most INTERPOLATED_SCORE_ERROR of S, through the new
`Attend.window` of the head writing its input (primitives use it for the head's sharpness).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ... import ir
from ..ops import Attend, GatedMap, Graph, HeadKind, Linear, NumericMLP, Op, readers_of, replaced
from ..error_bounds import carried_magnitudes, unit_roundoff
from ..primitives.numeric_mlp import interpolation_error, step_output_error
from ..limits import MAX_QUERY_ASSIGNMENTS
from ..tolerances import CATEGORICAL_LEAK, INTERPOLATED_SCORE_ERROR, ROUNDINGS, smallest_gap
from ..variables import CONSTANT, Var


def interpolate_steps(graph: Graph) -> Graph:
    """`graph` with the NumericMLPs (and GatedMaps' pieces) that may interpolate marked so, and
    the windows of the heads writing their inputs tightened."""
    readers = readers_of(graph.ops)
    writer = graph.writers()
    carried = carried_magnitudes(graph.ops)
    answer = set(graph.readout.inputs) if graph.readout.classes is None else set()  # a numerical answer's variables
    changed: dict[Op, Op] = {}
    windows: dict[Attend, float] = {}
    for op in graph.ops:
        if isinstance(op, NumericMLP | GatedMap) and op.out.encoding == ir.NUMERICAL:
            if _only_answers(op.out, readers, answer):
                changed[op] = _for_a_numerical_answer(op)
            continue
        if not isinstance(op, NumericMLP) or op.out.encoding != ir.CATEGORICAL or op.out in graph.readout.inputs:
            continue
        head = writer.get(op.input)
        if not isinstance(head, Attend) or not readers.get(op.out):
            continue
        window = _decode_window(op, head, readers[op.out], carried)
        if window is not None:
            changed[op] = replaced(op, interpolated=True)
            windows[head] = min(windows.get(head, head.window), window)
    for head, window in windows.items():
        changed[head] = replaced(head, window=window)
    return dataclasses.replace(graph, ops=tuple(changed.get(op, op) for op in graph.ops))


def answer_by_steps(graph: Graph) -> Graph | None:
    """`graph` with every decode this pass interpolated for the numerical answer (or a line of
    it) back on flat steps, or None when there is none. The pass chose the polyline counting only
    its input's leak; the driver takes the steps where the precision analysis proves them and not
    the polyline (a mean whose score features carry rounding also tilts its selected keys' weights,
    error_bounds.py, which the polyline passes on times its slope)."""
    readers = readers_of(graph.ops)
    answer = set(graph.readout.inputs) if graph.readout.classes is None else set()
    changed: dict[Op, Op] = {
        op: replaced(op, interpolated=False if isinstance(op, NumericMLP) else frozenset())
        for op in graph.ops
        if isinstance(op, NumericMLP | GatedMap) and op.interpolated and _only_answers(op.out, readers, answer)
    }
    if not changed:
        return None
    return dataclasses.replace(graph, ops=tuple(changed.get(op, op) for op in graph.ops))


def _for_a_numerical_answer(op: NumericMLP | GatedMap) -> Op:
    """A step MLP writing (a line of) the numerical answer, interpolated where that is closer."""
    if isinstance(op, NumericMLP):
        return replaced(op, interpolated=_interpolation_is_closer(op))
    if op.affine:
        return op
    return replaced(op, interpolated=frozenset(g for g in op.gate.values if _interpolation_is_closer(op.piece(g))))


def _decode_window(op: NumericMLP, head: Attend, readers: list[Op], carried: dict[Var, float]) -> float | None:
    """The window the input head must keep for `op` (a categorical view of `head`'s number) to
    interpolate (module docstring), or None when its readers or float32 do not allow it."""
    listed = [_score_bound(op.out, reader) for reader in readers]
    bounds = [b for b in listed if b is not None]
    if len(bounds) < len(listed):
        return None
    tolerance = INTERPOLATED_SCORE_ERROR / max(max(bounds), 1e-12)
    points = op.input.values
    encoded = [_one_hot(op.out, a) for a in op.answers]
    rounding = min(interpolation_error(points, encoded, rising) for rising in (True, False))
    if rounding > tolerance / 2:
        return None
    if head.kind is not HeadKind.NUMERICAL:
        return tolerance / 2
    carried_rounding = ROUNDINGS * unit_roundoff(np.float32) * carried[op.input]
    if carried_rounding > tolerance / 4 * smallest_gap(points):
        return None
    return tolerance / 4


def _one_hot(var: Var, value: Any) -> np.ndarray:
    out = np.zeros(len(var.values))
    if value is not None:
        out[var.position[value]] = 1.0
    return out


def _score_bound(var: Var, reader: Op) -> float | None:
    """B above for one reader, or None when the reader is not a categorical aggregate's score
    reading `var` on one side against categorical variables on the other."""
    if not isinstance(reader, Attend) or reader.kind is not HeadKind.CATEGORICAL or reader.value is var:
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
    total = np.zeros([len(d) for d in domains])  # [one axis per other variable]: every assignment
    for form, w in zip(other, weight):
        total = total + np.abs(_form_scores(form, other_vars, domains)) * w
    return float(np.max(total, initial=0.0))


def _form_scores(form: dict[Any, float], other_vars: list[Var], domains: list[tuple[Any, ...]]) -> np.ndarray:
    """One column's side, sum of the coefficients of its active features, at every assignment of
    `other_vars` (an axis each; a variable at None activates none of its features). The terms are
    added in the form's order, as a sum over the active features alone would add them: adding the
    inactive ones' 0.0 changes no bit."""
    shape = [len(d) for d in domains]
    scores = np.zeros(shape)
    for feature, coefficient in form.items():
        if feature is CONSTANT:
            scores = scores + coefficient
            continue
        var, value = feature
        axis = other_vars.index(var)
        active = np.array([value is not None and candidate == value for candidate in domains[axis]])
        scores = scores + np.where(active, coefficient, 0.0).reshape([-1 if i == axis else 1 for i in range(len(shape))])
    return scores


def _only_answers(var: Var, readers: dict[Var, list[Op]], answer: set[Var]) -> bool:
    """Whether `var` is the numerical answer, or read only by linear maps that are (x*x + 1)."""
    if var in answer:
        return True
    reading = readers.get(var, [])
    return bool(reading) and all(isinstance(r, Linear) and r.out in answer for r in reading)


def _interpolation_is_closer(op: NumericMLP) -> bool:
    """For a numerical answer: whether the polyline's float32 error, plus its input's leak
    (CATEGORICAL_LEAK) times its steepest slope, is below the flat steps' rounding."""
    points = op.input.values
    answers = [float(a) for a in op.answers]
    encoded = [np.array([a]) for a in answers]
    rounding = min(interpolation_error(points, encoded, rising) for rising in (True, False))
    steepest = float(np.max(np.abs(np.diff(answers)) / np.diff(np.asarray(points, dtype=float)), initial=0.0))
    return rounding + steepest * CATEGORICAL_LEAK < step_output_error(points, answers)
