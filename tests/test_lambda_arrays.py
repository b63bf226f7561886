"""Lambdas on arrays (frontend/lambda_arrays.py, element_fn.predicate_table): on every pair of
values, the table computed on arrays equals the scalar evaluator's answers pair by pair, or the
arrays path declines; it never answers differently. The oracle is the scalar evaluator, itself
checked against Python in tests/test_lambda_eval.py."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rasp_compile import ir
from rasp_compile.element_fn import predicate_table

from lambda_bodies import bodies, make

NUMBERS = st.one_of(st.integers(-9, 9), st.sampled_from([0.5, -2.5, 3.0, 1e300, 2**60]), st.booleans())
LITERALS = st.sampled_from(["0", "1", "2", "7", "0.5", "2.5", "true", "false", str(10**18), str(2**53 + 1)])


def scalar_table(fn: ir.Fn, keys: list, queries: list) -> np.ndarray | None:
    """fn's truth on every pair, pair by pair; None when some pair fails (the arrays path must
    then decline: it answers only where the scalar evaluator does)."""
    try:
        return np.array([[bool(fn(k, q)) for q in queries] for k in keys], dtype=bool)
    except Exception:  # any failure of the lambda: a division by zero, a result too large, ...
        return None


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(bodies(("k", "q"), LITERALS, 1), st.lists(NUMBERS, min_size=1, max_size=6), st.lists(NUMBERS, min_size=1, max_size=6))
def test_arrays_answer_as_the_scalar_evaluator_or_decline(body: str, keys: list, queries: list):
    fn = make(f"lambda k, q: {body}")
    try:
        expected = scalar_table(fn, keys, queries)
    except RecursionError:
        return
    got = predicate_table(fn, keys, queries)
    if got is None:
        return
    assert expected is not None, f"{body} answered on arrays where the scalar evaluator fails"
    np.testing.assert_array_equal(got, expected, err_msg=body)


@pytest.mark.parametrize("body, keys, queries", [
    ("k + q == 2", [True], [True]),  # True + True is 2, not True
    ("-k < 0", [True, False], [0]),
    ("k % 3 == q", [-1, -4, 5], [2, 1]),  # Python's remainder takes the divisor's sign
    ("k // 2 == q", [-3, 3], [-2, 1]),
    ("k / 3 == q / 3", [1, 2], [1, 2]),
    ("q != 0 and k / q > 1", [3], [0, 2]),  # the guard: the scalar path never divides by 0
    ("abs(k - q) <= 1", list(range(5)), list(range(5))),
    ("min(k, q) == max(k, q)", [0.5, 1], [1, 0.5]),
    ("(k if q else -k) > 0", [1, -1], [0, 1]),
])
def test_edge_cases_agree_or_decline(body: str, keys: list, queries: list):
    fn = make(f"lambda k, q: {body}")
    got = predicate_table(fn, keys, queries)
    expected = scalar_table(fn, keys, queries)
    if got is not None:
        np.testing.assert_array_equal(got, expected)


def test_the_common_predicates_are_computed_on_arrays():
    for body in ("k == q - 1", "k < q and k % 2 == 0", "abs(k - q) == 2 or k == 0"):
        assert predicate_table(make(f"lambda k, q: {body}"), list(range(1000)), list(range(1000))) is not None
    assert predicate_table("<", list(range(5)), [1.5]) is not None


def test_what_has_no_array_form_declines():
    assert predicate_table(make('lambda k, q: str(k) == "1"'), [1], [1]) is None  # str
    assert predicate_table(make("lambda k, q: k / q > 0"), [1], [0, 1]) is None  # a division by zero
    assert predicate_table(make("lambda k, q: k * q > 0"), [2**40], [2**40]) is None  # beyond 2^53
    assert predicate_table("==", ["a"], ["a"]) is None  # strings
    assert predicate_table(ir.as_fn(lambda k, q: k == q), [1], [1]) is None  # a Python function
