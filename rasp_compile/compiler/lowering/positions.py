"""Variables the position alone decides: indices, a causal program's length, maps of them.

Their values at each position are known at compile time, so the lowering can embed features
of the position (position_feature) and tables over them need only the combinations the
positions give (possible_pairs).
"""

from __future__ import annotations

from typing import Any
from collections.abc import Callable

from ... import ir
from ..ops import Embed, EmbedSource
from ..variables import Var
from .state import LoweringState


def position_source(state: LoweringState, var: Var) -> tuple[EmbedSource, Callable[[int], Any]] | None:
    """(source, raw -> value) when `var` is embedded from the position alone: indices, or
    length in a causal program, or maps of them; None otherwise."""
    writer = state.writer.get(var)
    if isinstance(writer, Embed) and writer.source in (EmbedSource.INDICES, EmbedSource.LENGTH):
        return writer.source, writer.fn
    return None


def values_by_position(state: LoweringState, var: Var) -> list[Any] | None:
    """var's value at each position 0..max_len-1, if the position alone decides it."""
    source = position_source(state, var)
    if source is None:
        return None
    first = 0 if source[0] is EmbedSource.INDICES else 1
    return [source[1](p + first) for p in range(state.program.max_len)]


def position_feature(state: LoweringState, label: str, source: EmbedSource, fn: Callable[[int], Any]) -> Var:
    """A numerical variable the position embedding holds: fn(raw position value)."""
    raw = range(state.program.max_len) if source is EmbedSource.INDICES else range(1, state.program.max_len + 1)
    table = tuple(fn(p) for p in raw)

    def make() -> Embed:
        var = state.new_var(label, ir.NUMERICAL, table)
        return Embed(var, source, dict(zip(raw, table)).__getitem__)

    return state.cached("position feature", (source, table), make)


def possible_pairs(state: LoweringState, first: Var, second: Var) -> frozenset[tuple[Any, Any]] | None:
    """The (first, second) value pairs that can meet at one position, when the positions
    decide it: two position-only variables meet only as position p gives them, and a
    position-only variable meets the length n only at positions p < n. None: any pair."""
    n = state.program.max_len
    first_at, second_at = values_by_position(state, first), values_by_position(state, second)
    if first_at is not None and second_at is not None:
        return frozenset(zip(first_at, second_at))
    for at, other, swap in ((first_at, second, False), (second_at, first, True)):
        if at is not None and _is_length(state, other):
            pairs = {(at[p], length) for length in range(1, n + 1) for p in range(length)}
            return frozenset((b, a) for a, b in pairs) if swap else frozenset(pairs)
    return None


def _is_length(state: LoweringState, var: Var) -> bool:
    """Whether `var` is a non-causal program's length (lower.py: the width of select-all)."""
    return not state.program.causal and any(isinstance(node, ir.Length) and v is var for node, v in state.vars.items())
