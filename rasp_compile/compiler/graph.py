"""rasp_to_graph: a checked `ir.Program` -> residual variables and the operations that write them.

Every s-op the output needs becomes a `Var` (a value living in the residual stream, categorical:
one-hot over its values; numerical: one dimension) and exactly one operation writes it:

    Embed        tokens / indices / causal length (and maps of them, folded: a table lookup)
    TableMLP     categorical inputs -> any output, one hidden unit per input combination
    NumericMLP   one numerical input -> any output, exact steps
    GatedMap     a number and an exact one-hot -> any output, one small MLP per one-hot value
    Linear       a linear function of other variables' coordinates, written by their writers
    Attend       an aggregate (categorical or numerical) or the attention half of selector_width

Where a primitive needs a categorical view of a numerical s-op (a select on numerical keys, a
sequence_map that is not linear) the graph adds the conversion; where a selector combines
selects on different s-ops in a way one attention score cannot add up, it adds a joint
(tuple-valued) variable. See selectors.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations, product
from typing import Callable

from .. import ir
from ..frontend.infer import ValueSets, is_number, nullable_sops
from .amplification import set_amplification
from .gated_map import affine_pieces, exact_one_hot
from .head_features import fold_head_features
from .interpolated_steps import choose_interpolated_steps
from .linear import linear_form
from .numeric_mlp import step_output_error
from .precision import largest_magnitude
from .readout import Readout, linear_readout, nearest_value_readout, plain_readout
from .ops import Attend, Embed, GatedMap, Graph, Linear, NumericMLP, Op, TableMLP, Var, coordinate, op_inputs
from .schedule import sublayers_after
from .scores import Score, score_columns
from .selectors import normalize_selector
from .split_keys import split_selectors

MAX_SPLIT_COLUMNS = 8192
"""split_keys builds a head per value of one input of the answer's table, each up to the other
input's (or the query's) value count wide: it is tried while that bound stays within this many
head columns (64 heads of 65 at max_len 64; at 100 the 100 heads would take 10,100, and over a
hundred million parameters)."""

FOLD_TOLERANCE = 1e-6
"""The float32 error, relative to its largest value, a number may take folded onto the steps of
a categorical view (GraphBuilder.linear): a tenth of what a numerical answer is checked to."""


@dataclass
class _Builder:
    program: ir.Program
    value_sets: ValueSets
    enabled: frozenset  # the optimisations to apply (compiler.OPTIMIZATIONS)
    nullable: set  # the s-ops that may be none (infer.nullable_sops)
    ops: list[Op] = field(default_factory=list)
    vars: dict = field(default_factory=dict)  # ir node -> Var
    writer: dict = field(default_factory=dict)  # Var -> Op
    categorical_views: dict = field(default_factory=dict)
    joints: dict = field(default_factory=dict)
    embedded_copies: dict = field(default_factory=dict)  # categorical copies of embedded numbers
    position_features: dict = field(default_factory=dict)
    linear_features: dict = field(default_factory=dict)
    lengths: set = field(default_factory=set)  # the variables holding a non-causal length
    split_inputs: set = field(default_factory=set)  # split_heads' table inputs and their views (the answer's)
    labels: set = field(default_factory=set)

    # -- variables ---------------------------------------------------------------------------

    def fresh_label(self, wanted: str) -> str:
        label, k = wanted, 2
        while label in self.labels:
            label, k = f"{wanted}_{k}", k + 1
        self.labels.add(label)
        return label

    def new_var(self, label: str, encoding: str, values, may_be_none=False, loc=None) -> Var:
        ordered = tuple(sorted(set(values), key=_sort_key))
        return Var(self.fresh_label(label), encoding, ordered, may_be_none and encoding == ir.CATEGORICAL, loc)

    def emit(self, op: Op) -> Var:
        self.ops.append(op)
        self.writer[op.out] = op
        return op.out

    # -- conversions used by the primitives ----------------------------------------------------

    def categorical_view(self, var: Var, signature: Callable = ir.identity) -> Var:
        """`var` itself if categorical; else a categorical copy written by an exact step MLP.

        The copy needs only as many values as the consumer tells apart: values with equal
        `signature` (e.g. the row of a sequence_map's table) share one dimension, named by the
        first of them. A consumer computing on that value gets what it would on any other."""
        if var.encoding == ir.CATEGORICAL:
            return var
        if "value-classes" not in self.enabled or var in self.split_inputs:
            signature = ir.identity  # every value its own class (one view for all of a split's heads)
        first_of: dict = {}
        representative = {x: first_of.setdefault(signature(x), x) for x in var.values}
        key = (var, tuple(representative[x] for x in var.values))
        if key not in self.categorical_views:
            view = self.new_var(f"{var.label}.cat", ir.CATEGORICAL, first_of.values(), loc=var.loc)
            number, classify = var, representative.__getitem__
            steps = self.writer.get(var)
            if "compose-views" in self.enabled and isinstance(steps, NumericMLP):
                number, classify = steps.input, _compose(classify, steps.fn)
            self.categorical_views[key] = self.emit(NumericMLP(view, number, classify))
            if var in self.split_inputs:
                self.split_inputs.add(view)
        return self.categorical_views[key]

    def position_source(self, var: Var) -> tuple[str, Callable] | None:
        """(source, raw -> value) when `var` is embedded from the position alone: indices, or
        length in a causal program, or maps of them; None otherwise."""
        writer = self.writer.get(var)
        if isinstance(writer, Embed) and writer.source in ("indices", "length"):
            return writer.source, writer.fn
        return None

    def position_feature(self, label: str, source: str, fn: Callable) -> Var:
        """A numerical variable the position embedding holds: fn(raw position value)."""
        raw = range(self.program.max_len) if source == "indices" else range(1, self.program.max_len + 1)
        table = tuple(fn(p) for p in raw)
        key = (source, table)
        if key not in self.position_features:
            var = self.new_var(label, ir.NUMERICAL, table)
            self.position_features[key] = self.emit(Embed(var, source, dict(zip(raw, table)).__getitem__))
        return self.position_features[key]

    def linear(self, out: Var, fn: Callable, inputs: tuple[Var, ...]) -> Linear | None:
        """`out = fn(*inputs)` as a Linear op when that pass is on and the map is linear.

        A number read back from a categorical view of a number x (a step MLP's one-hot) is
        first tried as a function of x itself: folded onto the view, the number would be one sum
        over all of its steps, whose float32 roundings add up (3.0 off for `m * 1000 + 5`, m a
        mean of 20 indices), while a line in x is exact to x's own rounding and needs no MLP.
        When it is not a line, it is folded onto the view only while numeric_mlp's bound on that
        sum stays within FOLD_TOLERANCE of its values; else _map_op makes it a step MLP of x (or
        a polyline: interpolated_steps.py), and a sequence_map a table over the view."""
        if "fold-linear" not in self.enabled:
            return None
        views = [self.viewed_number(x) for x in inputs] if out.encoding == ir.NUMERICAL else []
        if not any(views):
            return linear_form(out, fn, inputs, self.writer.get)
        tolerance = FOLD_TOLERANCE * max(1.0, largest_magnitude(out.values))
        present = [view for view in views if view]
        for k in range(len(present), -1, -1):  # read through as many views as stay linear
            for through in combinations(present, k):
                chosen = [view if view in through else None for view in views]
                numbers = tuple(view.input if view else x for view, x in zip(chosen, inputs))
                form = linear_form(out, _compose_each(fn, [view and view.fn for view in chosen]), numbers, self.writer.get)
                if form is not None and _fold_error(form, [v for v in present if v not in through]) <= tolerance:
                    return form
        return None

    def viewed_number(self, var: Var) -> NumericMLP | None:
        """The step MLP whose one-hot `var` is, when var is a categorical view of a number."""
        writer = self.writer.get(var)
        if var.encoding == ir.CATEGORICAL and isinstance(writer, NumericMLP):
            return writer
        return None

    def linear_feature(self, label: str, var: Var, fn: Callable) -> Var:
        """A numerical variable sum_v fn(v) x[var = v], written by var's own writer."""
        table = tuple(fn(v) for v in var.values)
        key = (var, table)
        if key not in self.linear_features:
            out = self.new_var(label, ir.NUMERICAL, table)
            self.linear_features[key] = self.emit(linear_form(out, fn, (var,), self.writer.get))
        return self.linear_features[key]

    def feature_var(self, label: str, values: tuple) -> Var:
        """A numerical variable for one folded head feature (head_features.py)."""
        return self.new_var(label, ir.NUMERICAL, values)

    def joint(self, parts: tuple[Var, ...]) -> Var:
        """A categorical variable holding the tuple of `parts` (none components included)."""
        if len(parts) == 1:
            return parts[0]
        if parts not in self.joints:
            values = list(product(*(p.domain for p in parts)))
            label = "(" + ",".join(p.label for p in parts) + ")"
            var = self.new_var(label, ir.CATEGORICAL, values)
            self.joints[parts] = self.emit(TableMLP(var, parts, lambda *vs: tuple(vs), covers_none=True))
        return self.joints[parts]

    # -- s-ops -------------------------------------------------------------------------------

    def var_for(self, node: ir.SOp) -> Var:
        if node in self.vars:
            return self.vars[node]
        values = self.program.vocab if isinstance(node, ir.Tokens) else self.value_sets[node]
        label = node.label or f"{type(node).__name__.lower()}"
        out = self.new_var(label, node.encoding, values, node in self.nullable, node.loc)
        self.vars[node] = self.emit(self._op_for(node, out))
        return out

    def _op_for(self, node: ir.SOp, out: Var) -> Op:
        causal = self.program.causal
        if isinstance(node, ir.Tokens):
            return Embed(out, "tokens")
        if isinstance(node, ir.Indices):
            return Embed(out, "indices")
        if isinstance(node, ir.Length):
            if causal:
                return Embed(out, "length")
            everything = ir.Select(ir.tokens, ir.tokens, "true")
            self.lengths.add(out)
            return self._width_ops(everything, out)  # n, as the width of select-all
        if isinstance(node, ir.Map):
            return self._map_op(out, node.fn, self.vars[node.inner])
        if isinstance(node, ir.SequenceMap):
            return self._sequence_map_op(out, node.fn, self.vars[node.first], self.vars[node.second])
        if isinstance(node, ir.SelectorWidth):
            return self._width_ops(node.selector, out)
        if isinstance(node, ir.Aggregate):
            return self._aggregate_op(node, out)
        raise TypeError(f"no compilation rule for {type(node).__name__}")

    def _map_op(self, out: Var, fn: Callable, inner: Var) -> Op:
        if "fold-embeddings" in self.enabled and isinstance(self.writer[inner], Embed):
            source = self.writer[inner]
            return Embed(out, source.source, _compose(fn, source.fn))
        linear = self.linear(out, fn, (inner,))
        if linear is not None:
            return linear
        view = self.viewed_number(inner) if "fold-linear" in self.enabled else None
        if view is not None and out.encoding == ir.NUMERICAL:  # a fold linear() refused (its docstring)
            return NumericMLP(out, view.input, _compose(fn, view.fn))
        if inner.encoding == ir.CATEGORICAL:
            return TableMLP(out, (inner,), fn)
        return NumericMLP(out, inner, fn)

    def _sequence_map_op(self, out: Var, fn: Callable, first: Var, second: Var) -> Op:
        if first is second:  # one variable twice (`x * x`): a map of it
            return self._map_op(out, lambda v: fn(v, v), first)
        linear = self.linear(out, fn, (first, second))
        if linear is not None:
            return linear
        at = [self.values_by_position(x) for x in (first, second)] if "fold-embeddings" in self.enabled else [None]
        if None not in at:  # both decided by the position (indices, a causal length): an embedding row each
            by_position = {p: fn(a, b) for p, (a, b) in enumerate(zip(*at))}
            reached = tuple(sorted(set(by_position.values()), key=_sort_key))  # not every pair of values meets
            return Embed(Var(out.label, out.encoding, reached, loc=out.loc), "indices", by_position.__getitem__)
        gated = self.gated_map(out, fn, first, second)
        if gated is not None:
            return gated
        first_view = self.categorical_view(first, lambda x: tuple(fn(x, y) for y in second.values))
        second_view = self.categorical_view(second, lambda y: tuple(fn(x, y) for x in first.values))
        return TableMLP(out, (first_view, second_view), fn, possible=self.possible_pairs(first_view, second_view))

    def gated_map(self, out: Var, fn: Callable, first: Var, second: Var) -> GatedMap | None:
        """`out = fn(first, second)` as a GatedMap (gated_map.py) when that pass is on, one input
        is a number and the other has an exact one-hot that is never none: affine pieces when
        the output is a number affine in the input number for each value of the other, else
        steps (or, for a numerical answer, polylines: interpolated_steps.py)."""
        if "gated-maps" not in self.enabled:
            return None
        for x, gate, x_first in ((first, second, True), (second, first, False)):
            if x.encoding != ir.NUMERICAL:
                continue
            gate = self.exact_categorical(gate)
            if gate is None or gate.may_be_none:
                continue
            op = GatedMap(out, x, gate, fn if x_first else (lambda p, g: fn(g, p)))
            if out.encoding == ir.NUMERICAL:
                op.affine = affine_pieces(op)  # from the same table of answers the steps would use
            return op
        return None

    def exact_categorical(self, var: Var) -> Var | None:
        """`var` itself if its one-hot is exact; for a number the embedding holds (a map of the
        position, say), a categorical copy embedded beside it; else None."""
        writer = self.writer.get(var)
        if var.encoding == ir.CATEGORICAL:
            return var if exact_one_hot(var, self.writer.get) else None
        if not isinstance(writer, Embed):
            return None
        key = (writer.source, var.values, writer.fn)
        if key not in self.embedded_copies:
            copy = self.new_var(f"{var.label}.cat", ir.CATEGORICAL, var.values, loc=var.loc)
            self.embedded_copies[key] = self.emit(Embed(copy, writer.source, writer.fn))
        return self.embedded_copies[key]

    def possible_pairs(self, first: Var, second: Var) -> frozenset | None:
        """The (first, second) value pairs that can meet at one position, when the positions
        decide it: two position-only variables meet only as position p gives them, and a
        position-only variable meets the length n only at positions p < n. None: any pair."""
        n = self.program.max_len
        at = {var: self.values_by_position(var) for var in (first, second)}
        if at[first] is not None and at[second] is not None:
            return frozenset(zip(at[first], at[second]))
        for positioned, other, swap in ((first, second, False), (second, first, True)):
            if at[positioned] is not None and other in self.lengths:
                pairs = {(at[positioned][p], length) for length in range(1, n + 1) for p in range(length)}
                return frozenset((b, a) for a, b in pairs) if swap else frozenset(pairs)
        return None

    def values_by_position(self, var: Var) -> list | None:
        """var's value at each position 0..max_len-1, if the position alone decides it."""
        source = self.position_source(var)
        if source is None:
            return None
        first = 0 if source[0] == "indices" else 1
        return [source[1](p + first) for p in range(self.program.max_len)]

    def _aggregate_op(self, node: ir.Aggregate, out: Var) -> Op:
        selector = self.score(node.selector)
        value = self.vars[node.sop]
        if node.encoding == ir.NUMERICAL:
            default = 0 if node.default is None else node.default
            return Attend(out, selector, "numerical", value, default)
        whole = Attend(out, selector, "categorical", self.categorical_view(value), node.default)
        heads = self.split_heads(node, out, whole) if "split-keys" in self.enabled else None
        if heads is None:
            return whole
        for head in heads:
            self.emit(head)
        return _summed(out, heads, node.default)

    def split_heads(self, node: ir.Aggregate, out: Var, whole: Attend) -> list[Attend] | None:
        """The answer's aggregate as one head per value of an input of its keys' table
        (split_keys.py), when those heads all come before the sub-layer `whole` would take."""
        if node is not self.program.output:
            return None
        split = split_selectors(node.selector, self.value_sets, self.nullable, MAX_SPLIT_COLUMNS, _sort_key)
        if split is None:
            return None
        parts, table_inputs = split
        self.split_inputs.update(self.vars[x] for x in table_inputs)
        heads = [
            Attend(self.new_var(f"{out.label}.part{k}", ir.CATEGORICAL, out.values, out.may_be_none, out.loc),
                   self.score(part), "categorical", whole.value, node.default)
            for k, part in enumerate(parts)
        ]
        *slots, whole_slot = sublayers_after(self.ops, [*heads, whole])
        if max(slots) < whole_slot:
            return heads
        self.split_inputs.clear()
        return None

    def score(self, selector: ir.Selector) -> Score:
        """The selector as terms (selectors.py), scored by factored head columns (scores.py)."""
        return score_columns(normalize_selector(selector, self), share="compact-heads" in self.enabled)

    def _width_ops(self, selector: ir.Selector, out: Var) -> Op:
        """selector_width = an attention writing 1/(w+1), then an exact step MLP reading it."""
        spec = self.score(selector)
        inverse = self.new_var(f"{out.label}.bos_share", ir.NUMERICAL, [1 / (w + 1) for w in out.values], loc=out.loc)
        self.emit(Attend(inverse, spec, "width"))
        return NumericMLP(out, inverse, lambda share: round(1 / share) - 1)


def _summed(out: Var, heads: list[Attend], default) -> Linear:
    """`out` as the sum of the split heads' one-hots, less the default's one-hot that all but one
    of them add (split_keys.py)."""
    weights = {(head.out, v): {coordinate(out, v): 1.0} for head in heads for v in out.values}
    bias = {} if default is None else {coordinate(out, default): 1.0 - len(heads)}
    return Linear(out, weights, bias)


def _compose(outer: Callable, inner: Callable) -> Callable:
    return lambda v: outer(inner(v))


def _fold_error(folded: Linear, views: list[NumericMLP]) -> float:
    """numeric_mlp's bound on the float32 error of `folded`'s number written by the step MLPs
    of `views` (categorical views it reads): each view's steps, weighted by the number's change
    between neighbouring values of the view's input."""
    label = coordinate(folded.out, None)
    error = 0.0
    for view in views:
        points = view.input.values
        answers = [folded.weights.get((view.out, view.fn(p)), {}).get(label, 0.0) for p in points]
        error += step_output_error(points, answers)
    return error


def _compose_each(outer: Callable, inners: list[Callable | None]) -> Callable:
    """outer(inner_1(a_1), inner_2(a_2), ...), an inner of None passing its argument as it is."""
    return lambda *args: outer(*(inner(a) if inner else a for inner, a in zip(inners, args)))


def _sort_key(value):
    """Orders mixed values deterministically: numbers by value, then strings, then tuples."""
    if isinstance(value, tuple):
        return (3, tuple(_sort_key(v) for v in value))
    if value is None:
        return (0, 0)
    if is_number(value):
        return (1, float(value))
    return (2, str(value))


def build_graph(program: ir.Program, value_sets: ValueSets, enabled: frozenset) -> Graph:
    """Every s-op the output depends on, as variables and the ops that write them."""
    builder = _Builder(program, value_sets, enabled, nullable_sops(program))
    for node in program.nodes():
        if isinstance(node, ir.SOp):
            builder.var_for(node)
    output = builder.vars[program.output]
    readout = _readout(output, builder.writer[output], builder.ops, enabled)
    ops = _live_ops(builder.ops, readout.inputs)
    if "interpolated-steps" in enabled:
        choose_interpolated_steps(ops, readout)
    set_amplification(ops, readout.inputs)
    if {"head-features", "prune"} <= enabled:  # the fold pays only once pruning drops what it replaced
        ops = fold_head_features(ops, readout.inputs, builder.feature_var, builder.writer.get)
    return Graph(ops, output, program, readout, split=bool(builder.split_inputs))


def _readout(output: Var, writer: Op, ops: list[Op], enabled: frozenset) -> Readout:
    """How unembed reads the answer (readout.py): the output's own dimensions; or, when only
    the read-out needs the last table, that table's inputs if a linear read-out of them picks
    the same answers; or the table's answer as one number when its values are numbers."""
    if output.encoding == ir.NUMERICAL or any(output in op_inputs(op) for op in ops):
        return plain_readout(output)
    if isinstance(writer, TableMLP) and "linear-readout" in enabled:
        readout = linear_readout(writer, output)
        if readout is not None:
            return readout
    numbers = not output.may_be_none and all(map(is_number, output.values))
    if isinstance(writer, TableMLP | NumericMLP) and numbers and "number-readout" in enabled:
        number = Var(output.label, ir.NUMERICAL, output.values, loc=output.loc)  # the number, not its one-hot
        readout = nearest_value_readout(number, list(output.values))
        if readout is not None:
            writer.out = number
            return readout
    return plain_readout(output)


def _live_ops(ops: list[Op], outputs: tuple[Var, ...]) -> list[Op]:
    """Drop ops whose variable nothing reads (e.g. tokens once every map of it is folded)."""
    needed = set(outputs)
    live = []
    for op in reversed(ops):
        if op.out in needed:
            live.append(op)
            needed.update(op_inputs(op))
    return live[::-1]
