"""position-selects, from a number: an index matched to a target that is a line in a number x
(the categorical view of x is the select's other side) is scored from x itself, with no one-hot
of x and no error amplified by the target's size.

With c the middle index, p' = p - c and t' = a x + b - c, the score is

    2 p' t' - p'^2 + m(x)        m(x) = 1 - t'(x)^2, written by a polyline MLP of x

which is 1 - (p - t)^2 when m is exact. The target form reads x's own coordinate and m is the
polyline through m's values at x's values, so an error e in x (|a e| <= 1/8) moves both
consistently: on the chord between two values the match scores at least 1 - |a e| and its
neighbours at most |a e| (units of S), whatever the target's size (position_selects.py's
one-hot features are read through step MLPs whose errors add up over every value instead). The
polyline's own float rounding shifts each query's scores alike, which matters only against
BOS (S/2 below the match): it must stay within POSITION_MATCH_ERROR, unless the select surely
selects (below), where BOS is scored under every key and only the keys' order counts.

Sure selection: when x is the length plus a position row (passes/position_widths.py), its value
at position p of a length n is known, and if the target is an index 0..n-1 at every p < n <=
max_len, the query always has its key: reverse's n - 1 - p.

Needs: x's writer known (a Linear of an attention mean and embeddings, an embedding, an
attention mean) to bound its error. Guarantees: the head selects the keys the plain table does.
"""

from __future__ import annotations

import numpy as np

from ... import ir
from ..lowering.positions import position_feature
from ..lowering.state import LoweringState
from ..lowering.views import viewed_number
from ..ops import Attend, Embed, Linear, NumericMLP
from ..error_bounds import largest_magnitude, unit_roundoff
from ..primitives.numeric_mlp import interpolation_error
from ..selector_terms import PositionMatch
from ..tolerances import CATEGORICAL_LEAK, NUMBER_MATCH_ERROR, POSITION_MATCH_ERROR, ROUNDINGS
from ..variables import CONSTANT, Var


def number_match(state: LoweringState, positions_are_keys: bool, other: Var, target: dict) -> PositionMatch | None:
    """The PositionMatch of the module docstring for `index == target(other)`, `other` the
    categorical view of a number; None when the target is no line in that number, the number's
    error is unknown or too large, or float32 cannot keep the polyline within its margin."""
    view = viewed_number(state, other)
    if view is None or other.may_be_none:
        return None
    x = view.input
    line = _line(x, {v: target[view.fn(v)] for v in x.values}, state.program.max_len)
    error = _number_error(state, x)
    if line is None or error is None or abs(line[0]) * error > NUMBER_MATCH_ERROR:
        return None
    a, b = line
    c = (state.program.max_len - 1) // 2
    sure = positions_are_keys and _surely_matched(state, x, a, b)
    match_values = [1.0 - (a * v + b - c) ** 2 for v in x.values]
    if not sure and _polyline_error(x.values, match_values) > POSITION_MATCH_ERROR:
        return None

    def make() -> NumericMLP:
        out = state.new_var(f"{other.label}.match", ir.NUMERICAL, match_values)
        return NumericMLP(out, x, dict(zip(x.values, match_values)).__getitem__, interpolated=True)

    match = state.cached("number match", (x, a, b, c), make)
    position = position_feature(state, "indices.centred", "indices", lambda p: p - c)
    squared = position_feature(state, "indices.centred^2", "indices", lambda p: (p - c) ** 2)
    return PositionMatch(positions_are_keys, position, squared, {(x, None): a, CONSTANT: b - c},
                         {(match, None): 1.0}, sure=sure)


def _line(x: Var, target: dict, n: int) -> tuple[float, float] | None:
    """(a, b) with target = a v + b at every matched value v of x, the line meeting no index
    0..n-1 at the unmatched ones; None otherwise."""
    matched = [(float(v), t) for v, t in target.items() if t >= 0]
    if len(matched) < 2:
        return None
    (v0, t0), (v1, t1) = matched[0], matched[-1]
    a = (t1 - t0) / (v1 - v0)
    b = t0 - a * v0
    for v, t in target.items():
        y = a * float(v) + b
        if (t >= 0 and y != t) or (t < 0 and 0 <= y <= n - 1 and y == int(y)):
            return None
    return a, b


def _number_error(state: LoweringState, x: Var) -> float | None:
    """A bound on x's float32 error where the head reads it: an embedding's is nil; an
    attention mean's is its leak (at most CATEGORICAL_LEAK) plus ROUNDINGS roundings of its
    largest value; a Linear's, its inputs' errors and roundings weighted by its coefficients."""
    u = unit_roundoff(np.float32)
    writer = state.writer.get(x)
    if isinstance(writer, Embed):
        return ROUNDINGS * u * largest_magnitude(x.values)
    if isinstance(writer, Attend) and writer.kind == "numerical":
        return CATEGORICAL_LEAK + ROUNDINGS * u * largest_magnitude(x.values)
    if isinstance(writer, Linear):
        total = ROUNDINGS * u * largest_magnitude(x.values)
        for (var, _), row in writer.weights.items():
            inner = _number_error(state, var)
            if inner is None:
                return None
            total += sum(abs(c) for c in row.values()) * inner
        return total
    return None


def _surely_matched(state: LoweringState, x: Var, a: float, b: float) -> bool:
    """Whether x = n + offset(p) (position_widths) puts the target on an index 0..n-1 at every
    position p < n of every length n <= max_len."""
    offset = state.length_offsets.get(x)
    if offset is None:
        return False
    n = np.arange(1, state.program.max_len + 1)[:, None]
    p = np.arange(state.program.max_len)[None, :]
    target = a * (n + np.asarray(offset, dtype=float)[None, :]) + b
    valid = p < n
    return bool(np.all(((target >= 0) & (target <= n - 1) & (target == np.round(target)))[np.broadcast_to(valid, target.shape)]))


def _polyline_error(points: tuple, values: list) -> float:
    """The float32 rounding of the polyline through (points, values), in its better orientation."""
    encoded = [np.array([v]) for v in values]
    return min(interpolation_error(points, encoded, rising) for rising in (True, False))
