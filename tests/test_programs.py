"""Every program in programs/ against its plain-Python reference in tests/reference_programs.py.

For each `NAME.rasp`: the interpreter agrees with `reference_programs.NAME` on every input up to the
program's max_len (shortest first, at most 100,000 inputs), on 200 seeded random inputs of up to 16
tokens (the program re-checked with max_len 16), and on the example line of its header.

The example line is the one header comment of this fixed form, identical in every file:

    # example: TOKENS -> OUTPUTS

TOKENS and OUTPUTS are words separated by spaces; `_` stands for none; a word that reads as an
integer or a decimal number is that number, any other word is a string (`3` is the number 3, `a` the
string "a", `(` the string "("). A float is written as Python prints it (`0.3333333333333333`).
"""

from __future__ import annotations

import dataclasses
import itertools
import random
import re
from pathlib import Path

import pytest

from rasp_compile.frontend import load_program
from rasp_compile.frontend.infer import infer_value_sets
from rasp_compile.tools.interpret import evaluate, evaluate_many

import reference_programs

PROGRAMS = sorted((Path(__file__).parent.parent / "programs").glob("*.rasp"))
EXAMPLE = re.compile(r"^# example: (.*) -> (.*)$", re.MULTILINE)
MAX_EXHAUSTIVE = 100_000
LONG = 16
RANDOM_INPUTS = 200


def reference(path: Path):
    return getattr(reference_programs, path.stem)


def word_value(word: str):
    """One word of an example line as a value: `_` is none, numbers are numbers, else a string."""
    if word == "_":
        return None
    for kind in (int, float):
        try:
            return kind(word)
        except ValueError:
            pass
    return word


def all_inputs(vocab, max_len: int):
    """Every token sequence of length 0..max_len, shortest first, at most MAX_EXHAUSTIVE of them."""
    every = itertools.chain.from_iterable(itertools.product(vocab, repeat=n) for n in range(max_len + 1))
    return [list(tokens) for tokens in itertools.islice(every, MAX_EXHAUSTIVE)]


def test_every_program_has_a_reference_and_every_reference_a_program():
    functions = {name for name, f in vars(reference_programs).items()
                 if callable(f) and not name.startswith("_") and f.__module__ == reference_programs.__name__}
    assert functions == {path.stem for path in PROGRAMS}


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_header_example_holds(path: Path):
    text = path.read_text()
    assert text.startswith("#"), "a program begins with comment lines saying what it computes"
    examples = EXAMPLE.findall(text)
    assert len(examples) == 1, "exactly one '# example: TOKENS -> OUTPUTS' line"
    tokens, outputs = ([word_value(w) for w in side.split()] for side in examples[0])
    program = load_program(path)
    assert evaluate(program, tokens) == outputs
    assert reference(path)(tokens) == outputs


@pytest.mark.slow
@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_agrees_with_reference_on_every_short_input(path: Path):
    program = load_program(path)
    inputs = all_inputs(program.vocab, program.max_len)
    expected = [reference(path)(tokens) for tokens in inputs]
    for tokens, got, want in zip(inputs, evaluate_many(program, inputs), expected):
        assert got == want, f"input {tokens}"


@pytest.mark.slow
@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_agrees_with_reference_on_long_random_inputs(path: Path):
    program = dataclasses.replace(load_program(path), max_len=LONG)
    infer_value_sets(program)  # the lambdas must also hold on the values of longer inputs
    rng = random.Random(path.stem)
    inputs = [rng.choices(program.vocab, k=rng.randint(1, LONG)) for _ in range(RANDOM_INPUTS)]
    for tokens, got in zip(inputs, evaluate_many(program, inputs)):
        assert got == reference(path)(tokens), f"input {tokens}"
