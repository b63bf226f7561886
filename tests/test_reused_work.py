"""Work the compiler does once and reuses, checked against doing it again: a selector read by
several aggregates is scored once per lowering (lowering/selectors.score_selector), a step MLP's
answers and a sequence_map's separability are computed on arrays (lambda_arrays.results_at,
lowering/linear.py); each gives exactly what the plain computation gives."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rasp_compile import ir
from rasp_compile.compiler.driver import OPTIMIZATIONS, build_graph, lowering_options
from rasp_compile.compiler.lowering.linear import linear_form
from rasp_compile.compiler.lowering.lower import new_state
from rasp_compile.compiler.lowering.scores import score_columns, shared_block
from rasp_compile.compiler.lowering.selectors import normalize_selector, score_selector
from rasp_compile.compiler.ops import Attend
from rasp_compile.compiler.variables import Var
from rasp_compile.element_fn import identity_key
from rasp_compile.frontend import parse_program
from rasp_compile.frontend.infer import infer_value_sets
from rasp_compile.frontend.lambda_arrays import results_at

from lambda_bodies import bodies, make

TWICE = """
vocab {"(", ")"}
max_len 12
prefix = select(indices, indices, <=)
before = select(indices, indices, <)
step = numerical(map(lambda t: 1 if t == "(" else -1, tokens))
a = numerical(aggregate(prefix, step))
b = numerical(aggregate(prefix, numerical(map(lambda x: 1 if x < 0 else 0, a))))
c = numerical(aggregate(before, step))
output numerical(sequence_map(lambda x, y: x + y, b, c))
"""


def _columns(score) -> list:
    return [(column.q, column.k) for column in score.columns]


def test_a_selector_read_twice_is_scored_once_and_as_a_fresh_scoring_scores_it():
    program = parse_program(TWICE)
    graph = build_graph(program, infer_value_sets(program), frozenset(OPTIMIZATIONS))
    heads = {op.out.label: op for op in graph.ops if isinstance(op, Attend)}
    assert heads["a"].score is heads["b"].score  # one selector, one score
    assert heads["c"].score is not heads["a"].score and _columns(heads["c"].score) != _columns(heads["a"].score)
    for shared in (False, True):  # the cached score is the one computed afresh, with and without shared blocks
        options = lowering_options(frozenset(OPTIMIZATIONS) - ({"compact-heads"} if not shared else set()))
        state = new_state(program, infer_value_sets(program), options)
        for node in program.nodes():  # lowered as program_to_graph lowers it, selectors scored and cached
            if isinstance(node, ir.SOp):
                state.var_for(node)
        for selector in {op.selector for op in graph.ops if isinstance(op, Attend)}:
            cached = score_selector(state, selector)
            fresh = score_columns(normalize_selector(selector, state), shared_block if state.options.shared_blocks else None)
            assert _columns(cached) == _columns(fresh) and cached.terms == fresh.terms


MEANS = st.lists(st.fractions(-4, 4, max_denominator=64).map(float), min_size=32, max_size=48, unique=True).map(sorted)
FEW = st.lists(st.integers(-3, 3), min_size=2, max_size=4, unique=True).map(sorted)
LINEAR = st.sampled_from(["x + 2 * y", "x * 3 - y", "x - y / 4", "x + y * 0.000000000001", "(x if y == 0 else x + 0.0000000001) + y",
                          "x * y", "x + y if x < 0 else x - y", "y - x * 0.5", "1 if x < 0 else 0"])
LITERALS = st.sampled_from(["0", "1", "2", "0.5", "-1.5", "0.000000001", "true"])


def _plain(fn: ir.Fn):
    """The lambda called value by value: no arrays path."""
    return lambda *args: fn(*args)


def _form(op) -> object:
    """A Linear op's weights and bias, every float as its bits."""
    if op is None:
        return None
    weights = {(var.label, value): {k: float.hex(c) for k, c in vector.items()} for (var, value), vector in op.weights.items()}
    return weights, {k: float.hex(c) for k, c in op.bias.items()}


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(st.one_of(LINEAR, bodies(("x", "y"), LITERALS, 1)), MEANS, FEW)
def test_a_sequence_map_of_a_mean_and_a_few_values_folds_on_arrays_as_it_folds_call_by_call(body, means, few):
    fn = make(f"lambda x, y: {body}")
    out = Var("out", ir.NUMERICAL, (0,))
    inputs = (Var("x", ir.NUMERICAL, tuple(means)), Var("y", ir.NUMERICAL, tuple(few)))
    try:
        plain = linear_form(out, _plain(fn), inputs, lambda var: None)
    except (RecursionError, ArithmeticError, ValueError, TypeError):
        return  # the lambda fails on some pair: the lowering refuses it before
    assert _form(linear_form(out, fn, inputs, lambda var: None)) == _form(plain)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(bodies(("x", "x"), LITERALS, 1), st.lists(st.fractions(-4, 4, max_denominator=64).map(float), min_size=1, max_size=80))
def test_answers_on_arrays_are_the_calls_answers(body, values):
    fn = make(f"lambda x: {body}")
    try:
        wanted = [identity_key(fn.call(v)) for v in values]
    except Exception:  # noqa: BLE001 (any failure of the lambda): nothing to compare
        return
    assert [identity_key(v) for v in results_at(fn, values)] == wanted


def test_a_linear_sequence_map_of_a_mean_folds_on_arrays_and_a_bent_one_does_not():
    means, few = tuple(k / 64 for k in range(-40, 40)), (0, 1, 2)
    inputs = (Var("x", ir.NUMERICAL, means), Var("y", ir.NUMERICAL, few))
    out = Var("out", ir.NUMERICAL, (0,))
    straight = linear_form(out, make("lambda x, y: x + 2 * y"), inputs, lambda var: None)
    assert straight is not None and _form(straight) == _form(linear_form(out, _plain(make("lambda x, y: x + 2 * y")), inputs, lambda var: None))
    assert linear_form(out, make("lambda x, y: x + y * (1 if x < 0.5 else 1.001)"), inputs, lambda var: None) is None
