"""position-widths on tiny programs: which widths become a position row, which the length plus a
row, which keep their width head; and the compiled models against the interpreter and against
counts written in plain Python."""

from __future__ import annotations

import pytest

from rasp_compile.compiler import compile_program
from rasp_compile.compiler.ops import Attend, HeadKind, Embed, Linear, NumericMLP
from rasp_compile.compiler.passes import position_widths
from rasp_compile.frontend import parse_program
from rasp_compile.tools.interpret import evaluate
from rasp_compile.testing.differential import assert_agree, every_input, random_inputs

from tiny import by_label, plain_graph, rewriting


WIDTHS = rewriting(position_widths.width_of_positions)

PREDICATES = {  # the select's predicate -> the width at position p of n, counted in plain Python
    ">": lambda p, n: n - 1 - p,
    "<": lambda p, n: p,
    "<=": lambda p, n: p + 1,
    ">=": lambda p, n: n - p,
    "!=": lambda p, n: n - 1,
    "==": lambda p, n: 1,
    "true": lambda p, n: n,
    "false": lambda p, n: 0,
    "lambda k, q: k == q - 2": lambda p, n: int(p >= 2),
    "lambda k, q: k > q or k == 1": lambda p, n: n - 1 - p + (p >= 1),
    "lambda k, q: k % 2 == 0": None,  # keys after the query are selected unlike: the width head stays
}


def program_text(predicate: str, max_len: int, causal: bool = False, numerical: bool = False) -> str:
    width = f"selector_width(select(indices, indices, {predicate}))"
    return (f"vocab {{a, b}}\nmax_len {max_len}\n{'causal' if causal else ''}\n"
            f"w = {f'numerical({width})' if numerical else width}\noutput w\n")


@pytest.mark.parametrize("predicate", PREDICATES)
def test_which_widths_are_counted_from_positions(predicate: str):
    ops = by_label(plain_graph(program_text(predicate, 6), WIDTHS))
    expected = PREDICATES[predicate]
    if expected is None:
        assert isinstance(ops["w.bos_share"], Attend)
        return
    after = {expected(p, 6) - expected(p, 5) for p in range(5)}  # does w grow with the length?
    if after == {0}:
        assert isinstance(ops["w"], Embed) and "length.mean_index" not in ops
    else:
        assert isinstance(ops["w.value"], Linear) and isinstance(ops["w"], NumericMLP)
        assert isinstance(ops["length.mean_index"], Attend) and ops["length.mean_index"].kind is HeadKind.NUMERICAL


@pytest.mark.slow
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("numerical", [False, True])
@pytest.mark.parametrize("predicate", [p for p, f in PREDICATES.items() if f is not None])
def test_widths_from_positions_are_the_plain_python_counts(predicate: str, causal: bool, numerical: bool):
    program = parse_program(program_text(predicate, 7, causal, numerical))
    model = compile_program(program)
    count = PREDICATES[predicate]
    for n in range(1, 8):
        tokens = ["a"] * n
        # causal: only keys at or before the query count, as the width of the prefix p + 1 long
        expected = [count(p, p + 1) if causal else count(p, n) for p in range(n)]
        assert evaluate(program, tokens) == expected
    assert_agree(model, program, every_input(program.vocab, program.max_len))


@pytest.mark.slow
def test_reverse_at_max_len_256_agrees_with_the_interpreter():
    """The width n - 1 - i has no max_len x max_len table: its head reads the index's mean."""
    program = parse_program("vocab {1, 2, 3}\nmax_len 256\nopposite = selector_width(select(indices, indices, >))\n"
                            "output aggregate(select(indices, opposite, ==), tokens)\n")
    model = compile_program(program)
    assert not any(label.startswith("indices:") for label in model.meta["residual"])  # no index one-hot
    assert_agree(model, program, random_inputs(program.vocab, 256, 20, rng=256))


def test_a_width_over_keys_that_are_not_positions_keeps_its_head():
    text = "vocab {a, b}\nmax_len 5\nw = selector_width(select(tokens, indices, lambda k, q: k == \"a\"))\noutput w\n"
    assert isinstance(by_label(plain_graph(text, WIDTHS))["w.bos_share"], Attend)


def test_every_width_of_one_program_shares_one_length_head():
    text = ("vocab {a, b}\nmax_len 5\nx = selector_width(select(indices, indices, >))\n"
            "y = selector_width(select(indices, indices, >=))\noutput sequence_map(lambda a, b: a + b, x, y)\n")
    ops = plain_graph(text, WIDTHS).ops
    assert sum(isinstance(op, Attend) for op in ops) == 1
    program = parse_program(text)
    assert all(evaluate(program, ["a"] * n) == [2 * (n - p) - 1 for p in range(n)] for n in range(1, 6))
    assert_agree(compile_program(program), program, every_input(program.vocab, program.max_len))


def answer_head(program) -> Attend:
    from rasp_compile.compiler import OPTIMIZATIONS, build_graph
    from rasp_compile.frontend.infer import infer_value_sets

    graph = build_graph(program, infer_value_sets(program), frozenset(OPTIMIZATIONS))
    return [op for op in graph.ops if isinstance(op, Attend)][-1]


def test_a_target_on_an_index_at_every_length_is_matched_surely():
    """n - 1 - i is an index at every position of every length: BOS is scored under every key.
    n - i is not (at i = 0 it is n): BOS keeps its place between, and gives the default there."""
    reverse = parse_program("vocab {a, b}\nmax_len 100\nopposite = selector_width(select(indices, indices, >))\n"
                            "output aggregate(select(indices, opposite, ==), tokens)\n")
    head = answer_head(reverse)
    assert head.score.always_selects and any(var.label.endswith(".match") for var in head.score.reads())
    shifted = parse_program("vocab {a, b}\nmax_len 100\nbeyond = selector_width(select(indices, indices, >=))\n"
                            "output aggregate(select(indices, beyond, ==), tokens, default=\"-\")\n")
    assert not answer_head(shifted).score.always_selects
    model = compile_program(shifted)
    assert evaluate(shifted, ["a", "b", "b"]) == ["-", "b", "b"]  # n - i: 3, 2, 1
    assert_agree(model, shifted, random_inputs(shifted.vocab, 100, 30, rng=100))
    assert_agree(compile_program(reverse), reverse, random_inputs(reverse.vocab, 100, 30, rng=101))
