"""The value set of a numerical mean: every mean of 1..m values drawn from a finite set.

A running mean of +1 / -1 over up to 1,024 positions takes about 640,000 values, so they are
formed as arrays: every value is an integer number of 1/scale (scale: the common denominator),
sums of one count are integers (numpy int64), and a mean is sum / (count * scale), divided once
and snapped as `ir.canonical` snaps a float (docs/language.md, "Canonical floats").
"""

from __future__ import annotations

from fractions import Fraction
from math import gcd, lcm

import numpy as np

from .. import ir
from ..errors import RaspValueError
from .lambda_calls import describe

MAX_MEANS = 1_000_000
"""The most values a numerical mean may take: a mean is one residual coordinate whatever its values,
and a million of them are formed in about a second."""

MAX_SUM_PAIRS = 10_000_000
"""The most (sum, value) additions one count of a mean's dynamic programming may take."""

EXACT_FLOAT = 2**53
"""Integers below this in magnitude are exact float64s, and their quotient is the one correctly
rounded float that Python's int / int gives."""


def possible_means(values: frozenset, max_count: int, where: ir.SOp) -> set[float]:
    """Every mean of a multiset of 1..max_count elements drawn from `values`, canonical floats.

    Distinct sums of one count are distinct means, and adding |steps| values to |sums| sums gives
    at least |sums| + |steps| - 1 of them; so a mean bound to exceed MAX_MEANS is refused before
    the sums are formed, and so is one whose next count would take more than MAX_SUM_PAIRS
    additions (a mean of the running count of a mean took minutes at max_len 7 before this).
    """
    found: list[np.ndarray] = []
    pending = 0  # means in `found` not yet made distinct
    for means in means_by_count(values, max_count, where):
        found.append(means)
        pending += len(means)
        if pending > 2 * MAX_MEANS:  # bound the memory the repeated means take
            found, pending = [_distinct(np.concatenate(found))], 0
            if len(found[0]) > MAX_MEANS:
                raise too_many_means(where)
    if not found:
        return set()
    means = _distinct(np.concatenate(found))
    if len(means) > MAX_MEANS:
        raise too_many_means(where)
    return set(means.tolist())


def means_by_count(values: frozenset, max_count: int, where: ir.SOp):
    """For count = 1, 2, ..., max_count: every mean of exactly `count` elements drawn from
    `values` (repetition allowed), canonical floats, sorted and distinct (float64 array).

    Dynamic programming over achievable sums, count by count, exact: the sums of one count are
    the sums of the count before plus each value. RaspValueError (too_many_means) before a count
    whose sums would pass MAX_MEANS or take more than MAX_SUM_PAIRS additions."""
    if not values:
        return
    exact = [Fraction(v) for v in values]
    scale = lcm(*(f.denominator for f in exact))
    steps = sorted({int(f * scale) for f in exact})
    in_int64 = max(abs(steps[0]), abs(steps[-1])) * max_count < 2**62
    sums: list[int] | np.ndarray = [0]
    for count in range(1, max_count + 1):
        if len(sums) + len(steps) - 1 > MAX_MEANS or len(sums) * len(steps) > MAX_SUM_PAIRS:
            raise too_many_means(where)
        if in_int64:
            sums = _distinct(np.add.outer(np.asarray(sums, dtype=np.int64), np.array(steps, dtype=np.int64)))
        else:
            sums = sorted({s + v for s in sums for v in steps})
        yield _distinct(_canonical_ratios(sums, count * scale))


def _canonical_ratios(sums, denominator: int) -> np.ndarray:
    """`ir.canonical(s / denominator)` for every whole number s of `sums`, float64.

    Where both numbers are exact floats, numpy divides them as Python does (one correct
    rounding), and a ratio whose reduced denominator is at most SNAP_DENOMINATOR is already the
    float of a simple fraction, which `canonical` leaves as it is; the rest go through
    `canonical` one by one."""
    if isinstance(sums, np.ndarray) and denominator < EXACT_FLOAT and np.abs(sums).max() < EXACT_FLOAT:
        ratios = sums / float(denominator)
        reduced = denominator // np.gcd(sums, np.int64(denominator))
        for i in np.flatnonzero(reduced > ir.SNAP_DENOMINATOR):
            ratios[i] = ir.canonical(int(sums[i]) / denominator)
        return ratios
    return np.array([_canonical_ratio(int(s), denominator) for s in sums], dtype=float)


def _canonical_ratio(numerator: int, denominator: int) -> float:
    """`ir.canonical(numerator / denominator)`, without the search when the reduced
    denominator is already small. The interpreter snaps the means it computes by the same rule
    (`tools.interpret.rules`), in code of its own; tests check that each of its means is one of
    `possible_means`."""
    ratio = numerator / denominator
    if denominator // gcd(numerator, denominator) <= ir.SNAP_DENOMINATOR:
        return ratio
    return ir.canonical(ratio)


def _distinct(array: np.ndarray) -> np.ndarray:
    """The distinct entries of `array`, sorted: np.unique's answer without its import of
    numpy.ma, which costs a cold compile about 10 ms."""
    flat = np.sort(array, axis=None)
    return flat[np.concatenate(([True], flat[1:] != flat[:-1]))]


def too_many_means(where: ir.SOp) -> RaspValueError:
    return RaspValueError(
        f"{describe(where)}, a numerical mean, can take more than {MAX_MEANS:,} values; "
        "use values on a coarser grid or a smaller max_len",
        where.loc,
    )
