"""folds: the Linear ops of a graph, written by the ops that write their inputs.

A Linear op has no sub-layer of its own (ops.Linear): whatever writes its input coordinate x also
writes `weight * x` into each of its output coordinates. `Folds.spread(m)` does this to any matrix
whose last axis is the residual, giving the same floats as the plain loop

    out = m.copy()
    for source, target, weight in the updates, in order:
        out[..., target] += weight * m[..., source]

(the order of the updates: sources in the order the Linear ops first read them, each source's
targets in op order, then in the order of its weight vector), bit for bit, -0.0 included, but
with whole-array operations on the few non-zero entries:

- A zero term changes a sequential float sum only in the sign of a zero result: x + (+-0.0) = x
  for x != 0, and the sum is -0.0 exactly when every term is -0.0 (x + (-x) = +0.0). So the
  non-zero products are added with np.add.at, which adds repeated cells one after another in
  index order (our update order), and the zero products are only counted.
- A cell left at -0.0 becomes +0.0 when any of its zero products is +0.0, i.e. an update whose
  weight has the sign bit of its zero entry. Each row's entries in the source columns are mostly
  zeros of one sign; per target we count the updates of each weight sign once (`_by_sign`), and
  per row correct the count only at the entries that are not that row's usual zero."""

from __future__ import annotations

from itertools import chain
from typing import Any

import numpy as np

from .layout import Layout
from .ops import Graph, Linear
from .variables import Var, coordinate


def linear_folds(graph: Graph, layout: Layout) -> Folds:
    """The Folds of `graph`'s Linear ops, their updates in op order, each op's in weight order."""
    reads: list[int] = []
    targets: list[str] = []
    weights: list[float] = []
    constant = np.zeros(layout.d_model)
    dims: dict[tuple[Var, Any], int] = {}  # an input coordinate -> its dimension
    for op in graph.ops:
        if not isinstance(op, Linear):
            continue
        vectors = list(op.weights.values())
        sources = [dims[key] if key in dims else dims.setdefault(key, layout[coordinate(*key)]) for key in op.weights]
        reads.extend(np.repeat(sources, [len(vector) for vector in vectors]).tolist())
        targets.extend(chain.from_iterable(vectors))
        weights.extend(chain.from_iterable(vector.values() for vector in vectors))
        constant += layout.vector(op.bias)
    return Folds(np.array(reads, dtype=np.intp), np.array(layout.indices(targets), dtype=np.intp),
                 np.array(weights, dtype=np.float64), constant)


class Folds:
    """Column updates of the residual (module docstring): update i adds `weights[i]` times
    dimension `reads[i]` to dimension `targets[i]` [n_updates each], applied grouped by source, sources
    in the order they are first read, and in the given order within a source (weights finite). `constant` [d_model]:
    the Linear ops' bias, which the position embedding carries at every position."""

    def __init__(self, reads: np.ndarray, targets: np.ndarray, weights: np.ndarray, constant: np.ndarray):
        self.d_model = len(constant)
        self.constant = constant
        dims, first, source_of = np.unique(reads, return_index=True, return_inverse=True)
        by_first = np.argsort(first)
        self.sources = dims[by_first]  # [n_sources]: the dimensions read, in the order first read
        rank = np.empty_like(by_first)
        rank[by_first] = np.arange(len(by_first))
        source_of = rank[source_of]
        order = np.argsort(source_of, kind="stable")  # a source's updates together, in their order
        self.source_of = source_of[order]  # [n_updates]: index into `sources`
        self.targets = targets[order]
        self.weights = weights[order].astype(np.float64)
        self._first = np.searchsorted(self.source_of, np.arange(len(self.sources)))  # [n_sources]
        self._count = np.bincount(self.source_of, minlength=len(self.sources))
        self.written = np.unique(self.targets)  # [n_written]: the dimensions Linear ops write
        self._written_column = np.searchsorted(self.written, self.targets)  # [n_updates]: index into `written`
        self._by_sign = np.stack([np.bincount(self._written_column[np.signbit(self.weights) == negative],
                                              minlength=len(self.written)) for negative in (False, True)])

    def spread(self, matrix: np.ndarray) -> np.ndarray:
        """`matrix` [..., d_model] with every Linear output's column written (module docstring)."""
        flat = matrix.reshape(-1, self.d_model)
        out = flat.copy()
        if not len(self.targets) or not flat.size:
            return out.reshape(matrix.shape)
        read = flat[:, self.sources]  # [rows, n_sources]
        rows, reads, updates = self._updates(read)
        np.add.at(out.reshape(-1), rows * self.d_model + self.targets[updates],
                  self.weights[updates].astype(flat.dtype) * read[rows, reads])
        self._sign_zeros(out, read)
        return out.reshape(matrix.shape)

    def _updates(self, entries: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For the non-zero entries of `entries` [rows, n_sources], every update reading them, in
        order within each row: (row, source, update) [n_terms] each."""
        rows, reads = np.nonzero(entries)  # row-major: a row's sources in update order
        counts = self._count[reads]
        ends = np.cumsum(counts)
        offsets = np.arange(ends[-1] if len(ends) else 0) - np.repeat(ends - counts, counts)
        return np.repeat(rows, counts), np.repeat(reads, counts), np.repeat(self._first[reads], counts) + offsets

    def _sign_zeros(self, out: np.ndarray, read: np.ndarray) -> None:
        """Turn to +0.0 the -0.0 cells of `out` [rows, d_model] in written columns that some update
        adds a +0.0 product to (in place). `read` [rows, n_sources]: the matrix's source columns."""
        written = out[:, self.written]
        negative_zeros = (written == 0) & np.signbit(written)
        held = np.nonzero(negative_zeros.any(axis=1))[0]  # the rows holding one
        if not len(held):
            return
        read = read[held]
        zero = read == 0
        negative = np.signbit(read)
        usual = (zero & negative).sum(axis=1) * 2 > zero.sum(axis=1)  # [rows]: the row's common zero is -0.0
        plus = self._by_sign[usual.astype(np.intp)]  # [rows, n_written]: +0.0 products if all were usual
        unusual = ~zero | (negative != usual[:, None])
        rows, reads, updates = self._updates(unusual)
        weight_negative = np.signbit(self.weights[updates])
        gives_plus = zero[rows, reads] & (negative[rows, reads] == weight_negative)
        counted = weight_negative == usual[rows]  # counted in `plus` as if the entry were the usual zero
        at = rows * len(self.written) + self._written_column[updates]
        plus = plus + np.bincount(at, weights=gives_plus.astype(np.intp) - counted,
                                  minlength=plus.size).astype(np.intp).reshape(plus.shape)
        turned = negative_zeros[held] & (plus > 0)
        written = written[held]
        written[turned] = 0.0
        out[np.ix_(held, self.written)] = written
