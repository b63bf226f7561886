"""The compiler's graph: residual variables (`Var`) and the operations that write them.

    Embed        tokens / indices / causal length (and maps of them, folded: a table lookup)
    TableMLP     categorical inputs -> any output, one hidden unit per input combination
    NumericMLP   one numerical input -> any output, exact steps
    GatedMap     a numerical input and a categorical one -> any output, one small MLP per category
    Linear       a linear function of other variables' coordinates, written by their own writers
    Attend       an aggregate (categorical or numerical) or the attention half of selector_width
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Callable

from .. import ir
from ..errors import Loc
from .margins import STEP_WINDOW

if TYPE_CHECKING:
    from .readout import Readout
    from .scores import Score


CONSTANT = None
"""In a linear form over residual features, the feature that is 1 at every position (a bias);
the others are (variable, value) coordinates, value None for a numerical variable."""


@dataclass(frozen=True, eq=False)
class Var:
    """A value in the residual stream. `values`: the categorical values in dimension order, or
    the numerical values it can take (sorted). `may_be_none`: categorical only. `loc`: where
    the s-op it holds (or converts) was written, for messages."""

    label: str
    encoding: str
    values: tuple
    may_be_none: bool = False
    loc: Loc | None = None

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
        return {coordinate(self, value): 1.0}


def coordinate(var: Var, value) -> str:
    """The label of one residual coordinate of `var`: its value's dimension (categorical), or
    the variable's one dimension (numerical; `value` is None)."""
    if var.encoding == ir.NUMERICAL:
        return var.label
    return dim_label(var.label, var.values[var.position[value]])


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
    fn: Callable = ir.identity


@dataclass(eq=False)
class TableMLP:
    """fn(*values) -> value, tabulated over every combination of the inputs' values; with
    `covers_none`, over their domains (none included: joints), else none in gives none out
    (categorical) or 0 (numerical), the language's propagation rule, for free: no hidden unit fires."""

    out: Var
    inputs: tuple[Var, ...]
    fn: Callable
    covers_none: bool = False
    possible: frozenset | None = None  # the combinations that can occur, when fewer than all


@dataclass(eq=False)
class NumericMLP:
    """fn(input) by exact flat steps, or (`interpolated`, interpolated_steps.py) by the polyline
    through its values: one hidden unit per value instead of two per step."""

    out: Var
    input: Var
    fn: Callable
    interpolated: bool = False


@dataclass(eq=False)
class GatedMap:
    """out = fn(input, g), g the value `gate` holds: one small MLP of the number `input` per
    value g, which the gate's other values switch off (gated_map.py): affine pieces a x + b where
    `affine` has them (numerical outputs), else exact steps, or for the values in `interpolated`
    (a numerical answer, interpolated_steps.py) the polyline. `gate`'s one-hot must be exact
    (embeddings, tables of them) and never none."""

    out: Var
    input: Var
    gate: Var
    fn: Callable  # (number, gate value) -> value
    affine: dict | None = None  # gate value -> (a, b)
    interpolated: frozenset = frozenset()  # gate values whose piece is numeric_mlp.interpolation_mlp

    @cached_property
    def answers(self) -> dict:
        """gate value -> fn at each of the input's values, in order (computed once: the input
        may have thousands of values and the gate dozens)."""
        return {g: tuple(self.fn(p, g) for p in self.input.values) for g in self.gate.values}

    def piece(self, g) -> NumericMLP:
        """f(., g) as a map of the number alone."""
        at = dict(zip(self.input.values, self.answers[g]))
        return NumericMLP(self.out, self.input, at.__getitem__, g in self.interpolated)


@dataclass(eq=False)
class Linear:
    """An s-op whose residual coordinates are a linear function of other s-ops' coordinates:

        out[o] = bias[o] + sum over input coordinates (var, value) of x[var, value] * weights[(var, value)][o]

    (value None for a numerical var's one coordinate; `o` are the output's dimension labels).
    It has no sub-layer of its own: the ops writing its inputs also write it (assemble.py).
    Inputs are never themselves Linear (linear.py substitutes them)."""

    out: Var
    weights: dict  # (Var, value | None) -> {output dimension label: coefficient}
    bias: dict  # output dimension label -> constant

    @property
    def inputs(self) -> tuple[Var, ...]:
        return tuple(dict.fromkeys(var for var, _ in self.weights))


@dataclass(eq=False)
class Attend:
    """kind: "categorical" (common value), "numerical" (mean), or "width" (writes 1/(w+1))."""

    out: Var
    score: Score  # the selector's score, factored into head dimensions (scores.py)
    kind: str
    value: Var | None = None
    default: object = None
    window: float = STEP_WINDOW  # how far, as a share of the gap between its values, a reader lets `out` stray
    amplification: float = 1.0  # how much readers magnify its leak (amplification.py)


Op = Embed | TableMLP | NumericMLP | GatedMap | Linear | Attend


def op_inputs(op: Op) -> tuple[Var, ...]:
    """The variables an operation reads."""
    if isinstance(op, Embed):
        return ()
    if isinstance(op, TableMLP | Linear):
        return op.inputs
    if isinstance(op, NumericMLP):
        return (op.input,)
    if isinstance(op, GatedMap):
        return (op.input, op.gate)
    reads = op.score.reads()
    return reads + ((op.value,) if op.value is not None else ())


@dataclass
class Graph:
    ops: list[Op]  # in dependency order: every op after the ops writing its inputs
    output: Var
    program: ir.Program
    readout: Readout  # how unembed reads the answer
    split: bool = False  # whether the answer's aggregate is split into heads (split_keys.py)


def readers_of(ops: list[Op]) -> dict[Var, list[Op]]:
    """Every variable read by `ops` -> the ops that read it, in graph order."""
    readers: dict[Var, list[Op]] = {}
    for op in ops:
        for var in op_inputs(op):
            readers.setdefault(var, []).append(op)
    return readers
