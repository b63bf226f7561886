"""Every program in programs/, compiled to float32 weights, against the reference interpreter.

At the program's own max_len on every input (up to 100,000 of them), and recompiled at max_len 16
on 1,000 seeded random inputs of mixed lengths. Also: a compiled file survives save/load, and
the BOS position's residual never depends on the input (the compiler's BOS argument).
"""

from __future__ import annotations

import dataclasses
import random
import time
from pathlib import Path

import numpy as np
import pytest

from rasp_compile.compiler import OPTIMIZATIONS, compile_program
from rasp_compile.runtime.execute import trace
from rasp_compile.runtime.prediction import encode
from rasp_compile.frontend import load_program
from rasp_compile.runtime.weights_file import load, save
from rasp_compile.testing.differential import disagreements, every_input, random_inputs


PROGRAMS = sorted((Path(__file__).parent.parent / "programs").glob("*.rasp"))
MAX_EXHAUSTIVE = 100_000
LONG = 16
RANDOM_INPUTS = 1_000


@pytest.mark.slow
@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_compiled_equals_interpreter_on_every_input(path: Path):
    program = load_program(path)
    started = time.perf_counter()
    model = compile_program(program)
    assert time.perf_counter() - started < 1.0, "every library program compiles in under a second"
    bad, checked = disagreements(model, program, every_input(program.vocab, program.max_len, MAX_EXHAUSTIVE))
    assert checked > 0
    assert bad == []


@pytest.mark.slow
@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_unoptimised_compilation_equals_interpreter(path: Path):
    """With every optimisation pass off, the plain constructions alone are right too."""
    program = load_program(path)
    model = compile_program(program, disabled=OPTIMIZATIONS)
    inputs = every_input(program.vocab, program.max_len, MAX_EXHAUSTIVE)
    bad, checked = disagreements(model, program, random.Random(5).sample(inputs, min(len(inputs), 2_000)))
    assert checked > 0
    assert bad == []


@pytest.mark.slow
@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_compiled_at_max_len_16_equals_interpreter(path: Path):
    program = load_program(path)
    model = compile_program(program, max_len=LONG)
    long_program = dataclasses.replace(program, max_len=LONG)
    inputs = random_inputs(program.vocab, LONG, RANDOM_INPUTS, rng=16)
    bad, checked = disagreements(model, long_program, inputs)
    assert checked >= RANDOM_INPUTS * 0.9
    assert bad == []


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_saved_file_runs_the_same(path: Path, tmp_path: Path):
    program = load_program(path)
    model = compile_program(program)
    save(model, tmp_path / "model.npz")
    loaded = load(tmp_path / "model.npz")
    assert loaded.meta == model.meta
    for key, array in model.params.items():
        np.testing.assert_array_equal(loaded.params[key], array)


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_bos_residual_does_not_depend_on_the_input(path: Path):
    program = load_program(path)
    model = compile_program(program, dtype=np.float64)
    inputs = random_inputs(program.vocab, program.max_len, 20, rng=3)
    bos_rows = []
    for tokens in inputs:
        steps = trace(model, np.array([encode(model, tokens)]))
        bos_rows.append(np.concatenate([s["after_mlp"][0, 0] for s in steps]) if steps else np.zeros(1))
    for row in bos_rows[1:]:
        np.testing.assert_allclose(row, bos_rows[0], atol=1e-9)
