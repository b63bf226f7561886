"""Writing an output file so that no input is lost and no half file is ever left behind.

`write_atomically(path, content, inputs)` refuses a `path` that is one of the command's `inputs`
(the same file under any name: `./x`, a symlink, a hard link), or that exists and is not a regular
writable file; then writes `content` (bytes, or a callback writing to a binary file object) to a new
temporary file in the destination's directory, flushes it to disk and renames it over `path` in one
step. An interrupted run (an error, Ctrl-C, a full disk) leaves the old file, or none, never a
partial one. Every writer of the project's files goes through here (the `.npz` weights file, and
any other format's writer).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from collections.abc import Callable, Iterable
from typing import BinaryIO

from ..errors import OutputError

Content = bytes | Callable[[BinaryIO], None]
StrPath = str | os.PathLike[str]


def check_output(path: StrPath, inputs: Iterable[StrPath] = ()) -> None:
    """OutputError unless `path` may be (over)written: not one of `inputs` under any name, and,
    when it exists, a regular file the user may write and that is not marked read-only."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return  # a new file cannot be an input (a dangling symlink is followed at the write)
    except OSError as error:
        raise OutputError(f"{path}: {error.strerror or error}") from None
    for source in inputs:
        if _same_file(info, source):
            raise OutputError(f"{path} is the input {source}; refusing to overwrite it "
                              "(give the output another name)")
    if not stat.S_ISREG(info.st_mode):
        raise OutputError(f"{path} exists and is not a regular file; refusing to replace it")
    if not info.st_mode & 0o222 or not os.access(path, os.W_OK):  # the bits: also for root
        raise OutputError(f"{path} is read-only; refusing to replace it")


def _same_file(info: os.stat_result, other: StrPath) -> bool:
    try:
        theirs = os.stat(other)
    except OSError:
        return False
    return (info.st_dev, info.st_ino) == (theirs.st_dev, theirs.st_ino)


def write_atomically(path: StrPath, content: Content, inputs: Iterable[StrPath] = ()) -> None:
    """Write `content` to `path` whole or not at all, after `check_output(path, inputs)`.

    A symlink at `path` is written through (its target is replaced); a replaced file keeps its
    permissions, a new one gets the usual ones (0666 less the umask)."""
    check_output(path, inputs)
    target = Path(os.path.realpath(path))
    temporary = target.with_name(f".rasp-compile-{os.urandom(6).hex()}.tmp")  # short: any name fits
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(descriptor, "wb") as f:
            if callable(content):
                content(f)
            else:
                f.write(content)
            f.flush()
            os.fsync(f.fileno())
        if target.exists():
            os.chmod(temporary, stat.S_IMODE(os.stat(target).st_mode))
        os.replace(temporary, target)
    except BaseException:  # also KeyboardInterrupt: the temporary file must not stay behind
        temporary.unlink(missing_ok=True)
        raise
    _sync_directory(target.parent)


def _sync_directory(directory: Path) -> None:
    """Make the rename itself durable where the system allows it (not on every file system)."""
    try:
        descriptor = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)
