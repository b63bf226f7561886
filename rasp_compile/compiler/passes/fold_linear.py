"""fold-linear: an s-op linear in its inputs' residual coordinates is written by its inputs'
writers, with no sub-layer of its own (lowering/linear.py finds the form, assemble.py adds the
columns).

A number read back from a categorical view of a number x (a step MLP's one-hot) is first tried
as a function of x itself: folded onto the view, the number would be one sum over all of its
steps, whose float32 roundings add up (3.0 off for `m * 1000 + 5`, m a mean of 20 indices),
while a line in x is exact to x's own rounding and needs no MLP. When it is not a line, it is
folded onto the view only while numeric_mlp's bound on that sum stays within FOLD_TOLERANCE of
its values; else a map becomes a step MLP of x itself (map_through_view), a sequence_map a table
over the view.

Needs: the variables written so far; runs as a `MapSite` rewrite (after fold-embeddings) and a
`SequenceMapSite` rewrite (first). Guarantees: a `Linear` over non-Linear variables, exact to
linear.TOLERANCE on every combination of the inputs' values, or no rewrite.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any
from collections.abc import Callable

from ... import ir
from ...element_fn import composed
from ..lowering.linear import linear_form
from ..lowering.pairs import meeting_pairs_of, within_pair_limit
from ..lowering.rewrites import MapSite, SequenceMapSite
from ..lowering.state import LoweringState
from ..lowering.views import viewed_number
from ..ops import Linear, NumericMLP
from ..error_bounds import largest_magnitude
from ..primitives.numeric_mlp import step_output_error
from ..tolerances import FOLD_TOLERANCE
from ..variables import Var, coordinate, empty_of


def linear_map(state: LoweringState, site: MapSite) -> Linear | NumericMLP | None:
    """`out = fn(inner)` folded (linear_op), or else, for a number read from a view of x, a step
    MLP of x itself (what linear_op refused to fold onto the view)."""
    out, fn, inner = site.out, site.fn, site.inner
    linear = linear_op(state, out, fn, (inner,))
    if linear is not None:
        return linear
    view = viewed_number(state, inner)
    if view is not None and out.encoding == ir.NUMERICAL:
        return NumericMLP(out, view.input, composed(fn, view.fn, empty_of(out)))
    return None


def linear_sequence_map(state: LoweringState, site: SequenceMapSite) -> Linear | None:
    """`out = fn(first, second)` folded, when it is linear: on the pairs that meet, for a running
    mean and its count (lowering/pairs.py); else on every pair, when there are not too many to ask."""
    possible = meeting_pairs_of(state, site.first, site.second)
    if possible is None and not within_pair_limit(site.first, site.second):
        return None
    return linear_op(state, site.out, site.fn, (site.first, site.second), possible)


def linear_op(state: LoweringState, out: Var, fn: Callable[..., Any], inputs: tuple[Var, ...],
              possible: list[tuple[Any, ...]] | None = None) -> Linear | None:
    """`out = fn(*inputs)` as a Linear op, reading through as many views as stay linear and
    within FOLD_TOLERANCE (module docstring); None when the map is not linear (on the input
    combinations of `possible`, when given, which reads through no view)."""
    views = [viewed_number(state, x) for x in inputs] if out.encoding == ir.NUMERICAL else []
    if not any(views) or possible is not None:
        return linear_form(out, fn, inputs, state.writer.get, possible)
    tolerance = FOLD_TOLERANCE * max(1.0, largest_magnitude(out.values))
    present = [view for view in views if view]
    for k in range(len(present), -1, -1):  # read through as many views as stay linear
        for through in combinations(present, k):
            chosen = [view if view in through else None for view in views]
            numbers = tuple(view.input if view else x for view, x in zip(chosen, inputs))
            if len(numbers) == 2 and not within_pair_limit(*numbers):
                continue  # too many pairs of the numbers behind the views to ask about
            form = linear_form(out, _compose_each(fn, [view.fn if view else None for view in chosen], empty_of(out)), numbers,
                               state.writer.get)
            if form is not None and _fold_error(form, [v for v in present if v not in through]) <= tolerance:
                return form
    return None


def _fold_error(folded: Linear, views: list[NumericMLP]) -> float:
    """numeric_mlp's bound on the float32 error of `folded`'s number written by the step MLPs
    of `views` (categorical views it reads): each view's steps, weighted by the number's change
    between neighbouring values of the view's input."""
    label = coordinate(folded.out, None)
    error = 0.0
    for view in views:
        points = view.input.values
        answers = [folded.weights.get((view.out, view.fn(p)), {}).get(label, 0.0) for p in points]
        error += step_output_error(points, answers)
    return error


def _compose_each(outer: Callable[..., Any], inners: list[Callable[[Any], Any] | None], empty: Any,
                  ) -> Callable[..., Any]:
    """outer(inner_1(a_1), inner_2(a_2), ...), an inner of None passing its argument as it is;
    `empty` where an inner gives none (element_fn.composed)."""

    def call(*args: Any) -> Any:
        middle = [inner(a) if inner else a for inner, a in zip(inners, args)]
        return empty if None in middle else outer(*middle)

    return call
