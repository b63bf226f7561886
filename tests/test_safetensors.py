""".safetensors weights files: round trips, the `safetensors` package reading ours and writing
files we read, `rasp-compile --emit X.safetensors` then `rasp-run`, and a corpus of hostile files
refused with a one-line WeightsError naming the file, before any array data is allocated."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest

from extras import require
from model_zoo import random_model
from rasp_compile.cli import compile_cmd, run_cmd
from rasp_compile.errors import WeightsError
from rasp_compile.runtime import safetensors_file, weights_file
from rasp_compile.runtime.model import astype
from rasp_compile.runtime.weights_file import load, save

AAB = "programs/aab.rasp"


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_round_trip_keeps_meta_arrays_and_dtype(tmp_path, dtype):
    model = astype(random_model(0), dtype)
    path = tmp_path / "model.SafeTensors"  # the extension chooses the format, in any case
    save(model, path)
    assert path.read_bytes()[8:9] == b"{"  # not a zip
    loaded = load(path)
    assert loaded.meta == model.meta and loaded.params.keys() == model.params.keys()
    for key, array in model.params.items():
        assert loaded.params[key].dtype == dtype and loaded.params[key].flags.writeable
        np.testing.assert_array_equal(loaded.params[key], array)


def test_the_safetensors_package_reads_ours_and_writes_what_we_read(tmp_path):
    numpy_api = require("safetensors.numpy")
    safe_open = require("safetensors").safe_open
    model = astype(random_model(1), np.float32)
    save(model, tmp_path / "ours.safetensors")
    arrays = numpy_api.load_file(tmp_path / "ours.safetensors")
    assert arrays.keys() == model.params.keys()
    for key, array in arrays.items():
        np.testing.assert_array_equal(array, model.params[key])
    with safe_open(tmp_path / "ours.safetensors", framework="np") as f:
        assert json.loads(f.metadata()["meta"]) == model.meta

    numpy_api.save_file(model.params, tmp_path / "theirs.safetensors", metadata={"meta": json.dumps(model.meta)})
    loaded = load(tmp_path / "theirs.safetensors")
    assert loaded.meta == model.meta
    for key, array in model.params.items():
        np.testing.assert_array_equal(loaded.params[key], array)


def test_emitted_safetensors_runs_like_the_npz(tmp_path, capsys):
    for name in ("aab.npz", "aab.safetensors"):
        assert compile_cmd.main([AAB, "--emit", str(tmp_path / name)]) == 0
        assert f"wrote {tmp_path / name}" in capsys.readouterr().out.replace("\n", "")
    for argv in (["aab", "--steps", "4"], ["aabaa", "--trace"], ["--accuracy"], ["aab", "--flops"],
                 ["--score", "aabaab"]):
        outputs = []
        for name in ("aab.npz", "aab.safetensors"):
            status = run_cmd.main([str(tmp_path / name), *argv])
            outputs.append((status, capsys.readouterr().out.replace(name, "FILE")))
        assert outputs[0] == outputs[1] and outputs[0][0] == 0, argv


# Hostile files: each writes raw bytes; the loader must refuse them with one line naming the file.

def header_and_data(model=None) -> tuple[dict, bytes]:
    """A valid file's header (parsed) and its data bytes."""
    raw = safetensors_file.to_bytes(model or astype(random_model(0), np.float32))
    (length,) = struct.unpack("<Q", raw[:8])
    return json.loads(raw[8:8 + length]), raw[8 + length:]


def packed(header: dict | bytes, data: bytes, length: int | None = None) -> bytes:
    text = header if isinstance(header, bytes) else json.dumps(header).encode()
    return struct.pack("<Q", len(text) if length is None else length) + text + data


def edited(edit) -> bytes:
    """A valid file with `edit(header, data)` applied (it returns the new data as bytes, or anything
    else to keep it)."""
    header, data = header_and_data()
    new_data = edit(header, data)
    return packed(header, new_data if isinstance(new_data, bytes) else data)


def set_entry(key, **fields):
    def edit(header, data):
        header[key].update(fields)
    return edit


def meta_value(value):
    def edit(header, data):
        header["__metadata__"]["meta"] = value
    return edit


def overlap(header, data):  # wte's data starts inside wpe's (and leaves a gap where it was)
    begin = header["wpe"]["data_offsets"][0]
    header["wte"]["data_offsets"] = [begin, begin + 4 * 4 * 6]


def huge_shape(header, data):  # wte, the last array, claims 4 EiB
    begin = header["wte"]["data_offsets"][0]
    header["wte"].update(shape=[2**40, 2**20], data_offsets=[begin, begin + 2**62])


def nan_in_wte(header, data):
    begin = header["wte"]["data_offsets"][0]
    return data[:begin] + np.float32(np.nan).tobytes() + data[begin + 4:]


def extra_array(header, data):
    header["extra"] = {"dtype": "F32", "shape": [1], "data_offsets": [len(data), len(data) + 4]}
    return data + bytes(4)


def wrong_meta_shape(header, data):  # consistent with its offsets, not with meta
    header["wte"]["shape"] = header["wte"]["shape"][::-1]


HOSTILE = {
    "empty": (b"", "shorter than its 8-byte header length"),
    "header length beyond the file": (packed(b"{}", b"", length=2**63), "header length"),
    "header not JSON": (packed(b"{nope", b""), "not valid JSON"),
    "header not an object": (packed(b"[1, 2]", b""), "no JSON object"),
    "header in bad UTF-8": (packed(b'{"\xff": 1}', b""), "not valid JSON"),
    "key twice": (packed(b'{"a": 1, "a": 2}', b""), "appears twice"),
    "no metadata": (edited(lambda h, d: h.pop("__metadata__")), "no 'meta' string"),
    "meta not a string": (edited(meta_value(None)), "no 'meta' string"),
    "meta not JSON": (edited(meta_value("{oops")), "'meta' is not valid JSON"),
    "meta not an object": (edited(meta_value("[]")), "'meta' must be a JSON object"),
    "int dtype": (edited(set_entry("wte", dtype="I32")), "has dtype 'I32'; expected F32 or F64"),
    "dtype not a string": (edited(set_entry("wte", dtype=["F32"])), "expected F32 or F64"),
    "bf16 dtype": (edited(set_entry("wte", dtype="BF16")), "expected F32 or F64"),
    "mixed dtypes": (edited(lambda h, d: h["unembed"].update(dtype="F64", shape=[9])),
                     "arrays mix float32 and float64"),
    "shape of booleans": (edited(set_entry("wte", shape=[True, 6])), "positive whole numbers"),
    "zero shape": (edited(set_entry("wte", shape=[0, 6])), "positive whole numbers"),
    "entry missing offsets": (edited(lambda h, d: h["wte"].pop("data_offsets")), "exactly"),
    "shape of 400-digit numbers": (edited(set_entry("wte", shape=[10**400])), "positive whole numbers"),
    "offsets not numbers": (edited(set_entry("wte", data_offsets=["0", 1])), "two whole numbers"),
    "shape disagrees with offsets": (edited(set_entry("wte", shape=[5, 6])), "its offsets span"),
    "huge shape": (edited(huge_shape), "more than any model rasp-compile builds"),
    "overlapping offsets": (edited(overlap), "overlaps the array before it"),
    "truncated data": (edited(lambda h, d: d[:-4]), "truncated"),
    "data beyond the arrays": (edited(lambda h, d: d + b"\0" * 8), "the file holds"),
    "shape disagrees with meta": (edited(wrong_meta_shape), "array 'wte' has shape [6, 4]; expected [4, "),
    "an unknown array": (edited(extra_array), "unknown array 'extra'"),
    "NaN weight": (edited(nan_in_wte), "holds NaN or infinity"),
}


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_files_are_refused_in_one_line(tmp_path, name):
    contents, message = HOSTILE[name]
    path = tmp_path / "bad.safetensors"
    path.write_bytes(contents)
    with pytest.raises(WeightsError) as raised:
        load(path)
    text = str(raised.value)
    assert text.startswith(f"{path}: ") and "\n" not in text and message in text, text


def test_missing_files_and_directories_are_refused(tmp_path):
    with pytest.raises(WeightsError, match="no such file"):
        load(tmp_path / "absent.safetensors")
    (tmp_path / "dir.safetensors").mkdir()
    with pytest.raises(WeightsError, match="a directory"):
        load(tmp_path / "dir.safetensors")


def test_arrays_over_the_memory_ceiling_are_refused_unread(tmp_path, monkeypatch):
    save(astype(random_model(0), np.float32), tmp_path / "model.safetensors")
    monkeypatch.setattr(weights_file, "MAX_MODEL_BYTES", 100)
    monkeypatch.setattr(np, "fromfile", lambda *args, **kwargs: pytest.fail("array data was read"))
    with pytest.raises(WeightsError, match="more than any model rasp-compile builds"):
        load(tmp_path / "model.safetensors")


def test_shapes_are_checked_against_meta_before_any_data_is_read(tmp_path, monkeypatch):
    (tmp_path / "bad.safetensors").write_bytes(HOSTILE["shape disagrees with meta"][0])
    monkeypatch.setattr(np, "fromfile", lambda *args, **kwargs: pytest.fail("array data was read"))
    with pytest.raises(WeightsError, match="expected"):
        load(tmp_path / "bad.safetensors")
