"""gated_linear: a number times, plus, a constant chosen by a categorical value, in at most two
hidden units per value of the category.

A numerical sequence_map f(x, g) of a numerical x and a categorical g is often affine in x for
each value of g: the running count `frac * length` of a causal program, a depth
`(2 * frac - 1) * (i + 1)`. As a table it would take a categorical view of x (one more MLP
sub-layer) and one hidden unit per (x, g) pair: 19,600 units for `frac * length` at max_len 40.
Here, for each value g, with f(x, g) = a_g x + b_g ranging over [lo_g, hi_g] on x's values:

    h_g = relu(a_g x + b_g - lo_g - G_g (1 - x[gate = g])),   G_g = 2 (hi_g - lo_g) + 1
    c_g = relu(x[gate = g])                                     (only when lo_g != 0)
    out = sum over g of h_g + lo_g c_g

With the gate on, h_g = a_g x + b_g - lo_g >= 0 passes unclipped and c_g = 1 adds lo_g back.
With it off, h_g's pre-activation is at most (hi_g - lo_g) - G_g = -(hi_g - lo_g) - 1: h_g is 0
with room for any error in x smaller than that. A gate that is none (all zeros) fires nothing:
out = 0, SPEC's rule for a numerical map of none. A value g with a_g = 0 needs no h_g.

The gate's one-hot must be exactly 0 or 1 (`exact_one_hot`): an error e in it would reach the
output as about e (G_g + |lo_g|). An error in x reaches it times |a_g|, as through a linear map
(amplification.py counts it; precision.py the magnitudes it goes through).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from .. import ir
from ..infer import is_number
from .layout import Layout
from .ops import Embed, GatedLinear, Linear, Op, TableMLP, Var
from .pieces import MLP

TOLERANCE = 1e-9
"""How far (relative) a value of f may be from its line and still count as on it."""


def affine_pieces(fn: Callable, x: Var, gate: Var, x_first: bool) -> tuple[dict, dict] | None:
    """(slopes, intercepts) by gate value when fn(x, g) (or fn(g, x), `x_first` False) is affine
    in x on x's values for every value g of the gate; None when some g's values are not."""
    points = [float(p) for p in x.values]
    slopes, intercepts = {}, {}
    for g in gate.values:
        answers = [fn(p, g) if x_first else fn(g, p) for p in x.values]
        if not all(is_number(y) for y in answers):
            return None
        ys = [float(y) for y in answers]
        a = (ys[-1] - ys[0]) / (points[-1] - points[0]) if len(points) > 1 else 0.0
        b = ys[0] - a * points[0]
        if any(abs(y - (a * p + b)) > TOLERANCE * max(1.0, abs(y), abs(a * p)) for p, y in zip(points, ys)):
            return None
        slopes[g], intercepts[g] = a, b
    return slopes, intercepts


def exact_one_hot(var: Var, writer_of: Callable[[Var], Op]) -> bool:
    """Whether `var`'s one-hot is exactly 0 or 1 at every position: written by an embedding, or
    by tables and linear folds of such one-hots only (attention and step MLPs are off by a little)."""
    writer = writer_of(var)
    if isinstance(writer, Embed):
        return True
    if isinstance(writer, TableMLP | Linear):
        return all(v.encoding == ir.CATEGORICAL and exact_one_hot(v, writer_of) for v in writer.inputs)
    return False


def gated_linear_mlp(op: GatedLinear, layout: Layout) -> MLP:
    """The hidden units h_g and c_g of the module docstring, writing op.out's one coordinate."""
    x_dim, out_dim = layout.dims(op.input)[0], layout.dims(op.out)[0]
    x_low, x_high = op.input.values[0], op.input.values[-1]
    units = []  # (weight on x, gate dimension, weight on it, bias, weight on out)
    for g, gate_dim in zip(op.gate.values, layout.dims(op.gate)):
        a, b = op.slopes[g], op.intercepts[g]
        low, high = sorted((a * x_low + b, a * x_high + b))
        if a != 0:
            guard = 2 * (high - low) + 1
            units.append((a, gate_dim, guard, b - low - guard, 1.0))
        if low != 0:
            units.append((0.0, gate_dim, 1.0, 0.0, low))
    w_in = np.zeros((layout.d_model, len(units)))
    b_in = np.zeros(len(units))
    w_out = np.zeros((len(units), layout.d_model))
    for h, (on_x, gate_dim, on_gate, bias, on_out) in enumerate(units):
        w_in[x_dim, h] = on_x
        w_in[gate_dim, h] = on_gate
        b_in[h] = bias
        w_out[h, out_dim] = on_out
    return MLP(w_in, b_in, w_out, np.zeros(layout.d_model))
