"""What every command shares: a parser whose errors are one line, the one error edge (which turns
the project's exceptions into exit statuses), and loading programs and models.

Exit statuses: 0 success, 1 an error in a program (docs/language.md format, with source line and caret),
2 a bad command line, input or file (one line), 130 interrupted (Ctrl-C), 141 a reader that closed
the output early.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING
from collections.abc import Callable, Iterator

import numpy as np

from .. import ir
from ..compiler import OPTIMIZATIONS, compile_program
from ..errors import InputError, OutputError, RaspError, WeightsError, format_error, special_file
from ..frontend import load_checked
from ..frontend.infer import ValueSets
from ..frontend.lower import MAX_LEN_LIMIT
from ..runtime.model import Model
from ..runtime.weights_file import load
from ..safe_text import shortened, terminal_safe, terminal_safe_lines
from ..suggest import did_you_mean
from .progress import status

if TYPE_CHECKING:
    from rich.console import Console


SHOWN_VALUE = 60  # characters of a flag's value quoted in an error (shortened in the middle beyond)


class CliError(Exception):
    """A failure the edge prints as is (to stderr) before exiting with `status`."""

    def __init__(self, message: str, status: int = 2):
        super().__init__(message)
        self.message = message
        self.status = status


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line (no usage block), exit status 2, and whose flags
    that take one value (every flag declared with argparse's default action, `store`) may be given
    once: `--max-len 6 --max-len 7` is refused, not read as 7. A flag meant to repeat says so with
    `action="append"` (`--no-opt NAME`)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.register("action", None, StoreOnce)
        self.register("action", "store", StoreOnce)

    def parse_known_args(self, args=None, namespace=None):
        self.given: dict[str, object] = {}  # StoreOnce's record of this parse: dest -> the value given
        return super().parse_known_args(args, namespace)

    def error(self, message: str):
        raise CliError(f"{self.prog}: error: {message}{self.suggestion(message)} (see --help)")

    def suggestion(self, message: str) -> str:
        """`; did you mean '--trace'?` for the first unrecognised flag of `message` close to a known one."""
        words = message.partition("unrecognized arguments: ")[2].split()
        flag = next((word.partition("=")[0] for word in words if word.startswith("--")), None)
        return "" if flag is None else did_you_mean(flag, [o for a in self._actions for o in a.option_strings])


class StoreOnce(argparse.Action):
    """argparse's `store` (the value, as `type` made it, under `dest`), refusing an option given a
    second time under any of its spellings (`--max-len 6 --max-len=7`, `--max 7`)."""

    def __call__(self, parser, namespace, values, option_string=None):
        given = getattr(parser, "given", None)
        if option_string is not None and given is not None:
            if self.dest in given:
                raise argparse.ArgumentError(self, f"given twice ({shortened(str(given[self.dest]), SHOWN_VALUE)}, "
                                                   f"then {shortened(str(values), SHOWN_VALUE)}); give it once")
            given[self.dest] = values
        setattr(namespace, self.dest, values)


def whole_number(limit: int) -> Callable[[str], int]:
    """An argparse type: a whole number from 1 to `limit`, in ASCII digits (not int()'s " 5",
    "5_0" or "٥"). Every count a flag takes is bounded: `--steps 99999999999999999999` ran forever."""

    def parse(text: str) -> int:
        short = len(text.lstrip("0")) <= len(str(limit))  # int() of 5,000 digits raises, and is slow before
        value = int(text) if text.isascii() and text.isdigit() and short else 0
        if not 1 <= value <= limit:
            raise argparse.ArgumentTypeError(f"expected a whole number from 1 to {limit:,}, got {text!r}")
        return value

    return parse


DTYPES = {"float32": np.float32, "float64": np.float64}


def file_name(text: str) -> str:
    """argparse type: a non-empty file name (`''` would name the current directory)."""
    if not text:
        raise argparse.ArgumentTypeError("expected a file name, got ''")
    return text


def output_path(what: str) -> Callable[[str], str]:
    """argparse type: a file that `what` (weights, a report) can be written to, checked before any
    work: not a directory, FIFO or device (a FIFO would block the write until someone reads it), a
    name the system accepts, in a directory that exists."""

    def check(text: str) -> str:
        path = Path(file_name(text))
        special = special_file(path)
        if special:
            raise argparse.ArgumentTypeError(f"{text} is {special}, not a file to write {what} to")
        try:
            parent_exists = path.parent.is_dir()
            path.exists()  # raises for a name the system refuses (too long): here, not after the work
        except OSError as error:
            raise argparse.ArgumentTypeError(f"{text}: {error.strerror or error}") from None
        if not parent_exists:
            raise argparse.ArgumentTypeError(f"{text}: no such directory {str(path.parent)!r}")
        return text

    return check


def add_compile_flags(parser: Parser, applies: str = "") -> None:
    """--max-len, --dtype and --no-opt, the compiler's options (`applies`: when they apply, for
    --help). --dtype defaults to None, so that a caller can tell it was given; None is float32."""
    parser.add_argument("--max-len", type=whole_number(MAX_LEN_LIMIT), metavar="N",
                        help=f"{applies}override the program's max_len (1 to {MAX_LEN_LIMIT:,}, as in a program)")
    parser.add_argument("--dtype", choices=DTYPES, help=f"{applies}weight dtype (default float32)")
    parser.add_argument("--no-opt", action="append", default=[], metavar="NAME", choices=[*OPTIMIZATIONS, "all"],
                        help=f"{applies}switch an optimisation pass off (repeatable; 'all' for the plain "
                             "constructions): " + ", ".join(OPTIMIZATIONS))


def compile_options(args: argparse.Namespace) -> dict:
    """The keyword arguments of `compile_file` that add_compile_flags' flags give."""
    disabled = tuple(OPTIMIZATIONS) if "all" in args.no_opt else tuple(args.no_opt)
    return {"max_len": args.max_len, "dtype": DTYPES[args.dtype or "float32"], "disabled": disabled}


def add_version(parser: Parser) -> None:
    """--version: the installed package's version (looked up only when asked: a cold start stays fast)."""

    class Version(argparse.Action):
        def __call__(self, parser, namespace, values, option_string=None):
            from importlib.metadata import PackageNotFoundError, version

            try:
                shown = version("rasp-compile")
            except PackageNotFoundError:  # run from a source tree that was never installed
                shown = "unknown (not installed)"
            print(f"{parser.prog} {shown}")
            parser.exit()

    parser.add_argument("--version", action=Version, nargs=0, help="print the version and exit")


def run_edge(body: Callable[[argparse.Namespace], int], parser: Parser, argv: list[str] | None) -> int:
    """Parse `argv` and run `body`; the only place where errors become messages and statuses."""
    if sys.stdout is None:  # started with standard output closed (`>&-`): nowhere to answer
        print("error: standard output is closed", file=sys.stderr)
        return 2
    _escape_what_cannot_be_encoded()
    try:
        status = body(parser.parse_args(argv))
        sys.stdout.flush()  # here, not at exit: a reader that left is then a BrokenPipeError below
        return status
    except SystemExit as done:  # --help and --version exit through argparse
        return int(done.code or 0)
    except CliError as error:
        print(terminal_safe_lines(error.message), file=sys.stderr)
        return error.status
    except (InputError, WeightsError, OutputError) as error:
        print(f"error: {terminal_safe_lines(str(error))}", file=sys.stderr)
        return 2
    except RaspError as error:  # a program error outside `program_errors`: no source line to show
        print(terminal_safe_lines(format_error(error, None)), file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # Ctrl-C: no traceback; an output being written is left as it was
        print("interrupted", file=sys.stderr)
        return 130  # 128 + SIGINT, what a shell shows for a command stopped by Ctrl-C
    except BrokenPipeError:  # the reader left (`rasp-run ... | head`): stop quietly
        _quiet_stdout()
        return 141  # 128 + SIGPIPE: the status a shell shows for `cat` stopped by a closed pipe
    except OSError as error:  # standard output unwritable (a full disk, /dev/full)
        _quiet_stdout()
        print(f"error: cannot write the output: {terminal_safe(str(error.strerror or error))}", file=sys.stderr)
        return 2


def _escape_what_cannot_be_encoded() -> None:
    """A character the output's encoding lacks (`é` with PYTHONIOENCODING=ascii) printed as its
    escape, `\\xe9`, instead of failing: what Python already does on stderr."""
    for stream in (sys.stdout, sys.stderr):
        if stream is not None and hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")


def _quiet_stdout() -> None:
    """Point standard output at /dev/null, so that the flush at exit raises nothing more."""
    if sys.stdout is not None:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


@contextmanager
def program_errors(filename: str, source: str | None = None) -> Iterator[None]:
    """Report a RaspError raised inside the block in the docs/language.md format (exit status 1).

    `source` defaults to the text of the file `filename`, for the source line and caret."""
    try:
        yield
    except RaspError as error:
        if source is None:
            source = _text_or_none(filename)
        raise CliError(format_error(error, source, filename), status=1) from None


def _text_or_none(path: str) -> str | None:
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def compile_file(
    path: str, max_len: int | None = None, dtype=np.float32, disabled: tuple[str, ...] = (), progress: bool = False
) -> tuple[ir.Program, Model, ValueSets]:
    """The checked program of a `.rasp` file (at `max_len` if given), its compiled model,
    without the optimisation passes named in `disabled`, and its value sets at that max_len.
    `progress`: say on a terminal's stderr what is being compiled, when it takes a while."""
    at = "" if max_len is None else f" at max_len {max_len:,}"
    with program_errors(path), status(f"compiling {path}{at}", progress):
        program, value_sets = load_checked(path, max_len)
        return program, compile_program(program, dtype=dtype, disabled=disabled, value_sets=value_sets), value_sets


def load_model(path: str, **options) -> tuple[Model, ir.Program | None]:
    """A weights file, or a `.rasp` program compiled on the fly (with compile_file's `options`,
    `progress` among them) and that program."""
    if path.endswith(".rasp"):
        program, model, _ = compile_file(path, **options)
        return model, program
    with status(f"loading {path}", options.get("progress", False)):
        return load(path), None


def check_one_pass(model: Model, tokens: list, flag: str) -> None:
    """InputError unless `tokens` fit one forward pass (what `flag` shows), causal model or not."""
    if len(tokens) > model.meta["max_len"]:
        raise InputError(f"input of {len(tokens)} tokens is longer than max_len {model.meta['max_len']}; "
                         f"{flag} shows one forward pass")


def print_json(report: dict) -> None:
    print(json.dumps(report, indent=2))


def make_console() -> Console:
    """A console on the current stdout (so test capture works); no syntax highlighting of numbers.
    rich is imported here, not at the top: `--json` output and errors never need it, and it is a
    sixth of a cold start."""
    from rich.console import Console

    class PipeConsole(Console):
        def on_broken_pipe(self) -> None:  # rich's own exits with status 1; run_edge owns that case
            raise BrokenPipeError

    return PipeConsole(file=sys.stdout, highlight=False, emoji=False)  # `:smile:` in a token stays text
