"""number-readout: a numeric-valued categorical answer is written as one number and read as the
nearest value, instead of as a one-hot.

Classes that are numbers can be read from one numerical dimension w holding one of them:
logit_c = (2 c w - c^2) / g^2, where g is the smallest gap between classes. Up to the term
-w^2/g^2, common to every class, that is -(w - c)^2 / g^2: the nearest class wins, by at least
1 at any w that is a class. One dimension instead of a one-hot.

Not when float32 cannot keep that margin: the logits' terms reach 3 c^2/g^2 and are rounded
(stored, multiplied, summed) to a few u of that, so the margin of 1 holds only while
NEAREST_VALUE_ROUNDINGS * u * 3 c_max^2 / g^2 stays below 1/4: up to about 400 classes 0, 1, ...
Two digits. When the classes are evenly spaced (c_k = c_0 + k g, k = 0..K-1: a width, 0..1,024)
and a step MLP writes the answer, a second step MLP of the same input writes the high digit
h = k // B of the class's rank (B = ceil(sqrt K)); the low digit l = (w - c_0)/g - B h is a
line of the two numbers, and the logits are -(h - a)^2 - (l - b)^2 up to terms common to every
class, class k = B a + b:

    logit_k = 2b (w - c_0)/g + (2a - 2B b) h - a^2 - b^2

The nearest class still wins by at least 1, but the terms reach about 4 B K instead of 3 K^2
(130,000 instead of 3,000,000 at K = 1,025). An error e in h moves l by B e, so h's rounding
times B, plus w's over g, must stay within STEP_WINDOW, as w's alone does for the one-number
read-out (both as precision.py bounds a fresh number's rounding). Else the one-hot.

Needs: the read-out still the answer's own one-hot (linear-readout did not replace it). Runs
before dead ops are dropped. Guarantees: the answer's writer (a table or step MLP, which write
any encoding) writes the number under the answer's label (and a step MLP the high digit, under
`ANSWER.high`); the read-out's argmax is the answer.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ... import ir
from ...frontend.infer import is_number
from ..ops import Graph, NumericMLP, Op, Readout, TableMLP, fresh_label, replaced
from ..precision import unit_roundoff
from ..tolerances import (LINEAR_TOLERANCE, NEAREST_VALUE_ROUNDING_SHARE, NEAREST_VALUE_ROUNDINGS, ROUNDINGS,
                          STEP_WINDOW)
from ..variables import Var
from .linear_readout import read_by_ops


def choose_number_readout(graph: Graph) -> Graph:
    """`graph` with its numeric-valued categorical answer written and read as a number, when it can."""
    output = graph.output
    if graph.readout.inputs[0] is not output or output.encoding == ir.NUMERICAL or read_by_ops(graph, output):
        return graph
    writer = graph.writers()[output]
    if not isinstance(writer, TableMLP | NumericMLP) or output.may_be_none or not all(map(is_number, output.values)):
        return graph
    number = Var(output.label, ir.NUMERICAL, output.values, loc=output.loc)  # the number, not its one-hot
    readout, digit = nearest_value_readout(number, list(output.values)), None
    if readout is None and isinstance(writer, NumericMLP):
        readout, digit = two_digit_readout(graph, writer, number) or (None, None)
    if readout is None:
        return graph
    ops = tuple(new for op in graph.ops for new in ((replaced(op, out=number), digit) if op is writer else (op,)) if new)
    labels = graph.labels | ({digit.out.label} if digit else set())
    return dataclasses.replace(graph, ops=ops, readout=readout, labels=labels)


def nearest_value_readout(number: Var, classes: list) -> Readout | None:
    """The logits of the module docstring over `number`'s one dimension, or None when float32
    cannot keep their margin."""
    centres = np.array([float(c) for c in classes])
    gaps = np.diff(np.sort(centres))
    scale = 1.0 / (gaps.min() ** 2) if len(gaps) else 1.0
    largest_term = 3 * float(np.max(centres**2, initial=0.0)) * scale
    if NEAREST_VALUE_ROUNDINGS * unit_roundoff(np.float32) * largest_term > NEAREST_VALUE_ROUNDING_SHARE:  # chosen before the dtype
        return None
    return Readout((number,), classes, (2 * centres * scale)[None, :], -(centres**2) * scale)


def two_digit_readout(graph: Graph, writer: NumericMLP, number: Var) -> tuple[Readout, Op] | None:
    """The two-digit read-out of the module docstring over `number` (written by `writer`, a step
    MLP) and its high digit, and the step MLP writing that digit; None when the classes are not
    evenly spaced or float32 cannot keep the margin."""
    classes = list(number.values)
    centres = np.array([float(c) for c in classes])
    gaps = np.diff(centres)
    if len(gaps) == 0 or np.ptp(gaps) > LINEAR_TOLERANCE * gaps[0]:
        return None
    first, gap, base = centres[0], float(np.mean(gaps)), math.isqrt(len(classes) - 1) + 1
    high_of = [k // base for k in range(len(classes))]
    rank = {c: k for k, c in enumerate(classes)}
    high = Var(fresh_label(f"{number.label}.high", graph.labels), ir.NUMERICAL, tuple(sorted(set(high_of))), loc=number.loc)
    digit = NumericMLP(high, writer.input, lambda x: high_of[rank[writer.fn(x)]])
    a, b = np.divmod(np.arange(len(classes)), base)
    weights = np.stack([2 * b / gap, 2 * a - 2 * base * b])  # rows: number, high
    bias = -(a**2) - b**2 - 2 * b * first / gap
    largest_term = float(np.max(np.abs(weights[0]) * np.max(np.abs(centres)) + np.abs(weights[1]) * high.values[-1] + np.abs(bias)))
    if NEAREST_VALUE_ROUNDINGS * unit_roundoff(np.float32) * largest_term > NEAREST_VALUE_ROUNDING_SHARE:
        return None
    # l = (w - c_0)/g - B h: each number off by the rounding precision.py allows a fresh one
    rounding = ROUNDINGS * unit_roundoff(np.float32)
    if rounding * (np.max(np.abs(centres)) / gap + base * high.values[-1]) > STEP_WINDOW:
        return None
    return Readout((number, high), classes, weights, bias), digit
