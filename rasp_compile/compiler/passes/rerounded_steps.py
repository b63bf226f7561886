"""rerounded-steps: where the dtype cannot hold a model, a number that a step MLP writes with
large units is rounded again, a layer later, by a step MLP of its own few values, whose units
stay small.

A step MLP (primitives/numeric_mlp.py) writes each step as the difference of two hidden units
that reach 2 |x - t| / d on the step's far side: slope 1/d (d half the input's gap at the step)
times the distance to the threshold t. Steps 1/1,024 apart on a number ranging over [-1, 1] have
units of 4,096, and c_proj adds them with every other unit, in whatever order its matmul takes:
float32 rounds that sum by up to u per unit of the units' magnitudes (numeric_mlp.step_output_errors),
4e-4 for a 0/1 answer such as `1 if b == 0 else 0` of a running balance at max_len 1,024. That is
a twentieth of the answer's own gap, but a reader that tells apart values 1/1,024 apart (a mean of
it, or a line of it with such a mean) cannot absorb it. The high digit of a two-digit read-out
(passes/number_readout.py) at 4,096 is worse: 64 steps of units up to 16,000, its error then
multiplied by the digit's base.

The answer's own values are few and far apart (0 and 1; the digit's 65 integers), so a second
step MLP reading the first one's output, mapping each value to itself, rounds it again with units
no larger than 2 |y - t| / d over that small range: 4 for a 0/1 value, 256 for the digit. Its
input lands well inside its flat quarter gaps, and its own rounding is thousands of times smaller.
Readers read the second MLP's output, which keeps the variable (label and all); the first one's
output becomes `LABEL (raw)`. The price is one MLP sub-layer, so usually one layer.

Where it is used (driver.py):
  - `reround_steps`, where the model as built is refused for precision: every step MLP writing a
    number is re-rounded where the second rounding is at least GAIN times smaller than the
    number's whole error bound and that error leaves its values' steps flat (within STEP_WINDOW of
    their smallest gap, as precision.py checks a step's input). The graph is kept only when the
    model then passes every check, so a program that compiled without it keeps its weights.
  - `reround_high_digit`, on every graph: the high digit of a two-digit read-out, whose error
    moves the low digit B times over, when that takes more than DIGIT_SHARE of the read-out's
    tolerance. The digit's bound charges each of its units one rounding in any summation order:
    a measured model, which a sequential sum of every positive term first exceeds threefold
    (paren_depth at 1,024: 0.40 against 0.14). Rounded again, the digit's error is some 100 times
    smaller in every order, and the read-out's margin no longer rests on that model.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
from numpy.typing import DTypeLike

from ... import ir
from ..error_bounds import decode_errors, error_bounds
from ..ops import Graph, NumericMLP, Op, fresh_label, replaced
from ..precision import digit_base, nearest_value_tolerance
from ..tolerances import STEP_WINDOW, smallest_gap
from ..variables import Var

GAIN = 16
"""How many times smaller a second rounding must leave a number's error to be worth a sub-layer."""


DIGIT_SHARE = 1 / 8
"""The share of a two-digit read-out's tolerance past which its high digit's error, times B, has
the digit rounded again."""


def reround_steps(graph: Graph, dtype: DTypeLike) -> Graph:
    """`graph` with every step MLP's number that a second rounding would make GAIN times more
    precise in `dtype` rounded again (module docstring); `graph` itself when there is none."""
    bounds = error_bounds(graph, dtype)
    return _rounded_again(graph, [op for op in graph.ops if _worth_rerounding(op, bounds[op.out], dtype)])


def reround_high_digit(graph: Graph, dtype: DTypeLike) -> Graph:
    """`graph` with its two-digit read-out's high digit rounded again when its error, times B, takes
    more than DIGIT_SHARE of the read-out's tolerance and a second rounding gains GAIN (module
    docstring); else `graph` itself."""
    readout = graph.readout
    if len(readout.inputs) != 2 or readout.classes is None or readout.inputs[0].encoding != ir.NUMERICAL:
        return graph  # not a nearest-value read-out of two digits (precision.py tells them apart so too)
    writer = graph.writers()[readout.inputs[1]]
    error = error_bounds(graph, dtype)[writer.out]
    gap = smallest_gap([c for c in readout.classes if c is not None])
    if digit_base(readout) * error * gap <= DIGIT_SHARE * nearest_value_tolerance(gap):
        return graph
    return _rounded_again(graph, [writer] if _worth_rerounding(writer, error, dtype) else [])


def _rounded_again(graph: Graph, chosen: list[Op]) -> Graph:
    """`graph` with each of the `chosen` step MLPs writing `LABEL (raw)`, and a step MLP of that
    number's values writing LABEL from it, right after; `graph` itself when none is chosen."""
    if not chosen:
        return graph
    labels = set(graph.labels)
    ops: list[Op] = []
    for op in graph.ops:
        if op in chosen:
            assert isinstance(op, NumericMLP)
            raw = Var(fresh_label(f"{op.out.label} (raw)", labels), ir.NUMERICAL, op.out.values, loc=op.out.loc)
            labels.add(raw.label)
            ops += [replaced(op, out=raw), NumericMLP(op.out, raw, _same)]
        else:
            ops.append(op)
    return dataclasses.replace(graph, ops=tuple(ops), labels=frozenset(labels))


def _worth_rerounding(op: Op, error: float, dtype: DTypeLike) -> bool:
    """Whether `op` is a step MLP writing a number, and a step MLP mapping that number's values to
    themselves, reading it off by `error`, would write them GAIN times more precisely, `error`
    keeping their steps flat."""
    out = op.out
    if not isinstance(op, NumericMLP) or op.interpolated or out.encoding != ir.NUMERICAL or len(out.values) < 2:
        return False
    if not error <= STEP_WINDOW * smallest_gap(out.values):
        return False
    again = decode_errors(out, list(out.values), False, out, error, dtype)
    return GAIN * float(np.max(again)) <= error


def _same(value: Any) -> Any:
    """The second rounding's map: each value to itself."""
    return value
