"""digit-matches: an index matched to a target digit by digit, where float32 cannot carry the plain
position match of passes/position_selects.py (past max_len 1,024 or so).

Why. The plain match scores 2 p t - p^2 + (1 - t^2): terms as large as max_len^2 whose sum is 1
at the target and at most 0 elsewhere. float32 rounds each product and sum to u = 2^-24 of its
size, so the score's error grows as u max_len^2: 0.25 S at 1,024 for an uncentred match, 1 S at
2,048, past every margin at 4,096 (match_errors.fits_float32 charges it).

Digits. With B = ceil(sqrt(max_len)), an integer t is the pair (h, l): h = floor(t / B) and l its
remainder r, or B - 1 - r when h is odd. The low digit runs up and back down, so t and t + 1
differ by 1 in exactly one digit; integers and pairs correspond one to one (-1 is (-1, 0)). The
score

    2 h_p h_t - h_p^2 + 2 l_p l_t - l_p^2 + (1 - h_t^2 - l_t^2) = 1 - (h_p - h_t)^2 - (l_p - l_t)^2

is 1 at the target, at most 0 at every other index and 0 at the target's neighbours, as the plain
match's. Its four products (2 h_t h_p, 2 l_t l_p, h_p^2 + l_p^2 and the target's match) stay
below 2 B^2 each (about 8,000 at max_len 4,096), so their rounding is about 0.002 S, whatever
max_len this compiler accepts; the key side is three position features (h, l, h^2 + l^2), the
query side three features of the target, in place of two and two.

From a one-hot (digit_term): the target's digits and 1 - h^2 - l^2 are linear features the other
side's writer writes, its step MLPs' errors bounded as the plain match's (weights 2 B, not
2 max_len), and the score's rounding as the plain match's (match_errors.fits_float32).

From a number x, for a sure match (digit_number_match; position_selects.number_match): the
three are polylines of x through their values at x's values, whose targets a x + b must be
consecutive whole numbers; B is then NUMBER_DIGIT_BASE, wider, for fewer kinks. An error e in x moves them along the chord between two neighbouring
values, whose targets differ by 1 in one digit: the score of every key is linear on the chord and
exact at its ends, so the match scores at least 1 - |a e| and its neighbour at most |a e|, as in
position_selects.number_match. The polylines' own rounding: an error d in the target's digit
moves key p's score by 2 p_digit d, and against the match's by 2 (p_digit - t_digit) d, which a
key |p_digit - t_digit| from the target more than loses by its (p_digit - t_digit)^2 below; so
2 d of each digit is charged, with the products' rounding, against SURE_ROUNDING_ERROR. The
match term 1 - h^2 - l^2 is a polyline with a kink at every value of x, whose float32 error
grows as u max_len^2 (17 S measured at 4,096): it is the same for every key of a query, and BOS
scores as a key with no features (primitives/qk.py), so it shifts BOS too and no margin moves.
"""

from __future__ import annotations

import math
from typing import Any

from ... import ir
from ..lowering.features import linear_feature
from ..lowering.positions import position_feature
from ..lowering.state import LoweringState
from ..ops import EmbedSource, NumericMLP
from ..selector_terms import PositionMatch
from ..tolerances import SURE_ROUNDING_ERROR
from ..variables import Var
from .match_errors import Column, fits_float32, polyline_error, precise_enough


NUMBER_DIGIT_BASE = 512
"""The base of a digit match from a number: its high and low polylines kink only where the high
digit changes (4 max_len / B hidden units; 32 at max_len 4,096 where B = sqrt(max_len) would take
256), and its products stay below 2 B^2 = 524,288, rounded to 0.06 S at most."""


def digit_base(max_len: int) -> int:
    """B: the smallest whole number whose square is at least max_len."""
    return math.isqrt(max_len - 1) + 1


def digits(t: int, base: int) -> tuple[int, int]:
    """(h, l) of the module docstring: floor(t / base), and the remainder, reflected when h is odd."""
    h, r = divmod(t, base)
    return h, (r if h % 2 == 0 else base - 1 - r)


def digit_term(state: LoweringState, positions_are_keys: bool, other: Var, target: dict[Any, int]) -> PositionMatch | None:
    """`index == target(other value)` digit by digit, from linear features of `other`'s one-hot
    (target -1: no index); None when its step MLPs or the score's rounding are too large."""
    base = digit_base(state.program.max_len)
    high, low, match = (dict(zip(target, values)) for values in target_digits(list(target.values()), base))
    keys = target_digits(list(range(state.program.max_len)), base)[:2]
    weights = [2 * max(map(abs, side)) for side in keys]
    if not precise_enough(other, [(high, weights[0]), (low, weights[1]), (match, 1.0)], state):
        return None
    if not fits_float32(_digit_columns(keys, list(high.values()), list(low.values()), list(match.values()))):
        return None
    features = [linear_feature(state, f"{other.label}.{name}", other, values.__getitem__)
                for name, values in (("target_high", high), ("target_low", low), ("digit_match", match))]
    return _digit_match(state, positions_are_keys, base, features)


def digit_number_match(state: LoweringState, positions_are_keys: bool, x: Var, line: tuple[float, float],
                       sure: bool) -> PositionMatch | None:
    """`index == a x + b` digit by digit, from polylines of the number x (module docstring), for a
    sure match only; None when the targets at x's values are not consecutive whole numbers or the
    digits' rounding is too large. x's own error is bounded by the caller
    (position_selects.number_match)."""
    a, b = line
    targets = [a * float(v) + b for v in x.values]
    if not sure or any(t != round(t) for t in targets) or any(abs(t1 - t0) != 1 for t0, t1 in zip(targets, targets[1:])):
        return None
    base = NUMBER_DIGIT_BASE
    high, low, match = target_digits([round(t) for t in targets], base)
    keys = target_digits(list(range(state.program.max_len)), base)[:2]
    columns = _digit_columns(keys, high, low, match)
    if not fits_float32(columns, 2 * sum(polyline_error(x.values, values) for values in (high, low)), SURE_ROUNDING_ERROR):
        return None

    def polyline(name: str, values: list[float]) -> Var:
        def make() -> NumericMLP:
            out = state.new_var(f"{x.label}.{name}", ir.NUMERICAL, values)
            return NumericMLP(out, x, dict(zip(x.values, values)).__getitem__, interpolated=True)
        return state.cached("digit match", (x, a, b, base, name), make)

    features = [polyline(name, values) for name, values in (("target_high", high), ("target_low", low), ("digit_match", match))]
    return _digit_match(state, positions_are_keys, base, features, sure)


def _digit_columns(keys: tuple[list[float], list[float]], high: list[float], low: list[float],
                   match: list[float]) -> list[Column]:
    """The four head dimensions of a digit match: (2 h, h_p), (2 l, l_p), (1, h_p^2 + l_p^2), (m, 1)."""
    norms = [h * h + lo * lo for h, lo in zip(*keys)]
    return [([2 * v for v in high], keys[0]), ([2 * v for v in low], keys[1]), ([1.0], norms), (match, [1.0])]


def target_digits(targets: list[int], base: int) -> tuple[list[float], list[float], list[float]]:
    """The high digits, the low digits and 1 - high^2 - low^2 of the targets."""
    split = [digits(t, base) for t in targets]
    return [float(hi) for hi, _ in split], [float(lo) for _, lo in split], [1.0 - hi * hi - lo * lo for hi, lo in split]


def _digit_match(state: LoweringState, positions_are_keys: bool, base: int, features: list[Var],
                 sure: bool = False) -> PositionMatch:
    """The PositionMatch of the digits: the index's three position features (high digit, low
    digit, high^2 + low^2), and the other side's high digit, low digit and match (1 - h^2 - l^2)."""
    high, low, match = ({(f, None): 1.0} for f in features)
    position = [position_feature(state, f"indices.{name}", EmbedSource.INDICES, fn) for name, fn in (
        ("high", lambda p: digits(p, base)[0]), ("low", lambda p: digits(p, base)[1]),
        ("digit_norm", lambda p: digits(p, base)[0] ** 2 + digits(p, base)[1] ** 2))]
    return PositionMatch(positions_are_keys, position[0], position[2], high, match, sure=sure, more=((position[1], low),))
