"""split-keys: the answer's aggregate, when its select compares a table of two s-ops, as one
head per value of one of them, the heads' outputs summed.

`aggregate(select(f(x, y), q, pred) and rest, v)` needs the one-hot of f(x, y) at every key: a
table MLP over (x, y), one more MLP sub-layer after the ones writing x and y. But the keys it
selects are the union over the values j of x of those where x = j and pred(f(j, y), q) holds, and
for a fixed j that is a select on y alone (the index-matching select of `select(j + y, indices,
==)`, say), next to a key-only term x = j. So each j gets a head of its own scoring

    select(y, q, lambda y, q: pred(f(j, y), q)) and select(x, q, lambda x, q: x == j) and rest

which reads x's and y's one-hots where their writers leave them: most_freq's and sort_freq's
target (how many come before, plus how many tie and come earlier) is matched to the index one
layer sooner.

Summing is exact enough for the read-out alone, so only the program's answer is split. Every
key any head selects holds the one value t the whole select would read (several values is a
program error), so each head that selects reads t's one-hot, and each other head reads BOS, whose
value is the default's one-hot d (zeros for none). With H heads of which s >= 1 select, the sum
less (H - 1) d is s t + (1 - s) d: t's logit leads every other by at least 1 (it is t exactly
when one head selects, the usual case), and when none selects it is d exactly. Each head leaks
at most tolerances.CATEGORICAL_LEAK, H of them far less than the read-out's margin of 1/2 (the none
column's constant). The split is kept only where the heads sit in an earlier sub-layer than the
single head would, and where each head scores the index from position features (a few columns),
not from a one-hot table over max_len positions per head.

Needs: the ops of every s-op before the answer (their sub-layers decide), and the lowering's
other rewrites for the heads' selectors; runs as the `AggregateSite` rewrite of the lowering,
which drops the heads it scored when it passes. Guarantees: the read-out picks the answer the
single head gives, at every input; the table's inputs keep a view with a dimension per value
(lowering/views.py), one for all the heads (lowering/selectors.SplitInputs).
"""

from __future__ import annotations

from typing import Any
from collections.abc import Callable

from ... import ir
from ...frontend.cooccurrence import meets
from ...frontend.infer import ValueSets
from ..lowering.positions import position_source
from ..lowering.rewrites import AggregateSite
from ..lowering.selectors import SplitInputs, score_selector
from ..lowering.state import LoweringState
from ..lowering.views import whole_view
from ..ops import Attend, EmbedSource, HeadKind, Linear
from ..schedule import sublayers_after
from ..limits import MAX_SPLIT_COLUMNS
from ..variables import Var, coordinate, sort_key


def split_answer(state: LoweringState, site: AggregateSite) -> Linear | None:
    """The answer's categorical aggregate `whole` as split heads (on the draft `state`) and the
    Linear op summing them, when those heads all come before the sub-layer `whole` would take;
    else None."""
    node, out = site.node, site.out
    if node is not state.program.output:
        return None
    split = split_selectors(node.selector, state.value_sets, state.program, state.nullable, MAX_SPLIT_COLUMNS, sort_key)
    if split is None:
        return None
    parts, table_inputs = split
    inputs = [state.vars[x] for x in table_inputs]
    viewed = frozenset(x for x in inputs if x.encoding == ir.NUMERICAL and whole_view(state, x) is not None)
    reading = SplitInputs(frozenset(inputs), viewed)
    heads = [
        Attend(state.new_var(f"{out.label}.part{k}", ir.CATEGORICAL, out.values, out.may_be_none, out.loc),
               score_selector(state, part, reading), HeadKind.CATEGORICAL, site.whole.value, node.default, selector=part)
        for k, part in enumerate(parts)
    ]
    *slots, whole_slot = sublayers_after(state.ops, [*heads, site.whole])
    if max(slots) >= whole_slot or any(_reads_position_table(state, head) for head in heads):
        return None
    for head in heads:
        state.emit(head)
    return _summed(out, heads, node.default)


def _reads_position_table(state: LoweringState, head: Attend) -> bool:
    """Whether `head` scores the index from its one-hot (a table over max_len positions: the
    indices, or a map of them that tells every position apart) rather
    than from the position features of position-selects: H such heads cost H x max_len head
    columns (most_freq at max_len 64: 5.1M parameters against 0.6M unsplit), more than the
    sub-layer the split saves is worth."""
    n = state.program.max_len
    return any(
        var.encoding == ir.CATEGORICAL and len(var.values) == n
        and (position_source(state, var) or (None,))[0] is EmbedSource.INDICES
        for var in head.score.reads()
    )


def _summed(out: Var, heads: list[Attend], default: ir.Value | None) -> Linear:
    """`out` as the sum of the split heads' one-hots, less the default's one-hot that all but one
    of them add (module docstring)."""
    weights = {(head.out, v): {coordinate(out, v): 1.0} for head in heads for v in out.values}
    bias = {} if default is None else {coordinate(out, default): 1.0 - len(heads)}
    return Linear(out, weights, bias)


def split_selectors(
    selector: ir.Selector, value_sets: ValueSets, program: ir.Program, nullable: set[ir.SOp], max_columns: int,
    order: Callable[[Any], Any],
) -> tuple[list[ir.Selector], tuple[ir.SOp, ir.SOp]] | None:
    """One selector per value j of the smaller input of the first select (among the top-level
    `and`s) whose keys are a sequence_map, as the module docstring writes it, in `order` of j;
    values j for which the select can never hold are left out; and the table's two inputs. None
    when there is no such select, or its heads could need more than `max_columns` head columns
    (one per value of j's input, each as wide as the other input's or the query's value count,
    whichever is smaller), or no part can select, or the
    table is numerical and an input may be none (`nullable`): it is 0 there, a key the parts'
    selects, which never select a none, would miss."""
    conjuncts = _conjuncts(selector)
    for i, select in enumerate(conjuncts):
        if isinstance(select, ir.Select) and isinstance(select.keys, ir.SequenceMap):
            rest = conjuncts[:i] + conjuncts[i + 1 :]
            if select.keys.encoding == ir.NUMERICAL and {select.keys.first, select.keys.second} & nullable:
                return None
            meeting = meets(select.keys, value_sets, program, nullable) or (lambda _x, _y: True)
            return _parts(select, select.keys, rest, value_sets, meeting, max_columns, order)
    return None


def _parts(select: ir.Select, table: ir.SequenceMap, rest: list[ir.Selector], value_sets: ValueSets,
           meeting: Callable[[Any, Any], bool], max_columns: int, order: Callable[[Any], Any],
           ) -> tuple[list[ir.Selector], tuple[ir.SOp, ir.SOp]] | None:
    """split_selectors' answer for `select`, whose keys are `table`, and the other conjuncts; a
    pair of the table's inputs that never meets (`meeting`, frontend/cooccurrence.py) is never
    selected, and the table's function is not called on it."""
    split_first = len(value_sets[table.first]) <= len(value_sets[table.second])
    x, y = (table.first, table.second) if split_first else (table.second, table.first)
    queries = value_sets[select.queries]
    if len(value_sets[x]) * min(len(value_sets[y]), len(queries)) > max_columns:
        return None
    parts: list[ir.Selector] = []
    for j in sorted(value_sets[x], key=order):
        pairs = {other: (j, other) if split_first else (other, j) for other in value_sets[y]}
        selected = {
            (other, q): meeting(*pair) and _holds(select, table.fn(*pair), q)
            for other, pair in pairs.items()
            for q in queries
        }
        if not any(selected.values()):
            continue  # no key with x = j is ever selected
        on_y = ir.Fn(lambda other, q, selected=selected: selected[(other, q)], f"{_text(select)} at {j!r}")
        is_j = ir.Fn(lambda value, _q, j=j: value == j, f"lambda k, q: k == {j!r}")
        part: ir.Selector = ir.SelectAnd(ir.Select(y, select.queries, on_y), ir.Select(x, select.queries, is_j))
        for other_select in rest:
            part = ir.SelectAnd(part, other_select)
        parts.append(part)
    return (parts, (x, y)) if parts else None


def _conjuncts(selector: ir.Selector) -> list[ir.Selector]:
    """The selectors `selector` is the `and` of, in order (itself when it is no `and`)."""
    if isinstance(selector, ir.SelectAnd):
        return _conjuncts(selector.first) + _conjuncts(selector.second)
    return [selector]


def _text(select: ir.Select) -> str:
    return select.predicate if isinstance(select.predicate, str) else select.predicate.text


def _holds(select: ir.Select, key: ir.Value | None, query: ir.Value) -> bool:
    """The select's predicate on one key value; a none key (a table that returns None there) is
    never selected."""
    return key is not None and select.holds(key, query)
