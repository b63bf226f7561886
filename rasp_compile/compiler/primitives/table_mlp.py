"""table_mlp: any function of categorical inputs, as one hidden unit per input combination.

For inputs X_1..X_r and a combination (v_1, ..., v_r), the hidden unit

    h = relu(2 (ind_1 + ... + ind_r) - (2r - 1)),   ind_i = x[X_i = v_i]   (or 1 - sum_v x[X_i = v]
                                                                             for v_i = none, joints only)

is 1 exactly when every input holds its value and 0 otherwise (each ind_i is 0 or 1, so a single
miss brings the pre-activation to -1 or less). The output adds the encoding of f(v_1, ..., v_r):
a one-hot column, or the number itself for a numerical output (negative ones included: there is
no clipping). Combinations whose output encodes to nothing (none, or the number 0) need no unit.
An input that is none (all zeros) fires no unit, so the output is none, or 0 when numerical:
the language's none propagation.

Inputs a little off 0/1 (attention leak, a step MLP's float32 rounding) move the one firing unit
by twice as little, and no other: the -1 leaves every unit that should be 0 at exactly 0 while the
inputs' errors add up to less than 1/2. (With relu(sum - (r - 1)) each of those units would fire by the
error and write it times its own number: 0.002 instead of 0 where a table of x * x over values up
to 399 read a decoded one-hot, the numbers ending 2^-9 apart in float32.)
"""

from __future__ import annotations

from itertools import product

import numpy as np

from ..ops import TableMLP
from ..layout import Layout
from .pieces import MLP


def table_mlp(op: TableMLP, layout: Layout) -> MLP:
    domains = [x.domain if op.covers_none else x.values for x in op.inputs]
    units = []
    for combination in product(*domains):
        if op.possible is not None and combination not in op.possible:
            continue  # e.g. an index at or past the length: no unit needed
        out = op.out.encode(op.fn(*combination))
        if any(out.values()):
            units.append((combination, out))
    r = len(op.inputs)
    w_in = np.zeros((layout.d_model, len(units)))
    b_in = np.full(len(units), -(2.0 * r - 1.0))
    w_out = np.zeros((len(units), layout.d_model))
    input_dims = [layout.dims(x) for x in op.inputs]
    for h, (combination, out) in enumerate(units):
        for x, dims, value in zip(op.inputs, input_dims, combination):
            if value is None:
                w_in[dims, h] -= 2.0
                b_in[h] += 2.0
            else:
                w_in[dims[x.position[value]], h] += 2.0
        for label, amount in out.items():
            w_out[h, layout[label]] = amount
    return MLP(w_in=w_in, b_in=b_in, w_out=w_out, b_out=np.zeros(layout.d_model))
