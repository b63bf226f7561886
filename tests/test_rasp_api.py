"""`from rasp_compile import rasp`: tracr's names over our IR, and `rc.compile_rasp_to_model`.

tracr's library programs, ported by changing their import line (tests/tracr_style_programs.py),
must compile, and on seeded random inputs the model, our interpreter and a plain-Python reference
must all agree. No tracr needed.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

import rasp_compile as rc
from rasp_compile import ir, rasp
from rasp_compile.errors import RaspTypeError, RaspValueError
from rasp_compile.frontend.from_tracr import MissingExtraError
from rasp_compile.testing.differential import assert_agree, every_input, same_value

import tracr_style_programs as ported
from tracr_style_programs import CASES, REFERENCES

N_INPUTS = 24


def same(got: list, expected: list, numerical: bool) -> bool:
    """Position by position: numbers of a numerical s-op within float32 rounding, values of a
    categorical one equal (and None where None)."""
    return len(got) == len(expected) and all(same_value(e, g, numerical) for e, g in zip(expected, got))


@pytest.mark.parametrize("name", sorted(CASES))
def test_ported_library_program_compiles_and_agrees(name):
    case = CASES[name]
    sop = case.build(ported)
    model = rc.compile_rasp_to_model(sop, vocab=set(case.vocab), max_seq_len=case.max_len)
    for xs in case.inputs(seed=16, count=N_INPUTS):
        expected = REFERENCES["reverse" if name == "readme" else name](xs)
        interpreted = rasp.evaluate(sop, xs)
        numerical = sop.encoding == ir.NUMERICAL
        assert same(interpreted, expected, numerical), (name, xs, interpreted, expected)
        assert same(rc.run(model, xs), interpreted, numerical), (name, xs)


@pytest.mark.parametrize("name", ["frac_prevs", "shift_by", "detect_pattern"])
def test_causal_library_programs_agree_with_their_references(name):
    """The programs tracr's library marks as causal-safe give the same answers compiled causally."""
    case = CASES[name]
    sop = case.build(ported)
    model = rc.compile_rasp_to_model(sop, vocab=case.vocab, max_seq_len=case.max_len, causal=True)
    assert model.meta["causal"] is True
    for xs in case.inputs(seed=7, count=N_INPUTS):
        assert same(rc.run(model, xs), REFERENCES[name](xs), sop.encoding == ir.NUMERICAL), xs


def test_operators_build_maps_and_sequence_maps():
    xs = [3, 1, 2]
    cases = {
        rasp.tokens == 1: [False, True, False], rasp.tokens != 1: [True, False, True],
        rasp.tokens < 2: [False, True, False], rasp.tokens <= 2: [False, True, True],
        rasp.tokens > 2: [True, False, False], rasp.tokens >= 2: [True, False, True],
        rasp.tokens > 1: [True, False, True], rasp.tokens + 1: [4, 2, 3], 1 + rasp.tokens: [4, 2, 3],
        rasp.tokens - 1: [2, 0, 1], 10 - rasp.tokens: [7, 9, 8], rasp.tokens * 2: [6, 2, 4],
        2 * rasp.tokens: [6, 2, 4], rasp.tokens / 2: [1.5, 0.5, 1.0], 6 / rasp.tokens: [2.0, 6.0, 3.0],
        rasp.tokens // 2: [1, 0, 1], 7 // rasp.tokens: [2, 7, 3], rasp.tokens % 2: [1, 1, 0],
        7 % rasp.tokens: [1, 0, 1], -rasp.tokens: [-3, -1, -2], ~(rasp.tokens == 1): [True, False, True],
        rasp.tokens + rasp.indices: [3, 2, 4], rasp.tokens - rasp.indices: [3, 0, 0],
        rasp.tokens * rasp.indices: [0, 1, 4], rasp.indices < rasp.tokens: [True, False, False],
        rasp.tokens == rasp.indices + 1: [False, False, False],
        (rasp.tokens > 1) & (rasp.indices > 0): [False, False, True],
        (rasp.tokens > 2) | (rasp.indices > 1): [True, False, True],
        (rasp.tokens > 1) & True: [True, False, True], False | (rasp.tokens > 2): [True, False, False],
    }
    for sop, expected in cases.items():
        assert isinstance(sop, ir.SOp)
        assert rasp.evaluate(sop, xs) == expected, sop.fn.text
        model = rc.compile_rasp_to_model(sop, vocab={1, 2, 3}, max_seq_len=3)
        assert rc.run(model, xs) == expected, sop.fn.text


def test_selector_operators_combine_selectors():
    before = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LT)
    same_token = rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ)
    xs = ["a", "b", "a", "a"]
    for selector, count in [(before & same_token, lambda q: xs[:q].count(xs[q])),
                            (before | same_token, lambda q: q + xs[q:].count(xs[q])),
                            (~before, lambda q: len(xs) - q)]:
        width = rasp.SelectorWidth(selector)
        expected = [count(q) for q in range(len(xs))]
        assert rasp.evaluate(width, xs) == expected
        assert rc.run(rc.compile_rasp_to_model(width, vocab={"a", "b"}, max_seq_len=4), xs) == expected
    assert rasp.evaluate(before, [1, 2]) == [[False, False], [True, False]]  # a selector: rows per query


def test_identity_not_equality_tells_nodes_apart():
    a, b = rasp.tokens + 1, rasp.tokens + 1
    assert len({a, b, a}) == 2 and {a: 1}[a] == 1
    with pytest.raises(TypeError, match="no truth value"):
        bool(a == b)
    with pytest.raises(TypeError, match="no truth value"):
        a in [b]  # noqa: B015 (a list would compare with ==: refused, not silently True)
    with pytest.raises(TypeError, match="not NoneType"):
        rasp.tokens == None  # noqa: E711, B015
    with pytest.raises(TypeError, match="not list"):
        rasp.tokens + [1]


def test_named_numerical_and_categorical_return_new_nodes():
    base = rasp.tokens == "a"
    named = base.named("is_a")
    assert named is not base and named.label == "is_a" and base.label is None and named.name == "is_a"
    assert base.name == "map"
    number = rasp.numerical(named)
    assert rasp.is_numerical(number) and rasp.is_categorical(named) and number.label == "is_a"
    assert rasp.get_encoding(rasp.categorical(number)) is rasp.Encoding.CATEGORICAL
    both = rasp.annotate(base, name="n", encoding=rasp.Encoding.NUMERICAL)
    assert both.label == "n" and both.encoding == ir.NUMERICAL
    with pytest.raises(TypeError, match="color"):
        rasp.annotate(base, color="red")


def test_an_encoding_is_refused_for_a_selector_which_nothing_would_read_it_from():
    """tracr encodes s-ops only; a copy of a selector carrying an encoding would compile as the
    selector does, whatever the encoding said."""
    select = rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ)
    with pytest.raises(TypeError, match="annotate's encoding= is for an s-op; a selector has no encoding"):
        rasp.annotate(select, encoding=rasp.Encoding.NUMERICAL)
    for encode in (rasp.numerical, rasp.categorical):
        with pytest.raises(TypeError, match=f"{encode.__name__} expects an s-op, got a selector"):
            encode(select)
    named = rasp.annotate(select, name="same")  # a name is any expression's
    assert named is not select and named.label == "same" and select.label is None
    width = rasp.numerical(rasp.SelectorWidth(named))
    assert rasp.evaluate(width, [1, 2, 1]) == [2, 1, 2]


def test_map_simplifies_like_tracr_unless_asked_not_to():
    inner = rasp.Map(lambda x: x + 1, rasp.tokens)
    outer = rasp.Map(lambda x: x * 2, inner)
    assert outer.inner is rasp.tokens and rasp.evaluate(outer, [1, 2]) == [4, 6]
    kept = rasp.Map(lambda x: x * 2, inner, simplify=False)
    assert kept.inner is inner and rasp.evaluate(kept, [1, 2]) == [4, 6]


def test_full_constant_sop_and_constant_selector():
    xs = [5, 6, 7]
    full = rasp.Full(4)
    assert full.fill == 4 and rasp.evaluate(full + rasp.tokens, xs) == [9, 10, 11]
    constant = rasp.ConstantSOp(["x", "y", "z"])
    picked = rasp.Aggregate(rasp.ConstantSelector([[0, 1, 0], [0, 0, 1], [1, 0, 0]]), rasp.tokens)
    for sop, expected in [(full, [4, 4, 4]), (constant, ["x", "y", "z"]), (picked, [6, 7, 5])]:
        assert rasp.evaluate(sop, xs) == expected
        assert rc.run(rc.compile_rasp_to_model(sop, vocab={5, 6, 7}, max_seq_len=3), xs) == expected
    with pytest.raises(RaspValueError, match="fails on"):  # max_seq_len beyond the constant's values
        rc.compile_rasp_to_model(constant, vocab={5}, max_seq_len=4)


def test_comparison_members_call_as_predicates():
    assert rasp.Comparison.LT(1, 2) and not rasp.Comparison.GEQ(1, 2) and rasp.Comparison.TRUE("a", 3)
    assert {c.name for c in rasp.Comparison} == {"EQ", "NEQ", "LT", "LEQ", "GT", "GEQ", "TRUE", "FALSE"}


def test_compile_rasp_to_model_arguments():
    sop = (rasp.tokens == "a").named("is_a")
    model = rc.compile_rasp_to_model(sop, vocab={"a", "b"}, max_seq_len=4, compiler_bos="BOS",
                                     compiler_pad="PAD", mlp_exactness=10)
    assert model.meta["vocab"][model.meta["bos_id"]] == "BOS" and model.meta["output"]["name"] == "is_a"
    assert rc.run(model, ["b", "a"]) == [False, True]
    default = rc.compile_rasp_to_model(sop, vocab={"a", "b"}, max_seq_len=4)
    assert default.meta["vocab"][default.meta["bos_id"]] == "compiler_bos"
    for role, token in [("compiler_bos", "a"), ("compiler_pad", "b")]:
        with pytest.raises(ValueError, match="must not be in the vocab"):
            rc.compile_rasp_to_model(sop, vocab={"a", "b"}, max_seq_len=4, **{role: token})
    with pytest.raises(TypeError, match="compiles an s-op"):
        rc.compile_rasp_to_model(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ), {"a"}, 3)
    for vocab, max_seq_len, message in [((), 3, "vocab is empty"), ({"a", None}, 3, "not None"),
                                        ({"a"}, 0, "max_seq_len"), ({"a"}, 2.5, "max_seq_len")]:
        with pytest.raises(ValueError, match=message):
            rc.compile_rasp_to_model(sop, vocab=vocab, max_seq_len=max_seq_len)
    once = rc.compile_rasp_to_model(sop, vocab=(token for token in "ba"), max_seq_len=2)  # any iterable
    assert once.meta["vocab"][:2] == ["a", "b"]


def test_tuple_intermediates_compile_and_a_tuple_output_is_refused():
    pair = rasp.SequenceMap(lambda t, i: (t, i % 2), rasp.tokens, rasp.indices)
    previous = rasp.Aggregate(rasp.Select(rasp.indices, rasp.indices, lambda k, q: k == q - 1), pair)
    picked = rasp.Map(lambda p: p[0] if p[1] else "-", previous)
    model = rc.compile_rasp_to_model(picked, vocab={"a", "b"}, max_seq_len=5)
    for xs in (["a"], ["a", "b"], ["b", "a", "b", "b", "a"]):
        expected = [None] + [xs[q - 1] if (q - 1) % 2 else "-" for q in range(1, len(xs))]
        assert rasp.evaluate(picked, xs) == expected == rc.run(model, xs)
    with pytest.raises(RaspTypeError, match="tuple values"):
        rc.compile_rasp_to_model(pair, vocab={"a", "b"}, max_seq_len=5)


def test_without_tracr_from_tracr_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "tracr", None)  # `import tracr...` now raises ImportError
    monkeypatch.setitem(sys.modules, "tracr.rasp", None)
    with pytest.raises(MissingExtraError) as raised:
        rc.from_tracr(object())
    message = str(raised.value)
    assert "\n" not in message and "pip install 'rasp-compile[tracr]'" in message
    assert raised.value.__cause__ is None and raised.value.__suppress_context__


def test_programs_tracr_refuses_compile_here_and_agree_on_every_input():
    """docs/from_tracr.md, "Differences": a numerical mean of values other than 0 and 1, a
    categorical aggregate with a default, selects and sequence_maps of numerical s-ops."""
    upto = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ)
    number = rasp.numerical(rasp.tokens + 0)
    programs = [
        (rasp.numerical(rasp.Aggregate(upto, rasp.numerical(rasp.tokens * 1.5), default=0)), (1, 2, 3)),
        (rasp.Aggregate(rasp.Select(rasp.indices, rasp.indices, lambda k, q: k == q + 1), rasp.tokens, default="z"),
         ("a", "b", "z")),
        (rasp.SelectorWidth(rasp.Select(number, rasp.numerical(rasp.indices + 0), rasp.Comparison.LT)), (1, 2, 3)),
        (rasp.numerical(rasp.SequenceMap(lambda a, b: a * b, number, rasp.numerical(rasp.indices + 0))), (1, 2, 3)),
    ]
    for sop, vocab in programs:
        program = ir.Program(output=sop, vocab=vocab, max_len=4)
        assert_agree(rc.compile_rasp_to_model(sop, vocab=vocab, max_seq_len=4), program, every_input(vocab, 4))


def test_a_function_returning_no_value_is_located():
    listy = rasp.Map(lambda x: [x], rasp.tokens)
    with pytest.raises(RaspValueError, match=r"fails on \(1\): it returns \[1\], which is no value"):
        rc.compile_rasp_to_model(listy, vocab={1}, max_seq_len=2)


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


def test_python_functions_may_return_numpy_scalars():
    """Research code computes with NumPy: a function returning np.int64, np.bool_ or np.float32
    (alone or in a tuple) means the Python value it holds."""
    functions = {"int64": (lambda x: np.int64(x) * 2, [2, 4]),
                 "bool_": (lambda x: np.bool_(x > 1), [False, True]),
                 "float32": (lambda x: np.float32(x) / 2, [0.5, 1.0]),
                 "tuple": (lambda x: (np.int64(x), 1), None)}
    for name, (function, expected) in functions.items():
        sop = rasp.Map(function, rasp.tokens)
        if expected is None:  # a tuple is an intermediate value: read its first item
            sop, expected = rasp.Map(lambda t: t[0] + t[1], sop, simplify=False), [2, 3]
        model = rc.compile_rasp_to_model(sop, vocab={1, 2}, max_seq_len=2)
        assert rasp.evaluate(sop, [1, 2]) == rc.run(model, [1, 2]) == expected, name
        assert all(type(v) in (int, float, bool) for v in rasp.evaluate(sop, [1, 2])), name


def test_a_function_that_is_not_callable_is_refused_when_the_program_is_built():
    for build in (lambda: ir.Select(ir.tokens, ir.tokens, 5), lambda: rasp.Map(3, rasp.tokens),
                  lambda: rasp.SequenceMap("x", rasp.tokens, rasp.indices),
                  lambda: rasp.Select(rasp.tokens, rasp.tokens, None)):
        with pytest.raises(TypeError, match="expected a function"):
            build()
