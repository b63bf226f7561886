"""fold-embeddings: maps of tokens, of indices (and of a causal length), and sequence_maps of two
variables the position decides, become embedding rows: a table lookup of the token or the
position is free in an embedding.

Needs: the variables written so far (lowering/state.py); runs as a rewrite of the lowering's
`MapSite`s and `SequenceMapSite`s. For a map it comes before fold-linear (an embedded map needs no fold);
for a sequence_map after it (a linear one keeps every value of its value set).
Guarantees: the variable is an `Embed` of the same source, exact at every position; a
sequence_map's values shrink to those the positions reach.
"""

from __future__ import annotations

from ..lowering.positions import values_by_position
from ..lowering.rewrites import MapSite, SequenceMapSite
from ..lowering.state import LoweringState
from ..ops import Embed, EmbedSource
from ...element_fn import composed
from ..variables import Var, empty_of, sort_key


def map_of_embedding(state: LoweringState, site: MapSite) -> Embed | None:
    """`out = fn(inner)` as an embedding when an embedding writes `inner`."""
    source = state.writer[site.inner]
    if not isinstance(source, Embed):
        return None
    return Embed(site.out, source.source, composed(site.fn, source.fn, empty_of(site.out)))


def sequence_map_of_positions(state: LoweringState, site: SequenceMapSite) -> Embed | None:
    """`out = fn(first, second)` as a position embedding row each, when both are decided by the
    position (indices, a causal length): not every pair of values meets, so `out` keeps only
    the values reached."""
    at = [values_by_position(state, x) for x in (site.first, site.second)]
    if None in at:
        return None
    by_position = {p: site.fn(a, b) for p, (a, b) in enumerate(zip(*at))}
    reached = tuple(sorted(set(by_position.values()), key=sort_key))
    out = site.out
    return Embed(Var(out.label, out.encoding, reached, loc=out.loc), EmbedSource.INDICES, by_position.__getitem__)
