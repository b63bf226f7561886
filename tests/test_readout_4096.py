"""Counts at max_len 4,096 (length, hist, count) and paren_depth's depth at 2,048: float32 is
refused (the high digit's step MLP may round past the read-out's allowance, in whatever order its
matmul adds its units), float64 is exact on the longest inputs. The errors the models make are measured through rc.trace against exact values and held
to the bounds the compiler recorded (meta.margins), for the width's BOS share or the length's
mean as well as for the read-out."""

from __future__ import annotations

import dataclasses
import math
import random
from pathlib import Path

import numpy as np
import pytest

import rasp_compile as rc
from rasp_compile.compiler import compile_program
from rasp_compile.compiler.passes.position_widths import mean_index_centre
from rasp_compile.compiler.tolerances import NEAREST_VALUE_ROUNDING_SHARE
from rasp_compile.errors import RaspPrecisionError
from rasp_compile.frontend import load_program
from rasp_compile.runtime.prediction import encode, predict
from rasp_compile.tools.interpret import evaluate_batch
from summation_orders import backwards, column_in_order, positives_first, shuffled

PROGRAMS = Path(__file__).parent.parent / "programs"
LONGEST = 4_096


def _program(name: str):
    return dataclasses.replace(load_program(PROGRAMS / f"{name}.rasp"), max_len=LONGEST)


def _longest(vocab, seed: int) -> list[list]:
    """Seeded random inputs of 4,093..4,096 tokens."""
    rng = random.Random(seed)
    return [[rng.choice(vocab) for _ in range(n)] for n in range(LONGEST - 3, LONGEST + 1)]


def _margin(model, kind: str, reads: str) -> dict:
    """The recorded read-out of `reads` as `kind` with the largest bound (steps: one per reader)."""
    return max((m for m in model.meta["margins"] if m["kind"] == kind and m["reads"] == reads), key=lambda m: m["bound"])


def _column(trace, label: str) -> np.ndarray:
    """The final residual's coordinate of `label` at every token (float64)."""
    return trace.stages[-1].x[trace.first:, trace.variables[label].dims[0]].astype(float)


@pytest.mark.slow
@pytest.mark.parametrize("name, widths", [
    ("count", lambda tokens: [tokens.count("a")] * len(tokens)),
    ("hist", lambda tokens: [tokens.count(t) for t in tokens]),
])
def test_a_width_of_4096_is_refused_in_float32_and_exact_in_float64_within_its_measured_bounds(name, widths):
    """The width head writes BOS's share c/(c + w) (c = 4,096), read by steps 1/(4 c) apart; the
    read-out reads the width less its middle and the high digit of its centred rank. In float32 the
    step MLPs writing both, whose units reach 2 |rank - threshold| and cancel pair by pair, may
    round by more than the read-out allows in whatever order their matmul adds them; rounding the
    digit again (rerounded-steps) still leaves the width's own 4,096 steps off by up to 0.69:
    refused at the answer's line, with float64 advised."""
    with pytest.raises(RaspPrecisionError, match="float64") as refusal:
        compile_program(_program(name), dtype=np.float32)
    assert refusal.value.loc is not None
    model = compile_program(_program(name), dtype=np.float64)
    assert model.meta["output"]["values"] == list(range(0 if name == "count" else 1, LONGEST + 1))
    inputs = _longest(["a", "b", "c"] if name == "count" else [1, 2, 3], seed=4)
    inputs.append(inputs[-1][:1] * LONGEST)  # the largest width, 4,096
    assert predict(model, inputs) == [widths(tokens) for tokens in inputs]
    share_bound = _margin(model, "step", "output (BOS share)")["bound"]
    readout = _margin(model, "nearest-value", "output (centred)")
    classes = model.meta["output"]["values"]
    middle, base = (classes[0] + LONGEST) / 2, math.isqrt(len(classes) - 1) + 1  # 65 for count's 4,097, 64 for hist's
    for tokens in inputs[-2:]:
        trace = rc.trace(model, tokens)
        width = np.array(widths(tokens), dtype=float)
        share_error = np.abs(_column(trace, "output (BOS share)") - LONGEST / (LONGEST + width)).max()
        rank = width - classes[0] - (len(classes) - 1) // 2  # less the middle rank
        high = np.floor((rank + base // 2) / base)
        number_error = np.abs(_column(trace, "output (centred)") - (width - middle))
        high_error = np.abs(_column(trace, "output.high") - high)
        assert share_error <= share_bound <= 1 / (4 * 2 * LONGEST)  # a quarter of the share's gap 1/(2(2c - 1))
        assert (number_error + base * high_error).max() <= readout["bound"] <= readout["tolerance"]
        logits = np.sort(rc.logits(model, np.array([encode(model, tokens)]))[0, trace.first:], axis=-1)
        lead = (logits[:, -1] - logits[:, -2]).min()  # 1 at exact digits, less twice their error and rounding
        assert lead >= 1 - 2 * readout["bound"] - NEAREST_VALUE_ROUNDING_SHARE


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_length_at_4096_counts_with_a_centred_index_float32_sums_within_its_bound(dtype):
    """The length is twice the mean index plus one. Summed over 4,097 keys, the plain index (up to
    4,095) may round by 528 u of 4,095, 0.129, 0.258 doubled: past the quarter of a step the high
    digit's MLP tolerates. Less the middle index (up to 2,048 either way) it is half that, which
    the recorded bound states and the float32 model is measured within; 2,048 keeps the plain index."""
    assert (mean_index_centre(2_048), mean_index_centre(2_833), mean_index_centre(2_834), mean_index_centre(LONGEST)) == (0, 0, 1_416, 2_047)
    if dtype == np.float32:  # the high digit's MLP, as for the widths above, unless rounded again
        with pytest.raises(RaspPrecisionError, match="float64"):
            compile_program(_program("length"), dtype=dtype, disabled=["rerounded-steps"])
    model = compile_program(_program("length"), dtype=dtype)
    assert ("output.value.high (raw)" in model.meta["residual"]) == (dtype == np.float32)
    assert "indices (centred)" in model.meta["residual"] and "indices" not in model.meta["residual"]
    inputs = _longest([1, 2, 3], seed=5)
    assert predict(model, inputs) == [[len(tokens)] * len(tokens) for tokens in inputs]
    step = _margin(model, "step", "output.value (centred)")
    assert step["bound"] <= 0.13 if dtype == np.float32 else step["bound"] < 1e-5
    for tokens in inputs:
        trace = rc.trace(model, tokens)
        error = np.abs(_column(trace, "output.value (centred)") - (len(tokens) - 2048.5)).max()
        assert error <= step["bound"] <= step["tolerance"]


@pytest.mark.slow
def test_a_rounded_copy_read_by_centred_digits_gives_every_value_its_own_class():
    """paren_depth at 2,048: round(depth) takes 4,097 classes (centred digits), and depth's values are
    its classes but for float rounding (2.9999999999999996 for 3), more values than classes: the
    high digit's MLP maps each value to its own class's digit (it once failed at 61.0). Exact at
    the deepest and shallowest inputs."""
    program = dataclasses.replace(load_program(PROGRAMS / "paren_depth.rasp"), max_len=2_048)
    model = compile_program(program, dtype=np.float64)  # float32 is refused: see the test below
    rng = random.Random(3)
    inputs = [["("] * 2_048, [")"] * 2_048, ["("] * 1_024 + [")"] * 1_024,
              [rng.choice("()") for _ in range(2_047)]]
    assert predict(model, inputs) == evaluate_batch(program, inputs)


def _digit_error(model, tokens: list, label: str, order) -> float:
    """The largest distance of `label` (a high digit, or a number of whole values) from a whole
    number (its exact value: its errors stay far below 1/2) over the tokens, in `order`."""
    digit = column_in_order(model, tokens, label, order)
    return float(np.abs(digit - np.round(digit)).max())


def _paren_depth(max_len: int, dtype=np.float32):
    return compile_program(dataclasses.replace(load_program(PROGRAMS / "paren_depth.rasp"), max_len=max_len), dtype=dtype)


@pytest.mark.slow
def test_a_high_digit_whose_summation_order_could_make_it_wrong_is_rounded_again():
    """paren_depth at 2,048: the high digit's step MLP holds units as large as 2 |depth -
    threshold|, about 4,000, that cancel pair by pair. Its bound once assumed each pair was added
    first; through forward.gpt on one machine the digit was then off by 2^-7 at depth 1,683 and the
    answer there was wrong. Charged in any order, that digit is beyond float32: without
    rerounded-steps float32 is refused; with it a second step MLP of the digit's 65 values rounds
    it again a layer later, and the digit it hands the read-out stays within the bound in every
    order tried, positives first included."""
    with pytest.raises(RaspPrecisionError, match="float64"):
        compile_program(dataclasses.replace(load_program(PROGRAMS / "paren_depth.rasp"), max_len=2_048),
                        disabled=["rerounded-steps"])
    model = _paren_depth(2_048)
    layers = model.meta["layers"]
    assert "depth.high (raw)" in model.meta["residual"] and len(layers) == 3 and layers[-1]["n_head"] == 0  # an MLP more
    base = math.isqrt(2 * 2_048) + 1  # 65 for 4,097 classes
    readout = _margin(model, "nearest-value", "depth (centred)")
    for order in (shuffled(0), shuffled(1), backwards, positives_first):
        assert base * _digit_error(model, ["("] * 2_048, "depth.high", order) <= readout["bound"]
    deepest = [["("] * 2_048, ["("] * 1_683 + [")"] * 365, [")"] * 2_048]
    assert predict(model, deepest) == [list(range(1, 2_049)), list(range(1, 1_684)) + list(range(1_682, 1_317, -1)),
                                       list(range(-1, -2_049, -1))]


def _two_digit_model(name: str, max_len: int):
    program = dataclasses.replace(load_program(PROGRAMS / f"{name}.rasp"), max_len=max_len)
    return compile_program(program, dtype=np.float32), ["(" if name == "paren_depth" else "a"]


ORDERS = (shuffled(0), shuffled(1), shuffled(2), shuffled(3), backwards, positives_first)


@pytest.mark.slow
@pytest.mark.parametrize("name, max_len, number", [("paren_depth", 1_024, "depth"), ("count", 2_048, "output")])
def test_a_two_digit_read_out_is_right_in_any_summation_order(name, max_len, number):
    """The float32 models that read a number past 1,000 classes by two digits. The high digit is
    rounded again (its error moves the low digit B times over): the digit handed to the read-out is
    exact in every order tried. The number's own step MLP, added in seeded random orders, backwards
    and every positive term first, stays within the read-out's tolerance, at the deepest input and
    at three quarters of it. (The digit before its second rounding, positives first, was off by
    0.40 / B at paren_depth 1,024, past the read-out's tolerance.)"""
    model, token = _two_digit_model(name, max_len)
    assert f"{number}.high (raw)" in model.meta["residual"]
    readout = _margin(model, "nearest-value", number)
    for tokens in (token * max_len, token * (3 * max_len // 4)):
        for order in ORDERS:
            assert _digit_error(model, tokens, f"{number}.high", order) == 0.0
            assert _digit_error(model, tokens, number, order) <= readout["tolerance"]


@pytest.mark.slow
@pytest.mark.parametrize("name, max_len, number", [
    ("paren_depth", 1_024, "depth"),
    pytest.param("count", 2_048, "output", marks=pytest.mark.xfail(
        strict=True, raises=AssertionError, reason="a step MLP's sum is charged u per unit of its units' magnitudes, a "
        "measured model: the width's 2,048 steps added in seeded random orders stray by 1.39 u per unit (0.24 "
        "against 0.17; within the read-out's tolerance of 0.375, so the answer stays right)")),
])
def test_a_number_written_by_steps_stays_within_its_bound_in_any_summation_order(name, max_len, number):
    """The number a two-digit read-out reads, its step MLP's terms added in the orders above, within
    the read-out's recorded bound (the digit's share of it is nothing once rounded again)."""
    model, token = _two_digit_model(name, max_len)
    readout = _margin(model, "nearest-value", number)
    for tokens in (token * max_len, token * (3 * max_len // 4)):
        for order in ORDERS:
            assert _digit_error(model, tokens, number, order) <= readout["bound"]
