"""numeric_mlp: functions of numerical inputs, exact on every value the inputs can take.

Steps (any function of one numerical input, to a categorical or numerical output). Sort the
input's values p_0 < p_1 < ... < p_m. For each neighbouring pair put a threshold t halfway and a
ramp of half-width d = (p_i - p_(i-1)) / 2:

    G_i(x) = relu((x - t)/d + 1/2) - relu((x - t)/d - 1/2)

G_i is 0 for x <= t - d/2 and 1 for x >= t + d/2: exactly 0 at p_(i-1) and below, exactly 1
at p_i and above, and flat for a quarter gap around every value, so inputs that carry attention
leak or float32 rounding land on the right step. Then

    f(x) = enc(f(p_0)) + sum_i (enc(f(p_i)) - enc(f(p_(i-1)))) G_i(x)

telescopes to enc(f(p_j)) at x = p_j. Two hidden units per step where the output changes, none
where it does not. The slope 1/d is the price of a small gap: 2/gap (8,000 for the means of a
64-position selector). tracr's numerical MLP uses a fixed hidden size and discretisation
instead, and is exact only where its grid happens to fall.

Linear maps (a numerical output that is a*x + c on every value, or a linear combination of
several numerical inputs): relu(x) - relu(-x) = x, one unit per sign the input can take.
"""

from __future__ import annotations

import numpy as np

from .graph import LinearMLP, NumericMLP, Var, fit_linear_1d
from .layout import Layout
from .pieces import MLP
from .. import ir


def numeric_mlp(op: NumericMLP, layout: Layout) -> MLP:
    if op.out.encoding == ir.NUMERICAL:
        linear = fit_linear_1d(op.fn, op.input.values)
        if linear is not None:
            a, c = linear
            return linear_mlp(LinearMLP(op.out, (op.input,), (a,), c), layout)
    return step_mlp(op, layout)


def step_mlp(op: NumericMLP, layout: Layout) -> MLP:
    points = op.input.values
    encoded = [layout.vector(op.out.encode(op.fn(p))) for p in points]
    x_dim = layout.dims(op.input)[0]
    columns_in, biases, rows_out = [], [], []
    for i in range(1, len(points)):
        change = encoded[i] - encoded[i - 1]
        if not change.any():
            continue
        half_width = (points[i] - points[i - 1]) / 2
        threshold = (points[i] + points[i - 1]) / 2
        for offset, sign in ((0.5, 1.0), (-0.5, -1.0)):
            columns_in.append(1.0 / half_width)
            biases.append(-threshold / half_width + offset)
            rows_out.append(sign * change)
    w_in = np.zeros((layout.d_model, len(biases)))
    w_in[x_dim, :] = columns_in
    w_out = np.array(rows_out).reshape(len(biases), layout.d_model)
    return MLP(w_in, np.array(biases), w_out, encoded[0])


def linear_mlp(op: LinearMLP, layout: Layout) -> MLP:
    """out = sum_i a_i x_i + c, with x = relu(x) - relu(-x) (one side dropped when x has one sign)."""
    units = []  # (input dim, sign, coefficient)
    for x, a in zip(op.inputs, op.coefficients):
        if a == 0:
            continue
        for sign in _signs(x):
            units.append((layout.dims(x)[0], sign, a))
    w_in = np.zeros((layout.d_model, len(units)))
    w_out = np.zeros((len(units), layout.d_model))
    out_dim = layout.dims(op.out)[0]
    for h, (dim, sign, a) in enumerate(units):
        w_in[dim, h] = sign
        w_out[h, out_dim] = sign * a
    b_out = np.zeros(layout.d_model)
    b_out[out_dim] = op.constant
    return MLP(w_in, np.zeros(len(units)), w_out, b_out)


def _signs(x: Var) -> list[float]:
    """The signs the variable's values take: relu(x) covers x >= 0, relu(-x) covers x <= 0."""
    signs = []
    if max(x.values) > 0:
        signs.append(1.0)
    if min(x.values) < 0:
        signs.append(-1.0)
    return signs
