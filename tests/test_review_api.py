"""The Python APIs (`rasp_compile.rasp`, `rc.run`, `rc.trace`) on programs and inputs from an
outside review, each checked against the interpreter and a plain-Python expectation."""

from __future__ import annotations

import rasp_compile as rc
from rasp_compile import rasp


def test_a_map_of_a_numerical_map_keeps_its_none_to_zero_step():
    """numerical(Map(f, x)) is 0 where x is none; a map of it sees that 0. Composing the two maps
    (tracr's simplify) would make the result none there instead."""
    prev = rasp.Aggregate(rasp.Select(rasp.indices, rasp.indices, lambda k, q: k == q - 1), rasp.tokens)
    inner = rasp.numerical(rasp.Map(lambda x: 1, prev, simplify=False))
    outer = rasp.Map(lambda x: x + 10, inner)
    expected = [10, 11, 11]  # position 0 has no previous token: inner is 0 there
    assert rasp.evaluate(outer, ["a", "b", "a"]) == expected
    model = rc.compile_rasp_to_model(outer, vocab={"a", "b"}, max_seq_len=3)
    assert rc.run(model, ["a", "b", "a"]) == expected
