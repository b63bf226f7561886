"""linear: s-ops that are linear in their inputs' residual coordinates cost no layer.

One-hot coordinates make many maps linear. A categorical map of a categorical s-op only moves
one-hot dimensions (out[f(v)] += x[v]); a numerical map of a categorical s-op is sum_v f(v) x[v];
a numerical map of a numerical s-op may be a*x + c. A sequence_map is linear when its table
separates, enc f(u, w) = enc f(u, w0) + enc f(u0, w) - enc f(u0, w0), and each part is linear
in its own input. Every op's output is itself linear in what the op computes (hidden units,
attention values, embedding rows), so the ops that write the inputs can write such an s-op too,
in their own sub-layers: assemble.py adds the columns. This folds chains of maps into the MLP
or head before them, and linear combinations of numerical s-ops into their writers.

None: a single categorical input that is none (all zeros) gives all zeros, which is none (or 0,
numerical): the language's rule. With several inputs the constant part of a separable table would leak
through a none input, so a sequence_map over an input that may be none is never folded.
"""

from __future__ import annotations

from itertools import product
from typing import Any
from collections.abc import Callable

import numpy as np

from ... import ir
from ...frontend.lambda_arrays import table_array
from ..ops import Linear, Op
from ..tolerances import LINEAR_TOLERANCE
from ..variables import Var, coordinate


Vector = dict[str, float]  # output dimension label -> coefficient
Parts = list[dict[Any, Vector]]  # per input: its value -> its part of the output (`_part`)
Fn = Callable[..., Any]  # the s-op's function: a value of each input -> the output's value


def _add(into: Vector, vector: Vector, scale: float = 1.0) -> None:
    for label, value in vector.items():
        into[label] = into.get(label, 0.0) + scale * value


def _difference(a: Vector, b: Vector) -> Vector:
    out = dict(a)
    _add(out, b, -1.0)
    return out


def _close(a: Vector, b: Vector) -> bool:
    return all(abs(a.get(k, 0.0) - b.get(k, 0.0)) <= LINEAR_TOLERANCE * max(1.0, abs(a.get(k, 0.0))) for k in a.keys() | b.keys())


def linear_form(out: Var, fn: Fn, inputs: tuple[Var, ...], writer_of: Callable[[Var], Op | None],
                possible: list[tuple[Any, ...]] | None = None) -> Linear | None:
    """`out = fn(*inputs)` as a Linear op over non-Linear variables, or None if it is not linear
    on every combination of the inputs' values (on those of `possible` only, when given: the
    combinations that can occur)."""
    try:
        return _linear_form(out, fn, inputs, writer_of, possible)
    except (TypeError, ValueError, ZeroDivisionError):
        return None  # values that do not behave as numbers: not linear


def _linear_form(out: Var, fn: Fn, inputs: tuple[Var, ...], writer_of: Callable[[Var], Op | None],
                 possible: list[tuple[Any, ...]] | None) -> Linear | None:
    if len(inputs) == 1 and inputs[0].encoding == ir.CATEGORICAL:
        one_hot = {(inputs[0], v): out.encode(fn(v)) for v in inputs[0].values}
        return substituted(Linear(out, one_hot, {}), writer_of)
    if len(inputs) > 1 and any(x.may_be_none for x in inputs):
        return None
    base = tuple(x.values[0] for x in inputs)
    base_vector = out.encode(fn(*base))
    samples = tuple(tuple(dict.fromkeys((x.values[0], x.values[len(x.values) // 2], x.values[-1]))) for x in inputs)
    sampled = _separated(out, fn, inputs, base, base_vector, samples)  # most s-ops fail here, at a few calls
    numbers = [(x, part, values) for x, part, values in zip(inputs, sampled or (), samples) if x.encoding != ir.CATEGORICAL]
    if sampled is None or any(_slope(x, part, values) is None for x, part, values in numbers):
        return None
    parts = _separated(out, fn, inputs, base, base_vector, tuple(x.values for x in inputs), possible)
    if parts is None:
        return None
    weights: dict[tuple[Var, Any], Vector] = {}
    bias = dict(base_vector)
    for x, part in zip(inputs, parts):
        if x.encoding == ir.CATEGORICAL:
            for v in x.values:  # `+=`: both inputs may be one variable (x + x)
                _add(weights.setdefault((x, v), {}), part[v])
            continue
        slope = _slope(x, part, x.values)
        if slope is None:
            return None
        _add(weights.setdefault((x, None), {}), slope)
        _add(bias, slope, -float(x.values[0]))
    return substituted(Linear(out, weights, bias), writer_of)


def _separated(out: Var, fn: Fn, inputs: tuple[Var, ...], base: tuple[Any, ...], base_vector: Vector,
               domains: tuple[tuple[Any, ...], ...], possible: list[tuple[Any, ...]] | None = None) -> Parts | None:
    """The parts of each input (`_part`, over its values in `domains`) when enc f is their sum
    on every combination of `domains` (of `possible`, when given); else None."""
    table = _number_table(out, fn, domains) if possible is None else None
    if table is not None:
        return _separated_table(out, base_vector, domains, table)
    parts = [_part(out, fn, inputs, base, base_vector, i, domains[i]) for i in range(len(inputs))]
    for combination in product(*domains) if possible is None else possible:
        expected = dict(base_vector)
        for part, value in zip(parts, combination):
            _add(expected, part[value])
        if not _close(out.encode(fn(*combination)), expected):
            return None
    return parts


def _number_table(out: Var, fn: Fn, domains: tuple[tuple[Any, ...], ...]) -> np.ndarray | None:
    """enc f on every pair of two inputs' `domains` [len(domains[0]), len(domains[1])] float64,
    for a numerical `out` whose lambda the arrays compute (lambda_arrays.table_array: a running
    mean's hundreds of thousands of values against a few); else None."""
    if out.encoding != ir.NUMERICAL or len(domains) != 2 or not isinstance(fn, ir.Fn):
        return None
    table = table_array(fn, domains[0], domains[1])
    if table is None or table.dtype.kind not in "bif":  # strings: not numbers
        return None
    return table.astype(np.float64)  # float(value) of each bool, int (within 2^53) or float


def _separated_table(out: Var, base_vector: Vector, domains: tuple[tuple[Any, ...], ...],
                     table: np.ndarray) -> Parts | None:
    """`_separated` of two inputs, their every pair's enc f in `table` (`_number_table`): the
    same float operations, in the same order, on arrays."""
    base = base_vector[out.label]
    firsts, seconds = table[:, 0] + -1.0 * base, table[0, :] + -1.0 * base  # `_part`: enc f - enc f(base)
    expected = (base + firsts)[:, None] + seconds[None, :]
    if not np.all(np.abs(table - expected) <= LINEAR_TOLERANCE * np.maximum(1.0, np.abs(table))):  # `_close`
        return None
    return [{value: {out.label: part} for value, part in zip(domain, parts.tolist())}
            for domain, parts in zip(domains, (firsts, seconds))]


def _part(out: Var, fn: Fn, inputs: tuple[Var, ...], base: tuple[Any, ...], base_vector: Vector, i: int,
          values: tuple[Any, ...]) -> dict[Any, Vector]:
    """value of input i (among `values`) -> enc f(base with input i set to value) - enc f(base)."""
    part: dict[Any, Vector] = {}
    for value in values:
        args = base[:i] + (value,) + base[i + 1 :]
        part[value] = _difference(out.encode(fn(*args)), base_vector)
    return part


def _slope(x: Var, part: dict[Any, Vector], values: tuple[Any, ...]) -> Vector | None:
    """D with part[v] == (v - v0) D for every v of `values` (some of a numerical input's values,
    its first and last among them), else None."""
    if len(x.values) == 1:
        return {}
    x0, x1 = float(x.values[0]), float(x.values[-1])
    slope = {k: v / (x1 - x0) for k, v in part[x.values[-1]].items()}
    for value in values:
        if not _close(part[value], {k: (float(value) - x0) * v for k, v in slope.items()}):
            return None
    return slope


def substituted(op: Linear, writer_of: Callable[[Var], Op | None]) -> Linear:
    """The same op with every Linear input replaced by that input's own linear form."""
    weights: dict[tuple[Var, Any], Vector] = {}
    bias = dict(op.bias)
    for (var, value), vector in op.weights.items():
        inner = writer_of(var)
        if not isinstance(inner, Linear):
            _add(weights.setdefault((var, value), {}), vector)
            continue
        label = coordinate(var, value)
        for key, inner_vector in inner.weights.items():
            if label in inner_vector:
                _add(weights.setdefault(key, {}), vector, inner_vector[label])
        _add(bias, vector, inner.bias.get(label, 0.0))
    return Linear(op.out, weights, bias)
