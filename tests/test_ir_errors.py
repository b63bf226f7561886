"""Errors from programs built in Python (no text, no caret) name the s-op they come from, and a
long lambda, value or input quoted in any error is shortened to one readable line."""

from __future__ import annotations

import pytest

import rasp_compile as rc
from rasp_compile import ir
from rasp_compile.errors import RaspError, RaspRuntimeError, format_error
from rasp_compile.tools.interpret import evaluate


def inverse(x):
    return 1 / x


def test_a_failing_python_function_names_its_s_op():
    shifted = ir.Map(lambda i: i - 1, ir.indices, label="shifted")
    program = ir.Program(ir.Map(inverse, shifted, label="inverse_of_shifted"), ("a",), 3)
    with pytest.raises(RaspError) as failed:
        rc.compile(program)
    assert str(failed.value).startswith("in 'inverse_of_shifted': function inverse fails on (0)")
    assert format_error(failed.value, None).startswith("<program>: error: in 'inverse_of_shifted'")


def test_an_unlabelled_s_op_is_described():
    program = ir.Program(ir.Map(lambda t: t + 1, ir.tokens), ("a",), 3)
    with pytest.raises(RaspError, match="^in the map: a Python function fails on"):
        rc.compile(program)


def test_an_interpreter_error_names_its_s_op():
    both = ir.Aggregate(ir.Select(ir.tokens, ir.tokens, "true"), ir.tokens, label="both")
    with pytest.raises(RaspRuntimeError, match="^'both' selects different values"):
        evaluate(ir.Program(both, ("a", "b"), 3), ["a", "b"])
    predicate = ir.Select(ir.tokens, ir.tokens, lambda k, q: k < 1, label="sel")  # str < int fails
    with pytest.raises(RaspError, match="^in 'sel': select predicate"):
        evaluate(ir.Program(ir.Aggregate(predicate, ir.tokens), ("a", "b"), 3), ["a", "b"])


def test_a_long_lambda_is_quoted_shortened(tmp_path):
    """A lambda of 100,000 characters failing was quoted whole: one error line of 100,000."""
    text = "x" * 100_000
    source = f'vocab {{a, b}}\nmax_len 3\noutput map(lambda t: t + "{text}" + 1, tokens)\n'
    with pytest.raises(RaspError) as failed:
        rc.parse_program(source)
    shown = format_error(failed.value, source, "long.rasp")
    assert max(map(len, shown.splitlines())) < 400
    assert "lambda t: t + " in shown and "(100,0" in shown and '+ 1' in shown.splitlines()[0]
    long_input = ["a", "b"] * 500
    both = ir.Aggregate(ir.Select(ir.tokens, ir.tokens, "true"), ir.tokens, label="both")
    with pytest.raises(RaspRuntimeError) as failed:
        evaluate(ir.Program(both, ("a", "b"), 1000), long_input)
    assert len(str(failed.value)) < 400
