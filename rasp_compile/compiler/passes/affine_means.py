"""affine-means: an affine map of a numerical mean is the mean of the mapped values.

    mean(x) * a + b  ==  mean(x * a + b),  default * a + b where nothing is selected

Folded linearly (passes/fold_linear.py), `mean(x) - 100000` of values 100000 and 100001 is the
mean of numbers near 10^5, rounded by float32 to 1/128, and only then the 10^5 taken away:
0.671875 for 2/3. Averaging x - 100000 instead never lets the constant into a float sum.

x' = a x + b is written fresh where x is: an embedding, a table or a step MLP of x's own inputs
with the mapped values computed here (exact rationals, rounded once), or
else a Linear op over what x reads (lowering/linear.py), its constants added in float64 at
assembly. The map's variable is then written by a head like the mean's (same selector and
score) reading x'.

Taken only where it pays: where what the mean's float sum adds up shrinks at least MIN_GAIN-fold,
from a times the magnitude x carries to the magnitude x' carries (precision.carried_magnitudes;
the default is left out of both: a head hands it out alone, where nothing is selected, or times
its leak, never in a sum of selected values). The folded map costs nothing (the mean's head writes
it), while the rewrite costs x' (nothing when x has no other reader, an embedding dimension, a
second table or step MLP otherwise) and, when the mean keeps another reader, one more head in
the same attention layer, never another layer: where it pays it makes a wrong number right, and
exactness comes first.

Taken only where it means the same: the mean of x' takes the values the map takes, one for
one and each within LINEAR_TOLERANCE (the interpreter maps the mean's float, so
the two agree to float64's rounding of the large mean, not bit for bit); where float64 merged two
means of x that the mapped values keep apart, or the reverse, the map is left as it is.

Needs: the variables written so far; runs as a `MapSite` rewrite (before fold-linear) and a
`SequenceMapSite` rewrite of a mean and a one-valued s-op (before fold-linear).
Guarantees: the map's variable, with its values, written by a numerical Attend of x', or no
rewrite (and no label taken).
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction
from typing import Any
from collections.abc import Callable, Iterable

from ... import ir
from ...errors import RaspValueError
from ...frontend.infer import most_selected
from ...frontend.means import possible_means
from ..lowering.linear import linear_form, substituted
from ..lowering.rewrites import MapSite, SequenceMapSite
from ..lowering.state import LoweringState
from ..ops import Attend, Embed, HeadKind, Linear, NumericMLP, Op, TableMLP, fresh_label, op_inputs
from ..error_bounds import carried_magnitudes
from ..tolerances import LINEAR_TOLERANCE
from ..variables import Var, sorted_values

MIN_GAIN = 16.0
"""How many times smaller x' must carry than a times what x carries for the rewrite to be taken:
4 bits of float32's 24. Less than that is within the room the rounding checks (ROUNDINGS) and a
numerical answer's relative tolerance leave, and not worth a second table or head."""


def affine_mean(state: LoweringState, site: MapSite) -> Attend | None:
    """`out = fn(inner)` as the mean of fn applied to what `inner` averages, when `inner` is a
    numerical mean, fn is affine on its values and the rewrite pays and means the same."""
    return _affine_mean(state, site.out, site.fn, site.inner)


def affine_sequence_mean(state: LoweringState, site: SequenceMapSite) -> Attend | None:
    """`out = fn(first, second)` when one of them holds one value (never none): a map of the
    other, rewritten by affine_mean."""
    out, fn, first, second = site.out, site.fn, site.first, site.second
    if len(second.values) == 1 and not second.may_be_none:
        return _affine_mean(state, out, lambda v: fn(v, second.values[0]), first)
    if len(first.values) == 1 and not first.may_be_none:
        return _affine_mean(state, out, lambda v: fn(first.values[0], v), second)
    return None


def _affine_mean(state: LoweringState, out: Var, fn: Callable[[Any], Any], inner: Var) -> Attend | None:
    mean = state.writer.get(inner)
    if out.encoding != ir.NUMERICAL or not (
        isinstance(mean, Attend) and mean.kind is HeadKind.NUMERICAL and mean.value is not None  # a numerical head's value is set
    ):
        return None
    line = _line(fn, inner, mean.value)
    if line is None:
        return None
    label = fresh_label(f"{mean.value.label}.affine", state.labels)
    mapped = _mapped_op(state, mean.value, line, label)
    if _carried(state, [mapped], mapped.out) * MIN_GAIN > abs(line[0]) * _carried(state, [], mean.value):
        return None  # checked first: two calls of fn, where the checks below call it on every value
    node = next((node for node, var in state.vars.items() if var is inner), None)
    if not isinstance(node, ir.Aggregate):  # a mean the lowering made (position-widths' length)
        return None
    if linear_form(out, fn, (inner,), state.writer.get) is None or not _same_values(state, node, line, out):
        return None
    state.labels.add(label)
    state.emit(mapped)
    return Attend(out, mean.score, HeadKind.NUMERICAL, mapped.out, _apply(line, mean.default), selector=mean.selector)


def _line(fn: Callable[[Any], Any], inner: Var, x: Var) -> tuple[Fraction, Fraction] | None:
    """(a, b), exact rationals, of the line through fn at two of inner's values: x's least and
    greatest (a mean of one key, where the program's own numbers usually make fn exact), else
    inner's; None when a is 0 or fn gives no finite number. (Whether fn follows the line on
    every value is linear_form's check.)"""
    ends = [v for v in (x.values[0], x.values[-1]) if v in inner.position]
    p0, p1 = ends if len(ends) == 2 and ends[0] != ends[1] else (inner.values[0], inner.values[-1])
    if p0 == p1:
        return None
    try:
        y0, y1 = (Fraction(float(fn(p))) for p in (p0, p1))
    except (TypeError, ValueError, ZeroDivisionError, OverflowError):  # not a finite number
        return None
    a = (y1 - y0) / (Fraction(p1) - Fraction(p0))
    return (a, y0 - a * Fraction(p0)) if a != 0 else None


def _apply(line: tuple[Fraction, Fraction], value: Any) -> float:
    """a * value + b, computed exactly and rounded once."""
    a, b = line
    return float(a * Fraction(value) + b)


def _same_values(state: LoweringState, node: ir.Aggregate, line: tuple[Fraction, Fraction], out: Var) -> bool:
    """Whether the mean of the mapped values takes the map's values, one for one, each within
    LINEAR_TOLERANCE (relative to max(1, |value|)) of its own; values that close on one side
    count as one (the same number reached by two roundings)."""
    default = 0 if node.default is None else node.default
    values = frozenset(_apply(line, v) for v in state.value_sets[node.sop])
    wanted = _distinct(out.values)
    means = _distinct(_means(values, state.program.max_len, node) | {_apply(line, default)})
    if len(means) != len(wanted):  # a mean over fewer keys: the exact count (infer's, slower)
        count = most_selected(node.selector, state.value_sets, state.program.max_len)
        means = _distinct(_means(values, count, node) | {_apply(line, default)})
    return len(means) == len(wanted) and all(_close(m, v) for m, v in zip(means, wanted))


def _distinct(values: Iterable[Any]) -> list[float]:
    """`values` sorted, each run of values within LINEAR_TOLERANCE of the run's first as that one."""
    kept: list[float] = []
    for value in sorted(float(v) for v in values):
        if not kept or not _close(value, kept[-1]):
            kept.append(value)
    return kept


def _close(value: float, other: float) -> bool:
    return abs(value - other) <= LINEAR_TOLERANCE * max(1.0, abs(other))


def _means(values: frozenset[float], count: int, node: ir.Aggregate) -> set[float]:
    """possible_means of `values` over up to `count` keys; empty past the most a mean may take."""
    try:
        return possible_means(values, count, node)
    except RaspValueError:
        return set()


def _mapped_op(state: LoweringState, x: Var, line: tuple[Fraction, Fraction], label: str) -> Op:
    """The op writing x' = a x + b into a new variable labelled `label`: x's own embedding,
    table or step MLP with the mapped values, or a Linear op over what x's writer reads."""
    values = sorted_values({_apply(line, v) for v in x.values})
    mapped = Var(label, ir.NUMERICAL, tuple(values), loc=x.loc)
    writer = state.writer[x]
    if isinstance(writer, Embed | NumericMLP) or (
        isinstance(writer, TableMLP) and (writer.covers_none or line[1] == 0 or not any(v.may_be_none for v in writer.inputs))
    ):  # a table gives 0 for none, where x' must be b
        return dataclasses.replace(writer, out=mapped, fn=_composed(line, writer.fn))
    a, b = line
    return substituted(Linear(mapped, {(x, None): {label: float(a)}}, {label: float(b)}), state.writer.get)


def _composed(line: tuple[Fraction, Fraction], fn: Callable[..., Any]) -> Callable[..., Any]:
    """a * fn(...) + b, exactly, snapped."""
    return lambda *args: _apply(line, fn(*args))


def _carried(state: LoweringState, new_ops: list[Op], var: Var) -> float:
    """precision.carried_magnitudes of `var`, written so far or by the last of `new_ops`, from
    the ops it depends on."""
    needed, pending = set(), [var, *(v for op in new_ops for v in op_inputs(op))]
    while pending:
        writer = state.writer.get(pending.pop())
        if writer is not None and writer not in needed:
            needed.add(writer)
            pending.extend(op_inputs(writer))
    return carried_magnitudes([op for op in state.ops if op in needed] + new_ops)[var]
