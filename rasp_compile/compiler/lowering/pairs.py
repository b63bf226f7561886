"""pairs: which value pairs the constructions of a two-input sequence_map ask its function about.

A table, a gated map's steps and fold-linear's check ask f about every pair of the two inputs'
values: |first| x |second| calls of the user's lambda, each some tens of microseconds. The value
inference refuses a sequence_map whose product passes MAX_COMBINATIONS before trying it, except
where a running mean meets its count (frontend/cooccurrence.py), where it tries only the pairs
that meet, about max_len² / 2 of them. The compiler must then not ask about the whole product
either: `meeting_pairs_of` gives the pairs that meet, for the constructions that need no others,
and `check_pair_limit` refuses, before the first call, a construction that needs every pair of a
product larger than MAX_COMBINATIONS (a categorical `round(b * n)` at max_len 512: 40 million
calls and gigabytes before).
"""

from __future__ import annotations

from typing import Any

from ... import ir
from ...errors import RaspValueError
from ...frontend.cooccurrence import meeting_means
from ...frontend.infer import MAX_COMBINATIONS
from ...frontend.lambda_calls import describe
from ..variables import Var
from .state import LoweringState


def meeting(state: LoweringState, x: Var, gate: Var) -> dict[Any, Any] | None:
    """{gate value: the values of x that meet it} when x is a running mean and the gate the
    length or index that counts it (frontend/cooccurrence.py); None when every pair may meet."""
    node_of = {var: node for node, var in state.vars.items()}
    if x not in node_of or gate not in node_of:
        return None
    return meeting_means(node_of[x], node_of[gate], state.value_sets, state.program, state.nullable)


def meeting_pairs_of(state: LoweringState, first: Var, second: Var) -> list[tuple[Any, Any]] | None:
    """The (first, second) value pairs that can meet at one position when one is a running mean
    and the other its count (`meeting`); None when every pair may meet."""
    met = meeting(state, first, second)
    if met is not None:
        return [(x, g) for g, xs in met.items() for x in xs]
    met = meeting(state, second, first)
    if met is not None:
        return [(g, x) for g, xs in met.items() for x in xs]
    return None


def within_pair_limit(first: Var, second: Var) -> bool:
    """Whether asking about every pair of the two variables' values stays within MAX_COMBINATIONS."""
    return len(first.values) * len(second.values) <= MAX_COMBINATIONS


def check_pair_limit(where: ir.SOp, first: Var, second: Var) -> None:
    """RaspValueError at `where` (the sequence_map) when a construction asking about every pair
    of `first`'s and `second`'s values would pass MAX_COMBINATIONS; raised before any call."""
    if within_pair_limit(first, second):
        return
    raise RaspValueError(
        f"{describe(where)} would be built from its function at every pair of its inputs' "
        f"{len(first.values):,} x {len(second.values):,} values (more than {MAX_COMBINATIONS:,}); "
        "a numerical result that is a line in a running mean for each length (or index) is built "
        "from the pairs that meet alone (e.g. `numerical(sequence_map(lambda b, n: b * n, ...))`, "
        "rounded by a map after it); else map the inputs to fewer values first, or use a smaller max_len",
        where.loc,
    )
