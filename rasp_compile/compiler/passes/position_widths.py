"""position-widths: a selector_width the positions decide is counted by arithmetic on positions
and the length, not by a head that scores every key against every query.

When the select's keys are the indices (or any key passes alike) and its queries are decided by
the position (indices, maps of them), which keys position p selects is known at compile time:
sel(p, k). The width at p is then the number of selected keys before the length n:

    causal program:  w(p) = #{k <= p : sel(p, k)}                       a position embedding
    otherwise:       w(p, n) = #{k < n : sel(p, k)}

and, when every key after the query is selected alike (a = sel(p, k) for all k > p, the same
for every p), w(p, n) = base(p) + a (n - 1 - p), base(p) = #{k <= p : sel(p, k)}. With a = 0 it is
a position embedding again; with a = 1 it is n plus a position embedding. The length is read
from one head: the mean of the index over all keys is (n - 1) / 2 (BOS scores below every key,
as for any mean; past max_len 2,833 the index less the middle index c, which float32 sums twice
as closely: mean_index_centre), so n = 2 mean + 1 (+ 2 c) is linear in what the head writes, and the width is a
`Linear` of that head and the position embedding: no step MLP reading 1/(w + 1), no table of
max_len x max_len pairs. reverse's `selector_width(select(indices, indices, >))` is n - 1 - p.
A categorical width is the one-hot of that number (a step MLP over whole numbers).

Needs: the variables written so far (lowering/state.py); runs as the `WidthSite` rewrite of
the lowering, before the plain width head is built.
Guarantees: the width equals the selector's width at every position and length; the
predicate is evaluated on every (key position, query position) pair at compile time.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import ir
from ..lowering.positions import position_feature, values_by_position
from ..lowering.selectors import score_selector
from ..lowering.rewrites import WidthSite
from ..lowering.state import LoweringState
from ..ops import Attend, Embed, EmbedSource, HeadKind, Linear, NumericMLP, Op
from ..tolerances import FLOAT32_U, MEAN_ROUNDINGS_PER_KEY, ROUNDINGS, STEP_WINDOW
from ..variables import Var, coordinate


def width_of_positions(state: LoweringState, site: WidthSite) -> Op | None:
    """The width of `selector` as a position embedding, or as n plus one, when the positions
    decide what it selects (module docstring); else None."""
    out = site.out
    selected = _selected_by_position(state, site.selector)  # [query position, key position]
    if selected is None:
        return None
    n = state.program.max_len
    before = np.tril(selected)  # keys k <= p
    base = before.sum(axis=1).tolist()
    if state.program.causal:
        return _embedded(out, base)
    after = set(np.unique(selected[np.triu_indices(n, 1)]).tolist())  # keys k > p
    if after <= {False}:
        return _embedded(out, base)
    if after != {True}:
        return None
    return _length_plus(state, out, [base[p] - 1 - p for p in range(n)])


def _selected_by_position(state: LoweringState, selector: ir.Selector) -> np.ndarray | None:
    """[query position, key position] booleans, when both sides are decided by the position
    (or the predicate ignores a side's values); else None."""
    if not isinstance(selector, ir.Select):
        return None
    keys, queries = state.var_for(selector.keys), state.var_for(selector.queries)
    if keys.may_be_none or queries.may_be_none:
        return None
    key_at, query_at = values_by_position(state, keys), values_by_position(state, queries)
    if key_at is None and not _ignores(selector, keys.values, queries.values, side=0):
        return None
    if query_at is None and not _ignores(selector, keys.values, queries.values, side=1):
        return None
    n = state.program.max_len
    key_at = key_at or [keys.values[0]] * n
    query_at = query_at or [queries.values[0]] * n
    key_values, key_index = _distinct(key_at)
    query_values, query_index = _distinct(query_at)
    held = selector.table(key_values, query_values)  # [key value, query value]
    return held[key_index][:, query_index].T


def _distinct(at: list[Any]) -> tuple[list[Any], np.ndarray]:
    """The distinct values of `at` (1, 1.0 and True apart) and where each position's value is among them."""
    where: dict[tuple[Any, type], int] = {}  # (value, its type) -> its index among the distinct values
    index = [where.setdefault((v, type(v)), len(where)) for v in at]
    return [v for v, _ in where], np.asarray(index)


def _ignores(selector: ir.Select, keys: tuple[Any, ...], queries: tuple[Any, ...], side: int) -> bool:
    """Whether the predicate's answer never depends on the key's (side 0) or the query's
    (side 1) value, over every pair of values (a few: the vocab, say; never more than 4,096)."""
    if len(keys) * len(queries) > 4096:
        return False
    held = selector.table(keys, queries)  # [key value, query value]
    return bool(np.all(held == (held[:1, :] if side == 0 else held[:, :1])))


def _embedded(out: Var, width: list[int]) -> Embed:
    """The width at each position as a position embedding, its values those it reaches."""
    reached = tuple(sorted(set(width)))
    return Embed(Var(out.label, out.encoding, reached, loc=out.loc), EmbedSource.INDICES, width.__getitem__)


def _length_plus(state: LoweringState, out: Var, offset: list[int]) -> Op:
    """out = n + offset(p): twice the mean index plus one, plus a position embedding."""
    number = out if out.encoding == ir.NUMERICAL else state.new_var(f"{out.label}.value", ir.NUMERICAL, out.values, loc=out.loc)
    label = coordinate(number, None)
    weights = {(_mean_index(state, out), None): {label: 2.0}}
    if len(set(offset)) > 1:
        weights[(position_feature(state, f"{out.label}.offset", EmbedSource.INDICES, offset.__getitem__), None)] = {label: 1.0}
    constant = 1.0 + 2 * mean_index_centre(state.program.max_len) + (offset[0] if len(set(offset)) == 1 else 0.0)
    linear = Linear(number, weights, {label: constant})
    if number is out:
        return linear
    state.emit(linear)
    return NumericMLP(out, number, ir.identity)


def length_offset(state: LoweringState, x: Var) -> list[float] | None:
    """offset(p) at each position p, when this rewrite wrote x = n + offset(p) (_length_plus:
    twice the mean index plus one, plus a position row or a constant); else None."""
    writer = state.writer.get(x)
    if state.origin.get(x) != "position-widths" or not isinstance(writer, Linear):
        return None
    label = coordinate(x, None)
    centre = mean_index_centre(state.program.max_len)  # the mean index's: x = 2 mean + 1 + 2 centre + offset
    constant = writer.bias.get(label, 0.0) - 1.0 - 2 * centre
    rows = [w for w in (state.writer[var] for var, _ in writer.weights) if isinstance(w, Embed)]
    return [constant + (rows[0].fn(p) if rows else 0.0) for p in range(state.program.max_len)]


def _mean_index(state: LoweringState, width: Var) -> Var:
    """(n - 1) / 2 - c at every position: the mean of the index less c over all keys, one head
    for the whole program, placed (for messages and meta.heads) at the first width that counts
    with it. c is 0, or the middle index where float32 could not sum the plain index (mean_index_centre)."""
    centre = mean_index_centre(state.program.max_len)

    def make() -> Attend:
        everything = ir.Select(ir.tokens, ir.tokens, "true", loc=width.loc)
        label = "indices.centred" if centre else "indices.value"  # position_selects' centred index, when both
        index = position_feature(state, label, EmbedSource.INDICES, lambda p: p - centre)
        means = [(n - 1) / 2 - centre for n in range(1, state.program.max_len + 1)]
        mean = state.new_var("length.mean_index", ir.NUMERICAL, means, loc=width.loc)
        return Attend(mean, score_selector(state, everything), HeadKind.NUMERICAL, index, 0, selector=everything)

    return state.cached("mean index", None, make)


def mean_index_centre(max_len: int) -> int:
    """The middle index (max_len - 1) // 2 when float32 could not sum the plain index closely
    enough, else 0. The mean of indices up to max_len - 1 over max_len + 1 keys may round by
    (ROUNDINGS + MEAN_ROUNDINGS_PER_KEY (max_len + 1)) u (max_len - 1), the charge error_bounds.py
    makes, and the length, twice that mean, by twice as much: past STEP_WINDOW of the length's
    unit gap (from max_len 2,834 on: 0.26 at 4,096) the index is centred, which halves it.
    Chosen before the dtype, with float32's u, like number-readout's read-outs."""
    rounds = ROUNDINGS + MEAN_ROUNDINGS_PER_KEY * (max_len + 1)
    return (max_len - 1) // 2 if 2 * rounds * FLOAT32_U * (max_len - 1) > STEP_WINDOW else 0
