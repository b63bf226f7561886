"""A function that returns None gives none at that position, as tracr's evaluator and compiled
model do (docs/language.md, "none and defaults"; docs/from_tracr.md): the value set leaves it
out, the s-op may be none, and everything downstream treats it as any none. A numerical s-op's
function must return a number, and a function returning None everywhere is refused."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings, strategies as st

import rasp_compile as rc
from rasp_compile import ir, rasp
from rasp_compile.compiler.driver import OPTIMIZATIONS
from rasp_compile.testing.differential import assert_agree


VOCAB = (1, 2, 3)


def every_input(vocab, max_len):
    for n in range(1, max_len + 1):
        yield from map(list, itertools.product(vocab, repeat=n))


def plain_partial(xs):
    """The first program below, in plain Python: None for 1, else ten times the token."""
    return [None if x == 1 else 10 * x for x in xs]


def test_a_map_returning_none_is_none_there_in_the_interpreter_and_the_model():
    partial = rasp.Map(lambda x: None if x == 1 else 10 * x, rasp.tokens).named("partial")
    for disabled in ((), tuple(OPTIMIZATIONS)):
        model = rc.compile_rasp_to_model(partial, vocab=set(VOCAB), max_seq_len=3, disabled=disabled)
        assert None in model.meta["output"]["values"]  # the output may be none
        for xs in every_input(VOCAB, 3):
            assert rc.run(model, xs) == rasp.evaluate(partial, xs) == plain_partial(xs)


def test_none_from_a_function_propagates_as_every_none_does():
    """A map of it is none there (0 when numerical); a select never selects it; an aggregate
    reading it counts it as none."""
    partial = rasp.Map(lambda x: None if x == 2 else x, rasp.tokens)
    then = rasp.Map(lambda y: y + 1, partial, simplify=False)
    number = rasp.numerical(rasp.Map(lambda y: y * 2, partial, simplify=False))
    width = rasp.SelectorWidth(rasp.Select(partial, rasp.tokens, rasp.Comparison.NEQ))
    prev = rasp.Aggregate(rasp.Select(rasp.indices, rasp.indices, lambda k, q: k == q - 1), partial, default=0)
    plain = {
        "then": lambda xs: [None if x == 2 else x + 1 for x in xs],
        "number": lambda xs: [0 if x == 2 else 2 * x for x in xs],
        "width": lambda xs: [sum(k != 2 and k != q for k in xs) for q in xs],
        "prev": lambda xs: [0 if i == 0 else (None if xs[i - 1] == 2 else xs[i - 1]) for i in range(len(xs))],
    }
    for name, sop in {"then": then, "number": number, "width": width, "prev": prev}.items():
        for disabled in ((), tuple(OPTIMIZATIONS)):
            model = rc.compile_rasp_to_model(sop, vocab=set(VOCAB), max_seq_len=3, disabled=disabled)
            for xs in every_input(VOCAB, 3):
                assert rc.run(model, xs) == rasp.evaluate(sop, xs) == plain[name](xs), (name, disabled, xs)


PARTIALS = [
    ("None if x == 1 else x", lambda x: None if x == 1 else x),
    ("None if x > 1 else -x", lambda x: None if x > 1 else -x),
    ("x % 2 or None", lambda x: x % 2 or None),
]
PAIRS = [
    ("None if x == y else x - y", lambda x, y: None if x == y else x - y),
    ("None if x + y > 3 else x * y", lambda x, y: None if x + y > 3 else x * y),
]


@st.composite
def partial_programs(draw):
    """tokens -> a map or sequence_map returning None somewhere -> one reader of it."""
    if draw(st.booleans()):
        _, f = draw(st.sampled_from(PARTIALS))
        partial = ir.Map(f, ir.tokens)
    else:
        _, f = draw(st.sampled_from(PAIRS))
        partial = ir.SequenceMap(f, ir.tokens, draw(st.sampled_from([ir.indices, ir.length])))
    readers = [
        lambda: partial,
        lambda: ir.Map(lambda y: y * 3 - 1, partial),
        lambda: ir.numerical(ir.Map(lambda y: y + 0.5, partial)),
        lambda: ir.Map(lambda pair: pair[0] * 10 + pair[1], ir.SequenceMap(lambda y, t: (y, t), partial, ir.tokens)),
        lambda: ir.SelectorWidth(ir.Select(partial, partial, draw(st.sampled_from(["==", "<", "!="])))),
        lambda: ir.SelectorWidth(ir.SelectNot(ir.Select(ir.tokens, partial, "<="))),
        lambda: ir.Aggregate(ir.Select(ir.indices, ir.indices, lambda k, q: k == q - 1), partial,
                             default=draw(st.sampled_from([None, 7]))),
        lambda: ir.numerical(ir.Aggregate(ir.Select(ir.tokens, ir.tokens, "<="),
                                          ir.numerical(ir.Map(lambda y: y / 2, partial)))),
    ]
    output = draw(st.sampled_from(readers))()
    return ir.Program(output=output, vocab=VOCAB, max_len=draw(st.integers(1, 4)), causal=draw(st.booleans()))


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(partial_programs(), st.booleans())
def test_random_programs_with_partial_functions_compile_to_what_the_interpreter_says(program, optimised):
    model = rc.compile(program, disabled=() if optimised else tuple(OPTIMIZATIONS))
    assert_agree(model, program, every_input(VOCAB, program.max_len))


def test_a_numerical_map_returning_none_is_refused_at_its_function():
    half = rasp.numerical(rasp.Map(lambda x: None if x == 1 else x / 2, rasp.tokens)).named("half")
    for attempt in (lambda: rasp.evaluate(half, [1, 2]),
                    lambda: rc.compile_rasp_to_model(half, vocab={1, 2}, max_seq_len=2)):
        with pytest.raises(rc.RaspError, match=r"returns None on \(1\), but 'half' is numerical"):
            attempt()


def test_a_function_returning_none_everywhere_is_refused():
    with pytest.raises(rc.RaspError, match="none at every position"):
        rc.compile_rasp_to_model(rasp.Full(None), vocab={1}, max_seq_len=2)


def test_in_rasp_text_a_lambda_may_return_none_only_through_python():
    """.rasp text has no literal for none: a map there always returns a value (the embedded API
    and converted tracr programs are where None comes from)."""
    with pytest.raises(rc.RaspError):
        rc.compile("vocab {a}\nmax_len 2\noutput map(lambda x: None, tokens)\n")


def test_a_python_function_returning_none_gives_none_in_the_model_too():
    """The compiled model gave 2 where the interpreter gave none (a map returning None for 1):
    None from a function is none at that position, in the interpreter and the model alike."""
    partial = rasp.Map(lambda x: None if x == 1 else x, rasp.tokens).named("partial")
    model = rc.compile_rasp_to_model(partial, vocab={1, 2}, max_seq_len=2)
    assert rasp.evaluate(partial, [1, 2]) == rc.run(model, [1, 2]) == [None, 2]
