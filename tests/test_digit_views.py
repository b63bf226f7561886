"""Digit views (compiler/lowering/digit_views.py): an equality of two whole numbers of thousands of
values is compared digit by digit. Small programs get it by lowering the threshold, and are checked
against the interpreter on every input; dyck2 gets it at max_len 1,024 on its own."""

from __future__ import annotations

import dataclasses
import itertools
import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import rasp_compile as rc
from rasp_compile import ir
from rasp_compile.compiler import OPTIMIZATIONS, build_graph, compile_program
from rasp_compile.compiler.lowering import digit_views
from rasp_compile.compiler.variables import Var
from rasp_compile.errors import RaspPrecisionError
from rasp_compile.frontend.infer import infer_value_sets

DYCK2 = Path(__file__).resolve().parent.parent / "programs" / "dyck2.rasp"

TWO_NUMBERS = """
vocab {a, b, c}
max_len 5
width = numerical(selector_width(select(tokens, tokens, ==)))
shifted = numerical(map(lambda t: -3 if t == "a" else (2 if t == "b" else 4), tokens))
weight = numerical(map(lambda t: 1 if t == "a" else 0, tokens))
output numerical(aggregate(select(width, shifted, ==), weight, default=0))
"""


@pytest.fixture
def every_equality_split(monkeypatch):
    """Digit views for every equality of two whole numbers, however few their values."""
    monkeypatch.setattr(digit_views, "WHOLE_VIEW_SHARE", 0)


def _labels(program: ir.Program) -> set[str]:
    graph = build_graph(program, infer_value_sets(program), frozenset(OPTIMIZATIONS))
    return {op.out.label for op in graph.ops}


def _agrees_on_every_input(program: ir.Program) -> int:
    """How many inputs up to max_len the compiled model answers as the interpreter does (all, or fail)."""
    model = rc.compile(program)
    inputs = [list(xs) for n in range(1, program.max_len + 1) for xs in itertools.product(program.vocab, repeat=n)]
    for xs, got in zip(inputs, rc.run_batch(model, inputs)):
        assert got == rc.evaluate(program, xs), xs
    return len(inputs)


@pytest.mark.usefixtures("every_equality_split")
def test_dyck2_digit_by_digit_agrees_with_the_interpreter_on_every_input():
    program = dataclasses.replace(rc.load_program(DYCK2), max_len=6)
    labels = _labels(program)
    assert {"level.high", "level.low"} <= labels and "level.cat" not in labels
    assert _agrees_on_every_input(program) == sum(4 ** n for n in range(1, 7))


@pytest.mark.usefixtures("every_equality_split")
def test_two_different_numbers_with_negative_values_agree_on_every_input():
    program = rc.parse_program(TWO_NUMBERS)
    labels = _labels(program)
    # shifted's three values differ in both digits: one view, its high digit's, serves both terms
    assert {"width.high", "width.low", "shifted.high"} <= labels and "width.cat" not in labels
    assert _agrees_on_every_input(program) == sum(3 ** n for n in range(1, 6))


def test_small_equalities_keep_their_whole_views():
    assert "level.cat" in _labels(dataclasses.replace(rc.load_program(DYCK2), max_len=16))
    assert "width.cat" in _labels(rc.parse_program(TWO_NUMBERS))


def _number(values) -> Var:
    return Var("x", ir.NUMERICAL, tuple(sorted(values)))


def test_the_threshold_splits_dyck2s_level_at_1024_and_not_at_512():
    select = ir.Select(ir.tokens, ir.tokens, "==")
    at_512, at_1024 = _number(range(-512, 1025)), _number(range(-1024, 2049))  # level's values at each
    assert digit_views.digit_tables(select, at_512, at_512) is None
    high, low = digit_views.digit_tables(select, at_1024, at_1024)
    assert high.shape == low.shape == (3073, 3073)
    assert len({tuple(row) for row in high}) == 55 and len({tuple(row) for row in low}) == 56


def test_only_equalities_of_whole_numbers_are_split(every_equality_split):
    whole, halves = _number(range(10)), _number([0.5, 1.5, 2.0])
    assert digit_views.digit_tables(ir.Select(ir.tokens, ir.tokens, "<"), whole, whole) is None
    assert digit_views.digit_tables(ir.Select(ir.tokens, ir.tokens, "=="), whole, halves) is None
    categorical = Var("c", ir.CATEGORICAL, tuple(range(10)))
    assert digit_views.digit_tables(ir.Select(ir.tokens, ir.tokens, "=="), whole, categorical) is None


@settings(max_examples=60, deadline=None)
@given(st.sets(st.integers(-40, 40), min_size=1, max_size=30), st.sets(st.integers(-40, 40), min_size=1, max_size=30))
def test_both_digits_agree_exactly_when_the_numbers_do(keys, queries):
    select = ir.Select(ir.tokens, ir.tokens, "==")
    key_var, query_var = _number(keys), _number({float(q) for q in queries})
    original = digit_views.WHOLE_VIEW_SHARE
    digit_views.WHOLE_VIEW_SHARE = 0
    try:
        high, low = digit_views.digit_tables(select, key_var, query_var)
    finally:
        digit_views.WHOLE_VIEW_SHARE = original
    assert np.array_equal(high & low, np.equal.outer(key_var.values, query_var.values))


@pytest.mark.slow
def test_dyck2_at_1024_is_small_and_agrees_on_long_inputs():
    """dyck2 at 1,024 in float32: its state's 0/1 tests are rounded again a layer later (without
    rerounded-steps it is refused for precision: their step MLPs' units, whose magnitudes the
    output's sum may round in any order), and the digit views keep it small."""
    program = dataclasses.replace(rc.load_program(DYCK2), max_len=1024)
    with pytest.raises(RaspPrecisionError, match="float64"):
        compile_program(program, disabled=["rerounded-steps"])
    model = rc.compile(program)
    assert model.dtype == np.float32 and any(label.endswith(" (raw)") for label in model.meta["residual"])
    assert sum(array.size for array in model.params.values()) < 5_000_000  # 111 million with the whole view
    rng = random.Random(1)

    def brackets(n: int) -> list[str]:
        """n brackets whose closers match while the prefix is sound, one bracket changed half the time."""
        stack: list[str] = []
        out = []
        for _ in range(n):
            if stack and rng.random() < 0.5:
                out.append(")" if stack.pop() == "(" else "}")
            else:
                out.append(rng.choice("({"))
                stack.append(out[-1])
        if rng.random() < 0.5:
            out[rng.randrange(n)] = rng.choice("(){}")
        return out

    inputs = [brackets(1024 - i % 3) for i in range(12)]
    answers = [rc.evaluate(program, xs) for xs in inputs]
    assert rc.run_batch(model, inputs) == answers
    assert {"T", "P", "F"} <= {a for answer in answers for a in answer}
