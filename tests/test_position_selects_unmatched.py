"""position-selects where a value of the other side matches no index: scored S (1 - (index - y)^2)
from a line's target y, it must stay at or under 0 at every index 0..max_len-1, so y may not
come within 1 of one (passes/position_selects._near_an_index). A y half-way between two indices
scored 3/4 S, above BOS's S/2, and the head read keys it must not (two fuzz programs found it);
these programs put such a y between two indices, just before index 0 and just past the last
index, through a number (number_match) and through a split's shared features (_line_forms)."""

from __future__ import annotations

import pytest

from rasp_compile.compiler import compile_program
from rasp_compile.compiler.passes.position_selects import _line
from rasp_compile.frontend import parse_program
from rasp_compile.testing.differential import assert_agree, every_input

MEAN = """
vocab VOCAB
max_len MAX_LEN
mean = numerical(aggregate(select(indices, indices, <=), numerical(map(lambda t: t, tokens)), default=0))
output aggregate(select(mean, indices, PREDICATE), indices, default=-1)
"""


def mean_program(vocab: str, max_len: int, predicate: str) -> str:
    """A running mean of the tokens matched to the index by `predicate`: a line in the mean."""
    return MEAN.replace("VOCAB", vocab).replace("MAX_LEN", str(max_len)).replace("PREDICATE", predicate)


PROGRAMS = {
    "the mean 1/2 half-way between indices 0 and 1": mean_program("{0, 1}", 4, "=="),
    "the mean 3/2 just past the last index 1": mean_program("{0, 2, 3}", 2, "=="),
    "the mean 3/2 at -1/2, just before index 0": mean_program("{0, 2, 3}", 2, "lambda k, q: q == 1 - k"),
    "a split's heads match g + j, g = 1/2 half-way between indices": """
vocab {a, b, c}
max_len 5
g = map(lambda t: 0.5 if t == "c" else (1 if t == "b" else 0), tokens)
e = map(lambda i: i % 2, indices)
output aggregate(select(sequence_map(lambda x, y: x + y, g, e), indices, ==), tokens, default="-")
""",
}


@pytest.mark.parametrize("text", PROGRAMS.values(), ids=PROGRAMS.keys())
def test_a_value_that_matches_no_index_is_never_selected(text: str):
    program = parse_program(text)
    assert_agree(compile_program(program), program, every_input(program.vocab, program.max_len))


@pytest.mark.parametrize("y, near", [(-1.0, False), (-0.999, True), (-0.5, True), (0.5, True), (3.5, True),
                                     (3.999, True), (4.0, False), (7.0, False)])
def test_a_line_through_the_matches_is_refused_where_an_unmatched_value_comes_within_1_of_an_index(y, near):
    """target 0 at x = 0, 1 at x = 1 (the line y = x), and an unmatched value at x = y, max_len 4."""
    target = {0.0: 0, 1.0: 1, y: -1}
    assert (_line(target, 4) is None) is near
