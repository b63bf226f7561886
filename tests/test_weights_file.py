"""The weights file: save/load round trips, and a corpus of files and models that must be refused
with a one-line WeightsError naming the problem."""

from __future__ import annotations

import json
import zipfile

import numpy as np
import pytest

from model_zoo import random_model
from rasp_compile.errors import WeightsError
from rasp_compile.model import Model, astype, n_nonzero, n_params, validate
from rasp_compile.weights_file import load, save


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_round_trip_keeps_meta_arrays_and_dtype(tmp_path, dtype):
    model = astype(random_model(0), dtype)
    path = tmp_path / "model.weights"  # saved at exactly this path, no ".npz" appended
    save(model, path)
    loaded = load(path)
    assert loaded.meta == model.meta
    assert loaded.params.keys() == model.params.keys()
    for key, array in model.params.items():
        assert loaded.params[key].dtype == dtype
        np.testing.assert_array_equal(loaded.params[key], array)
    with np.load(path, allow_pickle=False) as npz:
        assert npz["meta"].shape == () and npz["meta"].dtype.kind == "U"


def test_counts():
    model = random_model(0, layers=())
    model.params["wte"][0, :] = 0
    assert n_params(model) == 4 * 6 + 6 * 6 + 6 * 3 + 3
    assert n_nonzero(model) == n_params(model) - 6


def write_npz(path, meta, arrays):
    with open(path, "wb") as f:
        np.savez(f, meta=np.array(json.dumps(meta)), **arrays)


def good():
    model = random_model(0)
    return dict(model.meta), dict(model.params)


def with_meta(**changes):
    meta, arrays = good()
    return {**meta, **changes}, arrays


def without(key):
    meta, arrays = good()
    del arrays[key]
    return meta, arrays


def without_meta_field(field):
    meta, arrays = good()
    del meta[field]
    return meta, arrays


def with_array(key, value):
    meta, arrays = good()
    return meta, {**arrays, key: value}


def with_nan():
    meta, arrays = good()
    arrays["blocks.0.mlp.c_fc.w"] = arrays["blocks.0.mlp.c_fc.w"].copy()
    arrays["blocks.0.mlp.c_fc.w"][1, 2] = np.nan
    return meta, arrays


def with_layers(**changes):
    meta, arrays = good()
    layers = [dict(layer) for layer in meta["layers"]]
    layers[0].update(changes)
    return {**meta, "layers": layers}, arrays


BAD_MODELS = {  # name: (meta and arrays, words the message must contain)
    "missing key": (without("blocks.0.attn.c_proj.b"), "missing array 'blocks.0.attn.c_proj.b'"),
    "unknown key": (with_array("blocks.0.attn.extra", np.zeros(3)), "unknown array 'blocks.0.attn.extra'"),
    "block beyond meta.layers": (with_array("blocks.7.mlp.c_fc.b", np.zeros(3)), "unknown array"),
    "wrong shape": (with_array("blocks.0.mlp.c_fc.b", np.zeros(4)), "'blocks.0.mlp.c_fc.b' has shape [4]; expected [5]"),
    "d_model disagrees": (with_array("wte", np.zeros((4, 7))), "array 'wpe' has shape [6, 6]; expected [6, 7]"),
    "int dtype": (with_array("unembed_b", np.zeros(3, dtype=np.int64)), "dtype int64"),
    "mixed dtypes": (with_array("unembed_b", np.zeros(3, dtype=np.float32)), "mix"),
    "NaN": (with_nan(), "NaN"),
    "newer format": (with_meta(format="rasp-compile/2"), "made by a newer rasp-compile"),
    "unknown format": (with_meta(format="tracr"), "unknown format"),
    "missing meta field": (without_meta_field("causal"), "meta has no 'causal' field"),
    "bos_id out of range": (with_meta(bos_id=4), "bos_id 4 is out of range"),
    "bos_id wrong type": (with_meta(bos_id="3"), "bos_id must be an integer or null"),
    "n_ctx without BOS": (with_meta(bos_id=None), "array 'wpe' has shape [6, 6]; expected [5, 6]"),
    "n_ctx vs max_len": (with_meta(max_len=6), "n_ctx = meta.max_len"),
    "activation": (with_meta(activation="tanh"), "activation must be one of relu/gelu"),
    "layer heads disagree": (with_layers(n_head=3), "from meta.layers[0]"),
    "layer says no MLP": (with_layers(d_mlp=0), "unknown array 'blocks.0.mlp"),
    "layer says no attention": (with_layers(n_head=0), "unknown array 'blocks.0.attn"),
    "output values vs n_out": (with_meta(output={"encoding": "categorical", "values": ["t0"]}),
                               "array 'unembed' has shape [6, 3]; expected [6, 1]"),
    "numerical n_out": (with_meta(output={"encoding": "numerical"}), "expected [6, 1]"),
    "duplicate vocab": (with_meta(vocab=["t0", "t0", "t2", "BOS"]), "holds a token twice"),
    "residual labels": (with_meta(residual=["a", "b"]), "meta.residual labels 2 dimensions"),
}


@pytest.mark.parametrize("name", BAD_MODELS)
def test_bad_models_are_refused_in_memory_and_on_disk(tmp_path, name):
    (meta, arrays), words = BAD_MODELS[name]
    with pytest.raises(WeightsError) as in_memory:
        validate(Model(meta, arrays))
    path = tmp_path / "bad.npz"
    write_npz(path, meta, arrays)
    with pytest.raises(WeightsError) as from_disk:
        load(path)
    for error in (in_memory.value, from_disk.value):
        assert words in str(error) and "\n" not in str(error)


def save_good(path):
    save(random_model(0), path)


def object_array(path):
    meta, arrays = good()
    write_npz(path, meta, {**arrays, "wte": np.array([{"x": 1}, None], dtype=object)})  # pickled by savez


def truncated(path):
    save_good(path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def corrupt_member(path):
    save_good(path)
    data = bytearray(path.read_bytes())
    offset = data.index(b"\x93NUMPY", data.index(b"wte.npy")) + 200
    data[offset:offset + 8] = b"\xff" * 8
    path.write_bytes(bytes(data))


def meta_as(value):
    def write(path):
        _, arrays = good()
        with open(path, "wb") as f:
            np.savez(f, meta=value, **arrays)
    return write


def no_meta(path):
    _, arrays = good()
    with open(path, "wb") as f:
        np.savez(f, **arrays)


BAD_FILES = {  # name: (writer of the bad file, words the message must contain)
    "missing file": (lambda path: None, "no such file"),
    "not a zip": (lambda path: path.write_text("hello, I am not a model\n"), "not a zip archive"),
    "empty file": (lambda path: path.write_bytes(b""), "not a zip archive"),
    "a .npy file": (lambda path: np.save(open(path, "wb"), np.zeros(3)), "single .npy array"),
    "object array (pickled)": (object_array, "pickled Python objects"),
    "truncated": (truncated, "corrupt or truncated"),
    "corrupt member": (corrupt_member, "corrupt or truncated array 'wte'"),
    "zip of other things": (lambda path: zipfile.ZipFile(path, "w").writestr("readme.txt", "hi"),
                            "readme.txt"),
    "bad JSON": (meta_as(np.array("{not json")), "'meta' is not valid JSON"),
    "meta not an object": (meta_as(np.array("[1, 2]")), "'meta' must be a JSON object"),
    "meta as bytes": (meta_as(np.array(b"{}")), "0-d unicode string"),
    "no meta": (no_meta, "no 'meta' entry"),
}


@pytest.mark.parametrize("name", BAD_FILES)
def test_bad_files_are_refused(tmp_path, name):
    write, words = BAD_FILES[name]
    path = tmp_path / "bad.npz"
    write(path)
    with pytest.raises(WeightsError) as error:
        load(path)
    assert words in str(error.value) and "\n" not in str(error.value)


def test_save_refuses_an_invalid_model(tmp_path):
    meta, arrays = with_meta(format="rasp-compile/2")
    with pytest.raises(WeightsError, match="newer"):
        save(Model(meta, arrays), tmp_path / "out.npz")
    assert not (tmp_path / "out.npz").exists()
