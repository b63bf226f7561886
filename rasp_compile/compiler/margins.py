"""margins: how sharp each softmax must be, from the gaps between the values it must separate.

Every head we build gives the keys it means to read a score at least `gap` above every other
key's. With at most n + 1 keys (BOS included), the weight left on the others is at most
(n + 1) * exp(-gap). Each primitive states the largest leak its output tolerates, and the
sharpness is the smallest that keeps the leak below it:

    gap >= ln((n + 1) / tolerated_leak)

Scores stay far below float32's exp overflow (~88) for any max_len this compiler accepts,
and the softmax subtracts the row maximum (the picoGPT form of docs/format.md), so only the gap matters.
"""

from __future__ import annotations

import math

CATEGORICAL_LEAK = 1e-6
"""A categorical aggregate's one-hot may deviate this much from 0/1: downstream tables treat
anything within 0.5 of a one-hot as that one-hot, so this keeps a 5e5-fold margin."""

STEP_WINDOW = 1 / 8
"""A numerical value read by a step MLP must land within this fraction of the gap between its
neighbouring values (the steps are flat within 1/4 of a gap: half of that for safety)."""

INTERPOLATED_SCORE_ERROR = 1 / 16
"""What an interpolated decode (numeric_mlp.interpolation_mlp) may move a categorical
aggregate's scores by, in units of S: its selected keys lead the rest by S and BOS by S/2."""


BOS_ISOLATION = 1e-15
"""The weight the BOS query may leave on other keys: its residual must be the same for every
input (assemble.py compensates for it by value), so the leak is held below float64 noise."""


def bos_self_score(max_len: int) -> float:
    """The score BOS gets at the BOS query, every other key scoring 0 there."""
    return needed_gap(max_len + 1, BOS_ISOLATION)


def needed_gap(n_keys: int, tolerated_leak: float) -> float:
    """The score gap that leaves at most `tolerated_leak` of the weight off the intended keys."""
    return math.log(n_keys / tolerated_leak)


def smallest_gap(values) -> float:
    """The smallest distance between two of the (numeric) values; 1 when there is one value."""
    ordered = sorted(set(float(v) for v in values))
    gaps = [b - a for a, b in zip(ordered, ordered[1:])]
    return min(gaps, default=1.0)


def spread(values) -> float:
    """The largest distance between two of the (numeric) values; 1 when they are all equal."""
    ordered = [float(v) for v in values]
    return (max(ordered) - min(ordered)) or 1.0
