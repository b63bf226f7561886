"""binary-products: a running mean times its count, as the count's binary digits gating the mean.

In a causal program a mean over a select with `true` averages exactly c = i + 1 keys at
position i (frontend/cooccurrence.py), so `sequence_map(lambda b, n: b * n, balance, length)` is
a running sum. Gated by the length's one-hot (gated-maps) it takes one MLP piece and one residual
dimension per length: max_len² parameters in the position embedding alone. But c's binary digits
d_k (c = sum_k 2^k d_k) are a handful of exact position-embedded one-hots, and x d_k is x or 0:

    x * c = sum_k 2^k (x d_k)        each x d_k a GatedMap of x by d_k: one affine unit

with the digits of the index i = c - 1 instead (c = i + 1, so x c = sum_k 2^k (x d_k) + x), the
product takes log2(max_len) small pieces (10 digits at max_len 1,024) and a Linear summing them.
Each piece is built as (x - lo) d_k, lo the least mean, and lo d_k summed is lo i, a position
feature: the piece is then at least 0, one unit with no constant to switch on, so the digit's 1
coordinate is read by nothing and prune drops it (one residual dimension per digit, not two).
More generally, when the lines a_c x + b_c that f(., c) draws through the means
meeting each count c have a_c = alpha c + beta and b_c = gamma c + delta, f is
alpha (x c) + beta x + gamma c + delta.

Precision: each piece computes x d_k as exactly as x itself (an affine unit with the other digit
value's units switched off, primitives/gated_map.py); the sum weighs x's error by up to c, which
amplification.py counts (the mean's head leaks the less), and rounds by u per term, as
precision.py bounds any Linear (about 2e-3 at max_len 1,024, against the 1/8 a step needs).

Needs: the running mean and the count s-op (length or indices) of a causal program; runs as a
`SequenceMapSite` rewrite before gated-maps. Guarantees: on every pair that meets, the Linear's
value is f's, exactly as the pieces compute.
"""

from __future__ import annotations

from typing import Any

from ... import ir
from ..lowering.pairs import meeting
from ..lowering.positions import position_feature
from ..lowering.rewrites import SequenceMapSite
from ..lowering.state import LoweringState
from ..ops import Embed, EmbedSource, GatedMap, Linear
from ..tolerances import LINEAR_TOLERANCE
from ..variables import Var, coordinate, sorted_values
from .gated_maps import meeting_affine_pieces


def product_by_digits(state: LoweringState, site: SequenceMapSite) -> Linear | None:
    """`out = fn(first, second)` as the Linear of the module docstring, when one input is a
    running mean, the other the count it averages (length or indices), and f is affine in x and
    in x times the count on the pairs that meet; else None."""
    out, fn, first, second = site.out, site.fn, site.first, site.second
    if out.encoding != ir.NUMERICAL:
        return None
    for x, position, x_first in ((first, second, True), (second, first, False)):
        met = meeting(state, x, position)  # {length 1..n or index 0..n-1: the means meeting it}
        if met is None:
            continue
        offset = 1 - min(met)  # count = position value + offset: 0 for the length, 1 for the index
        pieces = meeting_affine_pieces(fn if x_first else ir.swapped(fn), met)
        form = pieces and _affine_in_count({value + offset: line for value, line in pieces.items()})
        if form:
            return _digits_sum(state, out, x, form)
    return None


def _affine_in_count(lines: dict[int, tuple[float, float]]) -> tuple[float, float, float, float] | None:
    """(alpha, beta, gamma, delta) with a_c = alpha c + beta and b_c = gamma c + delta for every
    count c's line (a_c, b_c), to LINEAR_TOLERANCE; None otherwise."""
    counts = sorted(lines)
    if len(counts) < 2:
        return None
    (c0, (a0, b0)), (c1, (a1, b1)) = (counts[0], lines[counts[0]]), (counts[-1], lines[counts[-1]])
    alpha, gamma = (a1 - a0) / (c1 - c0), (b1 - b0) / (c1 - c0)
    beta, delta = a0 - alpha * c0, b0 - gamma * c0
    for c, (a, b) in lines.items():
        for got, want in ((a, alpha * c + beta), (b, gamma * c + delta)):
            if abs(got - want) > LINEAR_TOLERANCE * max(1.0, abs(got)):
                return None
    if alpha == 0:
        return None  # no product: gated-maps or fold-linear build it as it is
    return alpha, beta, gamma, delta


def _digits_sum(state: LoweringState, out: Var, x: Var, form: tuple[float, float, float, float]) -> Linear:
    """alpha (sum_k 2^k (x d_k) + x) + beta x + gamma c + delta, d_k the index's digits, the
    pieces emitted here. Each piece is (x - lo) d_k, lo x's least value: at least 0, one unit
    with no constant of its own to switch (primitives/gated_map.py), so only the digit's 0
    coordinate is read; sum_k 2^k lo d_k = lo i = lo (c - 1) joins gamma and delta."""
    alpha, beta, gamma, delta = form
    label = coordinate(out, None)
    weights: dict[tuple[Var, Any], dict[str, float]] = {}
    low = float(x.values[0])
    values = tuple(sorted_values({float(v) - low for v in x.values} | {0.0}))
    for k in range((state.program.max_len - 1).bit_length()):
        digit = _index_digit(state, k)
        piece = state.new_var(f"{out.label}.digit{k}", ir.NUMERICAL, values, loc=out.loc, ordered=True)
        state.emit(GatedMap(piece, x, digit, lambda p, d: (p - low) * d, affine={0: (0.0, 0.0), 1: (1.0, -low)}))
        weights[(piece, None)] = {label: alpha * 2**k}
    if alpha + beta:  # x c = x i + x
        weights[(x, None)] = {label: alpha + beta}
    gamma, delta = gamma + alpha * low, delta - alpha * low
    if gamma:
        count = position_feature(state, "count", EmbedSource.INDICES, lambda p: p + 1)
        weights[(count, None)] = {label: gamma}
    return Linear(out, weights, {label: delta} if delta else {})


def _index_digit(state: LoweringState, k: int) -> Var:
    """The k-th binary digit of the index i at position i, an embedded one-hot over {0, 1}."""

    def make() -> Embed:
        digit = state.new_var(f"indices.digit{k}", ir.CATEGORICAL, (0, 1))
        return Embed(digit, EmbedSource.INDICES, lambda p: (p >> k) & 1)

    return state.cached("index digit", k, make)
