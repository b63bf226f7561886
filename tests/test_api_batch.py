"""The research-code API: `rc.run_batch` runs inputs of any lengths at once and agrees with `rc.run`
and the interpreter; a numerical output comes back as the program's value (1.0, not float32's
0.99999988), as the command line shows it; `rc.compile` given a file name says to load it first."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

import rasp_compile as rc
from rasp_compile.runtime.prediction import predict

ROOT = Path(__file__).resolve().parent.parent
FRAC = ROOT / "programs" / "frac_prevs.rasp"


@pytest.fixture(scope="module")
def frac():
    program = rc.load_program(FRAC)
    return program, rc.compile(program)


def test_run_batch_takes_ragged_inputs_and_agrees_with_run_and_the_interpreter():
    program = rc.load_program(ROOT / "programs" / "reverse.rasp")
    model = rc.compile(program)
    inputs = [[1], [3, 1, 2], [2, 2], "123", [1, 2, 3, 3]]
    outputs = rc.run_batch(model, inputs)
    assert outputs == [rc.run(model, tokens) for tokens in inputs]
    assert outputs == [rc.evaluate(program, list(map(int, tokens))) for tokens in inputs]
    assert rc.run_batch(model, []) == []


def test_run_batch_refuses_one_string():
    model = rc.compile(rc.load_program(ROOT / "programs" / "aab.rasp"))
    with pytest.raises(TypeError, match=r"rc\.run\(model, tokens\)"):
        rc.run_batch(model, "aab")


def test_a_numerical_output_is_the_programs_value(frac):
    program, model = frac
    raw = predict(model, [list("xyxx")])[0]
    assert raw[0] != 1.0  # float32's approximation: what the snapping is for
    assert rc.run(model, "xyxx") == rc.evaluate(program, list("xyxx")) == [1.0, 0.5, 2 / 3, 0.75]


def test_every_numerical_output_equals_the_interpreter_exactly(frac):
    program, model = frac
    inputs = [list(t) for n in range(1, program.max_len + 1) for t in itertools.product("xy", repeat=n)]
    assert rc.run_batch(model, inputs) == [rc.evaluate(program, tokens) for tokens in inputs]


def test_without_recorded_values_a_numerical_output_is_left_as_computed(frac):
    _, model = frac
    bare = rc.Model({k: v for k, v in model.meta.items() if k != "sops"}, model.params)
    assert rc.run(bare, "xyxx") == predict(model, [list("xyxx")])[0]


@pytest.mark.parametrize("name", ["programs/aab.rasp", str(ROOT / "programs" / "aab.rasp"), "missing.RASP"])
def test_compile_of_a_file_name_says_to_load_it(name):
    with pytest.raises(ValueError) as refused:
        rc.compile(name)
    message = str(refused.value)
    assert "\n" not in message and f"rc.compile(rc.load_program({name!r}))" in message


def test_compile_still_takes_program_text_and_a_path():
    text = (ROOT / "programs" / "aab.rasp").read_text(encoding="utf-8")
    assert rc.run(rc.compile(text), "aab") == rc.run(rc.compile(ROOT / "programs" / "aab.rasp"), "aab")
    assert rc.run(rc.compile("vocab {a}; max_len 2; output tokens"), "aa") == ["a", "a"]
