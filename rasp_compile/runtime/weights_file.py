"""Saving and loading the `.npz` weights file of docs/format.md.

`save` writes one `numpy.savez` file, atomically (atomic_write.py): `meta` as a 0-d unicode array
holding JSON, every other array under its flat key, float32 unless the model's arrays are float64.
`load` reads with `allow_pickle=False` (always: a weights file never runs code) and refuses anything
it cannot trust with a one-line `WeightsError`, then validates the model like the compiler does. It reads every
member's .npy header, and checks the dtypes and shapes against meta, before reading any data, so a
header claiming a huge shape or a decompression bomb is refused without allocating it.
"""

from __future__ import annotations

import json
import math
import os
import tokenize
import warnings
import zipfile
import zlib
from typing import Any
from contextlib import contextmanager
from collections.abc import Iterable, Iterator

import numpy as np

from ..compiler.budget import MAX_PARAMETERS
from ..errors import WeightsError, special_file
from . import safetensors_file
from .atomic_write import write_atomically
from .model import Model, check_structure, check_values, meta_from_json, validate

ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")  # a zip with members / an empty zip
NPY_MAGIC = b"\x93NUMPY"
NPY_HEADER_READERS = {(1, 0): np.lib.format.read_array_header_1_0,
                      (2, 0): np.lib.format.read_array_header_2_0}
# The most memory the arrays may take, summed from the .npy headers before any data is read: twice
# the parameters the compiler builds at most (its budget is an estimate), in float64. Each array's
# shape must also be exactly what meta implies, but meta's sizes are claims of the same untrusted
# file, so this ceiling is what refuses a decompression bomb (zeros deflate ~1000:1) unallocated.
MAX_MODEL_BYTES = 2 * MAX_PARAMETERS * np.dtype(np.float64).itemsize  # 1.6 GB


def save(model: Model, path: str | os.PathLike[str], inputs: Iterable[str | os.PathLike[str]] = ()) -> None:
    """Validate the model and write it to exactly `path` (no `.npz` appended), whole or not at all
    (atomic_write: never a half-written file, never over one of `inputs`, the files the caller read).
    A path ending in `.safetensors` gets that format (docs/interop.md)."""
    validate(model)
    if is_safetensors(path):
        write_atomically(path, safetensors_file.to_bytes(model), inputs)
        return
    dtype = np.float64 if model.dtype == np.float64 else np.float32
    arrays = {key: array.astype(dtype) for key, array in model.params.items()}
    write_atomically(path, lambda f: np.savez(f, meta=np.array(json.dumps(model.meta)), **arrays), inputs)  # type: ignore[arg-type]  # numpy's stub takes **arrays for its bool flag


def is_safetensors(path: str | os.PathLike[str]) -> bool:
    """Whether `path` names a `.safetensors` file (by its extension, in any case)."""
    return os.fspath(path).lower().endswith(".safetensors")


def _check_is_npz(path: str | os.PathLike[str]) -> None:
    special = special_file(path)
    if special:
        raise WeightsError(f"{path}: {special}, not an .npz weights file")
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


@contextmanager
def _reading(path: str | os.PathLike[str], key: str | None = None) -> Iterator[None]:
    """Turn a failure of the zip or .npy layer inside the block into a one-line `WeightsError`
    naming the array `key` (or the archive)."""
    where = f"array {key!r}" if key else "archive"
    try:
        yield
    except (ValueError, SyntaxError, tokenize.TokenError) as e:  # a malformed .npy header (numpy parses it)
        raise WeightsError(f"{path}: {where} is unreadable: {e}") from None
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, KeyError,
            NotImplementedError, RuntimeError) as e:  # the last two: unknown compression, encryption
        raise WeightsError(f"{path}: corrupt or truncated {where}: {e}") from None


@contextmanager
def _naming(path: str | os.PathLike[str]) -> Iterator[None]:
    """Prefix the file's name to a `WeightsError` of the validator raised inside the block."""
    try:
        yield
    except WeightsError as e:
        raise WeightsError(f"{path}: {e}") from None


def _read_header(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> tuple[np.dtype[Any], tuple[int, ...], int]:
    """A member's .npy header: (dtype, shape, header length in bytes). Reads no array data."""
    with archive.open(info) as f, warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)  # numpy parses the header as Python: garbage warns
        version = np.lib.format.read_magic(f)
        if version not in NPY_HEADER_READERS:
            raise ValueError(f".npy format version {version} is not supported")
        shape, _, dtype = NPY_HEADER_READERS[version](f)
        if not all(type(n) is int for n in shape):  # numpy's reader lets (True, 9) through
            raise ValueError(f"its header's shape {shape} is not a tuple of whole numbers")
        if dtype.itemsize == 0 or min(shape, default=1) < 1:  # every array of the format has elements
            raise ValueError(f"empty array ({dtype} {list(shape)})")
        return dtype, shape, f.tell()


def _read_headers(path: str | os.PathLike[str], archive: zipfile.ZipFile) -> dict[str, np.ndarray]:
    """Every member's dtype and shape from its .npy header alone, as a zero-memory stand-in array
    (`np.broadcast_to`) that `check_structure` can judge before any data is read. A header must
    describe exactly the data the archive records for its member, and all of them together at
    most MAX_MODEL_BYTES."""
    stand_ins, total = {}, 0
    for info in archive.infolist():
        key = info.filename.removesuffix(".npy")
        if key == info.filename:
            raise WeightsError(f"{path}: zip member {key!r} is not a .npy array")
        if key in stand_ins:  # zipfile reads the last; another reader may take the first
            raise WeightsError(f"{path}: the archive holds array {key!r} twice")
        with _reading(path, key):
            dtype, shape, header_bytes = _read_header(archive, info)
        if dtype.hasobject:
            raise WeightsError(f"{path}: array {key!r} holds pickled Python objects; refused")
        nbytes = math.prod(shape) * dtype.itemsize
        if header_bytes + nbytes != info.file_size:
            raise WeightsError(f"{path}: corrupt array {key!r}: its header describes {nbytes:,} bytes "
                               f"of data, the archive holds {info.file_size - header_bytes:,}")
        total += nbytes
        if total > MAX_MODEL_BYTES:
            raise WeightsError(f"{path}: the arrays would take over {MAX_MODEL_BYTES / 1e9:g} GB of "
                               "memory, more than any model rasp-compile builds; refused")
        stand_ins[key] = np.broadcast_to(np.zeros((), dtype), shape)
    return stand_ins


def _read_array(path: str | os.PathLike[str], archive: zipfile.ZipFile, key: str) -> np.ndarray:
    with _reading(path, key), archive.open(f"{key}.npy") as f:
        return np.lib.format.read_array(f, allow_pickle=False)


def _parse_meta(path: str | os.PathLike[str], archive: zipfile.ZipFile, stand_in: np.ndarray | None) -> dict[str, Any]:
    """meta, checked to be a 0-d unicode string (from its header's stand-in), then read and parsed
    as a JSON object."""
    if stand_in is None:
        raise WeightsError(f"{path}: no 'meta' entry; not a rasp-compile weights file")
    if stand_in.shape != () or stand_in.dtype.kind != "U":
        raise WeightsError(f"{path}: 'meta' must be a 0-d unicode string, "
                           f"got {stand_in.dtype} {list(stand_in.shape)}")
    return meta_from_json(path, str(_read_array(path, archive, "meta")))


def load(path: str | os.PathLike[str]) -> Model:
    """Read and validate a weights file; `WeightsError` (one line, naming the problem) otherwise.

    The order keeps every allocation bounded: the .npy headers first (their total against
    MAX_MODEL_BYTES), then meta (JSON), then the keys, dtypes and shapes meta implies
    (`check_structure` on the headers' stand-ins); only then the arrays' data, and last their
    values. A path ending in `.safetensors` is read as that format, with the same checks."""
    if is_safetensors(path):
        return safetensors_file.load(path, MAX_MODEL_BYTES)
    _check_is_npz(path)
    with _reading(path), zipfile.ZipFile(path) as archive:
        stand_ins = _read_headers(path, archive)
        meta = _parse_meta(path, archive, stand_ins.pop("meta", None))
        with _naming(path):
            check_structure(Model(meta, stand_ins))  # dtypes and shapes only: no data read yet
        model = Model(meta, {key: _read_array(path, archive, key) for key in stand_ins})
    with _naming(path):
        check_values(model)
    return model
