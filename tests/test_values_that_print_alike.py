"""A categorical s-op may take two values that print alike (the string "1" and the number 1,
"true" and true): the compiled model gives each its own dimension (`x:"1"` beside `x:1`) and
agrees with the interpreter and with a plain-Python reference on every input up to max_len;
`rc.trace(...).sop(name)` reads such an s-op back from the residual; every other variable keeps
its `NAME:VALUE` labels."""

from __future__ import annotations

import itertools

import pytest

import rasp_compile as rc
from rasp_compile.compiler.variables import dim_labels

H = "vocab {1, 2, 3}\nmax_len 4\n"
SHIFT = "select(indices, indices, lambda k, q: k == q - 1)"


def _shifted(xs: list, fill) -> list:
    """Each position's left neighbour's value, `fill` at position 0."""
    return [fill, *xs[:-1]]


def _one_or_text(xs: list) -> list:
    return ["1" if x == 1 else 1 for x in xs]


def _true_or_text(xs: list) -> list:
    return ["true" if x == 1 else x == 2 for x in xs]


# name -> (program, plain-Python reference, labels the residual must hold)
PROGRAMS = {
    "string_and_number_out": (
        H + 'x = map(lambda t: "1" if t == 1 else 1, tokens)\noutput x',
        _one_or_text, ['x:1', 'x:"1"'],
    ),
    "string_and_number_moved": (
        H + 'x = map(lambda t: "1" if t == 1 else 1, tokens)\n'
        f'y = aggregate({SHIFT}, x, default="-")\n'
        'output sequence_map(lambda v, t: str(v) + ("s" if v == "1" else "n") + str(t), y, tokens)',
        lambda xs: [f"{v}{'s' if v == '1' else 'n'}{x}" for v, x in zip(_shifted(_one_or_text(xs), "-"), xs)],
        ['x:1', 'x:"1"', 'y:1', 'y:"1"', 'y:"-"'],
    ),
    "string_and_boolean_joined": (
        H + 'x = map(lambda t: "true" if t == 1 else t == 2, tokens)\n'
        f'y = aggregate({SHIFT}, x, default="-")\n'
        'output sequence_map(lambda v, t: str(v) + ("s" if v == "true" else "n") + str(t), y, tokens)',
        lambda xs: [f"{'true' if v is True else 'false' if v is False else v}{'s' if v == 'true' else 'n'}{x}"
                    for v, x in zip(_shifted(_true_or_text(xs), "-"), xs)],
        ['x:false', 'x:true', 'x:"true"', 'tokens:1'],
    ),
    "string_and_float_default": (
        H + 'output aggregate(select(tokens, 1, ==), "0.5", default=0.5)',
        lambda xs: ["0.5" if 1 in xs else 0.5] * len(xs), [],
    ),
}


@pytest.mark.parametrize("name", PROGRAMS)
@pytest.mark.parametrize("optimize", [True, False], ids=["opt", "no-opt"])
def test_values_that_print_alike_compile_and_agree_on_every_input(name, optimize):
    source, reference, labels = PROGRAMS[name]
    program = rc.parse_program(source)
    model = rc.compile(program, disabled=() if optimize else rc.OPTIMIZATIONS)
    residual = model.meta["residual"]
    assert len(set(residual)) == len(residual)
    if optimize:
        assert set(labels) <= set(residual), residual
    for n in range(1, program.max_len + 1):
        for tokens in map(list, itertools.product(program.vocab, repeat=n)):
            expected = reference(tokens)
            assert rc.evaluate(program, tokens) == expected, tokens
            got = rc.run(model, tokens)
            assert got == expected and list(map(type, got)) == list(map(type, expected)), tokens


@pytest.mark.parametrize("name", ["string_and_number_moved", "string_and_boolean_joined"])
def test_trace_reads_back_an_s_op_whose_values_print_alike(name):
    program = rc.parse_program(PROGRAMS[name][0])
    model = rc.compile(program)
    for n in range(1, program.max_len + 1):
        for tokens in map(list, itertools.product(program.vocab, repeat=n)):
            expected = rc.evaluate_all(program, tokens)
            t = rc.trace(model, tokens)
            for sop in ("x", "y"):
                got = t.sop(sop)
                assert got == expected[sop] and list(map(type, got)) == list(map(type, expected[sop])), (sop, tokens)


def test_labels_stay_as_they_print_where_values_print_apart():
    assert dim_labels("tokens", ["a", 1, 2.5, True, ("a", 1)]) == (
        "tokens:a", "tokens:1", "tokens:2.5", "tokens:true", "tokens:(a,1)")


def test_labels_quote_every_value_of_a_variable_where_two_print_alike():
    assert dim_labels("x", ["a", "1", 1]) == ('x:"a"', 'x:"1"', "x:1")
    assert dim_labels("x", [True, "true", 'say "hi"']) == ("x:true", 'x:"true"', "x:'say \"hi\"'")
    assert dim_labels("x", [("a,b", "c"), ("a", "b,c")]) == ('x:("a,b", "c")', 'x:("a", "b,c")')


def test_labels_fall_back_to_repr_where_even_quoted_values_coincide():
    three, two = ('a"', 'b"', 'c"'), ('a"', "b\"', 'c\"")  # both written ('a"', 'b"', 'c"')
    text = '(a",b",c")'  # prints as `three` does
    labels = dim_labels("x", [three, two, text])
    assert labels == tuple(f"x:{value!r}" for value in (three, two, text)) and len(set(labels)) == 3


def test_a_folded_s_op_is_read_back_with_its_types():
    """x is folded into the embedding: t.sop computes it from the tokens the residual holds, and
    keeps "1" and 1 apart as the program does."""
    program = rc.parse_program(H + 'x = map(lambda t: "1" if t == 1 else 1, tokens)\n'
                                   'output map(lambda v: str(v) + "!", x)')
    got = rc.trace(rc.compile(program), [1, 2]).sop("x")
    assert got == ["1", 1] and [type(v) for v in got] == [str, int]
