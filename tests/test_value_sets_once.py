"""A program compiled from text or a file is checked and compiled on one inference of its value
sets: at max_len 1,024 each inference tries a select over indices on a million pairs."""

from __future__ import annotations

from pathlib import Path

import pytest

import rasp_compile
from rasp_compile.cli.common import compile_file
from rasp_compile.compiler import driver
from rasp_compile.frontend import infer

AAB = Path(__file__).parent.parent / "programs" / "aab.rasp"


@pytest.mark.parametrize("how", [
    lambda: compile_file(str(AAB), 30),
    lambda: rasp_compile.compile(AAB, max_len=30),
    lambda: rasp_compile.compile(AAB.read_text(encoding="utf-8"), max_len=30),
    lambda: rasp_compile.compile(AAB),
])
def test_the_checks_value_sets_are_the_compilers(monkeypatch, how):
    runs, infer_value_sets = [], infer.infer_value_sets

    def counted(program):
        runs.append(program.max_len)
        return infer_value_sets(program)

    monkeypatch.setattr(driver, "infer_value_sets", counted)
    monkeypatch.setattr(infer, "infer_value_sets", counted)
    how()
    assert len(runs) == 1
