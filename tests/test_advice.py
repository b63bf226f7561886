"""Advice an error gives is checked to work: a number float32 cannot hold suggests `--dtype float64`
only when float64 compiles the program, and says why not otherwise."""

from __future__ import annotations

import numpy as np
import pytest

from rasp_compile import compile, parse_program
from rasp_compile.errors import RaspError, RaspPrecisionError

CARRIED = """max_len 6
big = numerical(map(lambda i: i + 1000000, indices))
x = numerical(aggregate(select(indices, indices, <=), big))
y = map(lambda v: round(v - 1000000, 2), x)
"""
"""`y` must tell apart means of about 10^6 only 1/30 apart: float32 cannot, float64 can."""


def program(n_tokens: int, output: str):
    vocab = "vocab {" + ", ".join(map(str, range(n_tokens))) + "}\n"
    return parse_program(vocab + CARRIED + output + "\n")


def test_float64_is_advised_when_it_compiles():
    small = program(3, "output y")
    with pytest.raises(RaspPrecisionError, match="compile with --dtype float64"):
        compile(small)
    compile(small, dtype=np.float64)  # the advice works


def test_float64_is_not_advised_when_the_model_would_be_too_large_anyway():
    """300 tokens x 6 positions: a table of 1,800 values, too large in any dtype: the size is
    checked before precision, so the refusal names the size and never advises float64."""
    large = program(300, "pair = sequence_map(lambda t, i: t * 1000 + i, tokens, indices)\n"
                         "output sequence_map(lambda r, p: p if r >= 0 else 0, y, pair)")
    for dtype in (np.float32, np.float64):
        with pytest.raises(RaspError, match="parameters") as refused:
            compile(large, dtype=dtype)
        assert "float64" not in refused.value.message
