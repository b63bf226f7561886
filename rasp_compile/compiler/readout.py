"""readout: when the output is a table whose answer a linear read-out can already pick, skip
the table's MLP and let `unembed` read the table's inputs.

The prediction is an argmax, so the last table need not be computed exactly: it is enough that
some logits, linear in the inputs' one-hots, are largest at the right value for every input
combination. `next = "b" if prev == "a" and t == "a" else "a"` is such a table (logit_b -
logit_a can be prev:a + tokens:a - 3/2): the (aab)* predictor needs no MLP.

We look for such weights with a perceptron on the table's rows (a margin of 1 per row, a
bounded number of passes) and keep them only when every row then wins by at least MARGIN.
Inputs near their one-hots (attention leak ~1e-6) move the logits by far less than that.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product

import numpy as np

from .. import ir
from .ops import TableMLP, Var
from .precision import unit_roundoff

MARGIN = 0.5
PASSES = 200
MAX_ROWS = 4096
CLASS_UPDATES = 5_000_000  # passes x rows x classes at most (about 0.2 s), then give up
NEAREST_VALUE_ROUNDINGS = 8  # of each logit's largest term, for the nearest-value read-out


@dataclass
class Readout:
    """logits[class] = bias[class] + sum over input one-hot coordinates of x * weights."""

    inputs: tuple[Var, ...]
    classes: list | None  # the output value of each logit column (None for none); None: numerical
    weights: np.ndarray  # [sum of the inputs' value counts, n_classes], inputs' dims in order
    bias: np.ndarray  # [n_classes]


def plain_readout(output: Var) -> Readout:
    """Read the output's own dimensions: its one-hot (a none column, constant 1/2, wins when
    every value column reads ~0) or its number."""
    if output.encoding == ir.NUMERICAL:
        return Readout((output,), None, np.ones((1, 1)), np.zeros(1))
    classes = list(output.values) + ([None] if output.may_be_none else [])
    weights = np.eye(len(output.values), len(classes))
    bias = np.zeros(len(classes))
    if output.may_be_none:
        bias[-1] = 0.5
    return Readout((output,), classes, weights, bias)


def nearest_value_readout(number: Var, classes: list) -> Readout | None:
    """Classes that are numbers, read from one numerical dimension w holding one of them:
    logit_c = (2 c w - c^2) / g^2, where g is the smallest gap between classes. Up to the
    term -w^2/g^2, common to every class, that is -(w - c)^2 / g^2: the nearest class wins,
    by at least 1 at any w that is a class. One dimension instead of a one-hot.

    None when float32 cannot keep that margin: the logits' terms reach 3 c^2/g^2 and are
    rounded (stored, multiplied, summed) to a few u of that, so the margin of 1 holds only
    while NEAREST_VALUE_ROUNDINGS * u * 3 c_max^2 / g^2 stays below 1/4. The running fraction of
    a 64-position causal program (g ~ 2.4e-4) does not: its one-hot read-out is used instead."""
    centres = np.array([float(c) for c in classes])
    gaps = np.diff(np.sort(centres))
    scale = 1.0 / (gaps.min() ** 2) if len(gaps) else 1.0
    largest_term = 3 * float(np.max(centres**2, initial=0.0)) * scale
    if NEAREST_VALUE_ROUNDINGS * unit_roundoff(np.float32) * largest_term > 0.25:  # chosen before the dtype
        return None
    return Readout((number,), classes, (2 * centres * scale)[None, :], -(centres**2) * scale)


def linear_readout(op: TableMLP, output: Var) -> Readout | None:
    """The table's answer as an argmax of logits linear in its inputs, or None. Only the input
    combinations that can occur (`op.possible`, when the positions decide them) need an answer."""
    if op.covers_none or len(set(op.inputs)) < len(op.inputs):
        return None  # joints, and tables of one variable twice (x - x): rows that cannot occur
    domains = [x.domain for x in op.inputs]
    n_rows = len(op.possible) if op.possible is not None else int(np.prod([len(d) for d in domains]))
    if n_rows > MAX_ROWS:
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
    """[n_features, n_classes] weights putting every row's target ahead by MARGIN, or None (also
    when PASSES, or CLASS_UPDATES row-class scores in all, do not get there: 4,096 rows of 4,096
    classes x 200 passes took 20 s)."""
    w = np.zeros((rows.shape[1], n_classes))
    if n_classes < 2:
        return w
    for _ in range(min(PASSES, CLASS_UPDATES // (len(rows) * n_classes))):
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
    return w if ahead.min() >= MARGIN else None
