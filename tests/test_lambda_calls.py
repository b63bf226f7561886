"""frontend/lambda_calls.py on its own, against plain Python: the one piece of code the reference
interpreters (tools/interpret) share with the value-set inference they check, besides the
lambda evaluator itself. A call gives what the plain Python function gives; a failure is a
RaspValueError naming the values the user's function received, at the lambda's place."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rasp_compile import ir
from rasp_compile.errors import Loc, RaspValueError
from rasp_compile.frontend.lambda_calls import call_checked, describe, describe_fn
from rasp_compile.frontend.lambda_eval import FailedOn

PLAIN_FUNCTIONS = {  # text -> the plain Python function
    "lambda x, y: x + y": lambda x, y: x + y,
    "lambda x, y: x * y - 1": lambda x, y: x * y - 1,
    "lambda x, y: max(x, y)": max,
    "lambda x, y: x < y": lambda x, y: x < y,
    "lambda x, y: abs(x - y)": lambda x, y: abs(x - y),
}


@settings(max_examples=200, derandomize=True, deadline=None)
@given(st.sampled_from(sorted(PLAIN_FUNCTIONS)), st.integers(-1000, 1000), st.integers(-1000, 1000))
def test_a_call_gives_what_plain_python_gives(text, x, y):
    plain = PLAIN_FUNCTIONS[text]
    got = call_checked(ir.Fn(plain, text), (x, y), None)
    assert got == plain(x, y) and type(got) is type(plain(x, y))


def test_a_failure_names_the_values_and_the_lambdas_place():
    loc = Loc(3, 7)
    fn = ir.Fn(lambda x: 1 // x, "lambda x: 1 // x", loc)
    with pytest.raises(RaspValueError, match=r"lambda x: 1 // x fails on \(0\): integer division") as caught:
        call_checked(fn, (0,), None)
    assert caught.value.loc == loc


def test_a_failure_without_a_place_is_put_at_the_node():
    node = ir.Map(ir.Fn(math.sqrt, "sqrt"), ir.tokens, loc=Loc(2, 5))
    with pytest.raises(RaspValueError, match=r"function sqrt fails on \(-1\)") as caught:
        call_checked(node.fn, (-1,), node)
    assert caught.value.loc == Loc(2, 5)


def test_a_failure_through_an_adapter_names_the_users_values():
    def adapter(packed):  # as a folded constant or an n-ary sequence_map calls the user's lambda
        raise FailedOn(("a", 2), ValueError("bad pair"))

    with pytest.raises(RaspValueError, match=r"fails on \('a', 2\): bad pair"):
        call_checked(ir.Fn(adapter, "lambda s, n: s * n"), ((("a", 2)),), None)


def test_describe_names_a_labelled_node_or_its_kind():
    assert describe(ir.Map(ir.Fn(abs, "abs"), ir.tokens, label="prev")) == "'prev'"
    assert describe(ir.Map(ir.Fn(abs, "abs"), ir.tokens)) == "the map"
    assert describe(ir.SequenceMap(ir.Fn(max, "max"), ir.tokens, ir.indices)) == "the sequence_map"


@pytest.mark.parametrize("text, shown", [("lambda i: 1 / i", "lambda i: 1 / i"), ("f", "function f"),
                                         ("<lambda>", "a Python function"), ("x + 1", "operator x + 1")])
def test_describe_fn(text, shown):
    assert describe_fn(ir.Fn(abs, text)) == shown
