"""How models grow with max_len: each test states a size the construction gives at a moderate
max_len (counted from its parts, not measured), so a change that makes a program grow faster than
its construction says fails here, and checks the model against the interpreter on inputs of the
longest lengths."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from rasp_compile.compiler import OPTIMIZATIONS, build_graph, compile_program
from rasp_compile.frontend import load_program, parse_program
from rasp_compile.frontend.infer import infer_value_sets
from rasp_compile.testing.differential import assert_agree

PROGRAMS = Path(__file__).parent.parent / "programs"


def longest_inputs(vocab, max_len: int, count: int, seed: int) -> list[list]:
    """`count` random inputs of max_len - 3 .. max_len tokens."""
    rng = random.Random(seed)
    return [[rng.choice(vocab) for _ in range(max_len - rng.randint(0, 3))] for _ in range(count)]


def parameters(model) -> int:
    return sum(array.size for array in model.params.values())


@pytest.mark.parametrize("max_len", [64, 256])
def test_paren_depth_is_one_layer_with_a_dimension_per_binary_digit(max_len):
    """paren_depth's depth is the running mean times the length, summed from the index's k binary
    digits gating the mean: the residual holds bos, the step, the mean, one switch per digit and
    the depth, which the read-out reads as its nearest integer (the rounded product is never a
    table of its own). One head, one unit per digit: params = d_model x (vocab + BOS + positions
    + classes + head and MLP widths) + biases, with nothing that grows as max_len squared."""
    program = load_program(PROGRAMS / "paren_depth.rasp", max_len)
    model = compile_program(program)
    digits = (max_len - 1).bit_length()
    d_model = 4 + digits
    assert model.meta["residual"] == ["bos", "step", "balance", *(f"indices bit {k}:0" for k in range(digits)), "depth"]
    assert model.meta["layers"] == [{"n_head": 1, "d_head": 2, "d_mlp": digits}]
    classes = 2 * max_len + 1
    columns = 3 + (max_len + 1) + classes + 3 * 2 + 2 + 2 * digits  # wte, wpe, unembed, c_attn, c_proj, MLP
    biases = 3 * 2 + d_model + digits + d_model + classes
    assert parameters(model) == d_model * columns + biases
    assert_agree(model, program, longest_inputs(program.vocab, max_len, 8, seed=max_len))


def test_a_rounded_product_is_read_from_the_product_itself():
    """`round(b * n)` of a running mean b and the length n: every value of b * n is an integer but
    for float rounding (at max_len 24, 1.7e-15 off at most), so the answer is read from b * n as its nearest
    integer, and the read-out's error bound counts that distance."""
    program = parse_program(
        'vocab {"(", ")"}\nmax_len 24\ncausal\n'
        'step = numerical(map(lambda t: 1 if t == "(" else -1, tokens))\n'
        'balance = numerical(aggregate(select(tokens, tokens, true), step))\n'
        'depth = numerical(sequence_map(lambda b, n: b * n, balance, length))\n'
        'output map(lambda d: round(d), depth)\n'
    )
    graph = build_graph(program, infer_value_sets(program), frozenset(OPTIMIZATIONS))
    depth = graph.readout.inputs[0]
    assert depth.label == "depth" and graph.readout.classes == list(range(-24, 25))
    assert graph.readout.offset == max(abs(v - round(v)) for v in depth.values) > 0
    model = compile_program(program)
    assert model.meta["layers"] == [{"n_head": 1, "d_head": 2, "d_mlp": 5}]
    [margin] = model.meta["margins"]
    assert margin["reads"] == "depth" and graph.readout.offset < margin["bound"] < margin["tolerance"]
    assert_agree(model, program, longest_inputs(program.vocab, 24, 200, seed=1))
