"""rasp_to_graph: a checked `ir.Program` -> residual variables and the operations that write them.

Every s-op the output needs becomes a `Var` (a value living in the residual stream, categorical:
one-hot over its values; numerical: one dimension) and exactly one operation writes it:

    Embed        tokens / indices / causal length (and maps of them, folded: a table lookup)
    TableMLP     categorical inputs -> any output, one hidden unit per input combination
    NumericMLP   one numerical input -> any output (exact steps, or a linear map)
    LinearMLP    numerical inputs -> their linear combination
    Attend       an aggregate (categorical or numerical) or the attention half of selector_width

Where a primitive needs a categorical view of a numerical s-op (a select on numerical keys, a
sequence_map that is not linear) the graph adds the conversion; where a selector combines
selects on different s-ops in a way one attention score cannot add up, it adds a joint
(tuple-valued) variable. See selectors.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from itertools import product
from typing import Callable

from .. import ir
from ..infer import ValueSets, is_number, nullable_sops
from .selectors import SelectorSpec, normalize_selector


@dataclass(frozen=True, eq=False)
class Var:
    """A value in the residual stream. `values`: the categorical values in dimension order, or
    the numerical values it can take (sorted). `may_be_none`: categorical only."""

    label: str
    encoding: str
    values: tuple
    may_be_none: bool = False

    @property
    def domain(self) -> tuple:
        """The values a table over this variable must cover (None too if it may be none)."""
        return self.values + ((None,) if self.may_be_none else ())

    @cached_property
    def position(self) -> dict:
        """value -> its index in `values` (by equality: 1, 1.0 and True are one value)."""
        return {v: i for i, v in enumerate(self.values)}

    def encode(self, value) -> dict[str, float]:
        """The residual coordinates of `value`, by dimension label (none: nothing)."""
        if value is None:
            return {}
        if self.encoding == ir.NUMERICAL:
            return {self.label: float(value)}
        return {dim_label(self.label, self.values[self.position[value]]): 1.0}


def dim_label(var_label: str, value) -> str:
    """`tokens:a`, `indices:3`: the name of one categorical dimension."""
    return f"{var_label}:{value_text(value)}"


def value_text(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return "(" + ",".join(value_text(v) for v in value) + ")"
    if value is None:
        return "none"
    return str(value)


@dataclass(eq=False)
class Embed:
    out: Var
    source: str  # "tokens", "indices" or "length" (length only in causal programs: i + 1)
    fn: Callable = staticmethod(lambda v: v)


@dataclass(eq=False)
class TableMLP:
    """fn(*values) -> value, tabulated over every combination of the inputs' values; with
    `covers_none`, over their domains (none included: joints), else none in gives none out
    (categorical) or 0 (numerical), SPEC's propagation rule, for free: no hidden unit fires."""

    out: Var
    inputs: tuple[Var, ...]
    fn: Callable
    covers_none: bool = False


@dataclass(eq=False)
class NumericMLP:
    out: Var
    input: Var
    fn: Callable


@dataclass(eq=False)
class LinearMLP:
    out: Var
    inputs: tuple[Var, ...]
    coefficients: tuple[float, ...]
    constant: float


@dataclass(eq=False)
class Attend:
    """kind: "categorical" (common value), "numerical" (mean), or "width" (writes 1/(w+1))."""

    out: Var
    selector: SelectorSpec
    kind: str
    value: Var | None = None
    default: object = None


Op = Embed | TableMLP | NumericMLP | LinearMLP | Attend


def op_inputs(op: Op) -> tuple[Var, ...]:
    """The variables an operation reads."""
    if isinstance(op, Embed):
        return ()
    if isinstance(op, TableMLP | LinearMLP):
        return op.inputs
    if isinstance(op, NumericMLP):
        return (op.input,)
    reads = op.selector.reads()
    return reads + ((op.value,) if op.value is not None else ())


@dataclass
class Graph:
    ops: list[Op]  # in dependency order: every op after the ops writing its inputs
    output: Var
    program: ir.Program


@dataclass
class _Builder:
    program: ir.Program
    value_sets: ValueSets
    fold_embeddings: bool
    nullable: set  # the s-ops that may be none (infer.nullable_sops)
    ops: list[Op] = field(default_factory=list)
    vars: dict = field(default_factory=dict)  # ir node -> Var
    writer: dict = field(default_factory=dict)  # Var -> Op
    categorical_views: dict = field(default_factory=dict)
    joints: dict = field(default_factory=dict)
    labels: set = field(default_factory=set)

    # -- variables ---------------------------------------------------------------------------

    def fresh_label(self, wanted: str) -> str:
        label, k = wanted, 2
        while label in self.labels:
            label, k = f"{wanted}_{k}", k + 1
        self.labels.add(label)
        return label

    def new_var(self, label: str, encoding: str, values, may_be_none=False) -> Var:
        ordered = tuple(sorted(set(values), key=_sort_key))
        return Var(self.fresh_label(label), encoding, ordered, may_be_none and encoding == ir.CATEGORICAL)

    def emit(self, op: Op) -> Var:
        self.ops.append(op)
        self.writer[op.out] = op
        return op.out

    # -- conversions used by the primitives ----------------------------------------------------

    def categorical_view(self, var: Var, signature: Callable = lambda x: x) -> Var:
        """`var` itself if categorical; else a categorical copy written by an exact step MLP.

        The copy needs only as many values as the consumer tells apart: values with equal
        `signature` (e.g. the row of a sequence_map's table) share one dimension, named by the
        first of them. A consumer computing on that value gets what it would on any other."""
        if var.encoding == ir.CATEGORICAL:
            return var
        first_of: dict = {}
        representative = {x: first_of.setdefault(signature(x), x) for x in var.values}
        key = (var, tuple(representative[x] for x in var.values))
        if key not in self.categorical_views:
            view = self.new_var(f"{var.label}.cat", ir.CATEGORICAL, first_of.values())
            self.categorical_views[key] = self.emit(NumericMLP(view, var, representative.__getitem__))
        return self.categorical_views[key]

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
        out = self.new_var(label, node.encoding, values, node in self.nullable)
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
        if self.fold_embeddings and isinstance(self.writer[inner], Embed):
            source = self.writer[inner]
            return Embed(out, source.source, _compose(fn, source.fn))
        if inner.encoding == ir.NUMERICAL:
            return NumericMLP(out, inner, fn)
        return TableMLP(out, (inner,), fn)

    def _sequence_map_op(self, out: Var, fn: Callable, first: Var, second: Var) -> Op:
        if ir.NUMERICAL == out.encoding == first.encoding == second.encoding:
            linear = _fit_linear(fn, first.values, second.values)
            if linear is not None:
                (a, b), c = linear
                return LinearMLP(out, (first, second), (a, b), c)
        first_view = self.categorical_view(first, lambda x: tuple(fn(x, y) for y in second.values))
        second_view = self.categorical_view(second, lambda y: tuple(fn(x, y) for x in first.values))
        return TableMLP(out, (first_view, second_view), fn)

    def _aggregate_op(self, node: ir.Aggregate, out: Var) -> Op:
        selector = normalize_selector(node.selector, self)
        value = self.vars[node.sop]
        if node.encoding == ir.NUMERICAL:
            default = 0 if node.default is None else node.default
            return Attend(out, selector, "numerical", value, default)
        return Attend(out, selector, "categorical", self.categorical_view(value), node.default)

    def _width_ops(self, selector: ir.Selector, out: Var) -> Op:
        """selector_width = an attention writing 1/(w+1), then an exact step MLP reading it."""
        spec = normalize_selector(selector, self)
        inverse = self.new_var(f"{out.label}.bos_share", ir.NUMERICAL, [1 / (w + 1) for w in out.values])
        self.emit(Attend(inverse, spec, "width"))
        return NumericMLP(out, inverse, lambda share: round(1 / share) - 1)


def _compose(outer: Callable, inner: Callable) -> Callable:
    return lambda v: outer(inner(v))


def _sort_key(value):
    """Orders mixed values deterministically: numbers by value, then strings, then tuples."""
    if isinstance(value, tuple):
        return (3, tuple(_sort_key(v) for v in value))
    if value is None:
        return (0, 0)
    if is_number(value):
        return (1, float(value))
    return (2, str(value))


def _fit_linear(fn: Callable, xs: tuple, ys: tuple):
    """((a, b), c) when fn(x, y) == a*x + b*y + c on every pair (to 1e-9), else None."""
    x0, y0 = xs[0], ys[0]
    try:
        c0 = float(fn(x0, y0))
        a = (float(fn(xs[-1], y0)) - c0) / (xs[-1] - x0) if len(xs) > 1 else 0.0
        b = (float(fn(x0, ys[-1])) - c0) / (ys[-1] - y0) if len(ys) > 1 else 0.0
        c = c0 - a * x0 - b * y0
        for x, y in product(xs, ys):
            if abs(float(fn(x, y)) - (a * x + b * y + c)) > 1e-9 * max(1.0, abs(a * x + b * y + c)):
                return None
    except (TypeError, ValueError):
        return None
    return (a, b), c


def fit_linear_1d(fn: Callable, xs: tuple):
    """(a, c) when fn(x) == a*x + c on every x (to 1e-9), else None."""
    fitted = _fit_linear(lambda x, _y: fn(x), xs, (0,))
    return None if fitted is None else (fitted[0][0], fitted[1])


def build_graph(program: ir.Program, value_sets: ValueSets, fold_embeddings: bool = True) -> Graph:
    """Every s-op the output depends on, as variables and the ops that write them."""
    builder = _Builder(program, value_sets, fold_embeddings, nullable_sops(program))
    for node in program.nodes():
        if isinstance(node, ir.SOp):
            builder.var_for(node)
    return Graph(_live_ops(builder.ops, builder.vars[program.output]), builder.vars[program.output], program)


def _live_ops(ops: list[Op], output: Var) -> list[Op]:
    """Drop ops whose variable nothing reads (e.g. tokens once every map of it is folded)."""
    needed = {output}
    live = []
    for op in reversed(ops):
        if op.out in needed:
            live.append(op)
            needed.update(op_inputs(op))
    return live[::-1]
