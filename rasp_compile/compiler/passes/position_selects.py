"""position-selects: a select that pairs an index with at most one target is scored from four
numbers instead of a one-hot table over max_len indices (position_term), and in a causal
program a select between two position-only variables that the mask already decides becomes
`true` (causal_term).

Needs: the lowering's plain terms (lowering/selectors.py). Runs as two `TermSite` rewrites, as
each selector is lowered: the features it adds are embedded, or written by the other side's
writer. Guarantees: the head selects exactly the keys the plain table selects, with the same
margins (the feature errors are bounded by _precise_enough, or by _number_error below).

From a number (number_match): an index matched to a target that is a line in a number x (the
categorical view of x is the select's other side) is scored from x itself, with no one-hot of x
and no error amplified by the target's size.

With c the middle index, p' = p - c and t' = a x + b - c, the score is

    2 p' t' - p'^2 + m(x)        m(x) = 1 - t'(x)^2, written by a polyline MLP of x

which is 1 - (p - t)^2 when m is exact. The target form reads x's own coordinate and m is the
polyline through m's values at x's values, so an error e in x (|a e| <= 1/8) moves both
consistently: on the chord between two values the match scores at least 1 - |a e| and its
neighbours at most |a e| (units of S), whatever the target's size (the one-hot
features above are read through step MLPs whose errors add up over every value instead). The
polyline's own float rounding shifts each query's scores alike, which matters only against
BOS (S/2 below the match): it must stay within POSITION_MATCH_ERROR, unless the select surely
selects (below), where BOS is scored under every key and only the keys' order counts.

Sure selection: when x is the length plus a position row (position_widths.length_offset), its
value at position p of a length n is known, and if the target is an index 0..n-1 at every p < n <=
max_len, the query always has its key: reverse's n - 1 - p. BOS then sits 2S below the match, and
the polyline's rounding may take half of that (SURE_MATCH_ERROR).

Float32's rounding of the score itself (match_errors.fits_float32): its terms reach max_len^2
(a quarter of it centred) while their sum is 1 or at most 0. Where u times their size passes
SCORE_ROUNDING_ERROR (past max_len 1,024), or a sure match's polyline passes SURE_MATCH_ERROR,
the match is made digit by digit instead (passes/digit_matches.py), or not at all.

number_match needs x's writer known (a Linear of an attention mean and embeddings, an
embedding, an attention mean) to bound its error.
"""

from __future__ import annotations

from typing import Any
from collections.abc import Mapping

import numpy as np

from ... import ir
from ...frontend.infer import is_number
from ..error_bounds import largest_magnitude, unit_roundoff
from ..lowering.features import linear_feature
from ..lowering.positions import position_feature, position_source, values_by_position
from ..lowering.rewrites import TermSite
from ..lowering.state import LoweringState
from ..lowering.views import viewed_number
from ..ops import Attend, Embed, EmbedSource, HeadKind, Linear, NumericMLP
from ..selector_terms import PositionMatch, Term
from ..tolerances import CATEGORICAL_LEAK, NUMBER_MATCH_ERROR, POSITION_MATCH_ERROR, ROUNDINGS, SURE_MATCH_ERROR
from ..variables import CONSTANT, Var
from .digit_matches import digit_number_match, digit_term
from .gray_matches import gray_term
from .match_errors import fits_float32, match_columns, polyline_error, precise_enough
from .position_widths import length_offset


def causal_term(state: LoweringState, site: TermSite) -> Term | None:
    """In a causal program the mask already hides keys after the query, so a term between two
    position-only variables that holds for every key at or before its query (k <= q, say)
    always holds where it matters: it becomes `true`, which one constant scores."""
    term = site.term
    key_at, query_at = values_by_position(state, term.keys), values_by_position(state, term.queries)
    if not state.program.causal or key_at is None or query_at is None:
        return None
    table = term.table
    held = table.held[np.ix_(table.rows(key_at), table.columns(query_at))]  # [key position, query position]
    after = np.tri(len(key_at), k=-1, dtype=bool)  # the key after the query: masked
    if (held | after).all():
        return Term(term.keys, term.queries, table.with_held(np.ones_like(table.held)))
    return None


def position_term(state: LoweringState, site: TermSite) -> Term | None:
    """A term with the indices on one side that pairs each value of the other side with at most
    one index is `index == target(other value)`. primitives/qk.py scores it S - S (index - target)^2 from
    numbers instead of a one-hot table over max_len indices: index and index^2 from the position
    embedding, and from the other side's one-hot the linear functions sum_v target(v) x[v] and
    sum_v (1 - target(v)^2) x[v] (target -1 where no index matches), which that side's writer
    writes for free (lowering/linear.py). A none (all-zero one-hot) gets -S index^2 <= 0: no match.

    The heads of a split (split_keys.py) match `j + y` to the index for every value j: when the
    target is a line a v + b in the other side's (number) values, extended to values that match
    no index without coming within 1 of one (where they would score above 0), a split's other
    side writes both from three features all its heads share: sum_v v x[v], sum_v v^2 x[v] and
    sum_v x[v] (the constant, where the other side is never none), instead of two features per
    head: `site.shared` holds the sides all the heads of a split read alike."""
    term = site.term
    for positions_are_keys in (True, False):
        positions, other = (term.keys, term.queries) if positions_are_keys else (term.queries, term.keys)
        target = _index_targets(term, positions, other, positions_are_keys, state)
        from_number = target is not None and number_match(state, positions_are_keys, other, target)
        if from_number:
            return Term(term.keys, term.queries, term.table, from_number)
        if target is not None and _precise_enough(other, target, state) and _plain_fits(state, target):
            position = position_feature(state, "indices.value", EmbedSource.INDICES, lambda p: p)
            squared = position_feature(state, "indices.value^2", EmbedSource.INDICES, lambda p: p * p)
            match_at = {v: 1 - t ** 2 for v, t in target.items()}
            forms = (other in site.shared and _line_forms(other, target, state)) or (
                {(linear_feature(state, f"{other.label}.target", other, target.__getitem__), None): 1.0},
                {(linear_feature(state, f"{other.label}.match", other, match_at.__getitem__), None): 1.0},
            )
            match = PositionMatch(positions_are_keys, position, squared, *forms)
            return Term(term.keys, term.queries, term.table, match)
        # digits only where float32 rounds the plain score past its margin: a match the step
        # errors refuse keeps its one-hot table (a digit match there changed split-keys' choices)
        by_digits = target is not None and not _plain_fits(state, target) and digit_term(
            state, positions_are_keys, other, target)
        if by_digits:
            return Term(term.keys, term.queries, term.table, by_digits)
        # a one-hot of flat steps that neither carries: bit by bit, not a table of positions
        by_bits = target is not None and not site.shared and gray_term(state, positions_are_keys, other, target)
        if by_bits:
            return Term(term.keys, term.queries, term.table, by_bits)
    return None


def _plain_fits(state: LoweringState, target: Mapping[Any, float]) -> bool:
    """Whether float32 rounds the uncentred score 2 p t - p^2 + 1 - t^2 within its margin."""
    positions = range(state.program.max_len)
    return fits_float32(match_columns(positions, target.values(), [1 - t * t for t in target.values()]))


def _line_forms(other: Var, target: dict[Any, int], state: LoweringState,
                ) -> tuple[dict[Any, float], dict[Any, float]] | None:
    """(target form, match form) over the shared features of position_term's docstring, when
    the matched targets lie on a line (of slope 1 through a single one) whose extension stays at
    least 1 away from every index at the unmatched values (_near_an_index) and float32 carries it
    (_precise_enough); else None."""
    matched = [(v, t) for v, t in target.items() if t >= 0]
    if not matched or not all(is_number(v) and not isinstance(v, bool) for v in other.values):
        return None
    (v0, t0), (v1, t1) = matched[0], matched[-1]
    slope = (t1 - t0) / (v1 - v0) if v1 != v0 else 1.0  # one point is on every line: j + y's
    offset = t0 - slope * v0
    line = {v: slope * v + offset for v in other.values}
    n = state.program.max_len
    if any(line[v] != t for v, t in matched) or any(target[v] < 0 and _near_an_index(line[v], n) for v in other.values):
        return None
    if not _precise_enough(other, line, state) or not _plain_fits(state, line):
        return None
    value = (linear_feature(state, f"{other.label}.value", other, float), None)
    square = (linear_feature(state, f"{other.label}.value^2", other, lambda v: float(v) ** 2), None)
    count = (linear_feature(state, f"{other.label}.any", other, lambda v: 1.0), None) if other.may_be_none else CONSTANT
    target_form = _summed([(value, slope), (count, offset)])
    match_form = _summed([(count, 1.0 - offset * offset), (value, -2.0 * slope * offset), (square, -slope * slope)])
    return target_form, match_form


def _summed(terms: list[tuple[Any, float]]) -> dict[Any, float]:
    """{feature: sum of its coefficients}, zeros left out: two features may be one variable
    (v and v^2 when every v is 0 or 1)."""
    form: dict[Any, float] = {}  # a feature (a variable's coordinate, or CONSTANT) -> coefficient
    for feature, a in terms:
        form[feature] = form.get(feature, 0.0) + a
    return {feature: a for feature, a in form.items() if a}


def _index_targets(term: Term, positions: Var, other: Var, positions_are_keys: bool, state: LoweringState,
                   ) -> dict[Any, int] | None:
    """other value -> the one index it matches (-1 for none), when `positions` is the plain
    indices and no other value matches two indices; else None. Whether float32 carries the
    target is asked after (number_match, then _precise_enough)."""
    source = position_source(state, positions)
    if source is None or source[0] is not EmbedSource.INDICES or positions.may_be_none:
        return None
    if any(source[1](p) != p for p in range(state.program.max_len)):
        return None
    table = term.table
    held = table.held if positions_are_keys else table.held.T  # [the positions' domain, the other's]
    at, of = (table.rows, table.columns) if positions_are_keys else (table.columns, table.rows)
    rows = at(positions.values)
    if other.may_be_none and held[rows, of([None])[0]].any():
        return None  # the features score a none as no match (`not` of a select can match it)
    matched = held[np.ix_(rows, of(other.values))]  # [position, other value]
    counts = matched.sum(axis=0)
    if (counts > 1).any():
        return None
    first = matched.argmax(axis=0)
    return {v: positions.values[i] if c else -1 for v, i, c in zip(other.values, first.tolist(), counts.tolist())}


def _precise_enough(other: Var, target: Mapping[Any, float], state: LoweringState) -> bool:
    """Whether float32 carries target and 1 - target^2 from `other`'s writers exactly enough
    (match_errors.precise_enough): the score weighs target by up to 2n and match by 1."""
    n = state.program.max_len
    return precise_enough(other, [(target, 2 * n), ({v: 1 - t * t for v, t in target.items()}, 1)], state)


def number_match(state: LoweringState, positions_are_keys: bool, other: Var, target: dict[Any, int]) -> PositionMatch | None:
    """The PositionMatch of the module docstring for `index == target(other)`, `other` the
    categorical view of a number; None when the target is no line in that number, the number's
    error is unknown or too large, or float32 cannot keep the polyline within its margin."""
    view = viewed_number(state, other)
    if view is None or other.may_be_none:
        return None
    x = view.input
    line = _line({v: target[view.fn(v)] for v in x.values}, state.program.max_len)
    error = _number_error(state, x)
    if line is None or error is None or abs(line[0]) * error > NUMBER_MATCH_ERROR:
        return None
    a, b = line
    n = state.program.max_len
    c = (n - 1) // 2
    sure = positions_are_keys and _surely_matched(state, x, a, b)
    match_values = [1.0 - (a * v + b - c) ** 2 for v in x.values]
    columns = match_columns(range(-c, n - c), [a * v + b - c for v in x.values], match_values)
    if not fits_float32(columns) or sure and polyline_error(x.values, match_values) > SURE_MATCH_ERROR:
        return digit_number_match(state, positions_are_keys, x, line, sure)
    if not sure and polyline_error(x.values, match_values) > POSITION_MATCH_ERROR:
        return None

    def make() -> NumericMLP:
        out = state.new_var(f"{other.label}.match", ir.NUMERICAL, match_values)
        return NumericMLP(out, x, dict(zip(x.values, match_values)).__getitem__, interpolated=True)

    match = state.cached("number match", (x, a, b, c), make)
    position = position_feature(state, "indices.centred", EmbedSource.INDICES, lambda p: p - c)
    squared = position_feature(state, "indices.centred^2", EmbedSource.INDICES, lambda p: (p - c) ** 2)
    return PositionMatch(positions_are_keys, position, squared, {(x, None): a, CONSTANT: b - c},
                         {(match, None): 1.0}, sure=sure)


def _line(target: dict[Any, int], n: int) -> tuple[float, float] | None:
    """(a, b) with target = a v + b at every matched value v of a number (target: its values ->
    index, -1 for none), the line at least 1 away from every index 0..n-1 at the unmatched ones
    (_near_an_index); None otherwise."""
    matched = [(float(v), t) for v, t in target.items() if t >= 0]
    if len(matched) < 2:
        return None
    (v0, t0), (v1, t1) = matched[0], matched[-1]
    a = (t1 - t0) / (v1 - v0)
    b = t0 - a * v0
    for v, t in target.items():
        y = a * float(v) + b
        if (t >= 0 and y != t) or (t < 0 and _near_an_index(y, n)):
            return None
    return a, b


def _near_an_index(y: float, n: int) -> bool:
    """Whether a line's target y at a value that matches no index lies within 1 of an index
    0..n-1 (-1 < y < n): that value would score S (1 - d^2) > 0 at the index d < 1 away, above
    the 0 every unselected key is held to (BOS, S/2 above 0, wins by the softmax's whole gap only
    then), and above BOS itself where d < 1/sqrt(2) (a y half-way between two indices scores 3/4 S)."""
    return -1 < y < n


def _number_error(state: LoweringState, x: Var) -> float | None:
    """A bound on x's float32 error where the head reads it: an embedding's is nil; an
    attention mean's is its leak (at most CATEGORICAL_LEAK) plus ROUNDINGS roundings of its
    largest value; a Linear's, its inputs' errors and roundings weighted by its coefficients."""
    u = unit_roundoff(np.float32)
    writer = state.writer.get(x)
    if isinstance(writer, Embed):
        return ROUNDINGS * u * largest_magnitude(x.values)
    if isinstance(writer, Attend) and writer.kind is HeadKind.NUMERICAL:
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
    offset = length_offset(state, x)
    if offset is None:
        return False
    n = np.arange(1, state.program.max_len + 1)[:, None]
    p = np.arange(state.program.max_len)[None, :]
    target = a * (n + np.asarray(offset, dtype=float)[None, :]) + b
    valid = p < n
    return bool(np.all(((target >= 0) & (target <= n - 1) & (target == np.round(target)))[np.broadcast_to(valid, target.shape)]))
