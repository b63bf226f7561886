"""Property: lambda bodies built from tuples, `in` / `not in`, indexing, `len` and `str` evaluate
(frontend/lambda_eval.py) to what a plain-Python oracle, built beside the text from Python's own
operators, computes; and where the oracle fails, the evaluator fails too."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rasp_compile.frontend import syntax_tree, lambda_eval
from rasp_compile.frontend.parse import parse

WORDS = ["", "a", "ab", "ba", "abc"]


def spelled(value) -> str:
    """The oracle's own `str`: booleans as the language writes them, tuples as tuple literals."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        inner = ", ".join(f'"{v}"' if isinstance(v, str) else spelled(v) for v in value)
        return f"({inner}{',' if len(value) == 1 else ''})"
    return str(value)


# Each strategy draws (text in the language, oracle: (x, s) -> value) for one type of value.


@st.composite
def ints(draw, depth=0):
    choice = draw(st.integers(0, 4 if depth < 3 else 1))
    if choice == 0:
        n = draw(st.integers(0, 5))
        return str(n), lambda x, s: n
    if choice == 1:
        return "x", lambda x, s: x
    if choice == 2:
        text, oracle = draw(strings(depth + 1))
        return f"len({text})", lambda x, s: len(oracle(x, s))
    if choice == 3:
        (tt, to), (it, io) = draw(int_tuples(depth + 1)), draw(ints(depth + 1))
        return f"({tt})[{it}]", lambda x, s: to(x, s)[io(x, s)]
    (at, ao), (bt, bo) = draw(ints(depth + 1)), draw(ints(depth + 1))
    return f"({at}) + ({bt})", lambda x, s: ao(x, s) + bo(x, s)


@st.composite
def strings(draw, depth=0):
    choice = draw(st.integers(0, 5 if depth < 3 else 1))
    if choice == 0:
        word = draw(st.sampled_from(WORDS))
        return f'"{word}"', lambda x, s: word
    if choice == 1:
        return "s", lambda x, s: s
    if choice == 2:
        text, oracle = draw(ints(depth + 1) | bools(depth + 1))
        return f"str({text})", lambda x, s: spelled(oracle(x, s))
    if choice == 3:
        (ct, co), (it, io) = draw(strings(depth + 1)), draw(ints(depth + 1))
        return f"({ct})[{it}]", lambda x, s: co(x, s)[io(x, s)]
    if choice == 4:
        text, oracle = draw(int_tuples(depth + 1))
        return f"str({text})", lambda x, s: spelled(oracle(x, s))
    (at, ao), (bt, bo) = draw(strings(depth + 1)), draw(strings(depth + 1))
    return f"({at}) + ({bt})", lambda x, s: ao(x, s) + bo(x, s)


@st.composite
def int_tuples(draw, depth=0):
    items = draw(st.lists(ints(depth + 1), max_size=3))
    texts = [t for t, _ in items]
    text = "(" + ", ".join(texts) + ("," if len(texts) == 1 else "") + ")"
    return text, lambda x, s: tuple(o(x, s) for _, o in items)


@st.composite
def bools(draw, depth=0):
    choice = draw(st.integers(0, 3 if depth < 3 else 0))
    negated = draw(st.booleans())
    op = "not in" if negated else "in"
    if choice == 0:
        (at, ao), (bt, bo) = draw(ints(depth + 1)), draw(ints(depth + 1))
        return f"({at}) == ({bt})", lambda x, s: ao(x, s) == bo(x, s)
    if choice == 1:
        (it, io), (tt, to) = draw(ints(depth + 1)), draw(int_tuples(depth + 1))
        return f"({it}) {op} {tt}", lambda x, s: (io(x, s) in to(x, s)) != negated
    if choice == 2:
        (at, ao), (bt, bo) = draw(strings(depth + 1)), draw(strings(depth + 1))
        return f"({at}) {op} ({bt})", lambda x, s: (ao(x, s) in bo(x, s)) != negated
    text, oracle = draw(bools(depth + 1))
    return f"not ({text})", lambda x, s: not oracle(x, s)


def make(body: str):
    call = parse(f"f = g(lambda x, s: {body})").statements[0].value
    assert isinstance(call.args[0], syntax_tree.Lambda)
    return lambda_eval.make_fn(call.args[0], lambda name: None)


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(ints() | strings() | bools(), st.integers(-1, 4), st.sampled_from(WORDS))
def test_new_forms_evaluate_as_python_does(expression, x, s):
    text, oracle = expression
    try:
        expected = oracle(x, s)
    except Exception as failure:  # IndexError, TypeError: the evaluator must refuse as well
        try:
            make(text)(x, s)
        except Exception:
            return
        raise AssertionError(f"{text} on x={x}, s={s!r}: the oracle fails ({failure!r}), the evaluator does not") from None
    got = make(text)(x, s)
    assert got == expected and type(got) is type(expected), (text, x, s, got, expected)
