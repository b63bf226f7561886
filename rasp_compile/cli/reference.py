"""The program a weights file says it implements (`meta.source`), and what it is used for: the
reference `--accuracy` and `--flops` compare with, a check that the source fits the weights, and
the program's own errors on the inputs the model was run on.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from itertools import accumulate

import numpy as np

from .. import ir
from ..compiler import compile_program
from ..errors import InputError, RaspError, WeightsError, format_error, recursion_refused
from ..frontend import parse_program
from ..frontend.parse import parse
from ..frontend.lower import MAX_LEN_LIMIT, check_module
from ..runtime.prediction import input_vocab
from ..runtime.model import Model
from ..runtime.token_keys import token_key
from ..tools.interpret import evaluate_many
from .common import CliError, DTYPES, program_errors


def reference_program(model: Model, weights_path: str, checked: bool = True) -> ir.Program | None:
    """The program in `meta.source`, at the model's max_len; None when the file carries no source.
    Its errors name `WEIGHTS:meta.source` (or the `.rasp` file a model was compiled from).
    `checked=False` skips trying every lambda on every value (seconds at a large max_len): enough
    to interpret the program on a few inputs, where a failing lambda is an error of that input."""
    source = model.meta.get("source")
    if source is None:
        return None
    filename = weights_path if weights_path.endswith(".rasp") else f"{weights_path}:meta.source"
    if model.meta["max_len"] > MAX_LEN_LIMIT:  # a file may declare any; the interpreter would run for hours
        raise WeightsError(f"{weights_path}: meta.max_len {model.meta['max_len']:,} is beyond what a program "
                           f"may declare (1 to {MAX_LEN_LIMIT:,}): its source cannot be run at that length")
    with program_errors(filename, source), recursion_refused(None):
        program = parse_program(source, filename) if checked else check_module(parse(source), source, filename)
    if program.max_len != model.meta["max_len"]:
        program = dataclasses.replace(program, max_len=model.meta["max_len"])
    return program


class Reference:
    """The program a model implements, for the reports that compare with it: the `.rasp` program a
    model was just compiled from (`compiled`), else the weights file's meta.source, parsed once,
    when first asked (parsing checks every lambda, seconds at a large max_len)."""

    def __init__(self, model: Model, weights_path: str, compiled: ir.Program | None = None):
        self.model, self.weights_path, self.compiled = model, weights_path, compiled
        self._parsed: list = [] if compiled is None else [compiled]

    def program(self) -> ir.Program | None:
        """The program (None when a weights file carries no source); CliError if it is malformed."""
        if not self._parsed:
            self._parsed.append(reference_program(self.model, self.weights_path))
        return self._parsed[0]

    def program_to_interpret(self) -> ir.Program | None:
        """`program()` when it is at hand, else the source lowered without its value-set checks
        (reference_program's `checked=False`): enough to interpret it on the inputs of one run."""
        if self._parsed:
            return self._parsed[0]
        return reference_program(self.model, self.weights_path, checked=False)


def source_mismatch(model: Model, program: ir.Program) -> str | None:
    """Why `program` (meta.source) cannot be what the weights implement, or None: it reads another
    vocab, is causal where the model is not (or the reverse), or outputs another encoding. Any of
    these makes a comparison meaningless (a model of another vocab agrees on a few inputs by chance)."""
    theirs, ours = {token_key(t) for t in program.vocab}, {token_key(t) for t in input_vocab(model)}
    if theirs != ours:
        return "its vocab is not the model's"
    if program.causal != model.meta["causal"]:
        return f"it is {'' if program.causal else 'not '}causal, the model {'is' if model.meta['causal'] else 'is not'}"
    if program.output.encoding != model.meta["output"]["encoding"]:
        return f"its output is {program.output.encoding}, the model's {model.meta['output']['encoding']}"
    return None


def recompiled_differs(model: Model, program: ir.Program) -> bool:
    """Whether a file the compiler wrote (it records meta.optimizations_off) holds other weights
    than meta.source compiles to now, at the file's max_len, dtype and passes: edited weights,
    another source, or another version of the compiler. False for other files (hand-made ones)."""
    disabled = model.meta.get("optimizations_off")
    dtype = DTYPES.get(str(model.dtype))
    if not isinstance(disabled, list) or dtype is None:
        return False
    try:
        again = compile_program(program, dtype=dtype, disabled=disabled)
    except (RaspError, ValueError, TypeError):  # unknown pass names; a source that no longer compiles
        return True
    return again.params.keys() != model.params.keys() or any(
        again.params[key].shape != array.shape or not np.array_equal(again.params[key], array)
        for key, array in model.params.items())


@dataclass
class ProgramError:
    """A program error on a concrete input: its message, and the error as shown (with source line)."""

    message: str
    shown: str


CHECKED_PAIRS = 2_000_000
"""How much interpreting the check of a run may do, in query-key pairs (sum of squared input
lengths, about a second): at max_len 1,000 one input is a second of the interpreter, and a long
completion reads thousands of windows. Inputs beyond it are left unchecked, and the run says so."""


def first_program_error(reference: Reference, inputs: list[list]) -> tuple[ProgramError | None, int]:
    """The first error the reference interpreter meets running the program on `inputs` (None if
    none, or if there is no usable program: no source, an unparsable one, one not fitting the
    weights), and how many of the inputs were checked: the first, and the next ones within
    CHECKED_PAIRS."""
    try:
        program = reference.program_to_interpret()
    except (CliError, WeightsError):
        return None, len(inputs)
    if program is None or source_mismatch(reference.model, program) or not inputs:
        return None, len(inputs)
    sizes = list(accumulate(len(tokens) ** 2 for tokens in inputs))
    checked = max(1, sum(size <= CHECKED_PAIRS for size in sizes))
    try:
        evaluate_many(program, inputs[:checked])
    except InputError:
        return None, len(inputs)
    except RaspError as error:
        return ProgramError(error.message, format_error(error, program.source, program.filename)), checked
    return None, checked
