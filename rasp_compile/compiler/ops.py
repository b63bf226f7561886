"""The compiler's graph: the operations that write residual variables (variables.py), and the
`Graph` every pass takes and returns.

    Embed        tokens / indices / causal length (and maps of them, folded: a table lookup)
    TableMLP     categorical inputs -> any output, one hidden unit per input combination
    NumericMLP   one numerical input -> any output, exact steps (or a polyline)
    GatedMap     a numerical input and a categorical one -> any output, one small MLP per category
    Linear       a linear function of other variables' coordinates, written by their own writers
    Attend       an aggregate (categorical or numerical) or the attention half of selector_width

Ops are frozen: a pass that changes one builds a new one (`dataclasses.replace`) and a new Graph.
Ops and variables compare by identity, so they key dicts and sets as themselves.
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, TypeVar
from collections.abc import Callable, Container, Iterable

import numpy as np

from .. import ir
from ..frontend.lambda_arrays import results_at
from .selector_terms import Score
from .tolerances import NONE_LOGIT, STEP_WINDOW
from .variables import Var


class EmbedSource(enum.Enum):
    """What an `Embed` looks up: its raw value at each position."""

    TOKENS = "tokens"  # the token
    INDICES = "indices"  # the index i
    LENGTH = "length"  # the causal length i + 1 (only in causal programs)


@dataclass(frozen=True, eq=False)
class Embed:
    """`out` = fn(raw), raw the token or the position's value (an index, or a causal length i + 1)."""

    out: Var
    source: EmbedSource
    fn: Callable[[Any], Any] = ir.identity


@dataclass(frozen=True, eq=False)
class TableMLP:
    """fn(*values) -> value, tabulated over every combination of the inputs' values; with
    `covers_none`, over their domains (none included: joints), else none in gives none out
    (categorical) or 0 (numerical), the language's propagation rule, for free: no hidden unit fires."""

    out: Var
    inputs: tuple[Var, ...]
    fn: Callable[..., Any]  # a value of each input -> the output's value
    covers_none: bool = False
    possible: frozenset[tuple[Any, ...]] | None = None  # the combinations that can occur, when fewer than all


@dataclass(frozen=True, eq=False)
class NumericMLP:
    """fn(input) by exact flat steps, or (`interpolated`, passes/interpolated_steps.py) by the
    polyline through its values: one hidden unit per value instead of two per step."""

    out: Var
    input: Var
    fn: Callable[[Any], Any]
    interpolated: bool = False

    @cached_property
    def answers(self) -> list[Any]:
        """fn at each of the input's values, in order (computed once: a running mean has hundreds
        of thousands of values, and the budget, the error bounds, the precision check and the
        construction all read them): on arrays where the lambda allows (lambda_arrays.results_at)."""
        return results_at(self.fn, self.input.values)

    @cached_property
    def steps(self) -> int:
        """How many neighbouring input values it maps to different answers: its steps (the size
        budget counts them for every estimate, over hundreds of thousands of values)."""
        answers = self.answers
        return sum(a != b for a, b in zip(answers, answers[1:]))


@dataclass(frozen=True, eq=False)
class GatedMap:
    """out = fn(input, g), g the value `gate` holds: one small MLP of the number `input` per
    value g, which the gate's other values switch off (primitives/gated_map.py): affine pieces
    a x + b where `affine` has them (numerical outputs), else exact steps, or for the values in
    `interpolated` (a numerical answer, passes/interpolated_steps.py) the polyline. `gate`'s
    one-hot must be exact (embeddings, tables of them) and never none."""

    out: Var
    input: Var
    gate: Var
    fn: Callable[[Any, Any], Any]  # (number, gate value) -> value
    affine: dict[Any, tuple[float, float]] | None = None  # gate value -> (a, b)
    interpolated: frozenset[Any] = frozenset()  # gate values whose piece is numeric_mlp.interpolation_mlp

    @cached_property
    def answers(self) -> dict[Any, tuple[Any, ...]]:
        """gate value -> fn at each of the input's values, in order (computed once: the input
        may have hundreds of thousands of values and the gate dozens): on arrays where the
        lambda allows, one gate value at a time (lambda_arrays.results_at)."""
        return {g: tuple(results_at(self.fn, self.input.values, g)) for g in self.gate.values}

    def piece(self, g: Any) -> NumericMLP:
        """f(., g) as a map of the number alone."""
        at = dict(zip(self.input.values, self.answers[g]))
        return NumericMLP(self.out, self.input, at.__getitem__, g in self.interpolated)


@dataclass(frozen=True, eq=False)
class Linear:
    """An s-op whose residual coordinates are a linear function of other s-ops' coordinates:

        out[o] = bias[o] + sum over input coordinates (var, value) of x[var, value] * weights[(var, value)][o]

    (value None for a numerical var's one coordinate; `o` are the output's dimension labels).
    It has no sub-layer of its own: the ops writing its inputs also write it (assemble.py).
    Inputs are never themselves Linear (lowering/linear.py substitutes them)."""

    out: Var
    weights: dict[tuple[Var, Any], dict[str, float]]  # (Var, value | None) -> {output dimension label: coefficient}
    bias: dict[str, float]  # output dimension label -> constant

    @cached_property
    def inputs(self) -> tuple[Var, ...]:
        return tuple(dict.fromkeys(var for var, _ in self.weights))


class HeadKind(enum.Enum):
    """What an `Attend` head computes; the value is its name in meta.heads (docs/inspect.md)."""

    CATEGORICAL = "categorical"  # the value its selected keys hold in common (an aggregate)
    NUMERICAL = "numerical"  # the mean of its selected keys' numbers (a numerical aggregate)
    WIDTH = "width"  # BOS's share c/(c + w) of w selected keys, c = bos_weight (primitives/selector_width.py)


@dataclass(frozen=True, eq=False)
class Attend:
    """One head of `kind` (HeadKind). `selector`: the program's selector this head scores (its
    `loc` says where it was written)."""

    out: Var
    score: Score  # the selector's score, factored into head dimensions (lowering/scores.py)
    kind: HeadKind
    value: Var | None = None
    default: Any = None  # the value where nothing is selected, like the values of `out` (None: none)
    selector: ir.Selector | None = None
    window: float = STEP_WINDOW  # how far, as a share of the gap between its values, a reader lets `out` stray
    amplification: float = 1.0  # how much readers magnify its leak (passes/amplification.py)
    bos_weight: int = 1  # a width head: BOS's weight relative to one selected key's


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


@dataclass(frozen=True, eq=False)
class Readout:
    """How `unembed` reads the answer: logits[class] = bias[class] + sum over the inputs'
    coordinates of x * weights."""

    inputs: tuple[Var, ...]
    classes: list[Any] | None  # the output value of each logit column (None for none); None: numerical
    weights: np.ndarray  # [sum of the inputs' value counts, n_classes], inputs' dims in order
    bias: np.ndarray  # [n_classes]
    offset: float = 0.0  # how far a number read as its nearest class may lie from it exactly (passes/number_readout.py)


def plain_readout(output: Var) -> Readout:
    """Read the output's own dimensions: its one-hot (a none column, constant 1/2, wins when
    every value column reads ~0) or its number."""
    if output.encoding == ir.NUMERICAL:
        return Readout((output,), None, np.ones((1, 1)), np.zeros(1))
    classes = list(output.values) + ([None] if output.may_be_none else [])
    weights = np.eye(len(output.values), len(classes))
    bias = np.zeros(len(classes))
    if output.may_be_none:
        bias[-1] = NONE_LOGIT
    return Readout((output,), classes, weights, bias)


@dataclass(frozen=True, eq=False)
class Graph:
    """The program as ops, in dependency order (every op after the ops writing its inputs)."""

    ops: tuple[Op, ...]
    output: Var  # the answer's variable (a number-readout reads it through another Var of the same label)
    program: ir.Program
    readout: Readout  # how unembed reads the answer
    split: bool = False  # whether the answer's aggregate is split into heads (passes/split_keys.py)
    labels: frozenset[str] = field(default=frozenset())  # every label lowering gave out (fresh ones avoid them)

    def writers(self) -> dict[Var, Op]:
        """Every variable -> the op writing it."""
        return {op.out: op for op in self.ops}


OpT = TypeVar("OpT", bound=Op)


def replaced(op: OpT, **changes: Any) -> OpT:
    """`dataclasses.replace(op, **changes)`, keeping what the op computed once (a GatedMap's or a
    NumericMLP's answers, and a NumericMLP's steps) when what it was computed from stays."""
    new = dataclasses.replace(op, **changes)
    sources = {GatedMap: {"fn", "input", "gate"}, NumericMLP: {"fn", "input"}}.get(type(op))
    if sources is not None and not sources & changes.keys():
        new.__dict__.update({key: op.__dict__[key] for key in ("answers", "steps") if key in op.__dict__})
    return new


def readers_of(ops: Iterable[Op]) -> dict[Var, list[Op]]:
    """Every variable read by `ops` -> the ops that read it, in graph order."""
    readers: dict[Var, list[Op]] = {}
    for op in ops:
        for var in op_inputs(op):
            readers.setdefault(var, []).append(op)
    return readers


def fresh_label(wanted: str, taken: Container[str]) -> str:
    """`wanted`, or `wanted_2`, `wanted_3`, ... : the first not in `taken`."""
    label, k = wanted, 2
    while label in taken:
        label, k = f"{wanted}_{k}", k + 1
    return label
