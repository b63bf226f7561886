"""Random well-formed programs (tests/random_programs.py): the compiled float32 model equals the
interpreter on random inputs. Hypothesis draws at least 200 programs per run, derandomized so a
run is repeatable; bench/fuzz.py runs thousands more."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings

from rasp_compile import ir
from rasp_compile.compiler import compile_program
from rasp_compile.infer import infer_value_sets

from differential import disagreements
from random_programs import programs, random_inputs


@settings(max_examples=200, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs())
def test_compiled_random_program_equals_interpreter(program: ir.Program):
    infer_value_sets(program)
    model = compile_program(program)
    bad, checked = disagreements(model, program, random_inputs(program, random.Random(0), 30))
    assert bad == [], bad[:3]
