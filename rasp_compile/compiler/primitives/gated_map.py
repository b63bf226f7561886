"""gated_map: a sequence_map of a number x and a categorical g, as one small MLP of x per value
of g, whose units the other values of g switch off.

As a table, f(x, g) needs a categorical view of x first (a step MLP: one more MLP sub-layer) and
then one hidden unit per (x, g) pair: 19,600 units for the running count `frac * length` at
max_len 40. But for each value g, f(., g) is a function of one number, which numeric_mlp builds
exactly; so here every value g gets its own:

    affine pieces   f(x, g) = a_g x + b_g on x's values, for every g, and a numerical output:
                    one unit relu(a_g x + b_g - lo_g) (>= 0 on x's values), lo_g = min of f(., g)
    otherwise       the exact steps of numeric_mlp.step_mlp for f(., g): two units per step
                    where f(., g) changes, none elsewhere; or, for a numerical answer where
                    float32 does better with it (passes/interpolated_steps.py), the polyline of
                    numeric_mlp.interpolation_mlp, one unit per value

and its constant (lo_g, or f at x's lowest value, or a mirrored step's 1) is written by a unit
relu(x[gate = g]). Every other unit u of g gets a weight -M_u on the dimension of each other
value g' of the gate, M_u one more than the largest |pre-activation| u reaches on x's values
(twice over). Gate values whose functions of x are the same share one MLP, switched on by the
sum of their coordinates (a map that ignores the gate is then one plain step MLP of x). With g'
on, u is 0 with that much room for error in x. With g on, the other dimensions are exactly 0,
so u computes exactly what the ungated unit would, to the last bit (0 times M_u adds nothing):
the float32 analysis of numeric_mlp holds as it is.

So the gate's one-hot must be exactly 0 or 1 (passes/gated_maps.exact_one_hot: an embedding, or tables of
embeddings; attention and step MLPs are off by a little, and M_u would magnify it) and never
none (all zeros would switch every value's units on). An error in x passes through affine
pieces times |a_g| (passes/amplification.py counts it) and is absorbed by the steps' flat quarter-gaps,
as in a step MLP; a polyline passes it on times its slope, as for a map of x alone.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ... import ir
from ..layout import Layout
from ..ops import GatedMap
from .numeric_mlp import interpolation_mlp, step_mlp
from .pieces import MLP, stack_mlps


def gate_classes(op: GatedMap) -> list[list[ir.Value]]:
    """The gate's values grouped by the function of x they select (their affine piece, or their
    answers on x's values), in gate order: values that compute the same share one piece."""
    classes: dict[object, list[ir.Value]] = {}
    for g in op.gate.values:
        key = op.affine[g] if op.affine else op.answers[g]
        classes.setdefault(key, []).append(g)
    return list(classes.values())


def hidden_units(op: GatedMap) -> int:
    """How many hidden units gated_map_mlp builds, at most: per gate class, one (affine), or two
    per step where its function changes (one per value for a polyline), and its constant's."""
    total = 0
    for members in gate_classes(op):
        g = members[0]
        if op.affine:
            total += 2
            continue
        answers = op.answers[g]
        steps = sum(a != b for a, b in zip(answers, answers[1:]))
        total += (len(answers) if g in op.interpolated else 2 * steps) + 1
    return total


def gated_map_mlp(op: GatedMap, layout: Layout) -> MLP:
    """The units of the module docstring, for every class of the gate's values, side by side.
    A class's units are switched on by any of its members (the sum of their coordinates, still
    exactly 0 or 1) and off by every other value; a single class needs no switch at all."""
    classes = gate_classes(op)
    parts: list[MLP] = []
    constant = np.zeros(layout.d_model)
    for members in classes:
        piece = _class_mlp(op, members[0], layout)
        if len(classes) == 1:  # the gate is never none: one of its values always holds
            constant += piece.b_out
            parts.append(replace(piece, b_out=np.zeros(layout.d_model)))
        else:
            parts.extend(_switched(piece, op, members, layout))
    mlp = stack_mlps(parts, layout.d_model)
    return replace(mlp, b_out=mlp.b_out + constant)


def _class_mlp(op: GatedMap, g: ir.Value, layout: Layout) -> MLP:
    """The units of f(., g) alone, as if the gate always held g."""
    if op.affine:
        return _affine_mlp(op.affine[g], op, layout)
    if g in op.interpolated:
        return interpolation_mlp(op.piece(g), layout)
    return step_mlp(op.piece(g), layout)


def _switched(piece: MLP, op: GatedMap, members: list[ir.Value], layout: Layout) -> list[MLP]:
    """`piece` switched off (every unit held under 0) unless the gate holds one of `members`; its
    output bias, which no unit can switch, moves to one more unit that is on exactly then."""
    x_dim = layout.dims(op.input)[0]
    gate_dims = layout.dims(op.gate)
    dim_of = dict(zip(op.gate.values, gate_dims))
    points = np.array(op.input.values, dtype=float)
    pre_activations = np.outer(points, piece.w_in[x_dim]) + piece.b_in  # [x value, unit]
    guard = 2 * np.max(np.abs(pre_activations), axis=0, initial=0.0) + 1
    w_in = piece.w_in.copy()
    w_in[gate_dims] = -guard
    w_in[[dim_of[m] for m in members]] = 0.0
    if not piece.b_out.any():
        return [replace(piece, w_in=w_in)]
    return [replace(piece, w_in=w_in, b_out=np.zeros(layout.d_model)),
            _constant_mlp([dim_of[m] for m in members], piece.b_out, layout)]


def _affine_mlp(line: tuple[float, float], op: GatedMap, layout: Layout) -> MLP:
    """relu(a x + b - lo), plus the constant lo: f(x, g) = a x + b over x's values."""
    a, b = line
    low = min(a * op.input.values[0] + b, a * op.input.values[-1] + b)
    out = layout.vector({op.out.label: 1.0})
    if a == 0:
        return MLP(w_in=np.zeros((layout.d_model, 0)), b_in=np.zeros(0), w_out=np.zeros((0, layout.d_model)), b_out=low * out)
    w_in = np.zeros((layout.d_model, 1))
    w_in[layout.dims(op.input)[0], 0] = a
    return MLP(w_in=w_in, b_in=np.array([b - low]), w_out=out[None, :], b_out=low * out)


def _constant_mlp(gate_dims: list[int], constant: np.ndarray, layout: Layout) -> MLP:
    """One unit relu(sum of the class's gate coordinates) writing `constant`: 1 exactly when the
    gate holds one of the class's values."""
    w_in = np.zeros((layout.d_model, 1))
    w_in[gate_dims, 0] = 1.0
    return MLP(w_in=w_in, b_in=np.zeros(1), w_out=constant[None, :], b_out=np.zeros(layout.d_model))
