"""folds: the Linear ops of a graph, written by the ops that write their inputs (assemble.py).

A Linear op (ops.py) has no sub-layer: whatever writes x also writes each linear function of x.
So every matrix whose last axis is the residual (an embedding, a head's w_o, an MLP's w_out or
b_out) gets, in each Linear output's column, its input columns times their weights:

    out[..., t] = m[..., t] + w_1 m[..., s_1] + w_2 m[..., s_2] + ...

one term per (source column s, weight w) of t, added one by one in the order the Linear ops list
them. Sources are never targets (a Linear never reads a Linear, lowering/linear.py), so each
target's sum reads the matrix as it was. Most sources are zero in most rows (a step MLP's unit
writes a value or two of a one-hot), and sort's range select at max_len 1,024 has a million
(source, target) terms: `spread` adds only the terms of non-zero entries, in the same order for
every entry, so every sum is the one the term-by-term loop gives, to the bit. A zero term cannot
change a sum (x + 0 is x) except its sign where the sum is -0.0 and the term +0.0; the entries
still -0.0 at the end are summed again term by term.
"""

from __future__ import annotations

import numpy as np

from .layout import Layout
from .ops import Graph, Linear
from .variables import coordinate


class Folds:
    """The terms of every Linear op of `graph` laid out as `layout` (module docstring), grouped by
    source column in the order the sources first appear, each group in the order its terms do:
    the order a term-by-term loop adds them in. `constant` is the Linear ops' bias, which the
    position embedding carries at every position."""

    def __init__(self, graph: Graph, layout: Layout):
        groups: dict[int, list[tuple[int, float]]] = {}  # source column -> its (target, weight) terms
        self.constant = np.zeros(layout.d_model)
        for op in graph.ops:
            if not isinstance(op, Linear):
                continue
            for (var, value), vector in op.weights.items():
                terms = groups.setdefault(layout[coordinate(var, value)], [])
                terms.extend((layout[label], weight) for label, weight in vector.items())
            self.constant += layout.vector(op.bias)
        self.columns = np.array(list(groups), dtype=np.int64)  # each group's source column
        self.count = np.array([len(terms) for terms in groups.values()], dtype=np.int64)
        self.start = np.cumsum(self.count) - self.count  # each group's first term
        self.source = np.repeat(self.columns, self.count)
        self.target = np.array([t for terms in groups.values() for t, _ in terms], dtype=np.int64)
        self.weight = np.array([w for terms in groups.values() for _, w in terms], dtype=np.float64)

    def spread(self, matrix: np.ndarray) -> np.ndarray:
        """`matrix` with every Linear output's column summed from its input columns."""
        out = matrix.copy()
        if not len(self.source):
            return out
        rows, flat = matrix.reshape(-1, matrix.shape[-1]), out.reshape(-1, out.shape[-1])
        row, term = self._nonzero_terms(rows)
        values = self.weight[term] * rows[row, self.source[term]]
        cells = row * rows.shape[1] + self.target[term]
        order = np.lexsort((term, cells))  # each cell's terms together, in the loop's order
        cells, values = cells[order], values[order]
        first = np.flatnonzero(np.r_[True, cells[1:] != cells[:-1]])
        place = np.arange(len(cells)) - np.repeat(first, np.diff(np.r_[first, len(cells)]))
        for k in range(int(place.max(initial=-1)) + 1):  # the k-th term of every cell that has one
            at = place == k
            out.reshape(-1)[cells[at]] += values[at]
        self._resum_negative_zeros(rows, flat)
        return out

    def _nonzero_terms(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(row, term index) of every term whose source entry is non-zero in `rows`."""
        row, group = np.nonzero(rows[:, self.columns])
        per = self.count[group]
        within = np.arange(per.sum()) - np.repeat(np.cumsum(per) - per, per)
        return np.repeat(row, per), np.repeat(self.start[group], per) + within

    def _resum_negative_zeros(self, rows: np.ndarray, flat: np.ndarray) -> None:
        """Sum term by term, in order, the target entries left at -0.0 (module docstring)."""
        targets = np.unique(self.target)
        block = flat[:, targets]
        for r, j in zip(*np.nonzero((block == 0) & np.signbit(block))):
            value = rows[r, targets[j]]
            for term in np.flatnonzero(self.target == targets[j]):
                value = value + self.weight[term] * rows[r, self.source[term]]
            flat[r, targets[j]] = value
