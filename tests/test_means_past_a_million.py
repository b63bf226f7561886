"""Running means with more values than the old limit of a million: frac_prevs past max_len 1,024
compiles (float64: exact on the longest inputs; float32: refused at a line by its precision
bound), the limit on a mean's values still refuses at the aggregate, and the NumPy measures of
value sets give what their plain-Python forms give."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, strategies as st

from rasp_compile.compiler import compile_program
from rasp_compile.compiler.tolerances import smallest_gap, spread
from rasp_compile.errors import RaspPrecisionError, RaspValueError
from rasp_compile.float_arrays import distinct_sorted, only_floats, sorted_floats
from rasp_compile.frontend import infer, load_program, means
from rasp_compile.frontend.means import possible_means
from rasp_compile.runtime.prediction import predict
from rasp_compile.testing.differential import same_value
from rasp_compile.tools.interpret import evaluate_batch

PROGRAMS = Path(__file__).parent.parent / "programs"


def longest_inputs(vocab, max_len: int, count: int) -> list[list]:
    rng = random.Random(3)
    return [[rng.choice(vocab) for _ in range(max_len - i)] for i in range(count)]


def agrees(model, program, inputs) -> bool:
    expected = evaluate_batch(program, inputs)
    return all(same_value(e, g, True) for want, have in zip(expected, predict(model, inputs))
               for e, g in zip(want, have))


@pytest.mark.slow
def test_frac_prevs_at_2048_takes_over_a_million_means_and_float64_answers_as_the_interpreter():
    program = load_program(PROGRAMS / "frac_prevs.rasp", max_len=2_048)
    output = program.output
    assert len(infer.infer_value_sets(program)[output]) == 1_275_587  # 1 + sum of phi(m), m <= 2,048
    model = compile_program(program, dtype=np.float64)
    assert agrees(model, program, longest_inputs(program.vocab, 2_048, 2))


@pytest.mark.slow
def test_frac_prevs_at_2048_in_float32_is_refused_at_the_mean_by_its_precision_bound():
    program = load_program(PROGRAMS / "frac_prevs.rasp", max_len=2_048)
    with pytest.raises(RaspPrecisionError, match="float64") as refused:
        compile_program(program, dtype=np.float32)
    assert refused.value.line == 8


def test_a_mean_over_more_values_than_the_limit_is_refused_at_the_aggregate(monkeypatch):
    """frac_prevs at 64 takes 1,261 means: refused under a limit of 1,000, compiled under 2,000."""
    program = load_program(PROGRAMS / "frac_prevs.rasp", max_len=64)
    monkeypatch.setattr(means, "MAX_MEANS", 1_000)
    with pytest.raises(RaspValueError, match="can take more than 1,000 values") as refused:
        infer.infer_value_sets(program)
    assert (refused.value.line, refused.value.col) == (8, 18)
    monkeypatch.setattr(means, "MAX_MEANS", 2_000)
    monkeypatch.setattr(infer, "MAX_NUMBERS", 2_000)
    assert len(infer.infer_value_sets(program)[program.output]) == 1_261
    assert agrees(compile_program(program), program, longest_inputs(program.vocab, 64, 3))


floats_lists = st.lists(st.floats(allow_nan=False, allow_infinity=False, width=64), max_size=40)


@given(floats_lists)
def test_sorted_floats_is_sorted(values):
    assert [repr(v) for v in sorted_floats(values)] == [repr(v) for v in sorted(values)]  # -0.0 and 0.0 too


@given(floats_lists.filter(bool))
def test_the_gap_and_spread_are_those_of_the_python_floats(values):
    ordered = sorted(set(values))
    assert list(distinct_sorted(values)) == ordered
    assert smallest_gap(values) == min((b - a for a, b in zip(ordered, ordered[1:])), default=1.0)
    assert spread(values) == ((max(values) - min(values)) or 1.0)


def test_only_a_set_of_python_floats_counts_as_floats():
    assert only_floats({0.5, 1.0}) and not only_floats({0.5, 1}) and not only_floats(set())
    assert not only_floats([np.float64(0.5)])


def test_the_means_of_a_running_indicator_are_its_fractions():
    assert possible_means(frozenset({0, 1}), 3, None) == {0.0, 1 / 3, 0.5, 2 / 3, 1.0}
