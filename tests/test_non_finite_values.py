"""An infinity or nan can enter a program's values only from Python (a function's result, a
default, a token, a tuple holding one): each is refused when compiling, naming the function and
the values it got, instead of compiling a model whose meta no file can hold."""

from __future__ import annotations

import math

import numpy as np
import pytest

import rasp_compile as rc
from rasp_compile import rasp

PREV = rasp.Select(rasp.indices, rasp.indices, lambda k, q: k == q - 1)
NUMBER = rasp.numerical(rasp.Map(lambda x: x, rasp.tokens))

CASES = {
    "log10 of 0": (rasp.Map(math.log10, rasp.tokens), r"function log10 fails on \(0\)"),  # Python raises here
    "-inf returned": (rasp.Map(lambda x: math.log10(x) if x else -math.inf, rasp.tokens),
                      r"returns -inf on \(0\); values are finite"),
    "nan from a numerical sequence_map": (
        rasp.numerical(rasp.SequenceMap(lambda x, i: math.nan if x == i else x - i, rasp.tokens, rasp.indices)),
        r"returns nan on \(0, 0\); values are finite"),
    "inf inside a tuple": (
        rasp.Map(lambda pair: pair[0], rasp.SequenceMap(lambda x, i: (x, math.inf), rasp.tokens, rasp.indices),
                 simplify=False),
        r"returns \(0, inf\) on \(0, 0\)"),
    "a numerical default": (rasp.numerical(rasp.Aggregate(PREV, NUMBER, default=math.inf)), "the default is inf"),
    "a categorical default": (rasp.Aggregate(PREV, rasp.tokens, default=math.nan), "the default is nan"),
    "a constant": (rasp.Full(-math.inf), r"returns -inf on \(0\)"),
    "a numpy float": (rasp.Map(lambda x: np.float64("inf") if x else 0.0, rasp.tokens), r"returns inf on \(1\)"),
}


@pytest.mark.parametrize("name", CASES)
def test_a_non_finite_value_is_refused_when_compiling_naming_its_source(name):
    sop, message = CASES[name]
    with pytest.raises(rc.RaspError, match=message):
        rc.compile_rasp_to_model(sop, vocab={0, 1}, max_seq_len=2)


def test_a_non_finite_token_is_refused():
    with pytest.raises(rc.RaspError, match="the vocab holds inf"):
        rc.compile_rasp_to_model(rasp.tokens, vocab={0, math.inf}, max_seq_len=2)


def test_the_interpreter_refuses_it_too_on_an_input_that_meets_it():
    minus = rasp.Map(lambda x: math.log10(x) if x else -math.inf, rasp.tokens)
    assert rasp.evaluate(minus, [1, 10]) == [0.0, 1.0]
    with pytest.raises(rc.RaspError, match=r"returns -inf on \(0\)"):
        rasp.evaluate(minus, [1, 0])

