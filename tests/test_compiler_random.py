"""Random well-formed programs (rasp_compile/testing/random_programs.py): the compiled float32 model equals the
interpreter on random inputs. Hypothesis draws at least 200 programs per run, derandomized so a
run is repeatable; bench/fuzz.py runs thousands more."""

from __future__ import annotations


import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rasp_compile import ir
from rasp_compile.compiler import OPTIMIZATIONS, compile_program
from rasp_compile.frontend.infer import infer_value_sets
from rasp_compile.testing.differential import disagreements, random_inputs
from rasp_compile.testing.random_programs import programs



@pytest.mark.slow
@settings(max_examples=200, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs())
def test_compiled_random_program_equals_interpreter(program: ir.Program):
    infer_value_sets(program)
    model = compile_program(program)
    bad, checked = disagreements(model, program, random_inputs(program.vocab, program.max_len, 30, rng=0))
    assert bad == [], bad[:3]


@pytest.mark.slow
@settings(max_examples=100, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs(), st.sampled_from(sorted(OPTIMIZATIONS)))
def test_each_optimisation_can_be_switched_off(program: ir.Program, disabled: str):
    """The tests run both ways: any one pass off, or all of them, still gives the same answers."""
    for switched_off in ([disabled], list(OPTIMIZATIONS)):
        model = compile_program(program, disabled=switched_off)
        bad, _ = disagreements(model, program, random_inputs(program.vocab, program.max_len, 20, rng=1))
        assert bad == [], (switched_off, bad[:3])
