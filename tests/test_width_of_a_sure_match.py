"""A selector_width whose select surely matches a position (position-selects scores it as a
position match that some key always meets) is still counted by BOS's share: the score's "BOS
under every key" shortcut, right for an aggregate, once left the width head nothing to count by,
and `selector_width(select(indices, length, k == q - 1))` compiled to 2 where 1 was due (found
among the fingerprint's generated programs, #3412). Every input, against the interpreter."""

from __future__ import annotations

import pytest

from rasp_compile.compiler import compile_program
from rasp_compile.frontend import parse_program
from rasp_compile.testing.differential import disagreements, every_input

PROGRAM = """vocab {{a, b}}
max_len {max_len}
{causal}
w = selector_width(select(indices, {queries}, lambda k, q: {predicate}))
x = numerical(map(lambda x: x, w))
s = numerical(sequence_map(lambda x, y: x * y - y, x, length))
output map(lambda x: round(x + 1), s)
"""


@pytest.mark.parametrize("queries, predicate", [
    ("length", "k == q - 1"),
    ("indices", "k == q"),
    ("indices", "k == q or k == 0"),
])
@pytest.mark.parametrize("causal", ["", "causal"])
@pytest.mark.parametrize("max_len", [2, 5])
def test_a_width_of_a_sure_position_match_is_exact_on_every_input(queries, predicate, causal, max_len):
    program = parse_program(PROGRAM.format(max_len=max_len, causal=causal, queries=queries, predicate=predicate))
    model = compile_program(program)
    inputs = every_input(program.vocab, max_len)
    bad, checked = disagreements(model, program, inputs)
    assert bad == [] and checked == len(inputs)

