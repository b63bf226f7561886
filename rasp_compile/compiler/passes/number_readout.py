"""number-readout: a numeric-valued categorical answer is written as one number and read as the
nearest value, instead of as a one-hot.

Classes that are numbers can be read from one numerical dimension w holding one of them:
logit_c = (2 c w - c^2) / g^2, where g is the smallest gap between classes. Up to the term
-w^2/g^2, common to every class, that is -(w - c)^2 / g^2: the nearest class wins, by at least
1 at any w that is a class. One dimension instead of a one-hot.

Not when float32 cannot keep that margin. With A = max (c - c0)^2 / g^2 over the classes, c0
the number's zero, a logit's terms (2 (c - c0) w / g^2 and its bias) reach 2A and A, the logit
3A; storing the weight, multiplying, storing the bias and adding it round each by u of that,
8 u A per logit, 16 u A for the difference of two: it must stay within
NEAREST_VALUE_ROUNDING_SHARE of the margin (the number's own error takes at most 2 x STEP_WINDOW,
precision.py). When the plain number (c0 = 0) is too large, a copy centred on the classes'
middle (c0 = their midpoint, written by the number's own writers: a Linear) is read instead,
which divides A by 4 for classes 0..n: the widths and lengths up to max_len 1,024. The running
fraction of a 64-position causal program (g ~ 2.4e-4) fits neither: its one-hot read-out is
used instead.

Two digits. When even the centred number is too large and the classes are evenly spaced (c_k = c_0 + k g, k = 0..K-1: a width, 0..1,024)
and a step MLP writes the answer, a second step MLP of the same input writes the high digit
h = k // B of the class's rank (B = ceil(sqrt K)); the low digit l = (w - c_0)/g - B h is a
line of the two numbers, and the logits are -(h - a)^2 - (l - b)^2 up to terms common to every
class, class k = B a + b:

    logit_k = 2b (w - c_0)/g + (2a - 2B b) h - a^2 - b^2

The nearest class still wins by at least 1, but the terms reach about 4 B K instead of 3 K^2
(130,000 instead of 3,000,000 at K = 1,025). An error e in h moves l by B e, so h's rounding
times B, plus w's over g, must stay within STEP_WINDOW, as w's alone does for the one-number
read-out (both as precision.py bounds a fresh number's rounding).

Centred digits. From 2,602 evenly spaced classes (a width of max_len 2,601 or more) those terms too
are beyond float32 (1.05e6 at K = 4,097: 8 u of them is half the margin). The same two digits,
of the rank less the middle rank m and over the centred copy x = (w - centre)/g, are centred
too: h = (k - m + B//2) // B and l = x - B h lie within about B/2 of 0 (h in -32..32 at
K = 4,097), so each term reaches about B K / 2, a quarter of the plain digits' (2.7e5 at
K = 4,097). When the number is a copy (a length, written by a Linear), the digit's step MLP
reads the centred copy, so the plain number is dead and costs no dimension. Else the one-hot.

A copy but for rounding. An answer that rounds a number whose values are its classes but for
float rounding (a rounded mean times its count: 2.9999999999999996 for 3, each within
LINEAR_TOLERANCE of a gap) is read from that number as a copy is; the read-out's `offset`, the
largest such distance, is added to the number's error where precision.py checks the margin.

Needs: the read-out still the answer's own one-hot (linear-readout did not replace it). Runs
before dead ops are dropped. Guarantees: the answer's writer (a table or step MLP, which write
any encoding) writes the number under the answer's label (and a step MLP the high digit, under
`ANSWER.high`); the read-out's argmax is the answer.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, TypeGuard

import numpy as np

from ... import ir
from ...frontend.infer import is_number
from ..lowering.linear import substituted
from ..ops import Graph, Linear, NumericMLP, Op, Readout, TableMLP, fresh_label, replaced
from ..error_bounds import unit_roundoff
from ..tolerances import (LINEAR_TOLERANCE, NEAREST_VALUE_ROUNDING_SHARE, NEAREST_VALUE_ROUNDINGS, ROUNDINGS,
                          STEP_WINDOW, smallest_gap)
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
    offset = 0.0
    if _copies_a_number(writer):  # the one-hot of a number (or of its nearest class): read that number itself
        number, ops = writer.input, graph.ops
        offset = _offset(writer)
    else:  # the writer writes the number, not its one-hot
        number = Var(output.label, ir.NUMERICAL, output.values, loc=output.loc)
        ops = tuple(replaced(op, out=number) if op is writer else op for op in graph.ops)
    classes = list(output.values)
    added: tuple[Op, ...] = ()
    readout = nearest_value_readout(number, classes, 0.0)
    if readout is None:
        centre = (float(min(classes)) + float(max(classes))) / 2
        centred = _centred(number, centre, {op.out: op for op in ops}, graph.labels)
        readout, added = nearest_value_readout(centred.out, classes, centre), (centred,)
    if readout is None and isinstance(writer, NumericMLP):
        readout, added = _digits(two_digit_readout(graph, writer, number))
    if readout is None and isinstance(writer, NumericMLP):
        readout, added = _digits(two_digit_readout(graph, writer, number, centred), centred)
    if readout is None:
        return graph
    return dataclasses.replace(graph, ops=(*ops, *added), readout=dataclasses.replace(readout, offset=offset),
                               labels=graph.labels | {op.out.label for op in added})


def _digits(found: tuple[Readout, Op] | None, *before: Op) -> tuple[Readout | None, tuple[Op, ...]]:
    """A two-digit read-out and the ops it adds (`before`, then its high digit's), or (None, ())."""
    return (found[0], (*before, found[1])) if found else (None, ())


def _centred(number: Var, centre: float, writers: dict[Var, Op], labels: frozenset[str]) -> Linear:
    """number - centre, a Linear written by the number's own writers."""
    label = fresh_label(f"{number.label}.centred", labels)
    values = [float(v) - centre for v in number.values]
    out = Var(label, ir.NUMERICAL, tuple(values), loc=number.loc)
    return substituted(Linear(out, {(number, None): {label: 1.0}}, {label: -centre}), writers.get)


def _copies_a_number(writer: Op) -> TypeGuard[NumericMLP]:
    """Whether `writer` is a step MLP writing the one-hot of its input's own value, or of a class
    within LINEAR_TOLERANCE of a gap of it (float rounding: a rounded mean times its count gives
    2.9999999999999996 for 3, which `round` maps to 3): that class is the nearest, and the
    read-out's `offset` (precision.py adds it to the number's error) is that distance at most."""
    if not isinstance(writer, NumericMLP):
        return False
    gap = smallest_gap(writer.out.values)
    return _offset(writer) <= LINEAR_TOLERANCE * gap


def _offset(writer: NumericMLP) -> float:
    """The farthest any input value lies from the class `writer` maps it to."""
    return max((abs(float(v) - float(a)) for v, a in zip(writer.input.values, writer.answers, strict=True)), default=0.0)


def nearest_value_readout(number: Var, classes: list[Any], centre: float) -> Readout | None:
    """The logits of the module docstring over `number`'s one dimension, which holds a class
    less `centre`, or None when float32 cannot keep their margin."""
    centres = np.array([float(c) for c in classes]) - centre
    gaps = np.diff(np.sort(centres))
    scale = 1.0 / (gaps.min() ** 2) if len(gaps) else 1.0
    largest = float(np.max(centres**2, initial=0.0)) * scale  # A
    if NEAREST_VALUE_ROUNDINGS * unit_roundoff(np.float32) * largest > NEAREST_VALUE_ROUNDING_SHARE:  # chosen before the dtype
        return None
    return Readout((number,), classes, (2 * centres * scale)[None, :], -(centres**2) * scale)


def two_digit_readout(graph: Graph, writer: NumericMLP, number: Var, centred: Linear | None = None,
                      ) -> tuple[Readout, Op] | None:
    """The two-digit read-out of the module docstring over `number` (written by `writer`, a step
    MLP) and its high digit, and the step MLP writing that digit; with `centred` (number less a
    centre, `_centred`), the centred digits over that copy. None when the classes are not evenly
    spaced or float32 cannot keep the margin."""
    classes = list(writer.out.values)  # the number's own values, but for a copy's float rounding
    centres = np.array([float(c) for c in classes])
    gaps = np.diff(centres)
    if len(gaps) == 0 or np.ptp(gaps) > LINEAR_TOLERANCE * gaps[0]:
        return None
    gap, base = float(np.mean(gaps)), math.isqrt(len(classes) - 1) + 1
    middle = (len(classes) - 1) // 2 if centred else 0  # the rank whose digits are 0
    read, shift = (centred.out, float(centres[0] - centred.out.values[0])) if centred else (number, 0.0)
    first = centres[middle] - shift  # the read number at rank `middle`, in its own units
    a, b = np.divmod(np.arange(len(classes)) - middle + (base // 2 if centred else 0), base)
    b -= base // 2 if centred else 0
    high = Var(fresh_label(f"{number.label}.high", graph.labels), ir.NUMERICAL, tuple(sorted(set(a.tolist()))), loc=number.loc)
    rank = {c: k for k, c in enumerate(classes)}
    # a copy read centred: the digit reads the centred number, so the plain one is dead
    digit_input = centred.out if centred is not None and writer.input is number else writer.input
    # each value's own class's digit (a copy but for rounding has more values than classes)
    high_at = {x: int(a[rank[answer]]) for x, answer in zip(digit_input.values, writer.answers, strict=True)}
    digit = NumericMLP(high, digit_input, high_at.__getitem__)
    weights = np.stack([2 * b / gap, 2 * a - 2 * base * b])  # rows: number, high
    bias = -(a**2) - b**2 - 2 * b * first / gap
    values = np.max(np.abs(centres - shift))
    largest_term = float(np.max(np.abs(weights[0]) * values + np.abs(weights[1]) * np.max(np.abs(high.values)) + np.abs(bias)))
    # largest_term sums a logit's terms (two products and the bias): storing and multiplying each,
    # storing the bias and the two additions round a logit by 4 u of it, a difference by 8 u
    if NEAREST_VALUE_ROUNDINGS / 2 * unit_roundoff(np.float32) * largest_term > NEAREST_VALUE_ROUNDING_SHARE:
        return None
    # l = (w - c_0)/g - B h: each number off by the rounding precision.py allows a fresh one
    rounding = ROUNDINGS * unit_roundoff(np.float32)
    if rounding * (values / gap + base * np.max(np.abs(high.values))) > STEP_WINDOW:
        return None
    return Readout((read, high), classes, weights, bias), digit
