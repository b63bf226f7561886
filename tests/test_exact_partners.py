"""numeric_mlp.exact_partners claims that a step's two units, both firing, differ by exactly 1 in
float arithmetic; error_bounds then charges that step no hidden rounding. Each claim is tested here
by computing the two units in float32 as the forward pass does (x w, then + b, each rounded once)
at inputs spread over each value's error interval."""

from __future__ import annotations

import random

import numpy as np
import pytest

from rasp_compile.compiler.primitives.numeric_mlp import exact_below, exact_partners


def running_means(n: int) -> tuple:
    """Every mean of up to n values of +1 / -1: dyck1's balance at max_len n."""
    return tuple(sorted({(2 * k - m) / m for m in range(1, n + 1) for k in range(m + 1)}))


def units(points: tuple, x: np.ndarray, threshold: float, half_width: float) -> np.ndarray:
    """fl(p + b1) - fl(p + b2) for p = fl(x w), in float32, where both units fire (else NaN)."""
    side = 1.0 if exact_below(points, threshold) else -1.0
    w = np.float32(side / half_width)
    b1, b2 = (np.float32(-side * threshold / half_width + offset) for offset in (0.5, -0.5))
    p = x.astype(np.float32) * w
    v1, v2 = p + b1, p + b2
    return np.where(v2 > 0, v1.astype(float) - v2.astype(float), np.nan)


@pytest.mark.parametrize("points", [running_means(64), running_means(300),
                                    tuple(sorted({rng.randint(-3000, 3000) / 16 for rng in [random.Random(5)] for _ in range(400)}))],
                         ids=["means of 64", "means of 300", "sixteenths"])
def test_every_claimed_pair_differs_by_exactly_one_in_float32(points: tuple):
    x = np.asarray(points)
    error = 1e-5 * max(1.0, float(np.abs(x).max()))
    steps = range(0, len(points) - 1, max(1, len(points) // 40))
    low, high = x[list(steps)], x[[i + 1 for i in steps]]
    threshold, half_width = (low + high) / 2, (high - low) / 2
    claimed = exact_partners(points, threshold, half_width, error, np.float32)  # [value, step]
    assert claimed.mean() > 0.3  # most firing pairs (about half of all) are claimed: the test is not empty
    for offset in np.linspace(-error, error, 9):
        for j, (t, d) in enumerate(zip(threshold, half_width)):
            differences = units(points, x + offset, t, d)[claimed[:, j]]
            firing = differences[~np.isnan(differences)]
            assert np.all(firing == 1.0), (t, d, offset)
