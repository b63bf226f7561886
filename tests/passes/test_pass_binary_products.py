"""binary-products on small programs: a running mean times its count is summed from the index's
binary digits gating the mean, and agrees with the interpreter (and with plain Python's running
sums) on every input, the extremes included; what it leaves alone."""

from __future__ import annotations

import itertools

import pytest

from rasp_compile.compiler import compile_program
from rasp_compile.compiler.ops import GatedMap, Linear
from rasp_compile.compiler.passes import binary_products
from rasp_compile.frontend import parse_program
from rasp_compile.tools.interpret import evaluate
from rasp_compile.testing.differential import assert_agree, compiled_exactly, every_input, random_inputs

from tiny import by_label, plain_graph, rewriting


PRODUCTS = rewriting(binary_products.product_by_digits)


def running(product: str, max_len: int, causal: bool = True) -> str:
    return (f"vocab {{\"(\", \")\"}}\nmax_len {max_len}\n{'causal' if causal else ''}\n"
            "step = numerical(map(lambda t: 1 if t == \"(\" else -1, tokens))\n"
            "balance = numerical(aggregate(select(tokens, tokens, true), step))\n"
            f"depth = numerical(sequence_map({product}, balance, {'indices' if ', i:' in product else 'length'}))\n"
            "output depth\n")


def sums(tokens: list, fn) -> list:
    """fn(running sum s, count c) at each position, in plain Python."""
    steps = list(itertools.accumulate(1 if t == "(" else -1 for t in tokens))
    return [fn(s, c) for c, s in enumerate(steps, start=1)]


@pytest.mark.slow
@pytest.mark.parametrize("product, plain", [
    ("lambda b, n: b * n", lambda s, c: s),
    ("lambda b, n: 3 * b * n + 2 * b - n + 1", lambda s, c: 3 * s + 2 * s / c - c + 1),
    ("lambda b, i: b * i", lambda s, c: s - s / c),  # i = c - 1
])
def test_products_by_digits_are_the_running_sums(product: str, plain):
    program = parse_program(running(product, 9))
    ops = by_label(plain_graph(running(product, 9), PRODUCTS))
    assert isinstance(ops["depth"], Linear) and sum(isinstance(op, GatedMap) for op in ops.values()) == 4  # 8 < 2^4
    model = compiled_exactly(program)  # an unrounded sum: float32 is proven only up to max_len 8
    for tokens in every_input(program.vocab, 9):
        assert evaluate(program, tokens) == pytest.approx(sums(tokens, plain))
    assert_agree(model, program, every_input(program.vocab, 9))


@pytest.mark.slow
def test_paren_depth_at_max_len_300_agrees_on_its_extremes():
    """Rounded, as programs/paren_depth.rasp reads it: the sum carries the mean's float32 rounding
    times the count (about 2e-5 at 300), which a numerical answer near 0 would show."""
    program = parse_program(running("lambda b, n: b * n", 300).replace("output depth", "output map(lambda d: round(d), depth)"))
    extremes = [["("] * 300, [")"] * 300, ["("] * 150 + [")"] * 150, ["(", ")"] * 150, [")"] * 299 + ["("]]
    assert_agree(compile_program(program), program, extremes + random_inputs(program.vocab, 300, 20, rng=300))


def test_what_is_no_product_of_a_running_mean_and_its_count_is_left_alone():
    for text in (running("lambda b, n: b * n * n", 6),  # not affine in b * n
                 running("lambda b, n: b * n", 6, causal=False)):  # the mean is over n keys only when causal
        assert not isinstance(by_label(plain_graph(text, PRODUCTS))["depth"], Linear)
