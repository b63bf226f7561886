"""A select's truth table at scale (frontend/infer.py): a comparison, or a lambda with an array
form, is decided on arrays past MAX_COMBINATIONS value pairs (up to MAX_TABLE_CELLS); a lambda
called pair by pair is still refused past MAX_COMBINATIONS, located at the select."""

from __future__ import annotations

import pytest

from rasp_compile.compiler import compile_program
from rasp_compile.errors import RaspValueError, format_error
from rasp_compile.frontend import infer, parse_program
from rasp_compile.frontend.infer import MAX_COMBINATIONS, infer_value_sets
from rasp_compile.testing.differential import assert_agree, every_input, random_inputs

WIDE = 1_500  # indices x indices: 2,250,000 value pairs, past MAX_COMBINATIONS


def _select_program(predicate: str, max_len: int) -> str:
    return f"""vocab {{a, b}}
max_len {max_len}
before = select(indices, indices, {predicate})
output selector_width(before)
"""


def test_a_comparison_over_more_pairs_than_calls_allow_is_decided_on_arrays():
    assert WIDE * WIDE > MAX_COMBINATIONS
    for predicate in ("<", "lambda k, q: k < q - 1"):
        program = parse_program(_select_program(predicate, WIDE))
        sets = infer_value_sets(program)
        assert sets[program.output] == frozenset(range(WIDE + 1))


def test_a_lambda_without_array_form_over_too_many_pairs_is_refused_at_the_select():
    text = _select_program("lambda k, q: k in (q, q + 1)", WIDE)
    with pytest.raises(RaspValueError) as caught:
        infer_value_sets(parse_program(text))
    shown = format_error(caught.value, text, "wide.rasp").splitlines()
    assert shown[0].startswith("wide.rasp:3:10: error: ")
    assert "1,500 x 1,500 value pairs" in shown[0] and f"more than {MAX_COMBINATIONS:,}" in shown[0]
    assert "one Python call a pair" in shown[0] and "smaller max_len" in shown[0]


def test_a_table_past_the_array_limit_is_refused_at_the_select(monkeypatch):
    monkeypatch.setattr(infer, "MAX_TABLE_CELLS", 8 * 8 - 1)
    text = _select_program("<", 8)
    with pytest.raises(RaspValueError) as caught:
        infer_value_sets(parse_program(text))
    shown = format_error(caught.value, text, "wide.rasp").splitlines()
    assert shown[0].startswith("wide.rasp:3:10: error: this select would be decided on 8 x 8 value pairs (more than 63)")


def test_comparisons_past_the_call_limit_compile_and_agree_with_the_interpreter(monkeypatch):
    """sort_freq's kind of count-against-count match, with the call limit below its pairs: it is
    decided on arrays, compiles, and the model computes the program; a lambda stays refused."""
    monkeypatch.setattr(infer, "MAX_COMBINATIONS", 6 * 6 - 1)  # count takes 1..6 at max_len 6
    text = """vocab {1, 2, 3}
max_len 6
count = selector_width(select(tokens, tokens, ==))
output selector_width(select(count, count, >) and select(indices, indices, <))
"""
    program = parse_program(text)
    model = compile_program(program)
    assert_agree(model, program, every_input(program.vocab, 4) + random_inputs(program.vocab, 6, 200, 3))
    with pytest.raises(RaspValueError, match="one Python call a pair"):
        infer_value_sets(parse_program(text.replace("count, count, >", "count, count, lambda k, q: k in (q + 1, q + 2)")))
