"""The Python API reads tokens as the command line does: `rc.run(model, list("123"))` on a number
vocab is `rc.run(model, [1, 2, 3])`, a string is read as INPUT, and a text two vocab tokens print
alike is refused instead of guessed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import rasp_compile as rc
from rasp_compile.errors import InputError
from rasp_compile.runtime.model import Model

REVERSE = "vocab {1, 2, 3}\nmax_len 4\nopp = length - indices - 1\noutput aggregate(select(indices, opp, ==), tokens)\n"


@pytest.fixture(scope="module")
def reverse() -> Model:
    return rc.compile(REVERSE)


def test_tokens_as_text_match_the_vocab(reverse):
    expected = rc.run(reverse, [1, 2, 3])
    assert expected == [3, 2, 1]
    assert rc.run(reverse, list("123")) == rc.run(reverse, "123") == rc.run(reverse, "1 2 3") == expected
    assert rc.run(reverse, ["1", 2, "3.0"]) == rc.run(reverse, np.array([1, 2, 3])) == expected


def test_tokens_outside_the_vocab_are_refused(reverse):
    for bad in (["4"], [4], ["x"], [True], "1 9"):
        with pytest.raises(InputError, match="not in the vocab"):
            rc.run(reverse, bad)


def test_a_text_two_tokens_print_alike_is_ambiguous():
    model = rc.compile("vocab {a, b}\nmax_len 3\noutput map(lambda t: t, tokens)\n")
    model.meta["vocab"] = ["1" if t == "a" else 1 if t == "b" else t for t in model.meta["vocab"]]
    model.meta["output"]["values"] = ["1" if t == "a" else 1 for t in model.meta["output"]["values"]]
    assert rc.run(model, ["1", 1]) == ["1", 1]  # values of the vocab are themselves
    with pytest.raises(InputError, match="ambiguous"):
        rc.run(model, "1 1")


def test_complete_reads_tokens_as_run_does():
    aab = rc.load_program(Path(__file__).resolve().parent.parent / "programs" / "aab.rasp")
    model = rc.compile(aab)
    assert rc.complete(model, "aab", steps=3) == rc.complete(model, ["a", "a", "b"], steps=3) == list("aab")
