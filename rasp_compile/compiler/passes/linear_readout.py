"""linear-readout: when the output is a table whose answer a linear read-out can already pick, skip
the table's MLP and let `unembed` read the table's inputs.

The prediction is an argmax, so the last table need not be computed exactly: it is enough that
some logits, linear in the inputs' one-hots, are largest at the right value for every input
combination. `next = "b" if prev == "a" and t == "a" else "a"` is such a table (logit_b -
logit_a can be prev:a + tokens:a - 3/2): the (aab)* predictor needs no MLP.

We look for such weights with a perceptron on the table's rows (a margin of 1 per row, a
bounded number of passes) and keep them only when every row then wins by at least READOUT_MARGIN.
Inputs near their one-hots (attention leak ~1e-6) move the logits by far less than that.

Needs: the lowered graph, read by ops.plain_readout. Runs first among the graph passes, before
dead ops are dropped (the table's MLP then goes). Guarantees: the read-out's argmax is the
table's answer for every input combination the positions allow, by READOUT_MARGIN.
"""

from __future__ import annotations

import dataclasses
from itertools import product

import numpy as np

from ... import ir
from ..ops import Graph, Readout, TableMLP, op_inputs
from ..variables import Var
from ..limits import CLASS_UPDATES, MAX_READOUT_ROWS, PERCEPTRON_PASSES
from ..tolerances import READOUT_MARGIN


def choose_linear_readout(graph: Graph) -> Graph:
    """`graph` reading the answer's table inputs instead of the answer, when its writer is a
    table only the read-out needs and a linear read-out of its inputs picks the same answers."""
    output = graph.output
    writer = graph.writers()[output]
    if output.encoding == ir.NUMERICAL or not isinstance(writer, TableMLP) or read_by_ops(graph, output):
        return graph
    readout = linear_readout(writer, output)
    return graph if readout is None else dataclasses.replace(graph, readout=readout)


def read_by_ops(graph: Graph, var: Var) -> bool:
    """Whether an op of `graph` reads `var`."""
    return any(var in op_inputs(op) for op in graph.ops)



def linear_readout(op: TableMLP, output: Var) -> Readout | None:
    """The table's answer as an argmax of logits linear in its inputs, or None. Only the input
    combinations that can occur (`op.possible`, when the positions decide them) need an answer."""
    if op.covers_none or len(set(op.inputs)) < len(op.inputs):
        return None  # joints, and tables of one variable twice (x - x): rows that cannot occur
    domains = [x.domain for x in op.inputs]
    n_rows = len(op.possible) if op.possible is not None else int(np.prod([len(d) for d in domains]))
    if n_rows > MAX_READOUT_ROWS:
        return None
    classes = list(output.values) + ([None] if output.may_be_none else [])
    rows, targets = [], []
    offsets = np.cumsum([0] + [len(x.values) for x in op.inputs])
    for combination in product(*domains):
        if op.possible is not None and combination not in op.possible:
            continue  # the positions never give it: no answer to keep
        features = np.zeros(offsets[-1] + 1)
        features[-1] = 1.0  # the bias
        for x, offset, value in zip(op.inputs, offsets, combination):
            if value is not None:
                features[offset + x.position[value]] = 1.0
        expected = None if None in combination else op.fn(*combination)
        rows.append(features)
        targets.append(classes.index(expected) if expected in classes else classes.index(None))
    w = _perceptron(np.array(rows), np.array(targets), len(classes))
    if w is None:
        return None
    return Readout(op.inputs, classes, w[:-1], w[-1])


def _perceptron(rows: np.ndarray, targets: np.ndarray, n_classes: int) -> np.ndarray | None:
    """[n_features, n_classes] weights putting every row's target ahead by READOUT_MARGIN, or None (also
    when PERCEPTRON_PASSES, or CLASS_UPDATES row-class scores in all, do not get there: 4,096 rows of 4,096
    classes x 200 passes took 20 s)."""
    w = np.zeros((rows.shape[1], n_classes))
    if n_classes < 2:
        return w
    for _ in range(min(PERCEPTRON_PASSES, CLASS_UPDATES // (len(rows) * n_classes))):
        mistakes = 0
        for x, target in zip(rows, targets):
            logits = x @ w
            own = logits[target]
            logits[target] = -np.inf
            rival = int(np.argmax(logits))  # the strongest other class (the first, on ties)
            if own - logits[rival] < 1.0:
                w[:, target] += x
                w[:, rival] -= x
                mistakes += 1
        if mistakes == 0:
            break
    logits = rows @ w
    ahead = logits[np.arange(len(rows)), targets][:, None] - logits
    ahead[np.arange(len(rows)), targets] = np.inf
    return w if ahead.min() >= READOUT_MARGIN else None
