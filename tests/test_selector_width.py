"""selector_width at GPT-2's context: BOS weighs c = the largest width against one selected key,
so BOS's share c/(c + w) keeps neighbouring widths about 1/(4 max_len) apart, which float32
decodes exactly. The gap rule against its closed form and against every other c; the compiled
counts at max_len 1,024 against plain Python on seeded inputs (the interpreter would take a
second per input there); and the read-out of a width with 1,025 classes staying small."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path

import numpy as np
import pytest

from rasp_compile.compiler import compile_program
from rasp_compile.compiler.primitives.selector_width import bos_shares, bos_weight, width_from_share
from rasp_compile.compiler.tolerances import smallest_gap
from rasp_compile.frontend import load_program, parse_program
from rasp_compile.runtime.prediction import predict
from rasp_compile.runtime.model import n_params


PROGRAMS = Path(__file__).parent.parent / "programs"
LONGEST = 1024


@pytest.mark.parametrize("largest", [1, 2, 3, 10, 64, 1024])
def test_bos_weighing_the_largest_width_keeps_the_widest_smallest_gap(largest: int):
    """c = W gives the smallest gap 1/(2(2W - 1)); from W = 2 on no c on a fine grid does better
    by more than a factor 1 + 1/(8 W^2), and c = 1 (BOS tying with the keys: 1/(W(W + 1))) never
    does better."""
    widths = range(largest + 1)
    weight = bos_weight(widths)
    gap = smallest_gap(bos_shares(widths, weight))
    assert weight == largest and gap == pytest.approx(1 / (2 * (2 * largest - 1)), rel=1e-9)
    assert smallest_gap(bos_shares(widths, 1)) == pytest.approx(1 / (largest * (largest + 1)), rel=1e-9)
    for other in np.linspace(0.25, 4, 301) * largest if largest > 1 else ():
        assert smallest_gap(bos_shares(widths, other)) <= gap * (1 + 1 / (8 * largest**2)) + 1e-15


def test_the_step_function_inverts_every_share_up_to_gpt2s_context():
    widths = list(range(LONGEST + 1))
    weight = bos_weight(widths)
    assert [width_from_share(weight)(s) for s in bos_shares(widths, weight)] == widths
    assert bos_weight([]) == 1 and bos_weight([0]) == 1  # a width that is always 0: BOS ties


def _inputs(vocab: tuple, seed: int) -> list[list]:
    """Seeded inputs: 200 short ones, and 8 of 1,023 or 1,024 tokens, mostly the first token of the
    vocab (with the rest at random), so the widths reach up to max_len."""
    rng = random.Random(seed)
    short = [[rng.choice(vocab) for _ in range(rng.randint(1, 32))] for _ in range(200)]
    long = [[vocab[0] if rng.random() < skew else rng.choice(vocab) for _ in range(n)]
            for n in (LONGEST - 1, LONGEST) for skew in (0.0, 0.9, 0.99, 1.0)]
    return short + long


@pytest.mark.slow
@pytest.mark.parametrize("name, oracle", [
    ("count", lambda tokens: [tokens.count("a")] * len(tokens)),  # vocab {a, b, c}
    ("hist", lambda tokens: [tokens.count(t) for t in tokens]),
    ("length", lambda tokens: [len(tokens)] * len(tokens)),
])
def test_counts_are_exact_in_float32_at_max_len_1024(name: str, oracle):
    program = dataclasses.replace(load_program(PROGRAMS / f"{name}.rasp"), max_len=LONGEST)
    model = compile_program(program, dtype=np.float32)
    inputs = _inputs(program.vocab, seed=LONGEST)
    assert predict(model, inputs) == [oracle(tokens) for tokens in inputs]


def test_a_width_with_1025_classes_is_read_out_from_one_centred_number():
    """The count of max_len 1,024 takes 1,025 values: too many for float32 to read from the plain
    number (6.3 million parameters with the one-hot), few enough from a copy centred on 512."""
    source = "vocab {a}\nmax_len {n}\noutput length\n"
    small, large = (compile_program(parse_program(source.replace("{n}", str(n))), disabled=["position-widths"])
                    for n in (64, LONGEST))
    assert "length (centred)" not in small.meta["residual"] and "length (centred)" in large.meta["residual"]
    assert n_params(large) <= 20 * n_params(small)
    inputs = [["a"] * n for n in (*range(1, 40), *range(LONGEST - 3, LONGEST + 1))]
    assert predict(large, inputs) == [[len(tokens)] * len(tokens) for tokens in inputs]


@pytest.mark.slow
def test_a_width_with_more_classes_is_read_out_from_two_numbers():
    """Past 1,025 evenly spaced classes even the centred number is too large: the read-out takes
    the number and the high digit of its rank, which a second step MLP writes."""
    program = dataclasses.replace(parse_program("vocab {a}\nmax_len 5\noutput length\n"), max_len=1100)
    model = compile_program(program, disabled=["position-widths"])
    assert "length.high" in model.meta["residual"]
    inputs = [["a"] * n for n in (1, 2, 3, 500, 1025, 1099, 1100)]
    assert predict(model, inputs) == [[len(tokens)] * len(tokens) for tokens in inputs]
