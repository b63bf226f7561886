"""gray-matches: an index matched to a target bit by bit, in Gray code, where the target's one-hot
is written by flat steps whose errors the plain and digit matches cannot carry
(passes/position_selects.py, passes/digit_matches.py).

Why. sort_unique's `select(target, indices, ==)` matches a width, decoded by a step MLP from BOS's
share c/(c + w), to the index. The steps' slopes are about 8 max_len, so on a step's inexact side
its two units reach max_len in size, and float32's sum of them is good to about u max_len^2: 0.04
at max_len 1,024 for a number changing by 1 at each step, and its terms are summed in an order
NumPy's matmul chooses (numeric_mlp.summed_step_errors). A plain match multiplies the target's
error by 2 max_len, a digit match by 2 sqrt(max_len): past max_len 36 both are refused, and the
select became a one-hot table of max_len + 1 widths by max_len positions.

Gray code. With K = max_len.bit_length() bits, g(t) = t xor (t >> 1) names 0..2^K - 1 once each,
and t and t + 1 differ in exactly one bit. A target that matches no index is given g(max_len),
which no index has. The score

    sum_k (2 g_k(p) - 1) g_k(t) - (sum_k g_k(p) - 1) = 1 - (the bits in which g(p) and g(t) differ)

is 1 at the target and at most 0 at every other index, as the plain match's: in the terms of
selector_terms.PositionMatch, position features g_k(p) - 1/2 against target features g_k(t)
(the linear features of the one-hot, written by its own steps), g_k(p) summed less 1 as the
position's square, and no match term. A none, whose features are all 0, would match index 0:
the other side must never be none.

Errors. A target feature is multiplied by 2 g_k(p) - 1 = +-1, so the score's error is at most
the sum of the K features' errors; each feature changes by at most 1 at a step, and a Gray code
changes one bit per step, so together they are summed over the width's steps about once:
summed_step_errors bounds the sum at 0.087 S at max_len 1,024 (0.35 S at 2,048, refused). It is
charged, with the score's own rounding (u times K or so), against SCORE_ROUNDING_ERROR, the share of
the S/2 margin a plain match's rounding may take (match_errors.fits_float32), as a digit match from
a number charges its polylines' errors with its products.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..lowering.features import linear_feature
from ..lowering.positions import position_feature
from ..lowering.state import LoweringState
from ..ops import Attend, EmbedSource, HeadKind, NumericMLP
from ..primitives.numeric_mlp import summed_step_errors
from ..selector_terms import PositionMatch
from ..variables import Var
from .match_errors import Column, fits_float32


def gray(t: int) -> int:
    """The Gray code of t >= 0: t and t + 1 differ in exactly one bit."""
    return t ^ (t >> 1)


def gray_term(state: LoweringState, positions_are_keys: bool, other: Var, target: dict[Any, int]) -> PositionMatch | None:
    """`index == target(other value)` bit by bit (module docstring), from linear features of
    `other`'s one-hot written by flat steps from a width's BOS share; None when `other` is written
    otherwise or may be none, or the features' errors and the score's rounding pass
    SCORE_ROUNDING_ERROR."""
    writer = state.writer.get(other)
    if not isinstance(writer, NumericMLP) or writer.interpolated or other.may_be_none or not _reads_a_width(state, writer):
        return None
    n = state.program.max_len
    width = n.bit_length()
    code = {v: gray(t if t >= 0 else n) for v, t in target.items()}
    bits = [{v: float(c >> k & 1) for v, c in code.items()} for k in range(width)]
    errors = sum(float(np.max(summed_step_errors(writer.input.values, [b[a] for a in writer.answers]), initial=0.0))
                 for b in bits)
    positions = [[float(gray(p) >> k & 1) for p in range(n)] for k in range(width)]
    columns: list[Column] = [([2 * b - 1 for b in at], list(b_t.values())) for at, b_t in zip(positions, bits)]
    columns.append(([1.0], [sum(g) - 1 for g in zip(*positions)]))
    if not fits_float32(columns, errors):
        return None
    features = [linear_feature(state, f"{other.label}.gray{k}", other, b.__getitem__) for k, b in enumerate(bits)]
    index_bits = [position_feature(state, f"indices.gray{k}", EmbedSource.INDICES, _centred_bit(k)) for k in range(width)]
    ones = position_feature(state, "indices.gray_ones", EmbedSource.INDICES, lambda p: bin(gray(p)).count("1") - 1)
    pairs = tuple((bit, {(f, None): 1.0}) for bit, f in zip(index_bits, features))
    return PositionMatch(positions_are_keys, pairs[0][0], ones, pairs[0][1], {}, more=pairs[1:])


def _centred_bit(k: int) -> Callable[[int], float]:
    """The index's position feature for bit k: g_k(p) - 1/2."""
    return lambda p: (gray(p) >> k & 1) - 0.5


def _reads_a_width(state: LoweringState, writer: NumericMLP) -> bool:
    """Whether the steps read a width head's BOS share. Only such decodes take a Gray match: the
    one-hot of another number (most_freq's and sort_freq's rank, a sum of two widths) would take
    one as well (about 30% fewer parameters at max_len 64), but its steps are not measured
    against summed_step_errors (tests/test_gray_matches.py measures a width's)."""
    head = state.writer.get(writer.input)
    return isinstance(head, Attend) and head.kind is HeadKind.WIDTH
