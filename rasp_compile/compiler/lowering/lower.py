"""program_to_graph: a checked `ir.Program` -> residual variables and the operations that write them.

Every s-op the output needs becomes a `Var` (a value living in the residual stream, categorical:
one-hot over its values; numerical: one dimension) and exactly one operation writes it, by its
plain construction:

    tokens, indices        Embed
    length                 Embed in a causal program (i + 1); else the width of select-all
    map                    TableMLP of a categorical input, NumericMLP (exact steps) of a number
    sequence_map           TableMLP over categorical views of both inputs (views.py)
    aggregate              Attend: a head reading the value's one-hot (categorical) or number (mean)
    selector_width         Attend writing BOS's share c/(c + w), then a NumericMLP reading w from it

The optimisations that choose another construction for an s-op are the driver's rewrites
(rewrites.py): each construction asks those matching it first, in the driver's order, and
builds the plain one when none answers. With no rewrite and no option (rewrites.LoweringOptions)
this is the compiler of `--no-opt` every optimisation.
Where a primitive needs a categorical view of a numerical s-op, or a joint (tuple-valued)
variable for a selector one score cannot add up, the lowering adds it (views.py, selectors.py).
The answer is read from its own dimensions (ops.plain_readout); ops nothing reads are dropped
later (passes/dead_ops.py).
"""

from __future__ import annotations

import dataclasses
from functools import cache
from typing import Any
from collections.abc import Callable

from ... import ir
from ...frontend.cooccurrence import meeting_only
from ...frontend.infer import ValueSets, nullable_sops
from ...frontend.lambda_arrays import table_on_arrays
from ..naming import sop_label
from ..ops import Attend, Embed, EmbedSource, Graph, HeadKind, NumericMLP, Op, TableMLP, plain_readout
from ..primitives.selector_width import bos_shares, bos_weight, width_from_share
from ..variables import Var
from .pairs import check_pair_limit
from .positions import possible_pairs
from .rewrites import AggregateSite, LoweringOptions, MapSite, SequenceMapSite, WidthSite
from .selectors import score_selector
from .state import LoweringState
from .views import categorical_view


def program_to_graph(program: ir.Program, value_sets: ValueSets, options: LoweringOptions) -> Graph:
    """Every s-op the output depends on, as variables and the ops that write them."""
    state = new_state(program, value_sets, options)
    for node in program.nodes():
        if isinstance(node, ir.SOp):
            state.var_for(node)
    output = state.vars[program.output]
    split = state.origin.get(output) == "split-keys"
    return Graph(tuple(state.ops), output, program, plain_readout(output), split=split, labels=frozenset(state.labels))


def new_state(program: ir.Program, value_sets: ValueSets, options: LoweringOptions) -> LoweringState:
    """An empty lowering of `program`, whose `var_for` lowers any of its s-ops on demand."""
    return LoweringState(program, value_sets, nullable_sops(program), options, _lowered)


def _lowered(state: LoweringState, node: ir.SOp) -> Var:
    """The variable of `node`, newly lowered (with every s-op it reads)."""
    values = state.program.vocab if isinstance(node, ir.Tokens) else state.value_sets[node]
    out = state.new_var(sop_label(node, state.program), node.encoding, values, node in state.nullable, node.loc)
    state.vars[node] = state.emit(_op_for(state, node, out))
    return out


def _op_for(state: LoweringState, node: ir.SOp, out: Var) -> Op:
    if isinstance(node, ir.Tokens):
        return Embed(out, EmbedSource.TOKENS)
    if isinstance(node, ir.Indices):
        return Embed(out, EmbedSource.INDICES)
    if isinstance(node, ir.Length):
        if state.program.causal:
            return Embed(out, EmbedSource.LENGTH)
        everything = ir.Select(ir.tokens, ir.tokens, "true")
        return _width_ops(state, everything, out)  # n, as the width of select-all
    if isinstance(node, ir.Map):
        return _map_op(state, out, node.fn, state.vars[node.inner])
    if isinstance(node, ir.SequenceMap):  # a running mean and the length: only the pairs that meet
        fn = meeting_only(node, state.value_sets, state.program, state.nullable) or node.fn
        return _sequence_map_op(state, out, fn, state.vars[node.first], state.vars[node.second], node)
    if isinstance(node, ir.SelectorWidth):
        return _width_ops(state, node.selector, out)
    if isinstance(node, ir.Aggregate):
        return _aggregate_op(state, node, out)
    raise TypeError(f"no compilation rule for {type(node).__name__}")


def _map_op(state: LoweringState, out: Var, fn: Callable[[Any], Any], inner: Var) -> Op:
    op = state.rewritten(MapSite(out, fn, inner))
    if op is not None:
        return op
    if inner.encoding == ir.CATEGORICAL:
        return TableMLP(out, (inner,), fn)
    return NumericMLP(out, inner, fn)


def _sequence_map_op(state: LoweringState, out: Var, fn: Callable[[Any, Any], Any], first: Var, second: Var, where: ir.SOp) -> Op:
    if first is second:  # one variable twice (`x * x`): a map of it
        return _map_op(state, out, lambda v: fn(v, v), first)
    op = state.rewritten(SequenceMapSite(out, fn, first, second))
    if op is not None:
        return op
    check_pair_limit(where, first, second)  # the views and the table ask about every pair
    table = _table(fn, first, second)
    first_view = categorical_view(state, first, lambda x: table()[0][first.position[x]])
    second_view = categorical_view(state, second, lambda y: table()[1][second.position[y]])
    return TableMLP(out, (first_view, second_view), fn, possible=possible_pairs(state, first_view, second_view))


def _table(fn: Callable[[Any, Any], Any], first: Var, second: Var) -> Callable[[], tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]]:
    """fn on every pair of `first`'s and `second`'s values, as the table's rows (one per value of
    `first`) and columns: the views' signatures. Computed once, when a view first asks, on arrays
    where that gives every value as fn does (a running mean's hundreds of thousands of values)."""

    @cache
    def rows_and_columns() -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
        rows = table_on_arrays(fn, first.values, second.values) if isinstance(fn, ir.Fn) else None
        if rows is None:
            rows = [[fn(x, y) for y in second.values] for x in first.values]
        return [tuple(row) for row in rows], list(zip(*rows))

    return rows_and_columns


def _aggregate_op(state: LoweringState, node: ir.Aggregate, out: Var) -> Op:
    selector = score_selector(state, node.selector)
    value = state.vars[node.sop]
    if node.encoding == ir.NUMERICAL:
        default = 0 if node.default is None else node.default
        return Attend(out, selector, HeadKind.NUMERICAL, value, default, selector=node.selector)
    whole = Attend(out, selector, HeadKind.CATEGORICAL, categorical_view(state, value), node.default, selector=node.selector)
    return state.rewritten(AggregateSite(node, out, whole)) or whole


def _width_ops(state: LoweringState, selector: ir.Selector, out: Var) -> Op:
    """selector_width = an attention writing BOS's share c/(c + w), then an exact step MLP reading it."""
    op = state.rewritten(WidthSite(selector, out))
    if op is not None:
        return op
    spec = score_selector(state, selector)
    if spec.always_selects or spec.bos_as_key:  # BOS's share is what the head counts by: scored as for any width
        spec = dataclasses.replace(spec, always_selects=False, bos_as_key=False)
    weight = bos_weight(out.values)
    share = state.new_var(f"{out.label}.bos_share", ir.NUMERICAL, bos_shares(out.values, weight), loc=out.loc)
    state.emit(Attend(share, spec, HeadKind.WIDTH, selector=selector, bos_weight=weight))
    return NumericMLP(out, share, width_from_share(weight))
