"""A selector that `or`s (or `not`s) selects over different values is one table over the joint
values of its keys and queries (compiler/lowering/selectors.py). Past budget.MAX_PARAMETERS cells it is
refused, located at the selector, before the joint is built: a generated program of max_len 256
once spent over 20 minutes on a 16,777,216 x 1,024 table. No test here times anything: each counts
the joint values the compiler builds."""

from __future__ import annotations

import math

import pytest

from rasp_compile.compiler import compile_program
from rasp_compile.compiler.lowering import selectors
from rasp_compile.errors import RaspValueError
from rasp_compile.frontend import parse_program
from rasp_compile.compiler.budget import MAX_PARAMETERS

from rasp_compile.testing.differential import assert_agree, every_input

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
