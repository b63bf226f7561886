"""A sequence_map of a running mean and its count (compiler/lowering/pairs.py): the value
inference tries only the pairs that meet, and the compiler must not then ask about every pair of
the two value sets. A construction that needs them all is refused, located, before the first
call; one that needs only the pairs that meet (a line per length, a linear fold) asks about those.
No test here times anything: each counts the calls of the user's function."""

from __future__ import annotations

import pytest

from rasp_compile import ir, rasp
from rasp_compile.compiler import OPTIMIZATIONS, build_graph, compile_program
from rasp_compile.compiler.ops import GatedMap, Linear
from rasp_compile.errors import RaspValueError, format_error
from rasp_compile.frontend import parse_program
from rasp_compile.frontend.infer import MAX_COMBINATIONS, infer_value_sets
from rasp_compile.testing.differential import assert_agree, every_input


MAX_LEN = 256  # a running mean of +1 / -1 takes 19,949 values: x 256 lengths, past MAX_COMBINATIONS


class Counted:
    """A Python function of the embedded API that counts its calls."""

    def __init__(self, fn):
        self.fn, self.calls = fn, 0

    def __call__(self, *args):
        self.calls += 1
        return self.fn(*args)


def running_program(fn, numerical: bool, max_len: int = MAX_LEN) -> ir.Program:
    step = rasp.numerical(rasp.Map(lambda t: 1 if t == "(" else -1, rasp.tokens))
    balance = rasp.numerical(rasp.Aggregate(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.TRUE), step))
    product = rasp.SequenceMap(fn, balance, rasp.length).named("depth")
    return ir.Program(output=rasp.numerical(product) if numerical else product, vocab=("(", ")"),
                      max_len=max_len, causal=True)


def meeting_pair_count(max_len: int) -> int:
    """The (mean, length) pairs that meet: the means of n values of +1 / -1 are n + 1."""
    return sum(n + 1 for n in range(1, max_len + 1))


@pytest.mark.parametrize("disabled", [(), OPTIMIZATIONS], ids=["optimised", "no-opt all"])
def test_a_table_of_every_pair_is_refused_before_its_calls(disabled):
    counted = Counted(lambda b, n: round(b * n))
    program = running_program(counted, numerical=False)
    sets = infer_value_sets(program)
    assert len(sets[program.output.first]) * MAX_LEN > MAX_COMBINATIONS
    inferred = counted.calls
    assert inferred == meeting_pair_count(MAX_LEN)  # the value inference tries the pairs that meet
    with pytest.raises(RaspValueError, match=r"'depth' would be built from its function at every pair") as caught:
        compile_program(program, disabled=disabled, value_sets=sets)
    assert "numerical(" in caught.value.message and "smaller max_len" in caught.value.message
    assert counted.calls - inferred <= 2 * len(sets[program.output.first])  # a linear fold's parts at most, no product


def test_the_refusal_of_a_program_is_located_at_the_sequence_map():
    text = f"""vocab {{"(", ")"}}
max_len {MAX_LEN}
causal
balance = numerical(aggregate(select(tokens, tokens, true), numerical(map(lambda t: 1 if t == "(" else -1, tokens))))
depth = sequence_map(lambda b, n: round(b * n), balance, length)
output map(lambda d: d > 0, depth)
"""
    program = parse_program(text)
    with pytest.raises(RaspValueError) as caught:
        compile_program(program)
    shown = format_error(caught.value, text, "depth.rasp").splitlines()
    assert shown[0].startswith("depth.rasp:5:9: error: 'depth' would be built from its function at every pair")
    assert shown[1:] == ["depth = sequence_map(lambda b, n: round(b * n), balance, length)", " " * 8 + "^"]


def test_a_line_per_length_asks_only_the_pairs_that_meet():
    """The refusal's own advice: numerical, a line in the mean for each length, compiles."""
    counted = Counted(lambda b, n: round(b * n))
    program = running_program(counted, numerical=True)
    graph = build_graph(program, infer_value_sets(program), frozenset(OPTIMIZATIONS) - {"binary-products"})
    assert any(isinstance(op, GatedMap) and op.affine for op in graph.ops)
    assert counted.calls <= 3 * meeting_pair_count(MAX_LEN)


@pytest.mark.slow
def test_a_linear_fold_of_a_running_mean_and_the_length_asks_only_the_pairs_that_meet():
    """b + n folds, checked on the pairs that meet: not on all 19,949 x 256 (31 s at max_len 128 before)."""
    counted = Counted(lambda b, n: b + n)
    program = running_program(counted, numerical=True)
    graph = build_graph(program, infer_value_sets(program), frozenset(OPTIMIZATIONS))
    assert isinstance(graph.writers()[graph.output], Linear)
    assert counted.calls <= 2 * meeting_pair_count(MAX_LEN) + 2 * len(infer_value_sets(program)[program.output.first])
    small = running_program(lambda b, n: b + n, numerical=True, max_len=6)
    assert_agree(compile_program(small), small, every_input(small.vocab, 6))
