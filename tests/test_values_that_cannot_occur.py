"""Values a program's s-ops cannot take at run time are left out of their value sets where the
selector tells: a width or a mean of a selector that selects a key for every query is never 0 /
never its default, so a function that fails or returns None only there is not refused
(docs/language.md, "Value sets")."""

from __future__ import annotations

import itertools

import pytest

import rasp_compile as rc
from rasp_compile import ir, rasp


def every_input(vocab, max_len):
    for n in range(1, max_len + 1):
        yield from map(list, itertools.product(vocab, repeat=n))


def test_a_map_returning_none_only_on_a_width_of_zero_compiles_when_the_width_cannot_be_zero():
    length = rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.TRUE))  # tracr's make_length
    tenth = rasp.Map(lambda n: None if n == 0 else 10 // n, length)
    model = rc.compile_rasp_to_model(tenth, vocab={1, 2}, max_seq_len=4)
    for xs in every_input((1, 2), 4):
        assert rc.run(model, xs) == rasp.evaluate(tenth, xs) == [10 // len(xs)] * len(xs)


@pytest.mark.parametrize("select", [
    ir.Select(ir.indices, ir.indices, "<="),
    ir.Select(ir.tokens, ir.tokens, "=="),
    ir.Select(ir.tokens, ir.tokens, "true"),
    ir.SelectOr(ir.Select(ir.indices, ir.indices, lambda k, q: k == q - 1), ir.Select(ir.indices, ir.indices, "==")),
], ids=["indices <=", "self ==", "true", "or"])
def test_a_width_of_a_selector_that_always_selects_is_never_zero(select):
    width = ir.SelectorWidth(select)
    program = ir.Program(output=ir.Map(lambda w: 12 // w, width), vocab=("a", "b"), max_len=3)
    model = rc.compile(program)
    for xs in every_input(("a", "b"), 3):
        assert rc.run(model, xs) == rc.evaluate(program, xs)


def test_a_width_of_a_selector_that_may_select_nothing_still_takes_zero():
    width = ir.SelectorWidth(ir.Select(ir.indices, ir.indices, "<"))  # position 0 selects nothing
    with pytest.raises(rc.RaspError, match=r"fails on \(0\): integer division or modulo by zero"):
        rc.compile(ir.Program(output=ir.Map(lambda w: 12 // w, width), vocab=("a",), max_len=3))


def test_a_running_mean_never_its_int_default_can_be_read_by_str():
    """The mean over `indices <=` is a float at every position: its default 0 (an int, equal to
    the mean 0.0) never occurs, so `str` does not tell two values of it apart."""
    source = ('vocab {a, b}\nmax_len 4\nis_a = numerical(map(lambda t: 1 if t == "a" else 0, tokens))\n'
              'frac = numerical(aggregate(select(indices, indices, <=), is_a))\n'
              'output map(lambda f: str(f), frac)')
    program = rc.parse_program(source)
    model = rc.compile(program)
    for xs in every_input("ab", 4):
        want = [str(xs[:i + 1].count("a") / (i + 1)) for i in range(len(xs))]
        assert rc.run(model, xs) == rc.evaluate(program, xs) == want
