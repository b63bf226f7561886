"""Values that meet at one position: a running mean in a causal program and the length.

In a causal program a numerical mean over a select with the predicate `true` (and keys and
queries that are never none) averages exactly the keys 0..i at position i: i + 1 of them, which
is the length there (and the index plus one). So `sequence_map(f, mean, length)` meets each
length n only with the means of exactly n values: about max_len² / 2 pairs for a running mean
of +1 / -1, where its value set times the lengths is max_len³ / 3 (docs/language.md, "Value
sets"). `balance * length` then takes the whole numbers -n..n, not every mean times every n.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import TypeGuard
from collections.abc import Callable

from .. import ir
from .means import means_by_count


def counted_by_position(node: ir.SOp, program: ir.Program, nullable: set[ir.SOp]) -> TypeGuard[ir.Aggregate]:
    """Whether `node` is a numerical mean that averages exactly i + 1 keys at position i."""
    if not (program.causal and isinstance(node, ir.Aggregate) and node.encoding == ir.NUMERICAL):
        return False
    selector = node.selector
    return (isinstance(selector, ir.Select) and selector.predicate == "true"
            and selector.keys not in nullable and selector.queries not in nullable)


def position_offset(node: ir.SOp) -> int | None:
    """count - value for a position-decided count: 0 for `length`, 1 for `indices`; else None."""
    if isinstance(node, ir.Length):
        return 0
    if isinstance(node, ir.Indices):
        return 1
    return None


def meeting_means(mean: ir.SOp, position: ir.SOp, sets: dict, program: ir.Program, nullable: set) -> dict | None:
    """{value of `position` (length or indices): the sorted means of `mean` that meet it}, when
    `mean` is counted by the position (counted_by_position) and `position` is `length` or
    `indices` in a causal program; None otherwise."""
    offset = position_offset(position)
    if offset is None or not counted_by_position(mean, program, nullable):
        return None
    counts = means_by_count(sets[mean.sop], program.max_len, mean)
    return {count - offset: means.tolist() for count, means in enumerate(counts, start=1)}


def meeting_only(node: ir.SequenceMap, sets: dict, program: ir.Program, nullable: set) -> Callable | None:
    """`node.fn` for a compiler that asks about every pair: on the pairs that meet it is
    node.fn itself. A pair that never meets is free: it gets node.fn's own answer when
    `_writable` (one of the s-op's values or, for a numerical s-op, a number within their range:
    so a function of one form for every length, `f * n > n - f * n` or `f + n`, keeps it), else
    fn at the nearest mean that meets its position value (the lower one on a tie), which is one
    of the s-op's values. A categorical s-op's one-hot has a coordinate for its values only, so
    every answer is one of them; a lambda failing on a pair the program never forms is no error.
    None when every pair may meet."""
    oriented = _oriented_meeting(node, sets, program, nullable)
    if oriented is None:
        return None
    return _filled(node.fn, *oriented, _writable(sets[node], node.encoding))


def meets(node: ir.SequenceMap, sets: dict, program: ir.Program, nullable: set) -> Callable[[object, object], bool] | None:
    """Whether a (first, second) value pair of `node` can meet at one position, when one input is
    a mean counted by the position and the other the length or the index; None when every pair may."""
    oriented = _oriented_meeting(node, sets, program, nullable)
    if oriented is None:
        return None
    meeting, mean_first = oriented
    by_position = {position: frozenset(means) for position, means in meeting.items()}
    if mean_first:
        return lambda first, second: first in by_position.get(second, ())
    return lambda first, second: second in by_position.get(first, ())


def meeting_pairs(node: ir.SequenceMap, sets: dict, program: ir.Program, nullable: set) -> list[tuple] | None:
    """The (first, second) value pairs of `node` that can meet at one position, in a fixed order
    (position value, then mean), when one input is a mean counted by the position and the other
    the length or the index; None when every pair may meet."""
    oriented = _oriented_meeting(node, sets, program, nullable)
    if oriented is None:
        return None
    meeting, mean_first = oriented
    if mean_first:
        return [(m, p) for p, means in meeting.items() for m in means]
    return [(p, m) for p, means in meeting.items() for m in means]


def _writable(values: frozenset, encoding: str) -> Callable[[object], bool]:
    """Whether an answer given where the program never looks can be written for an s-op of
    `values` in `encoding`: a categorical s-op only writes its values (one coordinate each); a
    numerical one of numbers any number within their range (one coordinate, magnitudes as its
    values bound them)."""
    numbers = encoding == ir.NUMERICAL and bool(values) and all(type(v) in (int, float) for v in values)
    low, high = (min(values), max(values)) if numbers else (None, None)

    def check(answer) -> bool:
        if numbers and type(answer) in (int, float):
            return low <= answer <= high
        return answer in values

    return check


def _oriented_meeting(node: ir.SequenceMap, sets: dict, program: ir.Program, nullable: set) -> tuple[dict, bool] | None:
    """(meeting_means of node's mean and position, whether the mean is node's first input), or None."""
    for mean, position, mean_first in ((node.first, node.second, True), (node.second, node.first, False)):
        meeting = meeting_means(mean, position, sets, program, nullable)
        if meeting is not None:
            return meeting, mean_first
    return None


def _filled(fn: Callable, meeting: dict, mean_first: bool, writable_answer: Callable[[object], bool]) -> Callable:
    def call(first, second):
        try:
            answer = fn(first, second)
            if writable_answer(answer):
                return answer
        except Exception:  # noqa: BLE001 (any failure of user code on a pair that never meets is no error)
            pass
        mean, position = (first, second) if mean_first else (second, first)
        means = meeting[position]
        at = bisect_left(means, mean)
        if at == len(means) or (means[at] != mean and at > 0 and mean - means[at - 1] <= means[at] - mean):
            at -= 1
        return fn(means[at], position) if mean_first else fn(position, means[at])

    return call
