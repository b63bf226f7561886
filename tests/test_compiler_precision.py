"""float32 exactness where numbers grow: index matches whose target comes from a step MLP at
max_len 64 (the sort family), against the interpreter on seeded random inputs."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path

import pytest

from rasp_compile.compiler import compile_program
from rasp_compile.frontend import load_program

from differential import disagreements

PROGRAMS = Path(__file__).parent.parent / "programs"


@pytest.mark.parametrize("name", ["sort_unique", "reverse", "sort_freq"])
def test_index_matches_stay_exact_in_float32_at_max_len_64(name: str):
    program = dataclasses.replace(load_program(PROGRAMS / f"{name}.rasp"), max_len=64)
    model = compile_program(program)
    rng = random.Random(64)
    inputs = [[rng.choice(program.vocab) for _ in range(rng.randint(40, 64))] for _ in range(150)]
    bad, checked = disagreements(model, program, inputs)
    assert checked == len(inputs) and bad == []
