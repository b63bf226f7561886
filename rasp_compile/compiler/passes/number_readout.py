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

Needs: the read-out still the answer's own one-hot (linear-readout did not replace it). Runs
before dead ops are dropped. Guarantees: the answer's writer (a table or step MLP, which write
any encoding) writes the number under the answer's label; the read-out's argmax is the answer.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ... import ir
from ...frontend.infer import is_number
from ..lowering.linear import substituted
from ..ops import Graph, Linear, NumericMLP, Readout, TableMLP, replaced
from ..precision import unit_roundoff
from ..tolerances import NEAREST_VALUE_ROUNDING_SHARE, NEAREST_VALUE_ROUNDINGS
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
    if _copies_a_number(writer):  # the one-hot of a number: read that number itself
        number, ops = writer.input, graph.ops
    else:  # the writer writes the number, not its one-hot
        number = Var(output.label, ir.NUMERICAL, output.values, loc=output.loc)
        ops = tuple(replaced(op, out=number) if op is writer else op for op in graph.ops)
    classes = list(output.values)
    readout = nearest_value_readout(number, classes, 0.0)
    if readout is None:
        centre = (float(min(classes)) + float(max(classes))) / 2
        centred = _centred(number, centre, {op.out: op for op in ops})
        readout = nearest_value_readout(centred.out, classes, centre)
        if readout is None:
            return graph
        ops = (*ops, centred)
    return dataclasses.replace(graph, ops=ops, readout=readout)


def _centred(number: Var, centre: float, writers: dict) -> Linear:
    """number - centre, a Linear written by the number's own writers."""
    label = f"{number.label}.centred"
    values = [float(v) - centre for v in number.values]
    out = Var(label, ir.NUMERICAL, tuple(values), loc=number.loc)
    return substituted(Linear(out, {(number, None): {label: 1.0}}, {label: -centre}), writers.get)


def _copies_a_number(writer) -> bool:
    """Whether `writer` is a step MLP writing the one-hot of its input's own value."""
    return (isinstance(writer, NumericMLP) and writer.input.values == writer.out.values
            and all(writer.fn(v) == v for v in writer.input.values))


def nearest_value_readout(number: Var, classes: list, centre: float) -> Readout | None:
    """The logits of the module docstring over `number`'s one dimension, which holds a class
    less `centre`, or None when float32 cannot keep their margin."""
    centres = np.array([float(c) for c in classes]) - centre
    gaps = np.diff(np.sort(centres))
    scale = 1.0 / (gaps.min() ** 2) if len(gaps) else 1.0
    largest = float(np.max(centres**2, initial=0.0)) * scale  # A
    if NEAREST_VALUE_ROUNDINGS * unit_roundoff(np.float32) * largest > NEAREST_VALUE_ROUNDING_SHARE:  # chosen before the dtype
        return None
    return Readout((number,), classes, (2 * centres * scale)[None, :], -(centres**2) * scale)
