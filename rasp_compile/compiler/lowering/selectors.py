"""Selectors -> what one attention head can score: a conjunction of predicate tables
(selector_terms.py).

A `Term` is a table M[key value, query value] -> bool over two categorical variables (none
included where a variable may be none). A `SelectorSpec` is the AND of its terms. One head
scores a spec by adding S * M_t over its terms (see qk.py): a key is selected exactly when it
reaches the full score m * S, so `and` costs nothing but head width.

`not` of one term complements its table; `or` of two terms over the same variables ORs the
tables. Anything else (`or` across different keys or queries, `not` of a conjunction over
different variables) cannot be written as a sum that peaks exactly on the selected keys, so the
variables involved are first combined into joint (tuple-valued) variables by one TableMLP each
(hidden units: the product of the parts' domain sizes), and the whole selector becomes a single
table over the joints. That is the documented price of selector combinations tracr rejects.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any
from collections.abc import Callable

import numpy as np

from ... import ir
from ...errors import RaspValueError
from ..budget import ASSEMBLY_PARAMETERS, MAX_PARAMETERS, is_joint, joints_lower_bound
from ..selector_terms import PairTable, Score, SelectorSpec, StandInScore, Term
from .digit_views import digit_tables
from .features import joint
from .rewrites import TermSite
from .scores import score_columns, shared_block, variables_read
from .state import LoweringState
from ..variables import Var
from .views import categorical_view, whole_view


@dataclass(frozen=True)
class SplitInputs:
    """The table inputs of a split answer's heads (passes/split_keys.py): their views keep a
    dimension per value, one view for all the heads; `viewed`: those of them a view with a
    dimension per value was made for before the split (its heads share no features of it)."""

    inputs: frozenset[Var]
    viewed: frozenset[Var] = frozenset()

    def shared(self, state: LoweringState) -> frozenset[Var]:
        """The categorical inputs and the views the split made: what all its heads read alike."""
        views = (whole_view(state, var) for var in self.inputs - self.viewed)
        return frozenset(view for view in views if view is not None)


def normalize_selector(selector: ir.Selector, state: LoweringState, split: SplitInputs | None = None) -> SelectorSpec:
    """The selector as a conjunction of tables, creating joint variables where needed; each term
    then as the first `TermSite` rewrite of the driver that answers (passes/position_selects.py)
    proposes, or as it is."""
    spec = _normalize(selector, state, split or SplitInputs(frozenset()))
    shared = split.shared(state) if split is not None else frozenset()
    return SelectorSpec(tuple(state.rewritten(TermSite(term, shared)) or term for term in spec.terms))


def _normalize(selector: ir.Selector, state: LoweringState, split: SplitInputs) -> SelectorSpec:
    if isinstance(selector, ir.Select):
        key_var, query_var = state.var_for(selector.keys), state.var_for(selector.queries)
        digits = digit_tables(selector, key_var, query_var) if state.options.reader_classes else None
        if digits is not None:  # an equality of two numbers of thousands of values, digit by digit
            return _merge_terms(tuple(_select_term(state, key_var, query_var, held, split, name)
                                      for held, name in zip(digits, ("high", "low"))))
        held = selector.table(key_var.values, query_var.values)  # [key value, query value]
        return SelectorSpec((_select_term(state, key_var, query_var, held, split),))
    if isinstance(selector, ir.SelectAnd):
        first = _normalize(selector.first, state, split)
        second = _normalize(selector.second, state, split)
        return _merge_terms(first.terms + second.terms)
    if isinstance(selector, ir.SelectNot):
        inner = _normalize(selector.inner, state, split)
        if len(inner.terms) == 1:
            return SelectorSpec((_pointwise(inner.terms[0], inner.terms[0], lambda a, _b: ~a),))
        return _joint_spec([inner], lambda held: ~held[0], state, selector)
    if isinstance(selector, ir.SelectOr):
        first = _normalize(selector.first, state, split)
        second = _normalize(selector.second, state, split)
        if len(first.terms) == len(second.terms) == 1 and _same_vars(first.terms[0], second.terms[0]):
            return SelectorSpec((_pointwise(first.terms[0], second.terms[0], np.logical_or),))
        return _joint_spec([first, second], np.logical_or.reduce, state, selector)
    raise TypeError(f"no selector rule for {type(selector).__name__}")


def _select_term(state: LoweringState, key_var: Var, query_var: Var, held: np.ndarray, split: SplitInputs,
                 name: str = "cat") -> Term:
    """The term of `held` [key value, query value] over views of the two variables (labelled
    `x.NAME`), each keeping a dimension per line of `held` (with value-classes on)."""
    keys = categorical_view(state, key_var, _lines_of(held, key_var), key_var in split.inputs, name)
    queries = categorical_view(state, query_var, _lines_of(held.T, query_var), query_var in split.inputs, name)
    return Term(keys, queries, _table(keys, queries, key_var, query_var, held))


def _lines_of(held: np.ndarray, var: Var) -> Callable[[Any], bytes]:
    """A value of `var` -> its line of `held` [var's values, the other side's values], packed to
    bytes: equal lines give equal bytes, the signature by which a view merges values the select
    reads alike (views.categorical_view asks it only of a number's values)."""
    packed = np.packbits(held, axis=1)  # [var's values, ceil(other side's values / 8)]
    return lambda value: packed[var.position[value]].tobytes()


def _table(keys: Var, queries: Var, key_var: Var, query_var: Var, held: np.ndarray) -> PairTable:
    """The table over the views' domains (none never selects), `held` being [key value, query
    value] over the variables' values; a view's value stands for the first of the number's
    values it classes together."""
    padded = np.zeros((held.shape[0] + 1, held.shape[1] + 1), dtype=bool)  # the last row and column: none
    padded[:-1, :-1] = held
    rows = [-1 if k is None else key_var.position[k] for k in keys.domain]
    columns = [-1 if q is None else query_var.position[q] for q in queries.domain]
    return PairTable(keys.domain, queries.domain, padded[np.ix_(rows, columns)])


def _same_vars(a: Term, b: Term) -> bool:
    return a.keys is b.keys and a.queries is b.queries


def _pointwise(a: Term, b: Term, combine: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Term:
    """One table from two over the same variables (the same domains), cell by cell."""
    return Term(a.keys, a.queries, a.table.with_held(combine(a.table.held, b.table.held)))


def _merge_terms(terms: tuple[Term, ...]) -> SelectorSpec:
    """AND of terms; terms over the same variables fold into one table."""
    merged: list[Term] = []
    for term in terms:
        twin = next((i for i, t in enumerate(merged) if _same_vars(t, term)), None)
        if twin is None:
            merged.append(term)
        else:
            merged[twin] = _pointwise(merged[twin], term, np.logical_and)
    return SelectorSpec(tuple(merged))


def _joint_spec(specs: list[SelectorSpec], combine: Callable[[list[np.ndarray]], np.ndarray],
                state: LoweringState, where: ir.Selector) -> SelectorSpec:
    """combine([held of each spec]) as one table over the joint of every key / query variable
    (check_joint_size first); `combine` takes and gives [joint keys, joint queries] booleans."""
    key_parts = tuple(dict.fromkeys(t.keys for s in specs for t in s.terms))
    query_parts = tuple(dict.fromkeys(t.queries for s in specs for t in s.terms))
    check_joint_size(where, key_parts, query_parts)
    joint_keys, joint_queries = joint(state, key_parts), joint(state, query_parts)
    keys, queries = _part_values(key_parts, joint_keys.domain), _part_values(query_parts, joint_queries.domain)
    held = combine([s.held(keys, queries) for s in specs])
    return SelectorSpec((Term(joint_keys, joint_queries, PairTable(joint_keys.domain, joint_queries.domain, held)),))


def _part_values(parts: tuple[Var, ...], domain: tuple[Any, ...]) -> dict[Var, list[Any]]:
    """Each part's value at every joint value of `domain` (a tuple of the parts' values, or the
    one part's value itself)."""
    tuples = [value if len(parts) > 1 else (value,) for value in domain]
    return {part: [t[i] for t in tuples] for i, part in enumerate(parts)}


def check_joint_size(where: ir.Selector, key_parts: tuple[Var, ...], query_parts: tuple[Var, ...]) -> None:
    """RaspValueError at `where` when the one table over the joints of `key_parts` and
    `query_parts` would have more cells (each a combination of the parts' tables, computed in
    Python) than the largest model the compiler builds has parameters (budget.MAX_PARAMETERS):
    raised before any joint is made. Smaller tables are built, and the budget judges the model."""
    sizes = [math.prod(len(p.domain) for p in parts) for parts in (key_parts, query_parts)]
    if sizes[0] * sizes[1] <= MAX_PARAMETERS:
        return
    keys, queries = (", ".join(f"'{p.label}'" for p in parts) for parts in (key_parts, query_parts))
    raise RaspValueError(
        f"this selector combines selects over different values with `or` or `not`, which takes one table over "
        f"the joint values of its keys ({keys}) and queries ({queries}): {sizes[0]:,} x {sizes[1]:,} cells, more than "
        f"{MAX_PARAMETERS:,}; select on fewer values (map them to fewer first), combine selects over the same "
        "keys and queries, or use a smaller max_len",
        where.loc,
    )


def score_selector(state: LoweringState, selector: ir.Selector, split: SplitInputs | None = None) -> Score:
    """The selector as terms, scored by factored head columns (scores.py), which share a block
    per variable with the lowering's `shared_blocks` option (the optimisation compact-heads);
    `split`: the selector is a split answer's head's (passes/split_keys.py). With the option
    `unbuilt_large_scores`, a score over joints that alone make any model holding them too large
    to assemble (budget.joints_lower_bound) is left unbuilt: a StandInScore reading the same."""
    spec = normalize_selector(selector, state, split)
    if state.options.unbuilt_large_scores:
        joints = [op for op in map(state.writer.get, spec.reads()) if is_joint(op)]
        if joints and joints_lower_bound(state.program, joints) > ASSEMBLY_PARAMETERS:
            return StandInScore(len(spec.terms), (), read=variables_read(spec))
    shared = state.options.shared_blocks
    key = spec_key(spec, shared)
    if key is None:
        return score_columns(spec, shared_block if shared else None)
    if key not in state.scores:  # a selector read by several aggregates is scored once (a million pairs at 1,024)
        state.scores[key] = score_columns(spec, shared_block if shared else None)
    return state.scores[key]


def spec_key(spec: SelectorSpec, shared_blocks: bool) -> tuple[Any, ...] | None:
    """All that `score_columns` reads of `spec` (and the block option), as a key: equal keys
    give equal scores. Per term its variables (themselves: they compare by identity) and its
    table (domains and cells); None when a term matches positions, whose forms are scored as
    they are."""
    if any(term.by_position is not None for term in spec.terms):
        return None
    return (shared_blocks, *((t.keys, t.queries, t.table.keys, t.table.queries, t.table.held.shape,
                              t.table.held.tobytes()) for t in spec.terms))
