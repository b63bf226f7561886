"""Gray matches (passes/gray_matches.py): sort_unique's `select(target, indices, ==)`, its target a
width decoded by flat steps from BOS's share, matched to the index bit by bit. The features'
float32 errors against their bound (numeric_mlp.summed_step_errors) at every width, with the
MLP's units summed in NumPy's order and in shuffled ones; and the model against the interpreter:
on every input where the bits are forced at a small max_len, where the compiler first takes them
(37), and on the longest inputs at 1,024."""

from __future__ import annotations

import dataclasses
import itertools
import random
from pathlib import Path

import numpy as np
import pytest

from rasp_compile.compiler import compile_program
from rasp_compile.compiler.passes import position_selects
from rasp_compile.compiler.passes.gray_matches import gray
from rasp_compile.compiler.primitives.numeric_mlp import step_output_errors, summed_step_errors
from rasp_compile.compiler.primitives.selector_width import bos_shares, bos_weight, width_from_share
from rasp_compile.frontend import load_program, parse_program
from rasp_compile.runtime.forward import relu
from rasp_compile.testing.differential import assert_agree, every_input

from test_digit_matches import score_losses

PROGRAM = load_program(Path(__file__).parent.parent / "programs" / "sort_unique.rasp")
SHARE = "sort_unique.target (BOS share)"


def compiled(max_len: int):
    program = dataclasses.replace(PROGRAM, max_len=max_len)
    return program, compile_program(program)


def parameters(model) -> int:
    return sum(array.size for array in model.params.values())


def test_gray_codes_name_each_number_once_and_neighbours_differ_in_one_bit():
    codes = [gray(t) for t in range(4_097)]
    assert len(set(codes)) == len(codes) and max(codes) < 2 ** (4_096).bit_length()
    assert all(bin(a ^ b).count("1") == 1 for a, b in zip(codes, codes[1:]))


def _shares_and_bits(max_len: int):
    """BOS's share of every width (sorted, as the decoder's steps run), the widths, and each Gray
    bit of the width's target (the width, or max_len for the width that matches no index)."""
    weight = bos_weight(range(max_len + 1))
    shares = tuple(sorted(bos_shares(range(max_len + 1), weight)))
    widths = [width_from_share(weight)(s) for s in shares]
    codes = [gray(w) for w in widths]
    return shares, widths, [[float(c >> k & 1) for c in codes] for k in range(max_len.bit_length())]


@pytest.mark.parametrize("max_len", [64, 256, pytest.param(1_024, marks=pytest.mark.slow)])
def test_the_decoded_bits_stay_within_their_float32_bound_in_any_order(max_len):
    """The compiled model's first MLP, fed BOS's share of every width and shares off it by up to a
    sixteenth of the gap: each bit is exact in float64, and in float32 within summed_step_errors,
    with its units in NumPy's order, reversed, or shuffled. The exact-partner credit of
    step_output_errors does not hold here (the matmul does not add each pair in turn)."""
    _, model = compiled(max_len)
    shares, widths, bits = _shares_and_bits(max_len)
    residual = model.meta["residual"]
    gaps = np.diff(shares)
    sixteenth = np.minimum(np.append(gaps, gaps[-1]), np.append(gaps[0], gaps)) / 16
    offsets = np.linspace(-1.0, 1.0, 5)
    x_values = (np.asarray(shares)[:, None] + offsets[None, :] * sixteenth[:, None]).ravel()
    mlp = model.blocks()[0]["mlp"]
    rng = np.random.default_rng(max_len)
    units = mlp["c_fc"]["w"].shape[1]
    orders = [np.arange(units), np.arange(units)[::-1], rng.permutation(units), rng.permutation(units)]
    columns = [residual.index(f"sort_unique.target.gray{k}") for k in range(len(bits))]
    expected = np.repeat(np.array(bits).T, len(offsets), axis=0)  # [input, bit]
    bounds = np.array([summed_step_errors(shares, b).max() for b in bits])
    credited = np.array([step_output_errors(shares, b, 1e-6, np.float32).max() for b in bits])
    worst = np.zeros(len(bits))
    for dtype in (np.float64, np.float32):
        x = np.zeros((len(x_values), len(residual)), dtype)
        x[:, residual.index(SHARE)] = x_values
        for order in orders if dtype is np.float32 else orders[:1]:
            w_in, b_in = mlp["c_fc"]["w"][:, order].astype(dtype), mlp["c_fc"]["b"][order].astype(dtype)
            w_out, b_out = mlp["c_proj"]["w"][order].astype(dtype), mlp["c_proj"]["b"].astype(dtype)
            out = x + (relu(x @ w_in + b_in) @ w_out + b_out)
            errors = np.abs(out[:, columns] - expected).max(axis=0)
            if dtype is np.float64:
                assert errors.max() <= 1e-9
            worst = np.maximum(worst, errors)
    assert (worst <= bounds).all(), (worst, bounds)
    assert (worst <= credited).all(), (worst, credited)  # exact partners credit the hidden layer, not the output's sum


def test_forced_bits_answer_every_input_at_max_len_5(monkeypatch):
    """Where the plain match would do, the bits forced (as if its bound refused it, and the digits'
    too) answer as the interpreter on every input of up to 5 tokens."""
    monkeypatch.setattr(position_selects, "_precise_enough", lambda *args: False)
    program, model = compiled(5)
    assert "sort_unique.target.gray0" in model.meta["residual"]
    assert_agree(model, program, every_input(program.vocab, 5))


def _every_width(length: int, rng: random.Random) -> list[list]:
    """Inputs of runs of 1s, 2s and 3s of every size, every other one shuffled: widths 0..length
    - 1 at keys, for every position."""
    inputs = []
    for ones, twos in itertools.product(range(length + 1), repeat=2):
        if ones + twos <= length:
            tokens = [1] * ones + [2] * twos + [3] * (length - ones - twos)
            inputs.append(rng.sample(tokens, len(tokens)) if (ones + twos) % 2 else tokens)
    return inputs


def test_from_max_len_37_the_match_is_bit_by_bit_and_answers_as_the_interpreter():
    """At 36 the plain match carries the width; at 37 its bound refuses it and the digits' too, and
    the bits take over: no one-hot of the width, no table of positions, two units per step."""
    _, plain = compiled(36)
    assert "sort_unique.target target" in plain.meta["residual"]  # the plain match's feature
    program, model = compiled(37)
    residual = model.meta["residual"]
    assert [label for label in residual if label.startswith("sort_unique.target.")] == [
        f"sort_unique.target.gray{k}" for k in range(6)]
    assert model.meta["layers"] == [{"n_head": 1, "d_head": 5, "d_mlp": 2 * 37}, {"n_head": 1, "d_head": 8, "d_mlp": 0}]
    rng = random.Random(37)
    inputs = every_input(program.vocab, 4) + _every_width(36, rng) + _every_width(37, rng)
    inputs += [[rng.choice(program.vocab) for _ in range(rng.randint(1, 37))] for _ in range(200)]
    assert_agree(model, program, inputs)


@pytest.mark.slow
def test_the_bits_answer_the_longest_inputs_at_1024_and_keep_their_lead():
    """Exact on the longest inputs (random, and runs that put widths all over the range at keys),
    float32 keeps all but a sliver of each query's lead, and the model is within 20 times its size
    at 64 (the one-hot of the width and its table took 280 times)."""
    program, model = compiled(1_024)
    rng = random.Random(1_024)
    inputs = [[rng.choice(program.vocab) for _ in range(length)] for length in (1_024, 1_023, 513)]
    runs = [[1] * w + [2] * (1_024 - w) for w in range(0, 1_024, 97)]
    assert_agree(model, program, inputs + runs)
    assert max(score_losses(model, inputs[:2])) < 1 / 16
    assert parameters(model) <= 20 * parameters(compiled(64)[1])


def test_a_width_on_the_query_side_is_matched_bit_by_bit_too():
    """`select(indices, w, ==)`: the width at the query, the index at the key. The bits' errors move
    each key's score by +-1 times them, as on the key side."""
    program = parse_program("vocab {1, 2, 3}\nmax_len 40\nw = selector_width(select(tokens, tokens, <))\n"
                            "output aggregate(select(indices, w, ==), tokens)\n")
    model = compile_program(program)
    assert "w.gray0" in model.meta["residual"] and "indices" not in model.meta["residual"]
    rng = random.Random(40)
    inputs = _every_width(40, rng) + [[rng.choice(program.vocab) for _ in range(rng.randint(1, 40))] for _ in range(200)]
    assert_agree(model, program, inputs)
