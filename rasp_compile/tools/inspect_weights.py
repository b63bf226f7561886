"""Every weight matrix of a `Model` with its rows and columns named, printed as a compact table.

`labelled_blocks(model)` pairs each array of docs/format.md with labels for its two axes:

    residual        meta.residual (`tokens:a`, `indices:3`, ...; `d{i}` when the file has none)
    wte rows        meta.vocab, the BOS row holding its marker
    wpe rows        the BOS position by the BOS marker, then `pos:0`, `pos:1`, ...
    q, k, v         `h{head}.q{j}`, `h{head}.k{j}`, `h{head}.v{j}` (c_attn is [q heads | k heads | v heads])
    MLP hidden      `u{j}`
    read-out        `{output name}:{value}` per meta.output.values, the name alone when numerical
    a bias          one row, `b`

`format_matrix` prints one of them with all-zero rows and columns left out and each number to
at most 4 significant digits, so a compiled model reads like its derivation.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from ..runtime.model import Model
from .decode import residual_labels

BIAS_ROW = "b"
ZERO = "."  # an exact zero inside a printed row or column
MAX_WIDTH = 100  # characters per line; wider tables are printed in panels of columns


@dataclass(frozen=True)
class LabelledBlock:
    """One array of the model as a matrix ([1, n] for a bias) and the names of its rows and columns."""

    name: str
    matrix: np.ndarray
    row_labels: tuple[str, ...]
    col_labels: tuple[str, ...]


def _value_text(value) -> str:
    """A JSON value as a label: strings bare, everything else as JSON writes it (null: none)."""
    if isinstance(value, str):
        return value
    return "none" if value is None else json.dumps(value)


def _position_labels(model: Model) -> tuple[str, ...]:
    positions = tuple(f"pos:{p}" for p in range(model.meta["max_len"]))
    bos_id = model.meta["bos_id"]
    return positions if bos_id is None else (_value_text(model.meta["vocab"][bos_id]),) + positions


def _output_labels(model: Model) -> tuple[str, ...]:
    output = model.meta["output"]
    name = output.get("name") or "output"  # optional in meta: reports fall back to "output"
    if output["encoding"] == "numerical":
        return (name,)
    return tuple(f"{name}:{_value_text(v)}" for v in output["values"])


def _head_labels(kinds: str, n_head: int, d_head: int) -> tuple[str, ...]:
    """`h{h}.{kind}{j}` for each kind in order, heads side by side within a kind."""
    return tuple(f"h{h}.{kind}{j}" for kind in kinds for h in range(n_head) for j in range(d_head))


def _arrays(model: Model) -> list[tuple[str, str | None, tuple[str, ...], tuple[str, ...]]]:
    """(weight key, its bias key or None, row labels, column labels), in the order to print."""
    residual = tuple(residual_labels(model.meta, model.d_model))
    arrays: list[tuple[str, str | None, tuple[str, ...], tuple[str, ...]]] = [
        ("wte", None, tuple(map(_value_text, model.meta["vocab"])), residual),
        ("wpe", None, _position_labels(model), residual),
    ]
    for i, layer in enumerate(model.meta["layers"]):
        n_head, d_head = layer["n_head"], layer["d_head"]
        hidden = tuple(f"u{j}" for j in range(layer["d_mlp"]))
        sub_layers = [
            ("attn.c_attn", residual, _head_labels("qkv", n_head, d_head)),
            ("attn.c_proj", _head_labels("v", n_head, d_head), residual),
            ("mlp.c_fc", residual, hidden),
            ("mlp.c_proj", hidden, residual),
        ]
        for name, rows, cols in sub_layers:
            if rows and cols:  # an absent sub-layer has no heads or no hidden units
                arrays.append((f"blocks.{i}.{name}.w", f"blocks.{i}.{name}.b", rows, cols))
    arrays.append(("unembed", "unembed_b", residual, _output_labels(model)))
    return arrays


def labelled_blocks(model: Model) -> list[LabelledBlock]:
    """Every array of the model, labelled: embeddings, then each block's weights and biases, then
    the read-out (`unembed`, and `unembed_b` when present)."""
    blocks = []
    for weight_key, bias_key, rows, cols in _arrays(model):
        blocks.append(LabelledBlock(weight_key, model.params[weight_key], rows, cols))
        if bias_key in model.params:
            blocks.append(LabelledBlock(bias_key, model.params[bias_key][None, :], (BIAS_ROW,), cols))
    return blocks


def _number(x: float) -> str:
    return ZERO if x == 0 else f"{x:.4g}"


def _panels(widths: list[int], room: int) -> list[list[int]]:
    """Column indices grouped so that each group's columns (2 spaces apart) fit in `room`."""
    panels: list[list[int]] = [[]]
    used = 0
    for j, width in enumerate(widths):
        if panels[-1] and used + 2 + width > room:
            panels.append([])
            used = 0
        panels[-1].append(j)
        used += 2 + width
    return panels


def format_matrix(name: str, matrix, row_labels, col_labels, max_width: int = MAX_WIDTH) -> str:
    """`name [rows x cols]`, then the matrix as an aligned table of its rows and columns that hold
    a nonzero entry, numbers to 4 significant digits, exact zeros as `.`; columns beyond
    `max_width` characters continue in further panels below."""
    matrix = np.asarray(matrix)
    if matrix.shape != (len(row_labels), len(col_labels)):
        raise ValueError(f"{name}: {len(row_labels)} x {len(col_labels)} labels for a matrix of shape {matrix.shape}")
    rows, cols = np.flatnonzero(np.any(matrix != 0, axis=1)), np.flatnonzero(np.any(matrix != 0, axis=0))
    header = f"{name} [{matrix.shape[0]} x {matrix.shape[1]}]"
    hidden = [f"{n} zero {what}{'s' * (n != 1)}" for n, what in
              ((matrix.shape[0] - len(rows), "row"), (matrix.shape[1] - len(cols), "column")) if n]
    if not len(rows):
        return f"{header}: all zero"
    if hidden:
        header += ", not shown: " + " and ".join(hidden)
    cells = [[_number(matrix[i, j]) for j in cols] for i in rows]
    labels = [row_labels[i] for i in rows]
    heads = [col_labels[j] for j in cols]
    label_width = max(map(len, labels))
    widths = [max(len(heads[c]), *(len(row[c]) for row in cells)) for c in range(len(cols))]
    lines = [header]
    for panel in _panels(widths, max_width - label_width):
        lines.append(" " * label_width + "".join(f"  {heads[c]:>{widths[c]}}" for c in panel))
        for label, row in zip(labels, cells):
            lines.append(f"{label:<{label_width}}" + "".join(f"  {row[c]:>{widths[c]}}" for c in panel))
    return "\n".join(lines)


def format_model(model: Model) -> str:
    """Every matrix of the model, formatted, separated by blank lines."""
    return "\n\n".join(format_matrix(b.name, b.matrix, b.row_labels, b.col_labels) for b in labelled_blocks(model))
