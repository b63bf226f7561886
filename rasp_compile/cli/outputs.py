"""What a command may write its output over (docs/cli.md, "Output files"): the one check every flag
that writes a file makes (`rasp-compile --emit`, `rasp-run --html`), before any work.

An output never replaces the command's input, under any name (runtime/atomic_write.check_output),
nor a file that exists and is not a regular, writable one. Beyond that, an output may replace a
file of its own kind (`--emit` a weights file, rewritten by a new compile), but a program or a
weights file only when the user says `--force`: `--html other.rasp` is a typo, not a wish.
What an existing file is, is told by its name and, where that is cheap, by its first bytes:

    program   a name ending in `.rasp`, or text that declares `vocab {` and `max_len N` as a
              program does (in its first PROGRAM_PEEK bytes)
    weights   a name ending in `.npz` or `.safetensors`, or a zip archive holding a `meta.npy`
              entry, or a file in safetensors' layout whose header holds `__metadata__`
"""

from __future__ import annotations

import argparse
import re
import struct
import zipfile
from pathlib import Path

from ..errors import OutputError
from ..runtime.atomic_write import check_output

PROGRAM = "a program"
WEIGHTS = "a weights file"
PROGRAM_PEEK = 65_536  # bytes of an existing file read to tell whether it is a program
SAFETENSORS_PEEK = 4_096  # bytes of a safetensors header read to find its `__metadata__`
NAMES = {".rasp": PROGRAM, ".npz": WEIGHTS, ".safetensors": WEIGHTS}
DECLARES = [re.compile(rf"(?:^|;)[ \t]*{word}", re.MULTILINE) for word in (r"vocab[ \t]*\{", r"max_len[ \t]+\d")]


def add_force(parser: argparse.ArgumentParser, outputs: str) -> None:
    """--force: let the flags `outputs` names replace an existing program or weights file."""
    parser.add_argument("--force", action="store_true",
                        help=f"let {outputs} replace an existing program or weights file (never the input)")


def check_force(force: bool, writes: bool, outputs: str) -> None:
    """OutputError when --force is given and no flag writes a file (`writes`): it would do nothing."""
    if force and not writes:
        raise OutputError(f"--force applies only with {outputs}, which writes a file; nothing is written here")


def check_output_file(flag: str, path: str, inputs: list[str], kind: str, force: bool) -> None:
    """OutputError unless `flag` may write its output, of `kind` (PROGRAM, WEIGHTS or another
    name), to `path`: never over one of `inputs`, and over an existing program or weights file
    of another kind only with `force` (see the module docstring)."""
    check_output(path, inputs)
    existing = existing_kind(Path(path))
    if existing is not None and existing != kind and not force:
        raise OutputError(f"{flag} {path}: that file is {existing}; refusing to replace it with "
                          f"{kind} (give another name, or --force to replace it)")


def existing_kind(path: Path) -> str | None:
    """PROGRAM or WEIGHTS when `path` is an existing file of that kind (by name or content), else None."""
    if not path.is_file():
        return None
    by_name = NAMES.get(path.suffix.lower())
    if by_name is not None:
        return by_name
    try:
        with path.open("rb") as f:
            start = f.read(PROGRAM_PEEK)
    except OSError:
        return None
    if _is_weights(path, start):
        return WEIGHTS
    text = start.decode("utf-8", errors="replace")
    return PROGRAM if all(pattern.search(text) for pattern in DECLARES) else None


def _is_weights(path: Path, start: bytes) -> bool:
    """A zip archive with a `meta.npy` entry (.npz), or safetensors' layout with `__metadata__`."""
    if start.startswith(b"PK"):
        try:
            with zipfile.ZipFile(path) as archive:  # reads the central directory only
                return "meta.npy" in archive.namelist()
        except (zipfile.BadZipFile, OSError, ValueError):
            return False
    if len(start) > 9 and start[8:9] == b"{":
        (length,) = struct.unpack("<Q", start[:8])
        return b'"__metadata__"' in start[8:8 + min(length, SAFETENSORS_PEEK)]
    return False
