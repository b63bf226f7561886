"""Values that meet at one position (frontend/cooccurrence.py): in a causal program a mean over a
`true` select averages exactly the keys so far, so a sequence_map of it and the length is tried
on the pairs that meet only; the value set stays exact (checked against every input, in plain
Python), and the compiled model agrees with the interpreter."""

from __future__ import annotations

import itertools
import random
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rasp_compile import ir
from rasp_compile.compiler import OPTIMIZATIONS, build_graph, compile_program
from rasp_compile.compiler.ops import GatedMap
from rasp_compile.errors import RaspValueError
from rasp_compile.frontend import parse_program
from rasp_compile.frontend.infer import infer_value_sets
from rasp_compile.frontend.means import means_by_count, possible_means
from rasp_compile.testing.differential import assert_agree, every_input


DEPTH = """
vocab {"(", ")"}
max_len 8
causal
step = numerical(map(lambda t: 1 if t == "(" else -1, tokens))
balance = numerical(aggregate(select(tokens, tokens, true), step))
depth = numerical(sequence_map(lambda b, n: b * n, balance, length))
output map(lambda d: round(d), depth)
"""


def _depths(max_len: int) -> set:
    """Every running sum of +1 / -1 over every input up to max_len, in plain Python."""
    seen: set[int] = set()
    for n in range(1, max_len + 1):
        for steps in itertools.product((1, -1), repeat=n):
            seen.update(itertools.accumulate(steps))
    return seen


def test_a_running_mean_times_the_length_takes_the_running_sums_only():
    program = parse_program(DEPTH)
    depth = next(node for node in program.nodes() if node.label == "depth")
    assert infer_value_sets(program)[depth] == _depths(8)  # not every mean of up to 8 values times every length


def test_the_model_of_a_running_sum_is_exact_on_every_input():
    program = parse_program(DEPTH)
    graph = build_graph(program, infer_value_sets(program), frozenset(OPTIMIZATIONS) - {"binary-products"})
    gated = [op for op in graph.ops if isinstance(op, GatedMap)]
    assert len(gated) == 1 and gated[0].affine == {n: (float(n), 0.0) for n in range(1, 9)}  # b * n, line by line
    assert_agree(compile_program(program), program, every_input(program.vocab, program.max_len))
    assert_agree(compile_program(program, disabled=["binary-products"]), program, every_input(program.vocab, 8))
    assert_agree(compile_program(program, disabled=["gated-maps"]), program, every_input(program.vocab, 6))


def test_a_lambda_failing_only_on_pairs_that_never_meet_is_no_error():
    """f * n is a whole number wherever f meets n; elsewhere the lambda divides by zero."""
    text = DEPTH.replace("lambda b, n: b * n", "lambda b, n: b * n if abs(b * n - round(b * n)) < 0.001 else 1 / 0")
    program = parse_program(text, max_len=6)
    assert_agree(compile_program(program), program, every_input(program.vocab, 6))
    assert_agree(compile_program(program, disabled=["gated-maps"]), program, every_input(program.vocab, 6))


def test_a_mean_whose_count_the_position_does_not_decide_meets_every_length():
    """Not causal (or not over `true`): every pair is tried, and the failing lambda is reported."""
    text = DEPTH.replace("lambda b, n: b * n", "lambda b, n: b * n if abs(b * n - round(b * n)) < 0.001 else 1 / 0")
    for changed in (text.replace("causal\n", ""), text.replace("select(tokens, tokens, true)", "select(indices, indices, <=)")):
        with pytest.raises(RaspValueError, match="fails on"):
            parse_program(changed, max_len=6)


def test_means_by_count_are_the_exact_means_of_each_count():
    rng = random.Random(3)
    for _ in range(20):
        values = frozenset(rng.sample([-2, -1, 0, 0.5, 1, 3, 0.25], rng.randint(1, 4)))
        by_count = list(means_by_count(values, 4, ir.tokens))
        for count, means in enumerate(by_count, start=1):
            exact = {sum(map(Fraction, chosen)) / count for chosen in itertools.product(sorted(values), repeat=count)}
            assert means.tolist() == sorted(float(f) for f in exact)
        assert set().union(*(m.tolist() for m in by_count)) == possible_means(values, 4, ir.tokens)


def test_a_sum_of_a_running_mean_and_the_length_still_folds():
    """f + n answers pairs that never meet within the range of its values: still linear, no layer."""
    program = parse_program(DEPTH.replace("lambda b, n: b * n", "lambda b, n: b + n"))
    graph = build_graph(program, infer_value_sets(program), frozenset(OPTIMIZATIONS))
    assert not any(isinstance(op, GatedMap) for op in graph.ops)
    assert_agree(compile_program(program), program, every_input(program.vocab, program.max_len))


@pytest.mark.slow
@settings(max_examples=25, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(["length", "indices"]), st.integers(-3, 6), st.sampled_from(["*", "+", "-"]), st.integers(2, 6))
def test_random_steps_of_a_running_mean_and_the_position_agree_with_the_interpreter(position, cut, op, max_len):
    """Categorical answers (steps, not lines), where pairs that never meet are filled."""
    program = parse_program(f"""
vocab {{a, b}}
max_len {max_len}
causal
frac = numerical(aggregate(select(tokens, tokens, true), numerical(map(lambda t: 1 if t == "a" else 0, tokens))))
output sequence_map(lambda f, p: "hi" if f {op} p > {cut} / 2 else ("mid" if f {op} p == {cut} / 2 else "lo"), frac, {position})
""")
    assert_agree(compile_program(program), program, every_input(program.vocab, max_len))
    assert_agree(compile_program(program, disabled=["gated-maps"]), program, every_input(program.vocab, max_len))
