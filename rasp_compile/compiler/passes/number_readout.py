"""number-readout: a numeric-valued categorical answer is written as one number and read as the
nearest value, instead of as a one-hot.

Classes that are numbers can be read from one numerical dimension w holding one of them:
logit_c = (2 c w - c^2) / g^2, where g is the smallest gap between classes. Up to the term
-w^2/g^2, common to every class, that is -(w - c)^2 / g^2: the nearest class wins, by at least
1 at any w that is a class. One dimension instead of a one-hot.

Not when float32 cannot keep that margin: the logits' terms reach 3 c^2/g^2 and are rounded
(stored, multiplied, summed) to a few u of that, so the margin of 1 holds only while
NEAREST_VALUE_ROUNDINGS * u * 3 c_max^2 / g^2 stays below 1/4. The running fraction of a
64-position causal program (g ~ 2.4e-4) does not: its one-hot read-out is used instead.

Needs: the read-out still the answer's own one-hot (linear-readout did not replace it). Runs
before dead ops are dropped. Guarantees: the answer's writer (a table or step MLP, which write
any encoding) writes the number under the answer's label; the read-out's argmax is the answer.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ... import ir
from ...frontend.infer import is_number
from ..ops import Graph, NumericMLP, Readout, TableMLP, replaced
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
        readout = nearest_value_readout(writer.input, list(output.values))
        return graph if readout is None else dataclasses.replace(graph, readout=readout)
    number = Var(output.label, ir.NUMERICAL, output.values, loc=output.loc)  # the number, not its one-hot
    readout = nearest_value_readout(number, list(output.values))
    if readout is None:
        return graph
    ops = tuple(replaced(op, out=number) if op is writer else op for op in graph.ops)
    return dataclasses.replace(graph, ops=ops, readout=readout)


def _copies_a_number(writer) -> bool:
    """Whether `writer` is a step MLP writing the one-hot of its input's own value."""
    return (isinstance(writer, NumericMLP) and writer.input.values == writer.out.values
            and all(writer.fn(v) == v for v in writer.input.values))


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
