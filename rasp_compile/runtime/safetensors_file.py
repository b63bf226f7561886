"""The weights as a `.safetensors` file: the arrays of docs/format.md under the same keys, and
`meta` as JSON in the file's metadata (docs/interop.md).

The layout is safetensors' own: 8 bytes (little-endian u64) giving the header's length, the header
(a JSON object: per array its `dtype`, `shape` and `data_offsets` [begin, end) into the data, plus
`"__metadata__": {"meta": "<meta as JSON>"}`), then the data, each array little-endian and
C-ordered, one after another. The `safetensors` package opens these files as they are
(`safetensors.numpy.load_file`, `safe_open(...).metadata()`).

Both directions are written here with NumPy and the standard library, so `.safetensors` needs no
optional extra, and the reader makes the same checks as the `.npz` loader, in the same order:
the header's length against the file, its JSON (no key twice), every entry's dtype (F32 or F64),
shape and offsets (within the data, tiling it exactly: no overlap, no gap), their total against
a memory ceiling, then meta and the shapes meta implies (`check_structure` on zero-memory
stand-ins), and only then the data, and last its values. Anything else is a one-line
`WeightsError`.
"""

from __future__ import annotations

import json
import math
import os
import struct
from collections.abc import Callable
from typing import Any, BinaryIO

import numpy as np

from ..errors import WeightsError, special_file
from .atomic_write import StrPath
from .model import Model, check_structure, check_values, meta_from_json

LENGTH_BYTES = 8  # the header's length, a little-endian u64, opens the file
MAX_HEADER_BYTES = 100_000_000  # the most the safetensors package itself accepts
METADATA = "__metadata__"
META_KEY = "meta"  # where meta's JSON lives in __metadata__ (whose values must be strings)
DTYPES: dict[str, np.dtype[Any]] = {"F32": np.dtype("<f4"), "F64": np.dtype("<f8")}
DTYPE_NAMES = {np.dtype(np.float32): "F32", np.dtype(np.float64): "F64"}
HEADER_ALIGNMENT = 8  # the header is padded with spaces so the data starts 8-byte aligned
ENTRY_FIELDS = {"dtype", "shape", "data_offsets"}
Entry = tuple[np.dtype[Any], tuple[int, ...], int]  # an array's dtype, shape and where its data begins
MAX_COUNT = int(np.iinfo(np.intp).max)  # no dimension or offset can be larger (JSON's ints can)


def to_bytes(model: Model) -> bytes:
    """The whole file for a valid model (validate it first): arrays in the model's dtype (float64
    stays float64, anything else is written as float32), in sorted key order."""
    name = "F64" if model.dtype == np.float64 else "F32"
    header: dict[str, Any] = {METADATA: {META_KEY: json.dumps(model.meta)}}
    chunks, offset = [], 0
    for key in sorted(model.params):
        array = model.params[key]
        data = np.ascontiguousarray(array, dtype=DTYPES[name]).tobytes()
        header[key] = {"dtype": name, "shape": list(array.shape), "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % HEADER_ALIGNMENT)
    return struct.pack("<Q", len(text)) + text + b"".join(chunks)


def _open(path: str | os.PathLike[str]) -> BinaryIO:
    special = special_file(path)
    if special:
        raise WeightsError(f"{path}: {special}, not a .safetensors weights file")
    try:
        return open(path, "rb")
    except FileNotFoundError:
        raise WeightsError(f"{path}: no such file") from None
    except OSError as e:
        raise WeightsError(f"{path}: cannot read: {e.strerror or e}") from None


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """json.loads' object_pairs_hook: a key twice is refused (json keeps the last; another reader
    may take the first)."""
    keys = [key for key, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError(f"the key {next(k for k in keys if keys.count(k) > 1)!r} appears twice")
    return dict(pairs)


def _read_header(path: StrPath, f: BinaryIO, file_bytes: int) -> tuple[dict[str, Any], int]:
    """The header as a JSON object, and the number of data bytes after it. Reads at most
    MAX_HEADER_BYTES, and never more than the file holds."""
    prefix = f.read(LENGTH_BYTES)
    if len(prefix) < LENGTH_BYTES:
        raise WeightsError(f"{path}: not a .safetensors weights file (shorter than its 8-byte header length)")
    (length,) = struct.unpack("<Q", prefix)
    if length > min(MAX_HEADER_BYTES, file_bytes - LENGTH_BYTES):
        raise WeightsError(f"{path}: not a .safetensors weights file (its header length {length:,} "
                           f"exceeds the file's {file_bytes:,} bytes or the {MAX_HEADER_BYTES:,} allowed)")
    text = f.read(length)
    if not text.startswith(b"{"):
        raise WeightsError(f"{path}: not a .safetensors weights file (its header is no JSON object)")
    try:
        header = json.loads(text.decode("utf-8"), object_pairs_hook=_unique_keys)
    except (ValueError, RecursionError) as e:  # bad UTF-8 or JSON, a key twice, nesting too deep
        raise WeightsError(f"{path}: its .safetensors header is not valid JSON ({e})") from None
    if not isinstance(header, dict):
        raise WeightsError(f"{path}: its .safetensors header is no JSON object")
    return header, file_bytes - LENGTH_BYTES - length


def _parse_meta(path: StrPath, metadata: Any) -> dict[str, Any]:
    """meta from the header's __metadata__: a JSON string under "meta", holding a JSON object."""
    if not isinstance(metadata, dict) or not isinstance(metadata.get(META_KEY), str):
        raise WeightsError(f"{path}: no '{META_KEY}' string in the header's {METADATA}; "
                           "not a rasp-compile weights file")
    return meta_from_json(path, metadata[META_KEY])


def _is_count(value: object) -> bool:
    """A whole number from 0 up to the longest array dimension or byte offset there can be."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_COUNT


def _entry(path: StrPath, key: str, entry: Any) -> tuple[np.dtype[Any], tuple[int, ...], int, int]:
    """One array's (dtype, shape, begin, end) from its header entry, each checked."""
    if not isinstance(entry, dict) or set(entry) != ENTRY_FIELDS:
        raise WeightsError(f"{path}: array {key!r}: its header entry must hold exactly "
                           + ", ".join(sorted(ENTRY_FIELDS)))
    if not isinstance(entry["dtype"], str) or entry["dtype"] not in DTYPES:
        raise WeightsError(f"{path}: array {key!r} has dtype {str(entry['dtype'])[:20]!r}; expected F32 or F64")
    shape, offsets = entry["shape"], entry["data_offsets"]
    if not (isinstance(shape, list) and shape and all(_is_count(n) and n > 0 for n in shape)):
        raise WeightsError(f"{path}: array {key!r}: its shape must be a list of positive whole numbers "
                           "(array dimensions)")
    if not (isinstance(offsets, list) and len(offsets) == 2 and all(map(_is_count, offsets))):
        raise WeightsError(f"{path}: array {key!r}: data_offsets must be two whole numbers")
    dtype = DTYPES[entry["dtype"]]
    begin, end = offsets
    if end - begin != math.prod(shape) * dtype.itemsize:
        raise WeightsError(f"{path}: corrupt array {key!r}: its shape {shape} takes "
                           f"{math.prod(shape) * dtype.itemsize:,} bytes, its offsets span {end - begin:,}")
    return dtype, tuple(shape), begin, end


def _read_entries(path: StrPath, header: dict[str, Any], data_bytes: int, max_bytes: int) -> dict[str, Entry]:
    """Every array's (dtype, shape, begin) by key. The arrays must tile the data exactly, in
    order of their offsets (as the safetensors package requires), and take at most `max_bytes`."""
    entries = {key: _entry(path, key, entry) for key, entry in header.items()}
    position = 0
    for key, (_, _, begin, end) in sorted(entries.items(), key=lambda item: item[1][2:]):
        if begin != position:
            problem = "overlaps the array before it" if begin < position else "leaves a gap before it"
            raise WeightsError(f"{path}: corrupt array {key!r}: its data {problem}")
        position = end
        if position > max_bytes:
            raise WeightsError(f"{path}: the arrays would take over {max_bytes / 1e9:g} GB of "
                               "memory, more than any model rasp-compile builds; refused")
    if position != data_bytes:
        raise WeightsError(f"{path}: corrupt or truncated: the header describes {position:,} bytes "
                           f"of data, the file holds {data_bytes:,}")
    return {key: (dtype, shape, begin) for key, (dtype, shape, begin, _) in entries.items()}


def _read_array(path: StrPath, f: BinaryIO, data_start: int, key: str, entry: Entry) -> np.ndarray:
    """The data of array `key`, whose (dtype, shape, begin) `entry` was checked, in native byte order."""
    dtype, shape, begin = entry
    f.seek(data_start + begin)
    array = np.fromfile(f, dtype=dtype, count=math.prod(shape))
    if array.size != math.prod(shape):
        raise WeightsError(f"{path}: truncated while being read (array {key!r})")
    return array.reshape(shape).astype(dtype.newbyteorder("="), copy=False)  # native order, as .npz gives


def _validated(path: StrPath, check: Callable[[Model], None], model: Model) -> None:
    """`check(model)`, its `WeightsError` prefixed with the file's name."""
    try:
        check(model)
    except WeightsError as e:
        raise WeightsError(f"{path}: {e}") from None


def load(path: str | os.PathLike[str], max_bytes: int) -> Model:
    """Read and validate a `.safetensors` weights file whose arrays may take at most `max_bytes`;
    `WeightsError` (one line, naming the problem) otherwise. Every allocation is bounded: the
    header (at most MAX_HEADER_BYTES) first, then its entries, meta and the shapes meta implies
    are checked before any array is read."""
    with _open(path) as f:
        try:
            file_bytes = os.fstat(f.fileno()).st_size
            header, data_bytes = _read_header(path, f, file_bytes)
            meta = _parse_meta(path, header.pop(METADATA, None))
            entries = _read_entries(path, header, data_bytes, max_bytes)
            stand_ins = {key: np.broadcast_to(np.zeros((), dtype.newbyteorder("=")), shape)
                         for key, (dtype, shape, _) in entries.items()}
            _validated(path, check_structure, Model(meta, stand_ins))  # dtypes and shapes: no data read
            data_start = file_bytes - data_bytes
            params = {key: _read_array(path, f, data_start, key, entry) for key, entry in entries.items()}
        except OSError as e:  # the file failed while being read
            raise WeightsError(f"{path}: cannot read: {e.strerror or e}") from None
    model = Model(meta, params)
    _validated(path, check_values, model)
    return model
