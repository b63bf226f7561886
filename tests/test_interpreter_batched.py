"""The batched interpreter (`evaluate_batch`) against the per-input reference (`evaluate_each`)
and against the plain-Python functions of tests/reference_programs.py: on every short input of
every library program, on seeded random programs (hypothesis) with their inputs, and on each rule
where a batch could differ from one input at a time (none, causal, errors of some inputs only,
pairs of values that meet only across inputs, 1 / 1.0 / True, exact means)."""

from __future__ import annotations

import ast
import dataclasses
import itertools
import random
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rasp_compile import ir
from rasp_compile.errors import InputError, Loc, RaspRuntimeError, RaspValueError
from rasp_compile.frontend import load_program
from rasp_compile.frontend.infer import possible_means
from rasp_compile.tools.interpret import batched, evaluate, evaluate_batch, evaluate_each
from rasp_compile.tools.interpret.rules import exact_mean
from rasp_compile.testing.random_programs import programs

import reference_programs

PROGRAMS = sorted((Path(__file__).parent.parent / "programs").glob("*.rasp"))
SHORT_INPUTS = 3_000  # per program, shortest first
LONG = 16


def strictly(result) -> object:
    """A result as something == compares strictly: values by type and repr (1, 1.0 and True
    differ), an error by type, message and place."""
    if isinstance(result, Exception):
        return (type(result).__name__, str(result), getattr(result, "loc", None))
    return [(type(value).__name__, repr(value)) for value in result]


def outcome(evaluator, program: ir.Program, inputs: list) -> object:
    """Per input the strict result, or what the whole call raised."""
    try:
        return [strictly(result) for result in evaluator(program, inputs)]
    except Exception as error:  # noqa: BLE001 - the two evaluators must raise the same
        return ("raised", strictly(error))


def same_as_reference(program: ir.Program, inputs: list) -> None:
    assert outcome(evaluate_batch, program, inputs) == outcome(evaluate_each, program, inputs)


# --- the library, against plain Python ----------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_library_program_equals_plain_python_on_every_short_input(path: Path):
    program = load_program(path)
    every = itertools.chain.from_iterable(itertools.product(program.vocab, repeat=n)
                                          for n in range(program.max_len + 1))
    inputs = [list(tokens) for tokens in itertools.islice(every, SHORT_INPUTS)]
    plain = getattr(reference_programs, path.stem)
    for tokens, got in zip(inputs, evaluate_batch(program, inputs)):
        assert got == plain(tokens), f"input {tokens}"


@pytest.mark.slow
@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_library_program_equals_plain_python_on_long_random_inputs(path: Path):
    program = dataclasses.replace(load_program(path), max_len=LONG)
    rng = random.Random(path.stem)
    inputs = [rng.choices(program.vocab, k=rng.randint(1, LONG)) for _ in range(300)]
    plain = getattr(reference_programs, path.stem)
    for tokens, got in zip(inputs, evaluate_batch(program, inputs)):
        assert got == plain(tokens), f"input {tokens}"
    same_as_reference(program, inputs)


# --- random programs, against the reference -------------------------------------------------------


@pytest.mark.slow
@settings(max_examples=300, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs(), st.randoms(use_true_random=False))
def test_random_program_equals_the_reference(program: ir.Program, rng: random.Random):
    """Errors included: a random program's categorical aggregates often select several values."""
    inputs = [[rng.choice(program.vocab) for _ in range(rng.randint(0, program.max_len))] for _ in range(40)]
    same_as_reference(program, inputs)


# --- the rules, one by one ----------------------------------------------------------------------


def program_of(output: ir.SOp, vocab=(1, 2, 3), max_len=5, causal=False) -> ir.Program:
    return ir.Program(output, vocab, max_len, causal)


SMALLER = ir.Select(ir.tokens, ir.tokens, "<")
PREVIOUS = ir.Select(ir.indices, ir.indices, lambda k, q: k == q - 1)
NOTHING = ir.Aggregate(ir.Select(ir.tokens, ir.tokens, "false"), ir.tokens)


def test_mixed_lengths_and_empty_inputs_keep_their_order():
    program = program_of(ir.Aggregate(PREVIOUS, ir.Map(lambda x: -x, ir.tokens)))
    inputs = [[3, 2, 1], [], [1], [2, 2, 2, 2], [1, 3]]
    assert evaluate_batch(program, inputs) == [[None, -3, -2], [], [None], [None, -2, -2, -2], [None, -1]]
    same_as_reference(program, inputs)


def test_none_and_numerical_maps_of_none():
    for output in (NOTHING, ir.Map(lambda x: 7, NOTHING), ir.numerical(ir.Map(lambda x: 7, NOTHING)),
                   ir.SequenceMap(lambda x, y: 7, ir.tokens, NOTHING),
                   ir.SelectorWidth(ir.Select(NOTHING, ir.tokens, "true"))):
        same_as_reference(program_of(output), [[1, 2], [3], [2, 2, 1]])


def test_causal_selectors_and_length():
    everything = ir.Select(ir.tokens, ir.tokens, "true")
    last = ir.Aggregate(ir.Select(ir.indices, ir.Map(lambda n: n - 1, ir.length), "=="), ir.tokens)
    for output in (ir.SelectorWidth(everything), ir.SelectorWidth(ir.SelectNot(ir.Select(ir.tokens, ir.tokens, "false"))),
                   last, ir.length, ir.SelectorWidth(ir.SelectOr(SMALLER, PREVIOUS))):
        program = program_of(output, causal=True)
        assert evaluate_batch(program, [[1, 2, 3]]) == [evaluate(program, [1, 2, 3])]
        same_as_reference(program, [[1, 2, 3], [3, 3, 1, 2], [2]])


def test_an_ambiguous_aggregate_is_reported_for_its_inputs_only():
    low = ir.Aggregate(SMALLER, ir.tokens, label="low", loc=Loc(3, 7))
    program = program_of(ir.Map(lambda x: x * 10, low))
    inputs = [[1, 1], [3, 1, 2], [2, 1], [1, 2, 3, 3], [3, 2, 1]]
    results = evaluate_batch(program, inputs)
    assert results[0] == [None, None] and results[2] == [10, None]
    error = results[1]
    assert isinstance(error, RaspRuntimeError) and error.loc == Loc(3, 7)
    assert "[3, 1, 2]" in error.message and "position 0" in error.message and "1, 2" in error.message
    assert isinstance(results[3], RaspRuntimeError) and "position 2" in results[3].message
    same_as_reference(program, inputs)


def test_the_first_ambiguous_aggregate_of_an_input_is_the_one_reported():
    first = ir.Aggregate(SMALLER, ir.tokens, label="first")
    second = ir.Aggregate(ir.Select(ir.tokens, ir.tokens, ">"), ir.tokens, label="second")
    program = program_of(ir.SequenceMap(lambda a, b: 0, second, first))
    same_as_reference(program, [[3, 1, 2], [1, 2], [2, 2], [1, 3, 2, 1]])


def test_inputs_left_after_an_error_are_sliced_alike(monkeypatch):
    monkeypatch.setattr(batched, "BATCH_CELLS", 20)  # a few inputs per slice
    low = ir.Aggregate(SMALLER, ir.tokens, label="low")
    program = program_of(ir.SequenceMap(lambda a, b: (a, b), low, ir.SelectorWidth(SMALLER)))
    rng = random.Random(3)
    same_as_reference(program, [rng.choices((1, 2, 3), k=rng.randint(0, 5)) for _ in range(200)])


def test_selected_values_that_are_equal_do_not_conflict_whatever_their_type_or_origin():
    """1 and True are equal (the first selected is the result); so are a default and the same
    value read from the input."""
    everything = ir.Select(ir.tokens, ir.tokens, "true")
    mixed = ir.Map(lambda x: True if x == 1 else 1 if x == 2 else 3, ir.tokens)
    program = program_of(ir.Aggregate(everything, mixed))
    assert strictly(evaluate_batch(program, [[2, 1]])[0]) == strictly([1, 1])
    same_as_reference(program, [[2, 1], [1, 2], [1, 3]])
    filled = ir.Aggregate(PREVIOUS, ir.tokens, default=1)  # 1 at position 0, then the previous token
    program = program_of(ir.Aggregate(ir.Select(ir.indices, ir.indices, "<="), filled))
    agrees, conflicts = evaluate_batch(program, [[1, 3], [3, 1]])
    assert agrees == [1, 1] and isinstance(conflicts, RaspRuntimeError)
    same_as_reference(program, [[1, 3], [3, 1], [1, 1, 2]])


def test_a_memo_kept_between_calls_serves_every_length_and_stays_bounded(monkeypatch):
    calls = []
    def before(k, q):
        calls.append((k, q))
        return k == q - 1
    program = program_of(ir.Aggregate(ir.Select(ir.indices, ir.indices, ir.Fn(before, "lambda k, q: k == q - 1")),
                                      ir.tokens), max_len=6)
    memo: dict = {}
    inputs = [[1, 2, 3], [3, 1], [2, 2, 2, 1, 3, 3], [1]]
    outputs = [evaluate_batch(program, [tokens], memo)[0] for tokens in inputs]
    assert len(memo) == 1 and len(calls) == 6 * 6  # one table, indices 0..5 by 0..5, for every length
    assert outputs == evaluate_each(program, inputs)
    monkeypatch.setattr(batched, "MEMO_CELLS", 10)
    evaluate_batch(program, inputs, memo)
    assert len(memo) == 1  # emptied, then this call's table


def test_none_among_selected_values_conflicts_with_a_value():
    half = ir.Aggregate(ir.Select(ir.indices, ir.indices, lambda k, q: k == q and k > 0), ir.tokens)
    program = program_of(ir.Aggregate(ir.Select(ir.tokens, ir.tokens, "true"), half))
    results = evaluate_batch(program, [[1, 2], [1]])
    assert "none, 2" in results[0].message and results[1] == [None]


def test_a_failing_lambda_raises_what_the_reference_raises():
    inverse = ir.Map(ir.Fn(lambda x: 1 / (x - 2), "lambda x: 1 / (x - 2)", Loc(4, 9)), ir.tokens)
    program = program_of(inverse)
    with pytest.raises(RaspValueError, match=r"\(2\)") as caught:
        evaluate_batch(program, [[1, 3], [1, 2]])
    assert caught.value.loc == Loc(4, 9)
    same_as_reference(program, [[1, 3], [3, 2, 1], [1]])


def test_a_predicate_failing_on_values_that_never_meet_in_one_input_is_not_called_on_them():
    """Across the batch key 3 meets query 1, but never inside one input: no error, as one at a time."""
    def picky(k, q):
        if (k, q) == (3, 1):
            raise ZeroDivisionError("no")
        return k == q
    program = program_of(ir.SelectorWidth(ir.Select(ir.tokens, ir.tokens, ir.Fn(picky, "lambda k, q: picky"))))
    assert evaluate_batch(program, [[3, 3], [1, 1, 2]]) == [[2, 2], [2, 2, 1]]
    with pytest.raises(RaspValueError, match="fails on key 3, query 1"):
        evaluate_batch(program, [[3, 3], [3, 1]])


def test_a_predicate_lambda_whose_results_are_not_bools_is_read_as_the_reference_reads_it():
    """The table of a lambda predicate is filled by calling it directly where every result of a
    key's row is a bool; a row with another result (a number, a nan, a tuple) goes through
    `ir.Select.holds`, as the reference does, so the two agree on what it selects or refuses."""
    def number(k, q):
        return k - q  # truthy where k != q
    def nan_on_three(k, q):
        return float("nan") if k == 3 else k == q
    for predicate in (number, nan_on_three):
        selector = ir.Select(ir.tokens, ir.tokens, ir.Fn(predicate, f"lambda k, q: {predicate.__name__}"))
        program = program_of(ir.SelectorWidth(selector))
        same_as_reference(program, [[1, 2, 2], [2], [1, 1]])
        same_as_reference(program, [[3, 1], [1, 3, 3]])
    assert evaluate_batch(program_of(ir.SelectorWidth(ir.Select(ir.tokens, ir.tokens, ir.Fn(number, "n")))),
                          [[1, 2, 2]]) == [[2, 1, 1]]


def test_an_ordering_of_values_that_never_meet_in_one_input_is_not_tried_on_them():
    """"a" < 1 cannot be decided; a batch that holds "a" and 1 only in different inputs is fine."""
    program = program_of(ir.SelectorWidth(ir.Select(ir.tokens, ir.tokens, "<")), vocab=("a", "b", 1, 2))
    assert evaluate_batch(program, [["b", "a"], [2, 1, 2]]) == [[1, 0], [1, 0, 1]]
    with pytest.raises(RaspValueError, match="select predicate < fails on key 1, query 'a'"):
        evaluate_batch(program, [["b", "a"], ["a", 1]])
    same_as_reference(program, [["b", "a"], [2, 1, 2], [1, "a"]])


def test_a_token_outside_the_vocab_is_an_input_error():
    with pytest.raises(InputError, match="'x'"):
        evaluate_batch(program_of(ir.tokens), [[1], [1, "x"]])
    with pytest.raises(InputError, match="at most 5"):
        evaluate_batch(program_of(ir.tokens), [[1] * 6])


def test_tokens_take_the_vocab_spelling_and_values_keep_their_types():
    program = program_of(ir.Map(lambda x: True if x == 1 else 1 if x == 2 else 1.0, ir.tokens))
    assert strictly(evaluate_batch(program, [[1.0, 2, True, 3]])[0]) == strictly([True, 1, True, 1.0])
    same_as_reference(program, [[1.0, 2, True, 3], [3, 2]])
    pairs = program_of(ir.SequenceMap(lambda a, b: (a, b), ir.tokens, ir.indices))
    assert evaluate_batch(pairs, [[3, 1]]) == [[(3, 0), (1, 1)]]


# --- means --------------------------------------------------------------------------------------


def test_numerical_means_are_exact_and_snapped_like_the_reference():
    for values in ((1, 0), (0.1, 0.2), (1 / 3, 2 / 3, 1), (10**17, 10**17 + 1), (10**18, 1 / 999_983)):  # the last: sums past int64
        vocab = tuple(range(len(values)))
        number = ir.numerical(ir.Map(lambda t, v=values: v[t], ir.tokens))
        for selector in (ir.Select(ir.tokens, ir.tokens, "true"), SMALLER, PREVIOUS):
            for default in (None, -1, 0.5):
                program = program_of(ir.numerical(ir.Aggregate(selector, number, default=default)), vocab, 6)
                rng = random.Random(len(values))
                same_as_reference(program, [rng.choices(vocab, k=rng.randint(1, 6)) for _ in range(60)])


@pytest.mark.slow
@settings(max_examples=300, derandomize=True, deadline=None)
@given(st.lists(st.one_of(st.integers(-50, 50), st.fractions(max_denominator=12).map(float)), min_size=1, max_size=6))
def test_exact_mean_is_the_rational_mean_and_one_the_inference_expects(values):
    mean = exact_mean(values)
    assert mean == pytest.approx(float(sum(map(Fraction, values)) / len(values)), rel=1e-12, abs=1e-12)
    assert mean in possible_means(frozenset(values), len(values), ir.tokens)


def test_the_interpreter_shares_no_code_with_the_value_set_inference():
    """The oracle and what it checks meet only in the lambda evaluator (frontend.lambda_calls,
    lambda_eval) and the IR."""
    package = Path(__file__).parent.parent / "rasp_compile" / "tools" / "interpret"
    imported = set()
    for path in package.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                imported.add(node.module or "")
    assert imported and not any("infer" in module or "compiler" in module for module in imported), imported


# --- inputs as indices into a vocab (what rasp-run --accuracy draws) -------------------------------


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_vocab_indices_give_what_the_tokens_give(path: Path):
    program = load_program(path)
    vocab = list(program.vocab)
    rng = random.Random(path.stem)
    for n in (1, 2, min(program.max_len, 6)):
        picks = [[rng.randrange(len(vocab)) for _ in range(n)] for _ in range(40)]
        got = batched.evaluate_vocab_indices(program, vocab, np.array(picks, dtype=np.int64))
        want = evaluate_each(program, [[vocab[j] for j in row] for row in picks])
        assert [strictly(result) for result in got] == [strictly(result) for result in want]


def test_vocab_indices_with_a_token_outside_the_vocab_are_left_to_the_reference():
    program = program_of(ir.tokens)
    with pytest.raises(InputError, match="not in the vocab"):
        batched.evaluate_vocab_indices(program, [1, "x"], np.array([[0, 1]]))
    assert batched.evaluate_vocab_indices(program, [1, "x"], np.array([[0, 0]])) == [[1, 1]]
