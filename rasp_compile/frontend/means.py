"""The value set of a numerical mean: every mean of 1..m values drawn from a finite set.

A running mean of +1 / -1 over up to 4,096 positions takes about 5.1 million values, so they are
formed as arrays: every value is an integer number of 1/scale (scale: the common denominator),
sums of one count are integers (numpy int64), and a mean is sum / (count * scale), divided once:
the float nearest the exact rational, as the interpreter computes it (docs/language.md, "Means").
"""

from __future__ import annotations

from fractions import Fraction
from math import lcm

import numpy as np

from .. import ir
from ..errors import RaspValueError
from .lambda_calls import describe

MAX_MEANS = 6_000_000
"""The most values a numerical mean may take: a bound on memory. A mean is one residual coordinate
whatever its values, but the compiler holds them as Python floats (the value set, the residual
variable's sorted tuple) with NumPy copies while it measures their gaps, about 190 bytes per value
at a compile's peak: frac_prevs at max_len 4,096 (5,100,021 means) peaks at about 1 GB, and a mean
at the limit takes about 1.2 GB. What reads the mean holds its own values besides (a sequence_map
of the mean and the length, one result per pair that meets: about 2 million at 2,048)."""

MAX_SUM_PAIRS = 10_000_000
"""The most (sum, value) additions one count of a mean's dynamic programming may take."""

EXACT_FLOAT = 2**53
"""Integers below this in magnitude are exact float64s, and their quotient is the one correctly
rounded float that Python's int / int gives."""


def possible_means(values: frozenset, max_count: int, where: ir.SOp) -> set[float]:
    """Every mean of a multiset of 1..max_count elements drawn from `values`, as floats (each the
    float nearest the exact mean).

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
    `values` (repetition allowed), each the float nearest it, sorted and distinct (float64 array).

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
        yield _distinct(_ratios(sums, count * scale))


def _ratios(sums, denominator: int) -> np.ndarray:
    """s / denominator for every whole number s of `sums`, each the float nearest the exact
    quotient (one rounding), float64.

    Where both numbers are exact floats (below 2^53), NumPy's division is IEEE's, correctly
    rounded, so it gives what Python's int / int gives; beyond, Python divides them one by one.
    The interpreter divides its means by its own code (`tools.interpret.rules.exact_ratio`); tests
    check that each of its means is one of `possible_means`."""
    if isinstance(sums, np.ndarray) and denominator < EXACT_FLOAT and np.abs(sums).max() < EXACT_FLOAT:
        return sums / float(denominator)
    return np.array([int(s) / denominator for s in sums], dtype=float)


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
