"""folds.Folds.spread against the plain loop it replaces: the same floats, bit for bit (-0.0 too)."""

from __future__ import annotations

import numpy as np
import pytest

from rasp_compile.compiler.folds import Folds


def _folds(updates: list[tuple[int, int, float]], d_model: int) -> Folds:
    reads, targets, weights = (np.array(column) for column in zip(*updates))
    return Folds(reads.astype(np.intp), targets.astype(np.intp), weights, np.zeros(d_model))


def _plain(updates: list[tuple[int, int, float]], matrix: np.ndarray) -> np.ndarray:
    """The loop: sources in first-read order, each source's updates in the order given."""
    by_source: dict[int, list[tuple[int, float]]] = {}
    for source, target, weight in updates:
        by_source.setdefault(source, []).append((target, weight))
    out = matrix.copy()
    for source, targets in by_source.items():
        for target, weight in targets:
            out[..., target] += weight * matrix[..., source]
    return out


@pytest.mark.parametrize("seed", range(40))
def test_spread_is_the_plain_loop_bit_for_bit(seed: int) -> None:
    rng = np.random.default_rng(seed)
    d_model = int(rng.integers(4, 14))
    n_sources = int(rng.integers(1, d_model - 1))
    sources = rng.choice(d_model, size=n_sources, replace=False)
    targets = np.setdiff1d(np.arange(d_model), sources)
    weight_pool = np.array([1.0, -1.0, 0.5, -0.0, 0.0, 3.0, 1e-300, -2.0])
    updates = [(int(rng.choice(sources)), int(rng.choice(targets)), float(rng.choice(weight_pool)))
               for _ in range(int(rng.integers(1, 40)))]
    shape = (int(rng.integers(0, 6)), d_model) if seed % 5 else (d_model,)
    values = np.array([0.0, -0.0, 1.0, -1.0, 0.1, 1e-300, -7.0])
    zeros_of_a_sign = np.where(rng.random(shape) < 0.5, 0.0, -0.0)
    matrix = np.where(rng.random(shape) < 0.7, zeros_of_a_sign, rng.choice(values, size=shape))
    for dtype in (np.float64, np.float32):
        m = matrix.astype(dtype)
        assert _folds(updates, d_model).spread(m).tobytes() == _plain(updates, m).tobytes()
