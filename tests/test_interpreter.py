"""The reference interpreter against plain-Python semantics (docs/language.md), on programs built with the IR."""

from __future__ import annotations

import time
from fractions import Fraction

import pytest

from rasp_compile import ir
from rasp_compile.errors import InputError, Loc, RaspRuntimeError, RaspValueError
from rasp_compile.frontend import parse_program
from rasp_compile.frontend.infer import infer_value_sets
from rasp_compile.frontend.means import MAX_MEANS
from rasp_compile.tools.interpret import OpCounter, evaluate, evaluate_many


def run(output: ir.SOp, tokens, vocab=(1, 2, 3), max_len=5, causal=False, counter=None):
    return evaluate(ir.Program(output, vocab, max_len, causal), tokens, counter)


# --- inputs -----------------------------------------------------------------------------------


def test_empty_input_gives_empty_output():
    assert run(ir.tokens, []) == []


def test_tokens_indices_length():
    assert run(ir.tokens, [3, 1]) == [3, 1]
    assert run(ir.indices, [3, 1, 1]) == [0, 1, 2]
    assert run(ir.length, [3, 1, 1]) == [3, 3, 3]


def test_tokens_match_the_vocab_by_equality_and_take_its_spelling():
    out = run(ir.tokens, [1.0, True])
    assert out == [1, 1] and all(type(v) is int for v in out)


def test_token_outside_vocab_is_named():
    with pytest.raises(InputError, match="'x'"):
        run(ir.tokens, [1, "x"])


def test_too_long_input_is_refused():
    with pytest.raises(InputError, match="at most 5"):
        run(ir.tokens, [1] * 6)


# --- maps and none ------------------------------------------------------------------------------

NOTHING = ir.Aggregate(ir.Select(ir.tokens, ir.tokens, "false"), ir.tokens)  # none everywhere


def test_maps():
    assert run(ir.Map(lambda x: x * 10, ir.tokens), [1, 2]) == [10, 20]
    assert run(ir.SequenceMap(lambda x, i: x - i, ir.tokens, ir.indices), [3, 3, 3]) == [3, 2, 1]


def test_categorical_map_of_none_is_none_and_numerical_map_of_none_is_zero():
    assert run(NOTHING, [1, 2]) == [None, None]
    assert run(ir.Map(lambda x: 7, NOTHING), [1, 2]) == [None, None]
    assert run(ir.numerical(ir.Map(lambda x: 7, NOTHING)), [1, 2]) == [0, 0]
    assert run(ir.SequenceMap(lambda x, y: 7, ir.tokens, NOTHING), [1]) == [None]
    assert run(ir.numerical(ir.SequenceMap(lambda x, y: 7, NOTHING, ir.tokens)), [1]) == [0]


def test_select_never_selects_where_key_or_query_is_none():
    # Query none: nothing selected. Key none at position 0 only: not counted.
    first_none = ir.Aggregate(ir.Select(ir.indices, ir.indices, lambda k, q: k == q and k > 0), ir.tokens)
    assert run(ir.SelectorWidth(ir.Select(ir.tokens, NOTHING, "true")), [1, 2]) == [0, 0]
    assert run(ir.SelectorWidth(ir.Select(first_none, ir.tokens, "true")), [1, 2, 3]) == [2, 2, 2]


def test_failing_lambda_is_reported_at_its_line_with_its_values():
    inverse = ir.Map(ir.Fn(lambda x: 1 / (x - 2), "lambda x: 1 / (x - 2)", Loc(4, 9)), ir.tokens)
    with pytest.raises(RaspValueError, match=r"\(2\)") as caught:
        run(inverse, [1, 2])
    assert caught.value.loc == Loc(4, 9)


# --- selectors ----------------------------------------------------------------------------------


def widths(selector, tokens, causal=False):
    return run(ir.SelectorWidth(selector), tokens, causal=causal)


def test_select_reads_key_op_query():
    # key < query: at query q, the keys holding a smaller token.
    assert widths(ir.Select(ir.tokens, ir.tokens, "<"), [3, 1, 2]) == [2, 0, 1]
    assert widths(ir.Select(ir.tokens, ir.tokens, lambda k, q: k == 3), [3, 1, 3]) == [2, 2, 2]


def test_selector_and_or_not():
    less = ir.Select(ir.tokens, ir.tokens, "<")
    equal = ir.Select(ir.tokens, ir.tokens, "==")
    assert widths(ir.SelectOr(less, equal), [3, 1, 2]) == [3, 1, 2]
    assert widths(ir.SelectAnd(less, ir.Select(ir.indices, ir.indices, "<")), [3, 1, 2]) == [0, 0, 1]
    assert widths(ir.SelectNot(less), [3, 1, 2]) == [1, 3, 2]


def test_causal_restricts_every_selector_to_earlier_keys():
    everything = ir.Select(ir.tokens, ir.tokens, "true")
    assert widths(everything, [1, 2, 3]) == [3, 3, 3]
    assert widths(everything, [1, 2, 3], causal=True) == [1, 2, 3]
    # "not" of an empty selector is still restricted to k <= q.
    assert widths(ir.SelectNot(ir.Select(ir.tokens, ir.tokens, "false")), [1, 2, 3], causal=True) == [1, 2, 3]
    last = ir.Aggregate(ir.Select(ir.indices, ir.Map(lambda n: n - 1, ir.length), "=="), ir.tokens)
    assert run(last, [1, 2, 3]) == [3, 3, 3]
    assert run(last, [1, 2, 3], causal=True) == [1, 2, 3]  # causal length is i + 1
    assert run(ir.length, [1, 2, 3], causal=True) == [1, 2, 3]


# --- aggregates ---------------------------------------------------------------------------------

PREVIOUS = ir.Select(ir.indices, ir.indices, lambda k, q: k == q - 1)


def test_categorical_aggregate_and_default():
    assert run(ir.Aggregate(PREVIOUS, ir.tokens), [1, 2, 3]) == [None, 1, 2]
    assert run(ir.Aggregate(PREVIOUS, ir.tokens, default=0), [1, 2, 3]) == [0, 1, 2]


def test_categorical_aggregate_of_equal_values_is_that_value():
    same = ir.Select(ir.tokens, ir.tokens, "==")
    assert run(ir.Aggregate(same, ir.Map(lambda x: x * 2, ir.tokens)), [1, 2, 1]) == [2, 4, 2]
    # All selected values none: none.
    assert run(ir.Aggregate(ir.Select(ir.tokens, ir.tokens, "true"), NOTHING), [1, 2]) == [None, None]


def test_categorical_aggregate_of_different_values_names_input_and_position():
    smaller = ir.Select(ir.tokens, ir.tokens, "<")
    agg = ir.Aggregate(smaller, ir.tokens, label="low", loc=Loc(3, 7))
    with pytest.raises(RaspRuntimeError) as caught:
        run(agg, [3, 1, 2])
    message = caught.value.message
    assert "[3, 1, 2]" in message and "position 0" in message and "1, 2" in message and "'low'" in message
    assert caught.value.loc == Loc(3, 7)


def test_none_among_selected_values_conflicts_with_a_value():
    half = ir.Aggregate(ir.Select(ir.indices, ir.indices, lambda k, q: k == q and k > 0), ir.tokens)
    with pytest.raises(RaspRuntimeError, match="none, 2"):
        run(ir.Aggregate(ir.Select(ir.tokens, ir.tokens, "true"), half), [1, 2])


def test_numerical_mean_is_exact_and_in_the_inferred_value_set():
    ones = ir.numerical(ir.Map(lambda x: 1 if x == 1 else 0, ir.tokens))
    mean = ir.numerical(ir.Aggregate(ir.Select(ir.tokens, ir.tokens, "true"), ones))
    out = run(mean, [1, 2, 2])
    assert out == [float(Fraction(1, 3))] * 3
    program = ir.Program(mean, (1, 2, 3), 5)
    assert set(out) <= infer_value_sets(program)[mean]


def test_numerical_aggregate_defaults_to_zero_or_the_given_default():
    value = ir.numerical(ir.tokens)
    assert run(ir.numerical(ir.Aggregate(PREVIOUS, value)), [3, 2]) == [0, 3.0]
    assert run(ir.numerical(ir.Aggregate(PREVIOUS, value, default=-1)), [3, 2]) == [-1, 3.0]


def test_evaluate_many_is_evaluate_per_input():
    program = ir.Program(ir.Aggregate(PREVIOUS, ir.Map(lambda x: -x, ir.tokens)), (1, 2, 3), 4)
    inputs = [[], [1], [3, 2, 1], [2, 2, 2, 2]]
    assert evaluate_many(program, inputs) == [evaluate(program, t) for t in inputs]


# --- counting -----------------------------------------------------------------------------------


def test_op_counter_on_a_tiny_program():
    # Causal, n = 3: prev = aggregate(select(indices, indices, k == q - 1), tokens + 1)
    #                 mean = numerical aggregate of (tokens) over not(select(tokens, tokens, false))
    plus_one = ir.Map(lambda x: x + 1, ir.tokens)
    prev = ir.Aggregate(PREVIOUS, plus_one)
    mean = ir.numerical(ir.Aggregate(ir.SelectNot(ir.Select(ir.tokens, ir.tokens, "false")), ir.numerical(ir.tokens)))
    output = ir.SequenceMap(lambda p, m: (p, m), prev, mean)
    counter = OpCounter()
    assert run(output, [1, 2, 3], causal=True, counter=counter) == [None, (2, 1.5), (3, 2.0)]
    cells = 1 + 2 + 3  # causal rows
    # lookups: tokens 3, indices 3, numerical tokens 3, plus_one 3, output 2 (prev is none at 0),
    #          prev reads 0 + 1 + 1 selected keys, mean reads 1 + 2 + 3.
    assert counter.lookups == 3 + 3 + 3 + 3 + 2 + 2 + 6
    assert counter.predicate_tests == 2 * cells  # PREVIOUS and the "false" select
    assert counter.additions == cells + (0 + 1 + 2)  # "not", then the sums of 1, 2, 3 values
    assert counter.comparisons == 0 + 0 + 0  # prev selects at most one key
    assert counter.divisions == 3
    assert counter.total == 22 + 12 + 9 + 0 + 3


def test_op_counter_counts_comparisons_and_width_additions():
    counter = OpCounter()
    same = ir.Select(ir.tokens, ir.tokens, "==")
    out = ir.SequenceMap(lambda a, w: w, ir.Aggregate(same, ir.tokens), ir.SelectorWidth(same))
    assert run(out, [1, 1, 2], counter=counter) == [2, 2, 1]
    assert counter.comparisons == 1 + 1 + 0  # two selected keys at queries 0 and 1
    assert counter.additions == 2 + 2 + 1  # one per selected key of the width
    assert counter.predicate_tests == 9


def test_a_mean_of_many_values_is_refused_without_enumerating_them():
    """The mean of a running count (itself a mean times the length) has more than MAX_MEANS
    possible values from max_len 7 on; inference used to spend minutes forming them first.
    (Over `select(indices, indices, <=)` the inference does not track the mean's count.)"""
    text = """
vocab {a, b}
max_len 8
causal
x = numerical(map(lambda t: 1 if t == "a" else 0, tokens))
f = numerical(aggregate(select(indices, indices, <=), x))
count = numerical(sequence_map(lambda f, n: f * n, f, length))
output numerical(aggregate(select(tokens, tokens, true), count))
"""
    started = time.perf_counter()
    with pytest.raises(RaspValueError, match=f"can take more than {MAX_MEANS:,} values"):
        parse_program(text)
    assert time.perf_counter() - started < 60


def test_a_mean_over_at_most_one_key_takes_only_the_values_it_reads():
    """A shift (k == q - 1 on indices) selects at most one key: the previous running count takes
    the running count's values (and the default), not every mean of them, so it compiles at 64."""
    text = """
vocab {a, b}
max_len 64
causal
f = numerical(aggregate(select(tokens, tokens, true), numerical(map(lambda t: 1 if t == "a" else 0, tokens))))
count = numerical(sequence_map(lambda f, n: f * n, f, length))
output numerical(aggregate(select(indices, indices, lambda k, q: k == q - 1), count, default=-1))
"""
    program = parse_program(text)
    sets = infer_value_sets(program)
    assert sets[program.output] == sets[program.output.sop] | {-1}
    assert evaluate(program, ["a", "b", "a", "a"]) == [-1, 1, 1, 2]
