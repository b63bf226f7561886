"""Value-set inference: the finite set of values each s-op can take (docs/language.md, "Semantics").

This is also where lambdas meet every combination of values they can be called with, so a lambda
that fails (division by zero, comparing a string with a number, ...) is reported here, at the
lambda's line, with the values, before anything runs or compiles. (A running mean of a causal
program and the length or index meet only at the mean's own count: cooccurrence.py.)

Value sets never contain None: "none" is the absence of a value, and every consumer treats it
apart (all-zero one-hot in the compiled model).
"""

from __future__ import annotations

from itertools import product
from numbers import Number
from typing import Any
from collections.abc import Iterable

import numpy as np

from .. import ir
from ..element_fn import FINITE_TEXT, is_finite, value_order
from ..errors import RaspError, RaspTypeError, RaspValueError, attributed
from ..float_arrays import only_floats, sorted_floats
from .lambda_calls import call_checked, describe
from .cooccurrence import meeting_pairs
from .lambda_arrays import results_on_arrays
from .means import MAX_MEANS, possible_means
from .twins import Groups, calls_with_twins, check_output, check_predicate, members, note_twin

MAX_VALUES = 100_000
"""The largest value set a categorical s-op may have; beyond it compiling a one-hot would be absurd."""

MAX_NUMBERS = MAX_MEANS
"""The largest value set a numerical s-op may have: it is one residual coordinate, and what
reads it categorically keeps only the values its reader tells apart (lowering/views.py)."""

MAX_COMBINATIONS = 2_000_000
"""The most value pairs a sequence_map or select lambda is tried on (each pair is one call)."""

MAX_TABLE_CELLS = 20_000_000
"""The most value pairs a select may have (its keys' values times its queries'). A comparison,
or a lambda with an array form (element_fn.predicate_table), is decided on arrays, one boolean a
pair, through intermediate arrays of 8 bytes a pair (160 MB at this limit): more than
MAX_COMBINATIONS pairs, but not without bound. 4,096 x 4,097 (an index against a count at
max_len 4,096) is 16.8 million."""

ValueSets = dict[ir.SOp, frozenset[Any]]  # each s-op's values (ir.Value, or None), keyed by node identity
Twins = dict  # dict[ir.SOp, twins.Groups]: an s-op's values equal to others of its set but not the same


def is_number(value: object) -> bool:
    return isinstance(value, Number) and not isinstance(value, complex)


def most_values(node: ir.SOp) -> int:
    """How many values `node` may take: MAX_NUMBERS if numerical, else MAX_VALUES."""
    return MAX_NUMBERS if node.encoding == ir.NUMERICAL else MAX_VALUES


def _checked_set(result: set, node: ir.SOp) -> frozenset:
    result.discard(None)
    if not result:  # only a function returning None everywhere gives no value
        raise RaspValueError(f"{describe(node)} is none at every position: its function returns None on "
                             "every value it can meet", node.loc)
    if len(result) > most_values(node):
        raise _too_many_values(node)
    if node.encoding == ir.NUMERICAL and not set(map(type, result)) <= {int, float, bool}:  # a mean's floats: one pass
        bad = [v for v in result if not is_number(v)]
        if bad:
            raise RaspTypeError(
                f"{describe(node)} is numerical but takes the non-numeric value {bad[0]!r}; "
                "numerical encodings hold numbers only",
                node.loc,
            )
    return frozenset(result)


def _too_many_values(node: ir.SOp) -> RaspValueError:
    return RaspValueError(f"{describe(node)} takes more than {most_values(node):,} values", node.loc)


def nullable_sops(program: ir.Program) -> set:
    """The s-ops that may be none at some position: a categorical aggregate without a default
    (or of an s-op that may be none), a categorical map or sequence_map whose function returns
    None on some of its values (known once inference has called it), and categorical maps of
    those. Numerical s-ops never are: a numerical map of none is 0."""
    nullable: set = set()
    for node in program.nodes():
        if may_be_none(node, nullable):
            nullable.add(node)
    return nullable


def may_be_none(node: ir.Node, nullable: set) -> bool:
    """Whether `node` may be none, its children's answers in `nullable`; a function's own None
    is read from its memo of results, so ask after inference called it on every value."""
    if not isinstance(node, ir.SOp) or node.encoding == ir.NUMERICAL:
        return False
    if isinstance(node, ir.Aggregate):
        return node.default is None or node.sop in nullable
    if any(child in nullable for child in node.children()):
        return True
    return isinstance(node, (ir.Map, ir.SequenceMap)) and any(r is None for r in node.fn.results.values())


def infer_value_sets(program: ir.Program) -> ValueSets:
    """The value set of every s-op of `program`; checks every lambda on every combination, and
    refuses a program that tells apart values equal to Python but not the same (frontend/twins.py)."""
    sets: ValueSets = {}
    twins: Twins = {}
    nullable: set = set()  # filled in as the nodes come (a map's None is known once it is called)
    for node in program.nodes():
        try:
            if isinstance(node, ir.Select):
                _check_predicate(node, sets)
                if twins[node.keys] or twins[node.queries]:
                    check_predicate(node, _ordered(sets[node.keys]), _ordered(sets[node.queries]),
                                    twins[node.keys], twins[node.queries])
            elif not isinstance(node, ir.Selector):
                twins[node] = {}
                sets[node] = _value_set(node, sets, program, nullable, twins)
                if may_be_none(node, nullable):
                    nullable.add(node)
        except RaspError as error:
            raise attributed(error, describe(node)) from None
    check_output(program, twins[program.output])
    return sets


def _value_set(node: ir.SOp, sets: ValueSets, program: ir.Program, nullable: set, twins: Twins) -> frozenset:
    values = _values_of(node, sets, program, nullable, twins)
    if node.encoding == ir.NUMERICAL and any(child in nullable for child in node.children()):
        _joined(values, 0, twins[node])  # a numerical map of none is 0
    return _checked_set(values, node)


def _joined(values: set, value, groups: Groups) -> None:
    """Add `value` to `values`, as a twin of the member equal to it if there is one."""
    if value in values:
        note_twin(groups, next(v for v in values if v == value), value)
    else:
        values.add(value)


def _values_of(node: ir.SOp, sets: ValueSets, program: ir.Program, nullable: set, twins: Twins) -> set:
    n = program.max_len
    if isinstance(node, ir.Tokens):
        return _vocab_set(program)
    if isinstance(node, ir.Indices):
        return set(range(n))
    if isinstance(node, ir.Length):
        return set(range(1, n + 1))
    if isinstance(node, ir.SelectorWidth):  # never 0 where every query selects a key
        return set(range(1 if always_selects(node.selector, sets, n, nullable) else 0, n + 1))
    # Functions are tried in a fixed order of their arguments, so the first failure reported is
    # the same in every run.
    groups = twins[node]
    if isinstance(node, ir.Map):
        rows: list[tuple[Any, ...]] = [(x,) for x in _ordered(sets[node.inner])]
        return _distinct_values(_results(node, rows, [twins[node.inner]]), node, groups)
    if isinstance(node, ir.SequenceMap):
        if node.first is node.second:  # one s-op twice: only equal values meet (a twin meets itself)
            rows = [(x, x) for x in _ordered(sets[node.first])]
            return _distinct_values(_results(node, rows, [twins[node.first]] * 2, diagonal=True), node, groups)
        pairs: Iterable[tuple[Any, ...]] | None = meeting_pairs(node, sets, program, nullable)  # a running mean and the length: fewer pairs
        if pairs is None:
            _check_combinations(node, sets[node.first], sets[node.second], MAX_COMBINATIONS, "tried on")
            pairs = product(_ordered(sets[node.first]), _ordered(sets[node.second]))
        rows = list(pairs)
        return _distinct_values(_results(node, rows, [twins[node.first], twins[node.second]]), node, groups)
    if isinstance(node, ir.Aggregate):
        return _aggregate_values(node, sets, n, twins, nullable)
    raise TypeError(f"no value-set rule for {type(node).__name__}")


def _results(node: ir.Map | ir.SequenceMap, rows: list[tuple], argument_groups: list[Groups], diagonal=False):
    """node.fn on every argument tuple of `rows`: computed on arrays where that is exact (a mean's
    hundreds of thousands of values: lambda_arrays.results_on_arrays), else call by call, twins
    included (twins.calls_with_twins), which is then mostly look-ups of what the arrays computed."""
    computed = results_on_arrays(node.fn, rows)
    if computed is not None:
        if not any(argument_groups):
            return computed
        node.fn.remember_all(rows, computed)  # the twins' calls then look these up
    return calls_with_twins(node.fn, node, rows, argument_groups, diagonal)


def _vocab_set(program: ir.Program) -> set:
    """The vocab as a set; RaspValueError when two tokens are equal (1 and True, 1 and 1.0), which
    a set, and so every value set, holds as one while the model embeds each on its own row."""
    for token in program.vocab:
        if not is_finite(token):
            raise RaspValueError(f"the vocab holds {token!r}; {FINITE_TEXT}", program.output_loc)
    vocab = set(program.vocab)
    if len(vocab) != len(program.vocab):
        equal = next((a, b) for i, a in enumerate(program.vocab) for b in program.vocab[:i] if a == b)
        raise RaspValueError(f"the vocab holds {equal[1]!r} and {equal[0]!r}, which are equal to Python; "
                             "keep one", program.output_loc)
    return vocab


def _ordered(values) -> list:
    """`values` in value_order; a set of floats (a mean's, hundreds of thousands) sorted as plain
    numbers, which is the same order several times faster."""
    if only_floats(values):
        return sorted_floats(values)
    return sorted(values, key=value_order)


def _aggregate_values(node: ir.Aggregate, sets: ValueSets, n: int, twins: Twins, nullable: set) -> set:
    inner, groups = sets[node.sop], twins[node]
    if not is_finite(node.default):
        raise RaspValueError(f"the default is {node.default!r}; {FINITE_TEXT}", node.loc)
    if node.encoding == ir.NUMERICAL:
        if node.sop.encoding != ir.NUMERICAL:
            raise RaspTypeError(
                f"a numerical mean needs a numerical s-op, but {describe(node.sop)} is categorical; "
                "wrap it in numerical(...)",
                node.loc,
            )
        default = 0 if node.default is None else node.default
        if not is_number(default):
            raise RaspTypeError(f"a numerical aggregate needs a numeric default, not {default!r}", node.loc)
        means = possible_means(inner, most_selected(node.selector, sets, n), node)  # floats, never -0.0
        _joined(means, default, {} if always_selects(node.selector, sets, n, nullable) else groups)
        return means
    values = [v for value in _ordered(inner) for v in members(twins[node.sop], value)]
    return _distinct_values(values if node.default is None else [*values, node.default], node, groups)


def _distinct_values(values, node: ir.SOp, groups: Groups) -> set:
    """The set of `values`, refused (as `_checked_set` would) as soon as it passes its limit:
    a sequence_map of two means tried 1.7 million pairs for 40 s before. Values equal to one kept
    but not the same (2.0 beside 2) go to `groups` (twins.grouped)."""
    limit = most_values(node)
    if isinstance(values, list) and len(kinds := set(map(type, values))) == 1:  # no twins but 0.0 and -0.0
        distinct = set(values)
        if kinds != {float} or 0.0 not in distinct:
            if len(distinct) > limit + 1:
                raise _too_many_values(node)
            return distinct
    kept: dict = {}
    for value in values:
        first = kept.setdefault(value, value)
        if first is not value:
            note_twin(groups, first, value)
        if len(kept) > limit + 1:  # + 1: None, which _checked_set drops, may be among them
            raise _too_many_values(node)
    return set(kept)


def most_selected(selector: ir.Selector, sets: ValueSets, n: int) -> int:
    """The most keys `selector` can select for one query, as far as the value sets tell: a select
    on `indices` as keys selects, for a query value q, the indices k with pred(k, q) (a shift,
    k == q - 1, selects at most one); an `and` at most what either part does, an `or` their sum;
    anything else up to n. A mean of at most m keys takes only the means of m values or fewer."""
    if isinstance(selector, ir.Select) and isinstance(selector.keys, ir.Indices):
        queries = _ordered(sets[selector.queries])  # the table's order: the same first failure in every run
        return int(selector.table(range(n), queries).sum(axis=0).max(initial=0))
    if isinstance(selector, ir.SelectAnd):
        return min(most_selected(selector.first, sets, n), most_selected(selector.second, sets, n))
    if isinstance(selector, ir.SelectOr):
        return min(n, most_selected(selector.first, sets, n) + most_selected(selector.second, sets, n))
    return n


def always_selects(selector: ir.Selector, sets: ValueSets, n: int, nullable: set) -> bool:
    """Whether `selector` selects at least one key for every query, as far as the common forms
    tell: `true` on s-ops never none; a select of indices on indices where each query q has a
    selected k <= q (key 0..q exist at q, causal or not); an s-op against itself with a reflexive
    comparison (a query selects its own position); an `or` where either part does."""
    if isinstance(selector, ir.SelectOr):
        return any(always_selects(part, sets, n, nullable) for part in (selector.first, selector.second))
    if not isinstance(selector, ir.Select) or selector.keys in nullable or selector.queries in nullable:
        return False
    if selector.predicate == "true":
        return True
    if isinstance(selector.keys, ir.Indices) and isinstance(selector.queries, ir.Indices):
        return bool(np.tril(selector.table(range(n), range(n))).any(axis=0).all())  # some k <= q for each q
    return selector.keys is selector.queries and selector.predicate in ("==", "<=", ">=")


def _check_combinations(node: ir.Node, first: frozenset, second: frozenset, limit: int, how: str) -> None:
    """RaspValueError at `node` when its two inputs have more than `limit` value pairs; `how`
    says what would be done with each pair."""
    if len(first) * len(second) > limit:
        raise RaspValueError(
            f"this {'select' if isinstance(node, ir.Select) else 'sequence_map'} would be {how} "
            f"{len(first):,} x {len(second):,} value pairs "
            f"(more than {limit:,}); map its inputs to fewer values first "
            "(e.g. a numerical mean to `mean > 0`), or use a smaller max_len",
            node.loc,
        )


def _check_predicate(select: ir.Select, sets: ValueSets) -> None:
    """A select's predicate on every pair of its keys' and queries' values: on arrays up to
    MAX_TABLE_CELLS pairs where that is exact (a comparison, a lambda with an array form), else
    called pair by pair, up to MAX_COMBINATIONS pairs; a failing pair is reported."""
    _check_combinations(select, sets[select.keys], sets[select.queries], MAX_TABLE_CELLS, "decided on")
    if ir.predicate_table(select.predicate, sets[select.keys], sets[select.queries]) is not None:
        return  # computed on arrays: every pair holds or not, none fails (element_fn.predicate_table)
    _check_combinations(select, sets[select.keys], sets[select.queries], MAX_COMBINATIONS,
                        "tried, one Python call a pair (its predicate has no array form here), on")
    pairs = product(_ordered(sets[select.keys]), _ordered(sets[select.queries]))  # the same first failure every run
    if isinstance(select.predicate, str):
        if select.predicate in ("<", "<=", ">", ">="):
            for key, query in pairs:
                try:
                    ir.compare(select.predicate, key, query)
                except TypeError:
                    raise RaspValueError(
                        f"select cannot compare key {key!r} {select.predicate} query {query!r}",
                        select.loc,
                    ) from None
        return
    for key, query in pairs:
        call_checked(select.predicate, (key, query), select)
