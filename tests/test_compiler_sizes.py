"""The optimisations do what they claim, on programs written the plain way, and stay exact:
each test checks a size the pass promises and the model against the interpreter."""

from __future__ import annotations

import dataclasses
import itertools
import random
from pathlib import Path

import numpy as np
import pytest

from rasp_compile.compiler import compile_program
from rasp_compile.compiler.passes import linear_readout as readout
from rasp_compile.frontend import parse_program
from rasp_compile.frontend.infer import infer_value_sets
from rasp_compile.testing.differential import assert_agree, disagreements, every_input, random_inputs


PLAIN_REVERSE = """\
vocab {1, 2, 3}
max_len 8
opposite = length - indices - 1
output aggregate(select(indices, opposite, ==), tokens)
"""


def exhaustive(program, longest: int) -> list[list]:
    return [list(t) for n in range(1, longest + 1) for t in itertools.product(program.vocab, repeat=n)]


@pytest.mark.slow
def test_length_minus_index_table_only_has_reachable_pairs():
    """An index is always below the length, so the table over (length, index) needs
    n (n + 1) / 2 units, not n^2; the select on its result reads numbers (d_head 4)."""
    program = parse_program(PLAIN_REVERSE)
    for n in (8, 20):
        model = compile_program(program, max_len=n)
        assert [layer["d_mlp"] for layer in model.meta["layers"]][1] == n * (n + 1) // 2
        assert model.meta["layers"][-1]["d_head"] == 4
    model = compile_program(program)
    bad, checked = disagreements(model, program, exhaustive(program, 8))
    assert bad == [] and checked == 9840


def test_aab_needs_no_mlp_and_a_four_wide_head():
    program = parse_program((Path(__file__).parent.parent / "programs" / "aab.rasp").read_text())
    model = compile_program(program)
    assert model.meta["layers"] == [{"n_head": 1, "d_head": 4, "d_mlp": 0}]
    bad, checked = disagreements(model, program, exhaustive(program, 5))
    assert bad == [] and checked == 62


def test_numeric_valued_output_is_one_dimension():
    """hist's answer 1..max_len is written as one number and read as the nearest value."""
    program = parse_program("vocab {a, b}\nmax_len 30\noutput selector_width(select(tokens, tokens, ==))\n")
    model = compile_program(program)
    assert sum(label.startswith("output") for label in model.meta["residual"]) == 2  # share, number
    rng = random.Random(3)
    inputs = [[rng.choice("ab") for _ in range(rng.randint(1, 30))] for _ in range(300)]
    bad, checked = disagreements(model, program, inputs)
    assert bad == [] and checked == 300


def _sort_at_20(disabled=()):
    program = parse_program((Path(__file__).parent.parent / "programs" / "sort.rasp").read_text())
    program = dataclasses.replace(program, max_len=20)
    model = compile_program(program, disabled=disabled)
    rng = random.Random(20)
    inputs = [[rng.choice(program.vocab) for _ in range(rng.randint(1, 20))] for _ in range(200)]
    bad, checked = disagreements(model, program, inputs)
    assert bad == [] and checked == 200
    return model


def test_sort_range_select_reads_the_index_once():
    """Both comparisons of sort's range select read the index: compact-heads gives them its 20
    rows (index 0's is zero) and the constant's once, 20 + 1 + BOS, where one block per term
    costs twice that."""
    assert _sort_at_20().meta["layers"][1]["d_head"] == 21
    assert _sort_at_20(["compact-heads"]).meta["layers"][1]["d_head"] == 41


def test_sort_keeps_only_the_key_features_of_its_widths():
    """Only the range select reads the two widths' one-hots (20 + 19 coordinates: value 0's
    column of each table is zero, and `not_larger`, a `<=` of the keys against themselves, is
    never 0): head-features writes its 20 key columns instead and pruning drops the one-hots; the
    index, one coordinate per column, stays as it is."""
    model = _sort_at_20()
    labels = model.meta["residual"]
    assert not any(label.startswith(("smaller:", "not_larger:")) for label in labels)
    assert sum(label.startswith("indices:") for label in labels) == 19
    assert model.d_model == 48
    plain = _sort_at_20(["head-features"])
    assert sum(label.startswith(("smaller:", "not_larger:")) for label in plain.meta["residual"]) == 39
    assert plain.d_model == 67


def test_sort_widths_are_interpolated_with_one_unit_per_value():
    """The widths feed only a categorical aggregate's select, so each is decoded by its polyline
    through its values (21 for `smaller`, 20 units; 20 for `not_larger`, which is never 0, 19)
    instead of flat steps (40 and 38 units)."""
    assert _sort_at_20().meta["layers"][0]["d_mlp"] == 39
    assert _sort_at_20(["interpolated-steps"]).meta["layers"][0]["d_mlp"] == 78


def test_the_linear_read_out_search_gives_up_within_its_budget():
    """A table of 4,096 rows and as many classes (two widths at max_len 63) took 20 s of
    perceptron passes that failed anyway; the search now stops after CLASS_UPDATES row-class
    scores, and the table keeps its MLP."""
    rows = np.eye(64)[np.arange(4096) % 64]
    with_budget = readout._perceptron(rows, np.arange(4096), 4096)
    assert with_budget is None
    small = readout._perceptron(np.eye(3), np.array([0, 1, 2]), 3)  # what the budget leaves alone
    assert small is not None and (np.argmax(np.eye(3) @ small, axis=1) == [0, 1, 2]).all()


def test_a_table_of_two_position_values_is_an_embedding_of_the_values_it_reaches():
    """In a causal program the length at position i is i + 1, so `n * 10 - i` is a function of
    the position: an embedding row each, 20 values (9i + 10), not a table over 20 x 20 pairs
    whose one-hot would span every n * 10 - i."""
    program = parse_program("vocab {a, b}\nmax_len 20\ncausal\noutput sequence_map(lambda n, i: n * 10 - i, length, indices)\n")
    model = compile_program(program)
    assert model.meta["layers"] == [] or all(layer["d_mlp"] == 0 for layer in model.meta["layers"])
    assert model.params["wte"].shape[1] <= 21  # bos and the 20 values reached
    assert_agree(model, program, random_inputs(program.vocab, program.max_len, 300, rng=20))


def test_the_linear_read_out_keeps_only_the_pairs_the_positions_give():
    """`i == n - 1` is no sum of a function of n and one of i over every pair, but it is over
    the pairs with i < n (i - n + 3/2 > 0): the read-out answers it and the table needs no MLP."""
    program = parse_program('vocab {a, b}\nmax_len 8\noutput sequence_map(lambda n, i: "last" if i == n - 1 else "not", length, indices)\n')
    model = compile_program(program)
    assert [layer["d_mlp"] for layer in model.meta["layers"]] == [14]  # the length's decode alone
    assert_agree(model, program, every_input(program.vocab, program.max_len))


def test_an_index_match_whose_none_selects_keeps_the_table():
    """`not select(indices, s3, true)` holds where s3 is none, at every key: no index-matching
    select, whose features score a none as no match (a fuzz found the model missing those keys)."""
    program = parse_program("""
vocab {0, 1, 2}
max_len 6
causal
s1 = sequence_map(lambda x, y: (x + y) % 3, length, indices)
s2 = sequence_map(lambda x, y: int(x == y), s1, tokens)
s3 = aggregate(select(tokens, tokens, >), s1)
output aggregate(select(s2, indices, <) and select(indices, s1, ==) and not select(indices, s3, true), length)
""")
    for disabled in ([], ["position-selects"]):
        assert_agree(compile_program(program, disabled=disabled), program, every_input(program.vocab, program.max_len))


@pytest.mark.slow
def test_a_sequence_map_of_one_s_op_twice_is_a_map_of_it():
    """At every position both arguments hold the same value: `x - x` takes only 0, and `m * m` of
    a mean with hundreds of values is a step MLP of m, not a table over every pair (which was
    refused as too large: bench/fuzz.py seed 7 found it)."""
    difference = parse_program("vocab {0, 1, 2}\nmax_len 4\noutput sequence_map(lambda x, y: x - y, tokens, tokens)\n")
    assert infer_value_sets(difference)[difference.output] == {0}
    program = parse_program("""
vocab {0, 1, 2, 3}
max_len 6
causal
s1 = numerical(map(lambda x: x % 2, length))
s2 = numerical(aggregate(not select(length, length, !=), s1, default=-1))
m = numerical(aggregate(select(indices, indices, lambda k, q: k < q or k == 0), s2))
output numerical(sequence_map(lambda x, y: x * y, m, m))
""")
    model = compile_program(program)
    assert len(model.meta["layers"]) == 2
    assert_agree(model, program, every_input(program.vocab, program.max_len))
