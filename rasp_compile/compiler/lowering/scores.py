"""scores: a selector's attention score as a bilinear form, factored into as few head dimensions
as its pattern allows.

A head scores key k against query q by q·k, and each of q and k is linear in the residual. So a
selector (selector_terms.py: an AND of terms) is scored by one bilinear form

    score(key, query) = sum over (r, c) of A[r, c] * query feature r * key feature c

whose features are residual coordinates (`(var, value)`, value None for a numerical variable)
or the constant 1 (`CONSTANT`), in units of the sharpness S (applied by qk.py).

Entries. A table term M over categorical K, Q adds the matrix derived in qk.py (the constant
row and column carry what a value pair shares with none). A position term adds
2·index·target - index² + match (passes/position_selects.py), or that for each of two digits
(passes/digit_matches.py): it is 1 where the index is the target and at most 0 elsewhere. The constant x constant entry gets -(m - 1) for m terms, so the
selected keys score exactly 1 (units of S), any other key at most 0, and the top score a head
can reach stays near S.

Factoring. Column j of the head has a query side (a linear form of the query features) and a
key side, and contributes their product. A set of rows R and columns C of A that together touch
every non-zero entry (a vertex cover of A's pattern) gives a factoring with |R| + |C| columns:
one per row r in R (query: feature r; key: row r of A) and one per column c in C (key: feature
c; query: what column c of A keeps once the rows in R are taken out). Features come in blocks,
one per variable (its one-hot) and one for the constant; we cover whole blocks, choosing the
cheapest cover by trying every subset of the side with fewer blocks. With compact-heads (the
lowering's `shared_blocks` option: blocks named by variable alone) the terms share blocks: two
terms on the same query variable read it once, so sort's range select (two comparisons of two
widths against the index) needs 20 + 1 dimensions at max_len 20, not 2 x 21. Without it each term keeps its own blocks (the construction of primitives/qk.py, term by term).
"""

from __future__ import annotations

from itertools import combinations
from typing import Any
from collections.abc import Callable, Hashable

import numpy as np

from ..selector_terms import Column, Score, SelectorSpec, Term
from ..limits import MAX_ENUMERATED_BLOCKS
from ..variables import CONSTANT, Var

Feature = tuple[Var, Any] | None  # a residual coordinate (var, value; value None if numerical), or CONSTANT
Block = Hashable  # a block of features: the variable's own_block or shared_block
Entry = tuple[Block, Feature, Block, Feature]  # (row block, row feature, column block, column feature)
Cover = tuple[list[Block], list[Block]]  # (row blocks, column blocks)

def score_columns(spec: SelectorSpec, block: Callable[[Feature, int], Block] | None = None) -> Score:
    """The factored score of `spec`. `block(feature, term index)` names the block a feature
    belongs to: by default a block per term and variable (own_block); with compact-heads one per
    variable (shared_block), which terms reading the same variable share."""
    block = block or own_block
    entries: dict[Entry, float] = {}  # (row block, row feature, column block, column feature) -> coefficient
    for t, term in enumerate(spec.terms):
        _add_entries(entries, _term_entries(term), t, block)
    _add_entries(entries, [(CONSTANT, CONSTANT, -(len(spec.terms) - 1.0))], 0, block)
    entries = {key: a for key, a in entries.items() if a}
    rows, columns = _cover(entries)
    match = spec.terms[0].by_position if len(spec.terms) == 1 else None
    sure = match is not None and match.sure
    return Score(len(spec.terms), tuple(_columns(entries, rows, columns)), always_selects=sure,
                 bos_as_key=sure and match is not None and bool(match.more))


def variables_read(spec: SelectorSpec) -> tuple[Var, ...]:
    """The variables score_columns(spec) reads: those with a non-zero coefficient in some term
    (every one lands in a column of the cover), found from each table's matrix as a whole rather
    than entry by entry (a joint's table may hold millions). Terms never sum into one another's
    entries here, but on the constant's: a variable all of whose coefficients two terms' constant
    entries cancel would be counted, though score_columns reads it not."""
    read: list[Var] = []
    for term in spec.terms:
        if term.by_position is not None:
            read += [f[0] for q, k, a in _term_entries(term) if a for f in (q, k) if f is not CONSTANT]
            continue
        a = table_matrix(term)  # [query values + none, key values + none]
        read += [term.queries] * bool(a[:-1].any()) + [term.keys] * bool(a[:, :-1].any())
    return tuple(dict.fromkeys(read))


def _add_entries(entries: dict[Entry, float], listed: list[tuple[Feature, Feature, float]], term: int,
                 block: Callable[[Feature, int], Block]) -> None:
    """Add term `term`'s non-zero (row feature, column feature, coefficient) entries to `entries`
    (in place), each feature's block asked once (a table lists max_len^2 entries)."""
    blocks: dict[Feature, Block] = {}
    for row, column, amount in listed:
        if amount:
            if row not in blocks:
                blocks[row] = block(row, term)
            if column not in blocks:
                blocks[column] = block(column, term)
            key = (blocks[row], row, blocks[column], column)
            entries[key] = entries.get(key, 0.0) + amount


def own_block(feature: Feature, term: int) -> Block:
    """The block of `feature` in the plain factoring: its variable's (or the constant's), per term."""
    return (term, "1" if feature is CONSTANT else feature[0])


def shared_block(feature: Feature, term: int) -> Block:
    """The block of `feature` with compact-heads: its variable's (or the constant's), whatever
    term it is in."""
    return "1" if feature is CONSTANT else feature[0]


def _term_entries(term: Term) -> list[tuple[Feature, Feature, float]]:
    """(query feature, key feature, coefficient) for one term."""
    if term.by_position is not None:
        p = term.by_position
        digits = [(p.position, p.target), *p.more]
        entries: list[tuple[Feature, Feature, float]] = [
            (f, (position, None), 2.0 * a) for position, target in digits for f, a in target.items()]
        entries += [(CONSTANT, (p.position_squared, None), -1.0)]
        entries += [(f, CONSTANT, a) for f, a in p.match.items()]
        if p.positions_are_keys:
            return entries
        return [(key, query, a) for query, key, a in entries]
    a = table_matrix(term)
    query_features = [(term.queries, v) for v in term.queries.values] + [CONSTANT]
    key_features = [(term.keys, v) for v in term.keys.values] + [CONSTANT]
    rows, columns = np.nonzero(a)
    return list(zip([query_features[i] for i in rows.tolist()], [key_features[j] for j in columns.tolist()],
                    a[rows, columns].tolist()))


def table_matrix(term: Term) -> np.ndarray:
    """A [len(Q.values) + 1, len(K.values) + 1] with psi(q)ᵀ A phi(k) = M[k, q] for every key and
    query value, none included, where phi = [one-hot(K), 1] and psi = [one-hot(Q), 1] (none's
    one-hot is all zeros). Writing n for none, the four cases pin A down:

        A[1, 1] = M[n, n]                      A[1, v] = M[v, n] - M[n, n]
        A[u, 1] = M[n, u] - M[n, n]            A[u, v] = M[v, u] - M[v, n] - M[n, u] + M[n, n]

    (a value pair sums all four to M[v, u]; the none cases are the rows and columns above). QED.
    Where K (or Q) cannot be none, M[n, .] is ours to choose: we copy the first value's row, which
    zeroes that value's column of A, and a zero row or column needs no feature."""
    keys, queries = term.keys, term.queries
    ks = list(keys.values) + [None if keys.may_be_none else keys.values[0]]
    qs = list(queries.values) + [None if queries.may_be_none else queries.values[0]]
    m = term.table.held[np.ix_(term.table.rows(ks), term.table.columns(qs))].T.astype(float)  # [query, key], none last
    a = m - m[:, -1:] - m[-1:, :] + m[-1, -1]
    a[-1, :] = m[-1, :] - m[-1, -1]  # the query is none
    a[:, -1] = m[:, -1] - m[-1, -1]  # the key is none
    a[-1, -1] = m[-1, -1]
    return a


def _cover(entries: dict[Entry, float]) -> Cover:
    """The row blocks and column blocks of the cheapest block cover of the entries' pattern:
    every subset of the side with fewer blocks, completed by the other side's blocks that meet
    an entry it leaves uncovered."""
    edges = {(rb, cb) for rb, _, cb, _ in entries}  # the block pairs that hold an entry
    sizes: tuple[dict[Block, set[Feature]], dict[Block, set[Feature]]] = ({}, {})  # row blocks, column blocks -> their features
    for rb, row, cb, column in entries:
        sizes[0].setdefault(rb, set()).add(row)
        sizes[1].setdefault(cb, set()).add(column)
    side = 0 if len(sizes[0]) <= len(sizes[1]) else 1
    blocks, others = list(sizes[side]), list(sizes[1 - side])

    def completed(chosen: tuple[Block, ...]) -> Cover:
        uncovered = {edge[1 - side] for edge in edges if edge[side] not in chosen}
        pair = (list(chosen), [b for b in others if b in uncovered])
        return pair if side == 0 else (pair[1], pair[0])

    def cost(cover: Cover) -> int:
        return sum(len(sizes[s][b]) for s in (0, 1) for b in cover[s])

    if len(blocks) > MAX_ENUMERATED_BLOCKS:
        return min((list(sizes[0]), []), ([], list(sizes[1])), key=cost)
    subsets = (subset for r in range(len(blocks) + 1) for subset in combinations(blocks, r))
    return min((completed(s) for s in subsets), key=cost)


def _columns(entries: dict[Entry, float], rows: list[Block], columns: list[Block]) -> list[Column]:
    """One column per feature of a chosen row block (query: that feature, key: its row of A),
    then one per feature of a chosen column block (key: that feature, query: what is left)."""
    chosen_rows = set(rows)
    by_row: dict[Block, dict[Feature, dict[Feature, float]]] = {block: {} for block in rows}  # row block -> row feature -> key form
    by_column: dict[Block, dict[Feature, dict[Feature, float]]] = {block: {} for block in columns}  # column block -> column feature -> query form
    for (rb, r, cb, c), a in entries.items():
        if rb in chosen_rows:
            form = by_row[rb].setdefault(r, {})
            form[c] = form.get(c, 0.0) + a
        else:
            form = by_column[cb].setdefault(c, {})
            form[r] = form.get(r, 0.0) + a
    out = [Column({r: 1.0}, k) for block in rows for r, k in by_row[block].items()]
    return out + [Column(q, {c: 1.0}) for block in columns for c, q in by_column[block].items()]
