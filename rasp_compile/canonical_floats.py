"""Canonical floats: one float per simple fraction, whichever way a lambda computed it
(`ir.Fn` snaps every result, the inference every mean)."""

from __future__ import annotations

import math


SNAP_DENOMINATOR = 10**6
SNAP_TOLERANCE = 1e-12


def canonical(value):
    """A float within 1e-12 (relative) of a fraction p/q with q <= 10**6 becomes that fraction's
    float; every other value stays as it is.

    Float arithmetic makes one number many (`0.1 + 0.2`, a mean of means reached two ways):
    snapping every computed float to the simple fraction it stands for keeps one value per
    number, in the interpreter and in value sets alike. Two such fractions are at least 1e-12
    apart, so the snap is unambiguous.
    """
    if isinstance(value, float) and math.isfinite(value):
        numerator, denominator = value.as_integer_ratio()
        if denominator <= SNAP_DENOMINATOR:
            return numerator / denominator  # itself (-0.0 becomes 0.0)
        p, q = _closest_fraction(numerator, denominator, SNAP_DENOMINATOR)
        tolerance, scale = (SNAP_TOLERANCE * max(1.0, abs(value))).as_integer_ratio()
        if abs(p * denominator - numerator * q) * scale <= tolerance * q * denominator:
            return p / q
    return value


def _closest_fraction(numerator: int, denominator: int, largest: int) -> tuple[int, int]:
    """(p, q): the fraction closest to numerator / denominator with q <= largest, the smaller q
    on a tie: Fraction.limit_denominator's continued-fraction search, in integers (canonical runs
    on every float a lambda returns, and Fraction objects made it the compiler's slowest step)."""
    p0, q0, p1, q1 = 0, 1, 1, 0
    n, d = numerator, denominator
    while True:
        a = n // d
        q2 = q0 + a * q1
        if q2 > largest:
            break
        p0, q0, p1, q1 = p1, q1, p0 + a * p1, q2
        n, d = d, n - a * d
    k = (largest - q0) // q1
    p2, q2 = p0 + k * p1, q0 + k * q1
    if abs(p1 * denominator - numerator * q1) * q2 <= abs(p2 * denominator - numerator * q2) * q1:
        return p1, q1
    return p2, q2
