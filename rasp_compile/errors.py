"""The project's error types, and the `FILE:LINE:COL: error: MESSAGE` format of docs/language.md, "Errors".

Every error raised for a user to meet derives from `Error` (`rasp_compile.Error`), so `except
rc.Error` catches them all, and any other exception is a bug of the library. Every problem in a
program surfaces as a `RaspError` carrying a source location; the command line prints
`format_error(...)` and exits 1. Problems with inputs, weight files or output files (not programs)
are `InputError` / `WeightsError` / `OutputError`: one line, exit status 2 on the command line. A
call from Python given an argument it does not take raises `ArgumentError` (a ValueError) or
`ArgumentTypeError` (a TypeError); a missing optional extra, `MissingExtraError`; a layer or head
the model does not have, `NotInModel`; an s-op its residual stream does not hold, `NotInResidual`.
"""

from __future__ import annotations

import os
import stat
import unicodedata
from contextlib import contextmanager
from dataclasses import dataclass
from collections.abc import Iterator

from .safe_text import terminal_safe


@dataclass(frozen=True)
class Loc:
    """A position in program text: 1-based line and column."""

    line: int
    col: int


class Error(Exception):
    """The base of every error raised for a user to meet (see the module's docstring)."""


class RaspError(Error):
    """An error in a program: syntax, names, kinds, arity, encodings, lambdas that fail, ...

    `loc` is None only for programs built from Python (the embedded API) where no text exists.
    """

    def __init__(self, message: str, loc: Loc | None = None):
        super().__init__(message)
        self.message = message
        self.loc = loc

    def __str__(self) -> str:
        return self.message  # which `attributed` may have extended

    @property
    def line(self) -> int | None:
        return self.loc.line if self.loc else None

    @property
    def col(self) -> int | None:
        return self.loc.col if self.loc else None


class RaspSyntaxError(RaspError):
    """The text does not follow the grammar."""


class RaspNameError(RaspError):
    """A name that is not bound, bound twice, or a declaration given twice or missing."""


class RaspTypeError(RaspError):
    """A wrong kind (s-op / selector / scalar), argument count or encoding."""


class RaspValueError(RaspError):
    """A lambda that fails on some input values, or a value set that cannot be inferred."""


class RaspSizeError(RaspValueError):
    """The program is sound and every value set within the checker's limits, but its model would
    be larger than the compiler builds (compiler/budget.py); the message says which part."""


class RaspRuntimeError(RaspError):
    """The reference interpreter met a program error on a concrete input (e.g. a categorical
    aggregate that selects several different values)."""


class RaspPrecisionError(RaspError):
    """The program is sound, but the requested float dtype cannot compile it exactly: its
    numbers are too large for the gaps between them (compiler/precision.py)."""


class InputError(Error):
    """A bad input sequence (a token outside the vocab, too long): one line, exit status 2."""


class WeightsError(Error):
    """A weights file that cannot be trusted (missing keys, wrong shapes, pickled objects, ...)."""


class OutputError(Error):
    """An output file that must not be written: an input of the command, read-only, not a regular
    file. One line, exit status 2 on the command line."""


class ArgumentError(Error, ValueError):
    """An argument a function does not take: a max_len out of range, an unknown optimisation or
    comparison, a vocab holding the BOS token, a file name where program text is expected."""


class ArgumentTypeError(Error, TypeError):
    """An argument of a kind a function does not take: a str where a list of inputs is expected,
    something other than a function where a program needs one, an s-op called or compared with a
    list, a tracr object `from_tracr` has no rule for."""


class MissingExtraError(Error, ModuleNotFoundError):
    """An optional dependency is not installed; the message says which extra (or package) brings it."""


class NotInModel(Error, IndexError):
    """A layer or head the model does not have."""


class NotInResidual(Error, LookupError):
    """A named s-op the residual stream does not hold (folded away, pruned, or no such name)."""

    def __str__(self) -> str:  # KeyError would quote the message; a LookupError prints it as it is
        return self.args[0]


SHOWN_COLUMNS = 120
"""The widest source line an error shows whole; a longer one is cut around the caret."""


def format_error(error: RaspError, source: str | None, filename: str = "<program>") -> str:
    """`FILE:LINE:COL: error: MESSAGE`, then the source line and a caret under the column.

    Characters a terminal would act on (escape sequences in a string, say) are shown escaped
    (`\\x1b`, safe_text.terminal_safe), in the name and the message too, with the caret still under
    its character; a line wider than SHOWN_COLUMNS is cut to that much around the caret, with `...`
    where it was cut (a 200,000-token vocab is one line of 1.7 MB)."""
    name, message = terminal_safe(filename), terminal_safe(error.message)
    if error.loc is None:
        return f"{name}: error: {message}"
    head = f"{name}:{error.loc.line}:{error.loc.col}: error: {message}"
    lines = (source or "").splitlines()
    if not 1 <= error.loc.line <= len(lines):
        return head
    text, column = _around(lines[error.loc.line - 1].expandtabs(1), max(error.loc.col, 1) - 1)
    return f"{head}\n{text}\n{' ' * column}^"


def _around(line: str, caret: int) -> tuple[str, int]:
    """The terminal-safe `line`, cut to about SHOWN_COLUMNS columns around character `caret` when
    wider, and the column of that character in it. Each character becomes one piece (an escape
    for a control character), measured in the columns a terminal gives it. Only the characters
    near the caret are measured (a line may be megabytes long)."""
    near = 4 * SHOWN_COLUMNS  # characters take at least one column, but for combining marks
    first = max(min(caret, len(line)) - near, 0)
    pieces = [terminal_safe(c) for c in line[first:caret + near]]
    widths = [_width(piece) for piece in pieces]
    caret -= first
    past_end = max(caret - len(pieces), 0)  # a caret after the line's last character
    more_before, more_after = first > 0, first + len(pieces) < len(line)
    if sum(widths) <= SHOWN_COLUMNS and not (more_before or more_after):
        return "".join(pieces), sum(widths[:caret]) + past_end
    start, used = min(caret, len(pieces)), 0
    while start > 0 and used + widths[start - 1] <= SHOWN_COLUMNS // 2:
        start, used = start - 1, used + widths[start - 1]
    end, used = start, 0
    while end < len(pieces) and used + widths[end] <= SHOWN_COLUMNS:
        end, used = end + 1, used + widths[end]
    while start > 0 and used + widths[start - 1] <= SHOWN_COLUMNS:  # near the end: show more before
        start, used = start - 1, used + widths[start - 1]
    cut_before, cut_after = start > 0 or more_before, end < len(pieces) or more_after
    text = ("..." if cut_before else "") + "".join(pieces[start:end]) + ("..." if cut_after else "")
    return text, (3 if cut_before else 0) + sum(widths[start:caret]) + past_end


def _width(piece: str) -> int:
    """The columns a terminal gives `piece`: 2 per wide (East Asian) character, 0 per combining mark."""
    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
               for c in piece)


@contextmanager
def recursion_refused(loc: Loc | None) -> Iterator[None]:
    """Python's RecursionError, which a long enough chain of definitions or s-ops reaches in
    the recursive passes (expanding defs, composing folded maps, normalising selectors), as a
    program error at `loc` instead of a traceback."""
    try:
        yield
    except RecursionError:
        raise RaspValueError(
            "the program's chain of definitions, s-ops or selectors is too long for this compiler "
            "(it reached Python's recursion limit); shorten the chain",
            loc,
        ) from None


def attributed(error: RaspError, description: str) -> RaspError:
    """`error`, which has no place in any text (a program built in Python has none), made to name
    the s-op it comes from, `description` (`'prev'`, `the map`): `in 'prev': MESSAGE`, unless it
    names it already. An error with a place is returned as it is: its caret shows the s-op."""
    if error.loc is None and description not in error.message:
        error.message = f"in {description}: {error.message}"
    return error


@contextmanager
def placed_at(loc: Loc | None) -> Iterator[None]:
    """A RaspError raised inside without a place of its own (one about a built-in s-op, which
    is written nowhere: `length` read too finely for the dtype) is given `loc`."""
    try:
        yield
    except RaspError as error:
        if error.loc is None:
            error.loc = loc
        raise


def special_file(path) -> str | None:
    """What `path` is when it exists but is no regular file (a FIFO would block a read until
    someone writes to it, a device may never end): "a directory", "a FIFO", ...; else None."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None  # missing or unreadable: the open that follows says which
    if stat.S_ISREG(mode):
        return None
    return "a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode) else "not a regular file"
