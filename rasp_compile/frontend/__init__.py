"""The front end's public entry points: `.rasp` text or file -> checked `ir.Program`.

parse (text -> AST) -> check_module (AST -> IR, names and kinds checked) -> infer (value sets,
every lambda tried on every value it can meet). Every problem is a located `RaspError`.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from . import infer
from .. import ir
from ..collector import collector_paused
from ..errors import ArgumentError, InputError, placed_at, recursion_refused, special_file
from .lower import MAX_LEN_LIMIT, check_module
from .parse import parse


def check_max_len(max_len) -> None:
    """ValueError unless `max_len` (an override from Python) is what a program may declare: a
    whole number from 1 to MAX_LEN_LIMIT, as `--max-len` takes."""
    if isinstance(max_len, bool) or not isinstance(max_len, int) or not 1 <= max_len <= MAX_LEN_LIMIT:
        raise ArgumentError(f"max_len must be a whole number from 1 to {MAX_LEN_LIMIT:,}, not {max_len!r}")


def parse_program(text: str, filename: str = "<program>", max_len: int | None = None) -> ir.Program:
    """The checked program that `text` spells (at `max_len` instead of its own, if given); a
    RaspError subclass (with `loc`) if it is wrong. Lambdas are tried at the max_len compiled."""
    return parse_checked(text, filename, max_len)[0]


def parse_checked(text: str, filename: str = "<program>", max_len: int | None = None) -> tuple[ir.Program, infer.ValueSets]:
    """`parse_program`, and the value sets its check inferred: a compiler given them need not infer
    them again (at max_len 1,024 that tries every select over indices on a million pairs)."""
    if max_len is not None:
        check_max_len(max_len)
    module = parse(text)
    with recursion_refused(module.statements[-1].loc if module.statements else None), collector_paused():
        program = check_module(module, text, filename)
        if max_len is not None:
            program = dataclasses.replace(program, max_len=max_len)
        with placed_at(program.output_loc):
            value_sets = infer.infer_value_sets(program)
    return program, value_sets


def load_program(path: str | Path, max_len: int | None = None) -> ir.Program:
    """`parse_program` of a UTF-8 file (a byte-order mark is skipped); InputError (one line) if
    the file cannot be read."""
    return load_checked(path, max_len)[0]


def load_checked(path: str | Path, max_len: int | None = None) -> tuple[ir.Program, infer.ValueSets]:
    """`load_program`, and the value sets its check inferred (`parse_checked`)."""
    special = special_file(path)
    if special:
        raise InputError(f"{path}: {special}, not a program file")
    try:
        text = Path(path).read_bytes().decode("utf-8-sig")
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except UnicodeDecodeError as error:
        raise InputError(f"{path}: not UTF-8 text (bad byte at offset {error.start})") from None
    except OSError as error:
        raise InputError(f"{path}: cannot read the file ({error.strerror or error})") from None
    return parse_checked(text, str(path), max_len)
