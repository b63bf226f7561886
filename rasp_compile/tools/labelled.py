"""A NumPy array with its rows and columns named: what the inspection API hands back (a residual
stream, an attention pattern, a head's weights), so a swapped column is visible."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import MissingExtraError
from ..safe_text import shown
from .svg import heatmap, standalone_svg


@dataclass(frozen=True, eq=False)
class LabelledArray:
    """array [len(rows), len(columns)] and the name of each row and column; `title` says what it is;
    `scale` how a heatmap colours it: "signed" (red < 0 < blue) or "unit" (0..1, an attention pattern)."""

    array: np.ndarray
    rows: tuple[str, ...]
    columns: tuple[str, ...]
    title: str = ""
    scale: str = "signed"

    def __post_init__(self):
        if self.array.shape != (len(self.rows), len(self.columns)):
            raise ValueError(f"{len(self.rows)} x {len(self.columns)} labels for an array of shape {self.array.shape}")

    def __array__(self, dtype=None, copy=None):
        return self.array if dtype is None else self.array.astype(dtype)

    @property
    def shape(self) -> tuple[int, int]:
        return self.array.shape

    def column(self, label: str) -> np.ndarray:
        """The column named `label`."""
        return self.array[:, self.columns.index(label)]

    def row(self, label: str) -> np.ndarray:
        """The row named `label`."""
        return self.array[self.rows.index(label)]

    def to_pandas(self):
        """A pandas DataFrame with the labels as index and columns (pandas must be installed)."""
        try:
            import pandas
        except ImportError:
            raise MissingExtraError("to_pandas needs pandas: pip install pandas") from None
        return pandas.DataFrame(self.array, index=list(self.rows), columns=list(self.columns))

    def __repr__(self) -> str:
        title = shown(self.title) + " " if self.title else ""
        return f"<LabelledArray {title}[{len(self.rows)} x {len(self.columns)}]>"

    def to_svg(self) -> str:
        """The array as a labelled heatmap in one SVG document (write it to a .svg file)."""
        return standalone_svg(self.array, self.rows, self.columns, self.title, self.scale)

    def _repr_html_(self) -> str:
        return heatmap(self.array, self.rows, self.columns, self.title or "array", self.scale)
