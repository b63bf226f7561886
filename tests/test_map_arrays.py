"""Maps on arrays (frontend/lambda_arrays.results_on_arrays): for every argument tuple, the value
computed on arrays is the very value the scalar evaluator's lambda gives, bit for bit and type
for type (2 and 2.0, 0.0 and -0.0, 1 and True are told apart), or the arrays path leaves the
tuple to the scalar calls; it never holds an answer where the lambda fails. The oracle is the
lambda called value by value (`Fn.call`, no memo), itself checked against Python in
tests/test_lambda_eval.py."""

from __future__ import annotations

import dataclasses
from itertools import product

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rasp_compile import ir
from rasp_compile.element_fn import identity_key, python_value
from rasp_compile.frontend import parse_program
from rasp_compile.frontend.infer import infer_value_sets
from rasp_compile.frontend.lambda_arrays import FEWEST_ROWS, results_on_arrays, table_on_arrays

from lambda_bodies import bodies, make

SPECIAL = [0.0, -0.0, 0.5, -2.5, 3.0, 1 / 3, -1 / 1024, 1e300, 1e-300, float(2**53), 2**53, 2**53 + 1, 2**60]
VALUES = st.one_of(st.integers(-9, 9), st.sampled_from(SPECIAL), st.booleans(), st.none(),
                   st.fractions(-4, 4, max_denominator=1024).map(float))
LITERALS = st.sampled_from(["0", "1", "2", "-0.0", "0.0", "0.5", "2.5", "true", "false", '"a"', '"b"',
                            str(10**18), str(2**53 + 1)])


def scalar(fn: ir.Fn, row: tuple):
    """What the lambda gives on `row`, called directly; the failure itself when it fails."""
    try:
        return python_value(fn.call(*row))
    except Exception as failure:  # any failure of the lambda: the arrays path must not answer there
        return failure


def assert_same_as_scalar(fn: ir.Fn, rows: list[tuple]) -> list | None:
    computed = results_on_arrays(fn, rows)
    expected = [scalar(fn, row) for row in rows]
    if computed is not None:
        assert len(computed) == len(rows)
        for row, got, wanted in zip(rows, computed, expected):
            assert not isinstance(wanted, Exception), f"{fn.text} answered {got!r} on {row} where it fails"
            assert identity_key(got) == identity_key(wanted), (fn.text, row, got, wanted)
    for row, wanted in zip(rows, expected):  # what the memo holds, for the groups the arrays took
        held = fn.recent.get(row)
        if held is not None and all(a is b for a, b in zip(held[0], row)):
            assert not isinstance(wanted, Exception), f"{fn.text} holds {held[1]!r} on {row} where it fails"
            assert identity_key(held[1]) == identity_key(wanted), (fn.text, row, held[1], wanted)
    return computed


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(bodies(("x", "y"), LITERALS, 2), st.lists(VALUES, min_size=1, max_size=6), st.lists(VALUES, min_size=1, max_size=6))
def test_arrays_give_the_scalar_value_and_type_or_leave_it(body: str, xs: list, ys: list):
    fn = make(f"lambda x, y: {body}")
    rows = list(product(xs, ys))
    rows = rows * (FEWEST_ROWS // len(rows) + 1)  # enough for the arrays to be tried
    try:
        assert_same_as_scalar(fn, rows)
    except RecursionError:
        return


ONE_TYPE = st.one_of(st.lists(st.integers(-9, 9), min_size=1, max_size=12), st.lists(st.booleans(), min_size=1, max_size=3),
                    st.lists(st.one_of(st.sampled_from([0.0, -0.0, 0.5, 1e300, float(2**53)]),
                                       st.fractions(-4, 4, max_denominator=1024).map(float)), min_size=1, max_size=12))


@settings(max_examples=300, deadline=None)
@given(bodies(("x", "y"), LITERALS, 2), st.one_of(ONE_TYPE, st.lists(VALUES, min_size=1, max_size=6)), ONE_TYPE)
def test_a_table_on_arrays_holds_the_scalar_value_and_type_of_every_pair_or_is_left(body: str, xs: list, ys: list):
    """A sequence_map's table (table_on_arrays, the lowering's views): each cell is what the
    lambda gives on that pair, type included, or there is no table (the lambda fails on a pair,
    a value is not of the others' type, ...)."""
    fn = make(f"lambda x, y: {body}")
    xs = xs * (FEWEST_ROWS // (len(xs) * len(ys)) + 1)  # enough for the arrays to be tried
    try:
        table = table_on_arrays(fn, xs, ys)
    except RecursionError:
        return
    if table is None:
        return
    assert len(table) == len(xs) and all(len(row) == len(ys) for row in table)
    for x, row in zip(xs, table):
        for y, got in zip(ys, row):
            wanted = scalar(fn, (x, y))
            assert not isinstance(wanted, Exception), f"{fn.text} answered {got!r} on {(x, y)} where it fails"
            assert identity_key(got) == identity_key(wanted), (fn.text, (x, y), got, wanted)


def test_a_table_of_a_mean_against_a_few_values_is_computed_on_arrays():
    fn = make("lambda a, c: a * c if a < 0 and c == 2 else -a")
    means = [k / 64 for k in range(-64, 65)]
    table = table_on_arrays(fn, means, [0, 1, 2])
    assert table is not None
    assert [[identity_key(v) for v in row] for row in table] == [[identity_key(fn.call(a, c)) for c in (0, 1, 2)] for a in means]
    assert table_on_arrays(fn, means, [0, 1.0, 2]) is None  # an int and a float: value by value


@pytest.mark.parametrize("body, xs, expected", [
    ("1 if x < 0 else 0", [-0.5, 0.0, -0.0, 2.5], [1, 0, 0, 0]),
    ('"P" if x == 0 else ("T" if x == 2 else "F")', [0.0, 2.0, 0.5], ["P", "T", "F"]),
    ("x + 1", [True, False], [2, 1]),  # True + 1 is the int 2
    ("-x", [0.0, -0.0], [-0.0, 0.0]),
    ("x * 2", [3, 0.25], [6, 0.5]),  # one group per type: an int stays an int
    ("x // 1", [-0.0, 2.5], [-0.0, 2.0]),
    ("min(x, 0.0)", [-0.0, 0.0], [-0.0, 0.0]),  # Python's min keeps the first of equal values
    ("max(0.0, x)", [0.0, -0.0, 0.5], [0.0, 0.0, 0.5]),
])
def test_values_and_types_as_python_gives_them(body, xs, expected):
    fn = make(f"lambda x: {body}")
    rows = [(x,) for x in xs] * FEWEST_ROWS
    computed = assert_same_as_scalar(fn, rows)
    assert computed is not None, body
    assert [identity_key(v) for v in computed[:len(xs)]] == [identity_key(v) for v in expected]


@pytest.mark.parametrize("body, xs", [
    ("1 if x < 0 else 0.5", [-1, 1]),  # an int and a float from one group: left to the scalar calls
    ("x and 2", [True, False]),  # 2, and False
    ("max(0, x)", [0.0, 0.5]),  # the int 0, the float 0.5
    ("1 / x", [0, 1]),
    ("x * x", [2**30]),
    ('x + "a"', [1]),
    ("x", ["a"]),
])
def test_what_the_arrays_cannot_promise_is_left_to_the_calls(body, xs):
    fn = make(f"lambda x: {body}")
    assert assert_same_as_scalar(fn, [(x,) for x in xs] * FEWEST_ROWS) is None


def test_a_mean_s_map_is_computed_on_arrays_with_no_call_of_the_lambda():
    program = parse_program('vocab {"(", ")"}\nmax_len 64\ncausal\n'
                            'step = numerical(map(lambda t: 1 if t == "(" else -1, tokens))\n'
                            "b = numerical(aggregate(select(tokens, tokens, true), step))\n"
                            'output map(lambda v: "T" if v == 0 else ("N" if v < 0 else "P"), b)\n')
    calls = []
    scalar_call = program.output.fn.call
    program.output.fn = dataclasses.replace(program.output.fn, results={}, recent={},
                                            call=lambda *args: calls.append(args) or scalar_call(*args))
    assert infer_value_sets(program)[program.output] == {"T", "N", "P"}
    assert calls == []
