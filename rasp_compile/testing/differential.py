"""Compiled model vs reference interpreter on given inputs: the check every compiler test shares."""

from __future__ import annotations

import itertools
import math
import random

import numpy as np

from rasp_compile import ir
from rasp_compile.compiler import compile_program
from rasp_compile.errors import RaspPrecisionError, RaspRuntimeError
from rasp_compile.runtime.prediction import predict
from rasp_compile.tools.interpret import evaluate
from rasp_compile.runtime.model import Model

NUMERICAL_TOLERANCE = 1e-5
"""Numerical outputs agree when within this much, relative to max(1, |expected|): float32 noise."""


def same_value(expected, got, numerical: bool) -> bool:
    if numerical:
        return math.isclose(float(got), float(expected), rel_tol=NUMERICAL_TOLERANCE, abs_tol=NUMERICAL_TOLERANCE)
    return expected == got and (expected is None) == (got is None) and isinstance(expected, bool) == isinstance(got, bool)


def disagreements(model: Model, program: ir.Program, inputs: list[list]) -> tuple[list, int]:
    """([(input, expected, got), ...], how many inputs were compared).

    Inputs on which the program itself is in error (a categorical aggregate selecting
    different values) are skipped: no model can agree with an error."""
    checked, expected_all = [], []
    for tokens in inputs:
        try:
            expected_all.append(evaluate(program, tokens))
            checked.append(tokens)
        except RaspRuntimeError:
            continue
    numerical = model.meta["output"]["encoding"] == ir.NUMERICAL
    bad = []
    for tokens, expected, got in zip(checked, expected_all, predict(model, checked) if checked else []):
        if not all(same_value(e, g, numerical) for e, g in zip(expected, got)):
            bad.append((tokens, expected, got))
    return bad, len(checked)


def assert_agree(model: Model, program: ir.Program, inputs: list[list]) -> None:
    """The model answers as the interpreter does on every input the program is not in error on
    (and on at least one)."""
    bad, checked = disagreements(model, program, inputs)
    assert checked > 0 and bad == [], f"{len(bad)} of {checked} inputs disagree, first: {bad[:1]}"


def every_input(vocab, max_len: int, limit: int | None = None) -> list[list]:
    """Every token sequence of length 1..max_len, shortest first (the first `limit` of them)."""
    every = itertools.chain.from_iterable(itertools.product(vocab, repeat=n) for n in range(1, max_len + 1))
    return [list(tokens) for tokens in itertools.islice(every, limit)]


def random_inputs(vocab, max_len: int, count: int, rng: random.Random | int) -> list[list]:
    """`count` random sequences over `vocab`, of random lengths 1..max_len, drawn from `rng`: a
    generator (which moves on, so a program and its inputs can come from one seed) or a seed."""
    rng = rng if isinstance(rng, random.Random) else random.Random(rng)
    return [[rng.choice(vocab) for _ in range(rng.randint(1, max_len))] for _ in range(count)]


def compiled_exactly(program: ir.Program, **options) -> Model:
    """The program compiled in float32, or in float64 where the compiler refuses float32 because it
    cannot prove a read-out within its tolerance (compiler/precision.py): the refusal must be
    located and say that float64 holds it, and float64 must then compile."""
    try:
        return compile_program(program, **options)
    except RaspPrecisionError as refusal:
        assert refusal.loc is not None and "--dtype float64" in refusal.message, refusal.message
        return compile_program(program, dtype=np.float64, **options)
