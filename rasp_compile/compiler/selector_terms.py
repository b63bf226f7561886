"""What one attention head scores, as data: a selector as an AND of `Term`s (tables over a key
and a query variable, or an index matched to a target), and the factored `Score` of those terms
(head columns, each a query form times a key form). lowering/selectors.py and lowering/scores.py
build them; primitives/qk.py turns a Score into weights."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from .variables import CONSTANT, Var


@dataclass(frozen=True, eq=False)
class PairTable:
    """M[key value, query value] -> bool over two domains in order, as the boolean matrix
    `held` [len(keys), len(queries)]: a table over max_len^2 pairs is one array, not a dict.
    `table[(k, q)]` looks one pair up; `rows` / `columns` turn values into the matrix's indices
    (by equality, as a dict would: 1, 1.0 and True are one value)."""

    keys: tuple[Any, ...]
    queries: tuple[Any, ...]
    held: np.ndarray  # [len(keys), len(queries)] bool

    def __getitem__(self, pair: tuple[Any, Any]) -> bool:
        return bool(self.held[self._key_index[pair[0]], self._query_index[pair[1]]])

    def rows(self, values: Sequence[Any]) -> np.ndarray:
        """[len(values)] the row of each key value."""
        return np.array([self._key_index[v] for v in values], dtype=np.intp)

    def columns(self, values: Sequence[Any]) -> np.ndarray:
        """[len(values)] the column of each query value."""
        return np.array([self._query_index[v] for v in values], dtype=np.intp)

    def with_held(self, held: np.ndarray) -> PairTable:
        """The same domains, another [len(keys), len(queries)] matrix."""
        return PairTable(self.keys, self.queries, held)

    @cached_property
    def _key_index(self) -> dict[Any, int]:
        return {v: i for i, v in enumerate(self.keys)}

    @cached_property
    def _query_index(self) -> dict[Any, int]:
        return {v: i for i, v in enumerate(self.queries)}


@dataclass(frozen=True, eq=False)
class PositionMatch:
    """A term `position == target(other side)`, as numbers (passes/position_selects.py):
    `position` and `position_squared` come from the position embedding on one side
    (`positions_are_keys`); `target` and `match` (1 - target^2, 0 for none) are linear forms
    {feature: coefficient} (CONSTANT or (numerical variable, None)) in features linear in the
    other side's one-hot, or in a number and a polyline of it (passes/position_selects.number_match,
    where position and target are centred on the middle index). A digit match
    (passes/digit_matches.py) scores the high digit as position and target and the low digit in
    `more`, whose 2 position·target adds to the score; `position_squared` then holds high^2 + low^2
    of the index and `match` 1 - high^2 - low^2 of the target. A Gray match
    (passes/gray_matches.py) scores one bit as position and target and the others in `more`."""

    positions_are_keys: bool
    position: Var
    position_squared: Var
    target: dict[Any, float]
    match: dict[Any, float]
    sure: bool = False  # every query has its key at every input (passes/position_selects.number_match)
    more: tuple[tuple[Var, dict[Any, float]], ...] = ()  # further (position feature, target form) pairs: digits, bits

    def forms(self) -> tuple[dict[Any, float], ...]:
        """The linear forms of the other side: target and match, and the further digits' targets."""
        return (self.target, self.match) + tuple(form for _, form in self.more)

    def positions(self) -> tuple[Var, ...]:
        """The position features read: position and its square (a digit match's h^2 + l^2), and
        the further digits."""
        return (self.position, self.position_squared) + tuple(position for position, _ in self.more)


@dataclass(frozen=True, eq=False)
class Term:
    """A table M[key value, query value] -> bool over two categorical variables (none included
    where a variable may be none), or, with `by_position`, an index matched to a target."""

    keys: Var
    queries: Var
    table: PairTable  # over keys.domain x queries.domain, in that order
    by_position: PositionMatch | None = None

    def reads(self) -> tuple[Var, ...]:
        if self.by_position is None:
            return (self.keys, self.queries)
        p = self.by_position
        forms = (f[0] for form in p.forms() for f in form if f is not CONSTANT)
        return tuple(dict.fromkeys((*p.positions(), *forms)))


@dataclass(frozen=True, eq=False)
class SelectorSpec:
    """A selector as the AND of its terms: a key is selected when every term holds."""

    terms: tuple[Term, ...]

    def reads(self) -> tuple[Var, ...]:
        """The variables the head reads, each once, in a stable order."""
        return tuple(dict.fromkeys(var for term in self.terms for var in term.reads()))

    def held(self, keys: Mapping[Var, Sequence[Any]], queries: Mapping[Var, Sequence[Any]]) -> np.ndarray:
        """[K, Q] whether the spec selects, given each variable's K values at the keys and Q
        values at the queries (every term's variable among them, K and Q at least 1)."""
        shape = (len(next(iter(keys.values()))), len(next(iter(queries.values()))))
        held = np.ones(shape, dtype=bool)
        for t in self.terms:
            held &= t.table.held[np.ix_(t.table.rows(keys[t.keys]), t.table.columns(queries[t.queries]))]
        return held


@dataclass(frozen=True, eq=False)
class Column:
    """One head dimension: q = sum of q[feature] * feature at the query, likewise k at the key
    (coefficients in units of S on q, plain on k)."""

    q: dict[Any, float]
    k: dict[Any, float]


@dataclass(frozen=True, eq=False)
class Score:
    """The columns of a head scoring an AND of `terms` terms: 1 per unit of S on selected keys,
    at most 0 on the others (before BOS, which primitives/qk.py adds)."""

    terms: int
    columns: tuple[Column, ...]
    always_selects: bool = False  # a sure position match: BOS need not be scored between (qk.py)
    bos_as_key: bool = False  # a sure digit match: BOS also scores as a key whose features are all 0 (qk.py)

    def reads(self) -> tuple[Var, ...]:
        """The variables the head's q and k read, each once, in a stable order (every pass asks)."""
        return self._variables_read

    @cached_property
    def _variables_read(self) -> tuple[Var, ...]:
        features = (f for c in self.columns for side in (c.q, c.k) for f in side)
        return tuple(dict.fromkeys(f[0] for f in features if f is not CONSTANT))


@dataclass(frozen=True, eq=False)
class StandInScore(Score):
    """A head's score left unbuilt (no columns), standing in for one whose selector combines
    joint variables too large for any model the compiler builds (lowering/selectors.py): it
    reads what the built score would (`read`), so that every pass finds the same readers. A graph
    keeps it only to be refused (budget.check_unbuilt_scores) or lowered again with every score
    built (driver.graph_within_budget)."""

    read: tuple[Var, ...] = ()

    def reads(self) -> tuple[Var, ...]:
        return self.read
