"""`rc.compile`'s max_len: an override from Python is checked as the command lines check theirs
(a whole number from 1 to 4,096), for program text and for IR alike."""

from __future__ import annotations

import pytest

import rasp_compile as rc
from rasp_compile import ir


def test_a_max_len_override_from_python_is_checked_like_the_command_lines():
    """rc.compile(text, max_len=-1) failed with an IndexError, "3" with a TypeError, 0 with a
    WeightsError about meta; 10**6 compiled a model the command line would refuse."""
    text = "vocab {a}\nmax_len 5\noutput tokens"
    program = ir.Program(ir.tokens, ("a",), 5)
    for max_len in (0, -1, "3", 2.5, True, 10**6):
        for source in (text, program):
            with pytest.raises(ValueError, match="max_len must be a whole number from 1 to 4,096"):
                rc.compile(source, max_len=max_len)
        with pytest.raises(ValueError, match="max_len must be"):
            rc.parse_program(text, max_len=max_len)
    assert rc.compile(text, max_len=1_024).meta["max_len"] == 1_024
