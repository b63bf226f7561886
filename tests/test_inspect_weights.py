"""rasp_compile.tools.inspect_weights: every array labelled along both axes, printed without its zero
rows and columns. The oracle for the labels is docs/format.md (c_attn = [q heads | k heads | v heads],
head h at columns h·D..(h+1)·D); for the printed entries, the model's own arrays."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import numpy as np
import pytest

from model_zoo import random_model
from rasp_compile.compiler import compile_program
from rasp_compile.frontend import load_program
from rasp_compile.tools.inspect_weights import format_matrix, format_model, labelled_blocks

PROGRAMS = Path(__file__).resolve().parent.parent / "programs"


@pytest.fixture(scope="module")
def aab():
    return compile_program(load_program(PROGRAMS / "aab.rasp"))


def table(text: str) -> dict[tuple[str, str], str]:
    """A printed matrix back as {(row label, column label): cell}; panels are read one by one
    (a panel starts at a line that begins with a space: its column labels). Columns are two
    spaces or more apart."""
    cells, heads = {}, []
    for line in text.splitlines()[1:]:
        if line.startswith(" "):
            heads = re.split(r"\s{2,}", line.strip())
            continue
        label, *row = re.split(r"\s{2,}", line.strip())  # a label may hold one space (`indices (number)`)
        assert len(row) == len(heads), line
        cells.update({(label, head): cell for head, cell in zip(heads, row)})
    return cells


def models():
    return [
        pytest.param(compile_program(load_program(PROGRAMS / "aab.rasp")), id="aab"),
        pytest.param(compile_program(load_program(PROGRAMS / "hist.rasp")), id="hist"),
        pytest.param(random_model(1), id="random-mixed-layers"),
        pytest.param(random_model(2, bos=False, numerical=True, unembed_b=False), id="random-numerical"),
    ]


@pytest.mark.parametrize("model", models())
def test_every_array_is_labelled_along_both_axes(model):
    blocks = labelled_blocks(model)
    assert sorted(b.name for b in blocks) == sorted(model.params)
    for block in blocks:
        assert block.matrix.shape == (len(block.row_labels), len(block.col_labels)), block.name
        array = model.params[block.name]
        assert np.array_equal(block.matrix, array if array.ndim == 2 else array[None, :])
    residual = tuple(model.meta.get("residual") or (f"d{i}" for i in range(model.d_model)))
    by_name = {b.name: b for b in blocks}
    assert by_name["wte"].col_labels == residual and by_name["unembed"].row_labels == residual


@pytest.mark.parametrize("model", models())
def test_qkv_columns_follow_spec_head_order(model):
    for i, layer in enumerate(model.meta["layers"]):
        if not layer["n_head"]:
            continue
        n_head, d_head = layer["n_head"], layer["d_head"]
        block = next(b for b in labelled_blocks(model) if b.name == f"blocks.{i}.attn.c_attn.w")
        for column, label in enumerate(block.col_labels):
            kind, within = divmod(column, n_head * d_head)
            head, j = divmod(within, d_head)
            assert label == f"h{head}.{'qkv'[kind]}{j}"


def test_zero_rows_and_columns_are_left_out(aab):
    for block in labelled_blocks(aab):
        cells = table(format_matrix(block.name, block.matrix, block.row_labels, block.col_labels))
        nonzero_rows = {block.row_labels[i] for i in np.flatnonzero(np.any(block.matrix != 0, axis=1))}
        nonzero_cols = {block.col_labels[j] for j in np.flatnonzero(np.any(block.matrix != 0, axis=0))}
        assert {row for row, _ in cells} == nonzero_rows, block.name
        assert {col for _, col in cells} == nonzero_cols, block.name


def test_a_known_entry_of_aab_appears_with_its_labels(aab):
    """The largest query weight of the (aab)* head: read off the arrays, found in the printout
    at the row of its residual dimension and the column of its head's q coordinate."""
    layer = aab.meta["layers"][0]
    width = layer["n_head"] * layer["d_head"]
    w = aab.params["blocks.0.attn.c_attn.w"][:, :width]
    row, column = np.unravel_index(np.argmax(np.abs(w)), w.shape)
    head, j = divmod(column, layer["d_head"])
    printed = next(m for m in format_model(aab).split("\n\n") if m.startswith("blocks.0.attn.c_attn.w "))
    cells = table(printed)
    assert cells[(aab.meta["residual"][row], f"h{head}.q{j}")] == f"{w[row, column]:.4g}"


def test_numbers_have_at_most_4_significant_digits_and_exact_zeros_print_as_dots():
    text = format_matrix("m", np.array([[1 / 3, 0.0, -123456.0], [0.0, 0.0, 0.0]]), ["r0", "r1"], ["c0", "c1", "c2"])
    assert table(text) == {("r0", "c0"): "0.3333", ("r0", "c2"): "-1.235e+05"}
    assert text.splitlines()[0] == "m [2 x 3], not shown: 1 zero row and 1 zero column"


def test_wide_matrices_continue_in_panels():
    labels = [f"column_{j}" for j in range(30)]
    matrix = np.arange(1.0, 31.0)[None, :]
    text = format_matrix("wide", matrix, ["r"], labels, max_width=60)
    assert max(map(len, text.splitlines())) <= 60
    assert table(text) == {("r", label): f"{j + 1}" for j, label in enumerate(labels)}


def test_labels_that_do_not_match_the_shape_are_refused():
    with pytest.raises(ValueError, match="2 x 1 labels"):
        format_matrix("m", np.ones((2, 2)), ["a", "b"], ["c"])


def test_a_model_without_an_output_name_labels_its_read_out_output(aab):
    """meta.output.name is optional (model.validate): the unembed columns fall back to "output"."""
    meta = {**aab.meta, "output": {k: v for k, v in aab.meta["output"].items() if k != "name"}}
    nameless = dataclasses.replace(aab, meta=meta)
    unembed = next(m for m in format_model(nameless).split("\n\n") if m.startswith("unembed "))
    assert {column for _, column in table(unembed)} <= {f"output:{v}" for v in ("a", "b")}
