"""Selectors -> what one attention head can score: a conjunction of predicate tables.

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

from dataclasses import dataclass
from itertools import product
from typing import TYPE_CHECKING, Callable

from .. import ir
from ..frontend.infer import is_number
from .numeric_mlp import step_error
from .ops import CONSTANT, Linear, NumericMLP

if TYPE_CHECKING:
    from .graph import _Builder
    from .ops import Var  # noqa: F401 (annotations)


@dataclass(frozen=True, eq=False)
class PositionMatch:
    """A term `position == target(other side)`, as numbers (see position_term): `position` and
    `position_squared` come from the position embedding on one side (`positions_are_keys`);
    `target` and `match` (1 - target^2, 0 for none) are linear forms {feature: coefficient}
    (ops.CONSTANT or (numerical variable, None)) in features linear in the other side's one-hot."""

    positions_are_keys: bool
    position: Var
    position_squared: Var
    target: dict
    match: dict


@dataclass(frozen=True, eq=False)
class Term:
    keys: Var
    queries: Var
    table: dict  # (key value, query value) -> bool, over keys.domain x queries.domain
    by_position: PositionMatch | None = None

    def reads(self) -> tuple[Var, ...]:
        if self.by_position is None:
            return (self.keys, self.queries)
        p = self.by_position
        forms = (f[0] for form in (p.target, p.match) for f in form if f is not CONSTANT)
        return tuple(dict.fromkeys((p.position, p.position_squared, *forms)))


@dataclass(frozen=True, eq=False)
class SelectorSpec:
    terms: tuple[Term, ...]

    def reads(self) -> tuple[Var, ...]:
        """The variables the head reads, each once, in a stable order."""
        return tuple(dict.fromkeys(var for term in self.terms for var in term.reads()))

    def holds(self, keys: dict, queries: dict) -> bool:
        """Whether the spec selects, given each variable's value at the key and at the query."""
        return all(t.table[(keys[t.keys], queries[t.queries])] for t in self.terms)


def normalize_selector(selector: ir.Selector, builder: _Builder) -> SelectorSpec:
    """The selector as a conjunction of tables, creating joint variables where needed; terms
    that match a position to at most one position are scored from numerical features."""
    spec = _normalize(selector, builder)
    if "position-selects" not in builder.enabled:
        return spec
    terms = (position_term(causal_term(term, builder), builder) for term in spec.terms)
    return SelectorSpec(tuple(terms))


def causal_term(term: Term, builder: _Builder) -> Term:
    """In a causal program the mask already hides keys after the query, so a term between two
    position-only variables that holds for every key at or before its query (k <= q, say)
    always holds where it matters: it becomes `true`, which one constant scores."""
    key_at, query_at = builder.values_by_position(term.keys), builder.values_by_position(term.queries)
    if not builder.program.causal or key_at is None or query_at is None:
        return term
    n = builder.program.max_len
    if all(term.table[(key_at[k], query_at[q])] for q in range(n) for k in range(q + 1)):
        return Term(term.keys, term.queries, dict.fromkeys(term.table, True))
    return term


def position_term(term: Term, builder: _Builder) -> Term:
    """A term with the indices on one side that pairs each value of the other side with at most
    one index is `index == target(other value)`. qk.py scores it S - S (index - target)^2 from
    numbers instead of a one-hot table over max_len indices: index and index^2 from the position
    embedding, and from the other side's one-hot the linear functions sum_v target(v) x[v] and
    sum_v (1 - target(v)^2) x[v] (target -1 where no index matches), which that side's writer
    writes for free (linear.py). A none (all-zero one-hot) gets -S index^2 <= 0: no match.

    The heads of a split (split_keys.py) match `j + y` to the index for every value j: when the
    target is a line a v + b in the other side's (number) values, extended to values that match
    no index without landing on one, a split's other side writes both from three features all
    its heads share: sum_v v x[v], sum_v v^2 x[v] and sum_v x[v] (the constant, where the other
    side is never none), instead of two features per head."""
    for positions_are_keys in (True, False):
        positions, other = (term.keys, term.queries) if positions_are_keys else (term.queries, term.keys)
        target = _index_targets(term, positions, other, positions_are_keys, builder)
        if target is not None:
            position = builder.position_feature("indices.value", "indices", lambda p: p)
            squared = builder.position_feature("indices.value^2", "indices", lambda p: p * p)
            forms = (other in builder.split_inputs and _line_forms(other, target, builder)) or (
                {(builder.linear_feature(f"{other.label}.target", other, target.__getitem__), None): 1.0},
                {(builder.linear_feature(f"{other.label}.match", other, lambda v: 1 - target[v] ** 2), None): 1.0},
            )
            match = PositionMatch(positions_are_keys, position, squared, *forms)
            return Term(term.keys, term.queries, term.table, match)
    return term


def _line_forms(other: Var, target: dict, builder: _Builder) -> tuple[dict, dict] | None:
    """(target form, match form) over the shared features of position_term's docstring, when
    the matched targets lie on a line (of slope 1 through a single one) whose extension meets no
    index at the unmatched values and float32 carries it (_precise_enough); else None."""
    matched = [(v, t) for v, t in target.items() if t >= 0]
    if not matched or not all(is_number(v) and not isinstance(v, bool) for v in other.values):
        return None
    (v0, t0), (v1, t1) = matched[0], matched[-1]
    slope = (t1 - t0) / (v1 - v0) if v1 != v0 else 1.0  # one point is on every line: j + y's
    offset = t0 - slope * v0
    line = {v: slope * v + offset for v in other.values}
    n = builder.program.max_len
    if any(line[v] != t for v, t in matched) or any(
        target[v] < 0 and 0 <= line[v] <= n - 1 and line[v] == int(line[v]) for v in other.values
    ):
        return None
    if not _precise_enough(other, line, builder):
        return None
    value = (builder.linear_feature(f"{other.label}.value", other, float), None)
    square = (builder.linear_feature(f"{other.label}.value^2", other, lambda v: float(v) ** 2), None)
    count = (builder.linear_feature(f"{other.label}.any", other, lambda v: 1.0), None) if other.may_be_none else CONSTANT
    target_form = _summed([(value, slope), (count, offset)])
    match_form = _summed([(count, 1.0 - offset * offset), (value, -2.0 * slope * offset), (square, -slope * slope)])
    return target_form, match_form


def _summed(terms: list[tuple]) -> dict:
    """{feature: sum of its coefficients}, zeros left out: two features may be one variable
    (v and v^2 when every v is 0 or 1)."""
    form: dict = {}
    for feature, a in terms:
        form[feature] = form.get(feature, 0.0) + a
    return {feature: a for feature, a in form.items() if a}


def _index_targets(term: Term, positions: Var, other: Var, positions_are_keys: bool, builder) -> dict | None:
    """other value -> the one index it matches (-1 for none), when `positions` is the plain
    indices and no other value matches two indices; else None."""
    source = builder.position_source(positions)
    if source is None or source[0] != "indices" or positions.may_be_none:
        return None
    if any(source[1](p) != p for p in range(builder.program.max_len)):
        return None
    none_pairs = ((p, None) if positions_are_keys else (None, p) for p in positions.values)
    if other.may_be_none and any(term.table[pair] for pair in none_pairs):
        return None  # the features score a none as no match (`not` of a select can match it)
    target = {}
    for v in other.values:
        pairs = ((p, v) if positions_are_keys else (v, p) for p in positions.values)
        matches = [pair[0 if positions_are_keys else 1] for pair in pairs if term.table[pair]]
        if len(matches) > 1:
            return None
        target[v] = matches[0] if matches else -1
    if not _precise_enough(other, target, builder):
        return None
    return target


def _precise_enough(other: Var, target: dict, builder: _Builder) -> bool:
    """Whether float32 can carry target and 1 - target^2 from `other`'s writers exactly enough.

    A step MLP computes each step to numeric_mlp.step_error; a step changes the features by
    what they change between its two values, and the score (in units of S) weighs target by up
    to 2n and match by 1. So the score's error is at most step_error times 2n TV(target) +
    TV(match), the total variations along the step MLP's input values (or, when the steps feed
    a linear fold in between, the cruder bound of every value's largest weight). The match is
    kept only while that stays below 1/8 of the S/2 margin; else the one-hot table is used."""
    n = builder.program.max_len
    writer = builder.writer[other]
    if isinstance(writer, NumericMLP):
        along = [target[writer.fn(p)] for p in writer.input.values]
        variation = sum(2 * n * abs(b - a) + abs(b * b - a * a) for a, b in zip(along, along[1:]))
        return step_error(writer.input.values) * variation <= 1 / 16
    sources = [builder.writer[v] for v in writer.inputs] if isinstance(writer, Linear) else []
    amplification = len(target) * max(abs(1 - t * t) + 2 * n * abs(t) for t in target.values())
    steps = [s for s in sources if isinstance(s, NumericMLP)]
    return all(step_error(s.input.values) * amplification <= 1 / 16 for s in steps)


def _normalize(selector: ir.Selector, builder: _Builder) -> SelectorSpec:
    if isinstance(selector, ir.Select):
        key_var, query_var = builder.var_for(selector.keys), builder.var_for(selector.queries)
        keys = builder.categorical_view(key_var, lambda k: tuple(selector.holds(k, q) for q in query_var.values))
        queries = builder.categorical_view(query_var, lambda q: tuple(selector.holds(k, q) for k in key_var.values))
        table = {
            (k, q): k is not None and q is not None and selector.holds(k, q)
            for k, q in product(keys.domain, queries.domain)
        }
        return SelectorSpec((Term(keys, queries, table),))
    if isinstance(selector, ir.SelectAnd):
        first = _normalize(selector.first, builder)
        second = _normalize(selector.second, builder)
        return _merge_terms(first.terms + second.terms)
    if isinstance(selector, ir.SelectNot):
        inner = _normalize(selector.inner, builder)
        if len(inner.terms) == 1:
            return SelectorSpec((_pointwise(inner.terms[0], inner.terms[0], lambda a, _b: not a),))
        return _joint_spec([inner], lambda held: not held[0], builder)
    if isinstance(selector, ir.SelectOr):
        first = _normalize(selector.first, builder)
        second = _normalize(selector.second, builder)
        if len(first.terms) == len(second.terms) == 1 and _same_vars(first.terms[0], second.terms[0]):
            return SelectorSpec((_pointwise(first.terms[0], second.terms[0], lambda a, b: a or b),))
        return _joint_spec([first, second], any, builder)
    raise TypeError(f"no selector rule for {type(selector).__name__}")


def _same_vars(a: Term, b: Term) -> bool:
    return a.keys is b.keys and a.queries is b.queries


def _pointwise(a: Term, b: Term, combine: Callable[[bool, bool], bool]) -> Term:
    """One table from two over the same variables."""
    return Term(a.keys, a.queries, {kq: combine(a.table[kq], b.table[kq]) for kq in a.table})


def _merge_terms(terms: tuple[Term, ...]) -> SelectorSpec:
    """AND of terms; terms over the same variables fold into one table."""
    merged: list[Term] = []
    for term in terms:
        twin = next((i for i, t in enumerate(merged) if _same_vars(t, term)), None)
        if twin is None:
            merged.append(term)
        else:
            merged[twin] = _pointwise(merged[twin], term, lambda a, b: a and b)
    return SelectorSpec(tuple(merged))


def _joint_spec(specs: list[SelectorSpec], combine: Callable, builder: _Builder) -> SelectorSpec:
    """combine([spec.holds ...]) as one table over the joint of every key / query variable."""
    key_parts = tuple(dict.fromkeys(t.keys for s in specs for t in s.terms))
    query_parts = tuple(dict.fromkeys(t.queries for s in specs for t in s.terms))
    joint_keys, joint_queries = builder.joint(key_parts), builder.joint(query_parts)

    def assignment(parts: tuple, value) -> dict:
        return dict(zip(parts, value if len(parts) > 1 else (value,)))

    table = {}
    for k, q in product(joint_keys.domain, joint_queries.domain):
        keys, queries = assignment(key_parts, k), assignment(query_parts, q)
        table[(k, q)] = bool(combine([s.holds(keys, queries) for s in specs]))
    return SelectorSpec((Term(joint_keys, joint_queries, table),))
