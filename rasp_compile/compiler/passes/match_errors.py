"""match-errors: how far float32 moves the score of a position match (passes/position_selects.py,
passes/digit_matches.py), in units of the sharpness S.

Three errors, each against the margin it may take (tolerances.py):
- the features' own errors: step MLPs writing the other side's one-hot (precise_enough) or the
  polylines of a number (polyline_error), weighted by the key features they multiply;
- the rounding of the score's own products and sums, u times score_magnitude: its terms reach
  max_len^2 while their sum is 1 or at most 0, so this is what bounds a plain match's max_len
  (fits_float32);
- for a sure match, the polyline's uniform shift against BOS (position_selects.number_match).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from ..lowering.state import LoweringState
from ..ops import Linear, NumericMLP
from ..primitives.numeric_mlp import interpolation_error, step_error
from ..tolerances import FLOAT32_U, POSITION_MATCH_ERROR, SCORE_ROUNDING_ERROR
from ..variables import Var

Column = tuple[Iterable[float], Iterable[float]]  # one head dimension: (its query values, its key values), in units of S


def score_magnitude(columns: Sequence[Column]) -> float:
    """The sum over head dimensions of the largest |query value| times the largest |key value|:
    what every product and partial sum of the score q·k stays within."""
    return sum(max(map(abs, q), default=0.0) * max(map(abs, k), default=0.0) for q, k in columns)


def match_columns(positions: Iterable[float], targets: Iterable[float], matches: Iterable[float]) -> list[Column]:
    """The three dimensions of a match 2 p t - p^2 + m: (2 t, p), (1, p^2), (m, 1)."""
    p, t = list(positions), list(targets)
    return [([2 * v for v in t], p), ([1.0], [v * v for v in p]), (list(matches), [1.0])]


def fits_float32(columns: Sequence[Column], other_errors: float = 0.0, allowed: float = SCORE_ROUNDING_ERROR) -> bool:
    """Whether u times the score's magnitude, plus `other_errors` that differ from key to key,
    stays within `allowed` (in units of S)."""
    return FLOAT32_U * score_magnitude(columns) + other_errors <= allowed


def precise_enough(other: Var, columns: Sequence[tuple[Mapping[Any, float], float]], state: LoweringState) -> bool:
    """Whether float32 carries the other side's features exactly enough: `columns` are
    (feature value by `other`'s value, the largest key value it is multiplied by).

    A step MLP computes each step to numeric_mlp.step_error; a step changes the features by
    what they change between its two values. So the score's error is at most step_error times
    the weighted total variation along the step MLP's input values (or, when the steps feed a
    linear fold in between, the cruder bound of every value's largest weighted sum). The match is
    kept only while that stays below POSITION_MATCH_ERROR (1/8 of the S/2 margin)."""
    writer = state.writer[other]
    if isinstance(writer, NumericMLP):
        along = writer.answers
        variation = sum(
            sum(weight * abs(feature[b] - feature[a]) for feature, weight in columns)
            for a, b in zip(along, along[1:])
        )
        return step_error(writer.input.values) * variation <= POSITION_MATCH_ERROR
    sources = [state.writer[v] for v in writer.inputs] if isinstance(writer, Linear) else []
    values = columns[0][0]
    amplification = len(values) * max(sum(weight * abs(feature[v]) for feature, weight in columns) for v in values)
    steps = [s for s in sources if isinstance(s, NumericMLP)]
    return all(step_error(s.input.values) * amplification <= POSITION_MATCH_ERROR for s in steps)


def polyline_error(points: tuple[Any, ...], values: Sequence[float]) -> float:
    """The float32 rounding of the polyline through (points, values), in its better orientation."""
    encoded = [np.array([v]) for v in values]
    return min(interpolation_error(points, encoded, rising) for rising in (True, False))
