"""compiler/folds.py adds each Linear op's terms only where their source entries are non-zero,
every target entry's terms in the order a term-by-term loop adds them: the same sums to the bit,
signs of zero included, as that loop (written out here) gives."""

from __future__ import annotations

from typing import cast

import numpy as np
import pytest

from rasp_compile import ir
from rasp_compile.compiler.folds import Folds
from rasp_compile.compiler.layout import Layout
from rasp_compile.compiler.ops import Graph, Linear
from rasp_compile.compiler.variables import Var

WEIGHTS = [0.0, -0.0, 1.0, -1.0, 1 / 3, 0.1, -2.5, 1e-17, 3.0]
ENTRIES = [0.0, -0.0, 1.0, -1.0, 0.1, 1 / 7, 1e16, -3.0]


def term_by_term(ops: list[Linear], layout: Layout, matrix: np.ndarray) -> np.ndarray:
    """Each source column's terms in the order the sources first appear: the plain loop."""
    groups: dict[int, list[tuple[int, float]]] = {}
    for op in ops:
        for (var, _), vector in op.weights.items():
            groups.setdefault(layout[var.label], []).extend((layout[t], w) for t, w in vector.items())
    out = matrix.copy()
    for source, terms in groups.items():
        for target, weight in terms:
            out[..., target] += weight * matrix[..., source]
    return out


def random_linears(rng: np.random.Generator) -> tuple[list[Linear], Layout]:
    """A few Linear ops over shared numerical inputs, each writing its own outputs."""
    inputs = [Var(f"x{i}", ir.NUMERICAL, (0.0, 1.0)) for i in range(int(rng.integers(1, 6)))]
    ops, labels = [], ["bos", *(x.label for x in inputs)]
    for k in range(int(rng.integers(1, 4))):
        outs = [f"y{k}_{j}" for j in range(int(rng.integers(1, 4)))]
        labels += outs
        chosen = rng.permutation(len(inputs))[: int(rng.integers(1, len(inputs) + 1))]
        weights = {(inputs[i], None): {t: float(rng.choice(WEIGHTS)) for t in outs if rng.random() < 0.8}
                   for i in chosen}
        ops.append(Linear(Var(f"y{k}", ir.NUMERICAL, (0.0,)), weights, {}))
    return ops, Layout(tuple(labels))


@pytest.mark.parametrize("seed", range(40))
def test_spread_equals_the_term_by_term_loop_to_the_bit(seed):
    rng = np.random.default_rng(seed)
    ops, layout = random_linears(rng)
    folds = Folds(cast(Graph, type("G", (), {"ops": ops})()), layout)
    for shape in [(layout.d_model,), (int(rng.integers(1, 7)), layout.d_model)]:
        matrix = rng.choice(ENTRIES, size=shape)
        assert folds.spread(matrix).tobytes() == term_by_term(ops, layout, matrix).tobytes()
