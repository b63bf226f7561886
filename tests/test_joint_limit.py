"""A selector that `or`s (or `not`s) selects over different values is one table over the joint
values of its keys and queries (compiler/lowering/selectors.py). Past budget.MAX_PARAMETERS cells it is
refused, located at the selector, before the joint is built: a generated program of max_len 256
once spent over 20 minutes on a 16,777,216 x 1,024 table. A smaller table whose joints alone make
the model too large is refused by the budget before its score is factored. No test here times
anything: each counts the joint values or the scores the compiler builds."""

from __future__ import annotations

import contextlib
import math
import random
from pathlib import Path

import pytest

from rasp_compile.compiler import OPTIMIZATIONS, compile_program
from rasp_compile.compiler.budget import MAX_PARAMETERS, check_budget
from rasp_compile.compiler.driver import build_graph
from rasp_compile.compiler.layout import lay_out
from rasp_compile.compiler.lowering import scores, selectors
from rasp_compile.errors import RaspError, RaspSizeError, RaspValueError
from rasp_compile.frontend import load_program, parse_program
from rasp_compile.frontend.infer import infer_value_sets
from rasp_compile.testing.random_programs import random_program

from rasp_compile.testing.differential import assert_agree, every_input

ROOT = Path(__file__).resolve().parent.parent

SOURCE = """vocab {0, 1, 2, 3}
max_len {n}
near = select(length, tokens, lambda k, q: k < q or k == 0) or select(indices, tokens, true)
picked = aggregate(near or select(indices, length, <), tokens)
output numerical(map(lambda x: x, picked))
"""


def joints_built(monkeypatch) -> list[int]:
    """The number of values of every joint variable the lowering builds, as it builds it."""
    built: list[int] = []
    real = selectors.joint  # type: ignore[attr-defined]  # the name selectors.py imported, patched where it is looked up

    def counted(state, parts):
        built.append(math.prod(len(p.domain) for p in parts))
        return real(state, parts)

    monkeypatch.setattr(selectors, "joint", counted)
    return built


def test_a_joint_table_past_the_limit_is_refused_at_the_selector_before_it_is_built(monkeypatch):
    built = joints_built(monkeypatch)
    with pytest.raises(RaspValueError, match=r"16,777,216 x 1,024 cells, more than 100,000,000") as caught:
        compile_program(parse_program(SOURCE.replace("{n}", "256"), "p.rasp"))
    assert (caught.value.line, caught.value.col) == (4, 25) and "smaller max_len" in caught.value.message
    assert built == [256 * 256, 4]  # the inner `or`'s joints only: (length, indices) and tokens alone


def test_a_joint_table_within_the_limit_is_built_and_exact(monkeypatch):
    built = joints_built(monkeypatch)
    program = parse_program(SOURCE.replace("{n}", "4"))
    assert_agree(compile_program(program), program, every_input(program.vocab, 4))
    assert built and max(built) <= MAX_PARAMETERS


EARLY = """vocab {0, 1, 2}
max_len 64
mixed = sequence_map(lambda i, t: 3 * i + t, indices, tokens)
picked = aggregate(select(indices, tokens, ==) or select(mixed, tokens, <), tokens)
output picked
"""


def test_a_score_over_a_joint_no_model_can_hold_is_refused_before_it_is_built(monkeypatch):
    """The key (indices, mixed) takes 64 x 192 values: any model holding its table and the head
    reading it passes the budget of the arrays as assembled (budget.joints_lower_bound), so the
    compiler refuses before it factors that head's score, with check_budget's class, at the place
    check_budget names when every score is built (a fuzz program once spent a minute building a
    score of 4.6 million pairs, then was refused)."""
    scored: list[tuple] = []  # what each score factored reads
    real = selectors.score_columns

    def recorded(spec, block=None):
        scored.append(spec.reads())
        return real(spec, block)

    monkeypatch.setattr(selectors, "score_columns", recorded)
    program = parse_program(EARLY, "p.rasp")
    with pytest.raises(RaspSizeError, match=r"at least [\d,]+ parameters .* the combined key of 'indices', 'mixed'") as early:
        compile_program(program)
    assert not any(var.label == "(indices,mixed)" for reads in scored for var in reads)
    graph = build_graph(program, infer_value_sets(program), frozenset(OPTIMIZATIONS))  # every score built
    assert any(var.label == "(indices,mixed)" for reads in scored for var in reads)
    with pytest.raises(RaspSizeError) as full:
        check_budget(graph, lay_out(graph))
    assert (early.value.line, early.value.col) == (full.value.line, full.value.col) == (4, 10)


@pytest.mark.slow
def test_an_unbuilt_score_reads_what_the_built_one_would(monkeypatch):
    """scores.variables_read, which an unbuilt score reads, against the variables of every score
    score_columns builds, over the library at max_len 8 and 150 generated programs."""
    real = selectors.score_columns
    compared: list[tuple] = []  # what each score read

    def checked(spec, block=None):
        score = real(spec, block)
        assert set(scores.variables_read(spec)) == set(score.reads())
        compared.append(score.reads())
        return score

    monkeypatch.setattr(selectors, "score_columns", checked)
    programs = [load_program(path) for path in sorted((ROOT / "programs").glob("*.rasp"))]
    programs += [random_program(random.Random(index)) for index in range(150)]
    for program in programs:
        with contextlib.suppress(RaspError):  # refused by the checker or the compiler: the scores built are compared
            compile_program(program, max_len=min(program.max_len, 8))
    assert len(compared) > 200
    assert any(var.label.startswith("(") for reads in compared for var in reads)  # joints among them
