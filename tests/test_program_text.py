"""Generated programs through the whole front end: written as `.rasp` text
(rasp_compile/testing/program_text.py), parsed, lowered and evaluated by the project's own lambda
evaluator, they mean what the Python program means on every input, and their compiled models agree
with the interpreter.
tests/test_compiler_random.py checks the same programs built directly in Python."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings

from rasp_compile import ir
from rasp_compile.compiler import compile_program
from rasp_compile.errors import RaspError, RaspRuntimeError
from rasp_compile.frontend import parse_program
from rasp_compile.frontend.infer import infer_value_sets
from rasp_compile.tools.interpret import evaluate
from rasp_compile.testing.differential import disagreements, random_inputs
from rasp_compile.testing.program_text import program_text
from rasp_compile.testing.random_programs import programs, random_program


def _outcome(program: ir.Program, tokens: list) -> list | str:
    """The output, or "error" where the program itself errs (an ambiguous aggregate)."""
    try:
        return evaluate(program, tokens)
    except RaspRuntimeError:
        return "error"


@pytest.mark.slow
@settings(max_examples=150, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs())
def test_a_program_read_back_from_its_text_means_the_same(program: ir.Program):
    text = program_text(program)
    parsed = parse_program(text, "generated.rasp")
    inputs = random_inputs(program.vocab, program.max_len, 30, rng=2)
    for tokens in inputs:
        assert _outcome(parsed, tokens) == _outcome(program, tokens), (text, tokens)
    bad, _ = disagreements(compile_program(parsed), parsed, inputs)
    assert bad == [], (text, bad[:3])


def test_the_text_of_a_program_reads_as_written():
    """One program by hand: names in dependency order, selectors inline, encodings explicit."""
    shifted = ir.Map(ir.Fn(lambda x: x + 1, "lambda: x + 1"), ir.indices)
    prev = ir.Aggregate(ir.SelectAnd(ir.Select(ir.indices, shifted, "=="), ir.Select(ir.tokens, ir.tokens, "true")),
                        ir.tokens, default="a")
    width = ir.numerical(ir.SelectorWidth(ir.SelectNot(ir.Select(ir.tokens, ir.tokens, "=="))))
    both = ir.SequenceMap(ir.Fn(lambda x, y: x, "lambda: x"), prev, width)
    text = program_text(ir.Program(output=both, vocab=("a", "b"), max_len=4, causal=True))
    assert text == (
        'vocab {"a", "b"}\nmax_len 4\ncausal\n'
        "s1 = map(lambda x: x + 1, indices)\n"
        's2 = aggregate((select(indices, s1, ==) and select(tokens, tokens, true)), tokens, default="a")\n'
        "s3 = numerical(selector_width((not select(tokens, tokens, ==))))\n"
        "s4 = sequence_map(lambda x, y: x, s2, s3)\n"
        "output s4\n"
    )


def test_generated_programs_read_back_from_their_text_give_the_same_values_of_the_same_types():
    """The fuzz's programs (bench/fuzz.py, seed 1) are compiled from their text: each must read
    back as the program the generator built, lambda texts saying what their functions do (a map
    written `x == 'a'` that returns int(...) made the text's output take both true and 1)."""
    compared = 0
    for index in range(300):
        program = random_program(random.Random(1_000_003 + index))
        try:
            infer_value_sets(program)
        except RaspError:
            continue
        parsed = parse_program(program_text(program), "generated.rasp")
        for tokens in random_inputs(program.vocab, program.max_len, 4, rng=index):
            assert repr(_outcome(parsed, tokens)) == repr(_outcome(program, tokens)), (program_text(program), tokens)
            compared += 1
    assert compared > 600
