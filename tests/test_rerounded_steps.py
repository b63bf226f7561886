"""rerounded-steps (compiler/passes/rerounded_steps.py): where float32 cannot hold a step MLP's
number, a second step MLP of that number's own few values rounds it again a layer later. The
library's bracket programs at max_len 1,024, refused in float32 without it, compile one layer
deeper, agree with the interpreter on their longest inputs, and stay within their recorded bounds
in whatever order the re-rounding MLP's sum is taken; a program float32 holds is left alone."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path

import numpy as np
import pytest

from rasp_compile.compiler import compile_program
from rasp_compile.compiler.error_bounds import error_bounds
from rasp_compile.compiler.driver import build_graph, OPTIMIZATIONS
from rasp_compile.compiler.ops import NumericMLP
from rasp_compile.compiler.passes.rerounded_steps import reround_high_digit, reround_steps
from rasp_compile.errors import RaspPrecisionError
from rasp_compile.frontend import load_program
from rasp_compile.frontend.infer import infer_value_sets
from rasp_compile.testing.differential import disagreements
from rasp_compile.tools.interpret import evaluate
from summation_orders import backwards, column_in_order, positives_first, shuffled
from test_error_bounds import assert_within_bounds, long_inputs

PROGRAMS = Path(__file__).resolve().parent.parent / "programs"


def _program(name: str, max_len: int):
    return dataclasses.replace(load_program(PROGRAMS / f"{name}.rasp"), max_len=max_len)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["dyck1", "shuffle_dyck", "shuffle_dyck2"])
def test_bracket_programs_at_1024_compile_in_float32_one_layer_deeper(name: str):
    """Their running balance is decoded into 0/1 answers by steps 1/1,024 apart, whose far-side
    units reach about 4,000: charged in any summation order, up to 4e-4, more than a mean or a line
    of it that tells apart 1/1,024 can absorb. Refused without the pass (float64 advised); with it,
    exact on the longest inputs and within every recorded bound."""
    program = _program(name, 1_024)
    with pytest.raises(RaspPrecisionError, match="float64") as refusal:
        compile_program(program, disabled=["rerounded-steps"])
    assert refusal.value.loc is not None and (refusal.value.line or 0) > 1
    model = compile_program(program)
    raw = [label for label in model.meta["residual"] if label.endswith(" (raw)")]
    assert raw and len(model.meta["layers"]) == len(compile_program(_program(name, 256)).meta["layers"]) + 1
    inputs = long_inputs(program, random.Random(7))
    bad, checked = disagreements(model, program, inputs)
    assert bad == [] and checked == len(inputs)
    assert assert_within_bounds(model, program, inputs) > 0


@pytest.mark.slow
def test_a_rerounded_number_stays_within_its_bound_in_any_summation_order():
    """dyck1 at 1,024: its state, 2 balanced + ever_negative, is written in part by the
    re-rounding MLP. With that MLP's terms added shuffled, backwards and every positive term
    first, the state stays within the bound its step reader was checked against, on inputs that
    reach the balance's far ends."""
    program = _program("dyck1", 1_024)
    model = compile_program(program)
    bound = next(m["bound"] for m in model.meta["margins"] if m["kind"] == "step" and m["reads"] == "state")
    state = next(node for node in program.nodes() if getattr(node, "label", None) == "state")
    for tokens in (["("] * 1_024, [")"] * 1_024, ["(", ")"] * 512, ["("] * 512 + [")"] * 512):
        exact = np.array(evaluate(dataclasses.replace(program, output=state), tokens), dtype=float)
        for order in (shuffled(0), backwards, positives_first):
            assert np.abs(column_in_order(model, tokens, "state", order) - exact).max() <= bound


def test_a_program_float32_holds_is_not_rounded_again():
    """dyck1 at 256 passes every precision check as built: the driver keeps that graph, though the
    pass would find numbers to round again (it is tried only on a refusal)."""
    program = _program("dyck1", 256)
    graph = build_graph(program, infer_value_sets(program), frozenset(OPTIMIZATIONS))
    assert reround_steps(graph, np.float32) is not graph
    model = compile_program(program)
    assert not any(label.endswith(" (raw)") for label in model.meta["residual"])
    assert model.meta["residual"] == compile_program(program, disabled=["rerounded-steps"]).meta["residual"]


def test_the_pass_rounds_again_only_numbers_it_makes_many_times_more_precise():
    """dyck1 at 1,024: the two 0/1 answers of its balance are re-rounded, each to a bound some 800
    times below its first; the balance itself (hundreds of thousands of values) is not."""
    program = _program("dyck1", 1_024)
    graph = build_graph(program, infer_value_sets(program), frozenset(OPTIMIZATIONS))
    again = reround_steps(graph, np.float32)
    before, after = error_bounds(graph, np.float32), error_bounds(again, np.float32)
    pairs = [(op, next(o for o in again.ops if o.out.label == f"{op.out.label} (raw)"))
             for op in again.ops if isinstance(op, NumericMLP) and op.input.label.endswith(" (raw)")]
    assert {op.out.label for op, _ in pairs} == {"negative", "balanced"}
    for op, raw in pairs:
        assert op.input is raw.out and op.answers == list(op.out.values)
        assert after[op.out] * 100 < before[next(o.out for o in graph.ops if o.out.label == op.out.label)]


@pytest.mark.parametrize("name, max_len", [("aab", 6), ("shuffle_dyck", 16), ("count", 512)])
def test_only_a_two_digit_read_out_has_its_high_digit_rounded_again(name: str, max_len: int):
    """aab and shuffle_dyck read two one-hots (categorical, string or number classes), count at 512 one
    centred number: none has a high digit, and reround_high_digit returns the graph itself."""
    program = _program(name, max_len)
    graph = build_graph(program, infer_value_sets(program), frozenset(OPTIMIZATIONS))
    assert reround_high_digit(graph, np.float32) is graph


def test_a_high_digit_is_rounded_again_only_where_its_error_takes_a_share_of_the_margin():
    """paren_depth: at 1,024 the high digit's error times B takes more than an eighth of the
    read-out's tolerance in float32 (rounded again), not in float64 (kept as it is)."""
    program = _program("paren_depth", 1_024)
    graph = build_graph(program, infer_value_sets(program), frozenset(OPTIMIZATIONS))
    assert reround_high_digit(graph, np.float64) is graph
    again = reround_high_digit(graph, np.float32)
    assert [op.out.label for op in again.ops if isinstance(op, NumericMLP) and op.input.label == "depth.high (raw)"] == ["depth.high"]
