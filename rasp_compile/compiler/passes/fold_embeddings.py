"""fold-embeddings: maps of tokens, of indices (and of a causal length), and sequence_maps of two
variables the position decides, become embedding rows: a table lookup of the token or the
position is free in an embedding.

Needs: the variables written so far (lowering/state.py); runs as a `map` and a `sequence_map`
rewrite of the lowering. For a map it comes before fold-linear (an embedded map needs no fold);
for a sequence_map after it (a linear one keeps every value of its value set).
Guarantees: the variable is an `Embed` of the same source, exact at every position; a
sequence_map's values shrink to those the positions reach.
"""

from __future__ import annotations

from typing import Callable

from ..lowering.positions import values_by_position
from ..lowering.state import LoweringState
from ..ops import Embed
from ...element_fn import composed
from ..variables import Var, empty_of, sort_key


def map_of_embedding(state: LoweringState, out: Var, fn: Callable, inner: Var) -> Embed | None:
    """`out = fn(inner)` as an embedding when an embedding writes `inner`."""
    source = state.writer[inner]
    if not isinstance(source, Embed):
        return None
    return Embed(out, source.source, composed(fn, source.fn, empty_of(out)))


def sequence_map_of_positions(state: LoweringState, out: Var, fn: Callable, first: Var, second: Var) -> Embed | None:
    """`out = fn(first, second)` as a position embedding row each, when both are decided by the
    position (indices, a causal length): not every pair of values meets, so `out` keeps only
    the values reached."""
    at = [values_by_position(state, x) for x in (first, second)]
    if None in at:
        return None
    by_position = {p: fn(a, b) for p, (a, b) in enumerate(zip(*at))}
    reached = tuple(sorted(set(by_position.values()), key=sort_key))
    return Embed(Var(out.label, out.encoding, reached, loc=out.loc), "indices", by_position.__getitem__)
