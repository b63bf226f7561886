"""tracr's surface beyond its `rasp` names, side by side with tracr itself: maps returning None,
`model.apply(["BOS", ...]).decoded` and `.residuals`, and `program(xs)` (docs/from_tracr.md).

Needs the `[tracr]` extra (tests/extras.py); the same behaviours without tracr are tested in
tests/test_functions_returning_none.py and tests/test_apply.py.
"""

from __future__ import annotations

import itertools

import pytest

import rasp_compile as rc

from extras import require

tracr_rasp = require("tracr.rasp.rasp", "tracr")
tracr_compiling = require("tracr.compiler.compiling", "tracr")
tracr_lib = require("tracr.compiler.lib", "tracr")


def every_input(vocab, max_len):
    for n in range(1, max_len + 1):
        yield from map(list, itertools.product(vocab, repeat=n))


def partial_programs():
    """tracr programs whose maps return None for some inputs, as published suites write them."""
    t = tracr_rasp
    inverse = t.Map(lambda x: None if x == 0 else 12 // x, t.tokens).named("inverse")
    length = tracr_lib.make_length()
    share = t.numerical(t.Map(lambda n: 1 / n, length)).named("share")  # n == 0 cannot occur
    guarded = t.SequenceMap(lambda x, i: None if x == i else x + i, t.tokens, t.indices).named("guarded")
    shifted = t.Aggregate(t.Select(t.indices, t.indices, lambda k, q: k == q - 1), inverse).named("shifted")
    return {"inverse": inverse, "guarded": guarded, "shifted": shifted,
            "label": t.Map(lambda x: {1: "one", 2: "two"}.get(x), t.tokens).named("label"), "share": share}


@pytest.mark.parametrize("name", sorted(partial_programs()))
def test_a_map_returning_none_converts_with_tracrs_meaning(name):
    program = partial_programs()[name]
    ours = rc.from_tracr(program)
    model = rc.compile_rasp_to_model(ours, vocab={0, 1, 2, 3}, max_seq_len=3)
    for xs in every_input([0, 1, 2, 3], 3):
        expected = tracr_rasp.evaluate(program, xs)
        assert rc.run(model, xs) == pytest.approx(expected) and rc.rasp.evaluate(ours, xs) == pytest.approx(expected), xs


def test_tracrs_compiled_model_agrees_where_it_is_not_none():
    """tracr's model writes nothing where a map returns None (its decoding then reads the first
    value); everywhere else it, tracr's evaluator and our model give the same values."""
    program = partial_programs()["inverse"]
    theirs = tracr_compiling.compile_rasp_to_model(program, vocab={0, 1, 2, 3}, max_seq_len=3, compiler_bos="BOS")
    ours = rc.compile_rasp_to_model(program, vocab={0, 1, 2, 3}, max_seq_len=3, compiler_bos="BOS")
    for xs in every_input([0, 1, 2, 3], 3):
        expected = tracr_rasp.evaluate(program, xs)
        decoded = theirs.apply(["BOS", *xs]).decoded
        assert ours.apply(["BOS", *xs]).decoded == ["BOS", *expected]
        assert all(d == e for d, e in zip(decoded[1:], expected) if e is not None), xs


@pytest.mark.parametrize("build", [lambda: tracr_lib.make_reverse(tracr_rasp.tokens), tracr_lib.make_hist],
                         ids=["make_reverse", "make_hist"])
def test_apply_decoded_is_tracrs(build):
    program = build()
    theirs = tracr_compiling.compile_rasp_to_model(program, vocab={"a", "b"}, max_seq_len=4, compiler_bos="BOS")
    ours = rc.compile_rasp_to_model(program, vocab={"a", "b"}, max_seq_len=4, compiler_bos="BOS")
    for xs in every_input(["a", "b"], 3):
        theirs_out, ours_out = theirs.apply(["BOS", *xs]), ours.apply(["BOS", *xs])
        assert ours_out.decoded == theirs_out.decoded
        assert len(ours_out.residuals) == 2 * ours.n_layers and ours_out.residuals[0].shape == (1, len(xs) + 1, ours.d_model)
        assert len(theirs_out.residuals) == len(theirs_out.layer_outputs)  # tracr's: one per sub-layer too


def test_program_of_xs_evaluates_as_tracrs_does():
    program = tracr_lib.make_sort_unique(tracr_rasp.tokens, tracr_rasp.tokens)
    ours = rc.from_tracr(program)
    for xs in ([3, 1, 2], [2, 3]):
        assert rc.rasp.evaluate(ours, xs) == program(xs) == sorted(xs)
