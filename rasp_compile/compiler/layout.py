"""layout: name every residual dimension.

`bos` comes first (1 at the BOS position only, written by the embedding, never by a layer), then
each variable's dimensions in the order the graph computes them: `label:value` per value of a
categorical variable, `label` for a numerical one. `meta.residual` is this list, so every weight
prints with labels and a bug that swaps two columns is visible.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from .. import ir
from .ops import Graph
from .variables import Var

BOS = "bos"


@dataclass(frozen=True)
class Layout:
    labels: tuple[str, ...]
    _index: dict[str, int] = field(init=False, repr=False, compare=False)  # label -> its dimension

    def __post_init__(self) -> None:
        index = {label: i for i, label in enumerate(self.labels)}
        if len(index) != len(self.labels):
            twice = next(label for label in self.labels if self.labels.count(label) > 1)
            raise ValueError(f"two residual dimensions are named {twice!r}")
        object.__setattr__(self, "_index", index)

    @property
    def d_model(self) -> int:
        return len(self.labels)

    def __getitem__(self, label: str) -> int:
        """The index of the dimension named `label`; a label no variable has is an error here,
        where a primitive asks for it, not a weight written to the wrong row."""
        try:
            return self._index[label]
        except KeyError:
            raise KeyError(f"no residual dimension {label!r} in this layout ({self.d_model} dimensions)") from None

    def indices(self, labels: Iterable[str]) -> list[int]:
        """The indices of the dimensions named `labels`, in order (as `self[label]` each)."""
        index = self._index
        try:
            return [index[label] for label in labels]
        except KeyError:
            return [self[label] for label in labels]  # raises, naming the label

    def dims(self, var: Var) -> list[int]:
        """The dimensions of `var`: one per value (categorical) or one (numerical)."""
        if var.encoding == ir.NUMERICAL:
            return [self[var.label]]
        return [self[label] for label in var.dim_labels]

    def vector(self, coordinates: dict[str, float]) -> np.ndarray:
        """A d_model vector from {dimension label: value}."""
        out = np.zeros(self.d_model)
        for label, value in coordinates.items():
            out[self[label]] += value
        return out


def lay_out(graph: Graph) -> Layout:
    labels = [BOS]
    for op in graph.ops:
        var = op.out
        if var.encoding == ir.NUMERICAL:
            labels.append(var.label)
        else:
            labels.extend(var.dim_labels)
    return Layout(tuple(labels))
