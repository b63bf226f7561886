"""Saving and loading the `.npz` weights file of SPEC §2.

`save` writes one `numpy.savez` file: `meta` as a 0-d unicode array holding JSON, every other array
under its flat key, float32 unless the model's arrays are float64. `load` reads with
`allow_pickle=False` (always: a weights file never runs code) and refuses anything it cannot trust
with a one-line `WeightsError`, then validates the model like the compiler does.
"""

from __future__ import annotations

import json
import os
import zipfile
import zlib

import numpy as np

from .errors import WeightsError
from .model import Model, validate

ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")  # a zip with members / an empty zip
NPY_MAGIC = b"\x93NUMPY"


def save(model: Model, path: str | os.PathLike) -> None:
    """Validate the model and write it to exactly `path` (no `.npz` appended)."""
    validate(model)
    dtype = np.float64 if model.dtype == np.float64 else np.float32
    arrays = {key: array.astype(dtype) for key, array in model.params.items()}
    with open(path, "wb") as f:
        np.savez(f, meta=np.array(json.dumps(model.meta)), **arrays)


def _check_is_npz(path: str | os.PathLike) -> None:
    try:
        with open(path, "rb") as f:
            magic = f.read(6)
    except FileNotFoundError:
        raise WeightsError(f"{path}: no such file") from None
    except OSError as e:
        raise WeightsError(f"{path}: cannot read: {e.strerror or e}") from None
    if magic.startswith(NPY_MAGIC):
        raise WeightsError(f"{path}: a single .npy array, not an .npz weights file")
    if not magic.startswith(ZIP_MAGICS):
        raise WeightsError(f"{path}: not an .npz weights file (not a zip archive)")


def _read_arrays(path: str | os.PathLike) -> dict[str, np.ndarray]:
    key = None
    try:
        with np.load(path, allow_pickle=False) as npz:
            arrays = {}
            for key in npz.files:
                arrays[key] = npz[key]
                if not isinstance(arrays[key], np.ndarray):  # NpzFile returns other members as bytes
                    raise WeightsError(f"{path}: zip member {key!r} is not a .npy array")
            return arrays
    except ValueError as e:
        if "allow_pickle" in str(e):
            raise WeightsError(f"{path}: array {key!r} holds pickled Python objects; refused") from None
        raise WeightsError(f"{path}: array {key!r} is unreadable: {e}") from None
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, KeyError) as e:
        where = f"array {key!r}" if key else "archive"
        raise WeightsError(f"{path}: corrupt or truncated {where}: {e}") from None


def _parse_meta(path: str | os.PathLike, meta: np.ndarray | None) -> dict:
    if meta is None:
        raise WeightsError(f"{path}: no 'meta' entry; not a rasp-compile weights file")
    if meta.shape != () or meta.dtype.kind != "U":
        raise WeightsError(f"{path}: 'meta' must be a 0-d unicode string, "
                           f"got {meta.dtype} {list(meta.shape)}")
    try:
        parsed = json.loads(str(meta))
    except json.JSONDecodeError as e:
        raise WeightsError(f"{path}: 'meta' is not valid JSON ({e})") from None
    if not isinstance(parsed, dict):
        raise WeightsError(f"{path}: 'meta' must be a JSON object")
    return parsed


def load(path: str | os.PathLike) -> Model:
    """Read and validate a weights file; `WeightsError` (one line, naming the problem) otherwise."""
    _check_is_npz(path)
    arrays = _read_arrays(path)
    meta = _parse_meta(path, arrays.pop("meta", None))
    model = Model(meta, arrays)
    try:
        validate(model)
    except WeightsError as e:
        raise WeightsError(f"{path}: {e}") from None
    return model
