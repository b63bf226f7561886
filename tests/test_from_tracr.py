"""`rc.from_tracr`: live tracr programs (tracr's own `lib` and README example) compile through our
compiler and predict what tracr's own evaluator (`rasp.evaluate`) says, on seeded random inputs.

Needs the `[tracr]` extra (`pip install -e '.[tracr]'`, as `.ci/run` does); the module is skipped
only when tracr cannot be imported (the one-line message without tracr: tests/test_rasp_api.py).
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

import rasp_compile as rc
from rasp_compile import ir

from differential import same_value
from tracr_style_programs import CASES


tracr_rasp = pytest.importorskip("tracr.rasp.rasp", reason="the [tracr] extra is not installed")
tracr_lib = pytest.importorskip("tracr.compiler.lib")

TRACR = SimpleNamespace(**{name: getattr(tracr_lib, name) for name in dir(tracr_lib) if not name.startswith("_")})
"""tracr's own `lib` (with its `rasp`), as the cases of tracr_style_programs.py expect to build from."""

N_INPUTS = 30


@pytest.mark.parametrize("name", sorted(CASES))
def test_tracr_library_program_compiles_and_predicts_what_tracr_evaluates(name):
    case = CASES[name]
    program = case.build(TRACR)
    assert isinstance(program, tracr_rasp.SOp)  # tracr's own objects, not ours
    sop = rc.from_tracr(program)
    model = rc.compile_rasp_to_model(sop, vocab=set(case.vocab), max_seq_len=case.max_len)
    numerical = sop.encoding == ir.NUMERICAL
    assert numerical == tracr_rasp.is_numerical(program)
    for xs in case.inputs(seed=61, count=N_INPUTS):
        expected = tracr_rasp.evaluate(program, xs)
        for got in (rc.run(model, xs), rc.rasp.evaluate(sop, xs)):
            assert all(same_value(e, g, numerical) for e, g in zip(expected, got)), (name, xs, expected, got)
            assert len(got) == len(expected)


def test_compile_rasp_to_model_takes_a_tracr_program_directly():
    reverse = tracr_lib.make_reverse(tracr_rasp.tokens)
    model = rc.compile_rasp_to_model(reverse, vocab={"a", "b"}, max_seq_len=4, compiler_bos="BOS")
    assert rc.run(model, ["a", "a", "b"]) == ["b", "a", "a"] == tracr_rasp.evaluate(reverse, ["a", "a", "b"])
    assert model.meta["output"]["name"] == "reverse"


def test_conversion_keeps_names_encodings_sharing_and_predicates():
    hist = tracr_lib.make_hist()
    both = tracr_rasp.SequenceMap(lambda a, b: a + b, hist, hist + 1)
    sop = rc.from_tracr(both)
    assert sop.first.label == "hist" and sop.label is None  # an explicit name only
    assert sop.second.inner is sop.first  # one tracr node, one IR node
    assert sop.first.selector.predicate == "==" and sop.first.selector.keys is ir.tokens
    frac = rc.from_tracr(tracr_lib.make_frac_prevs(tracr_rasp.tokens == "x"))
    assert frac.encoding == ir.NUMERICAL and frac.sop.encoding == ir.NUMERICAL
    assert frac.selector.predicate == "<="
    custom = rc.from_tracr(tracr_rasp.Select(tracr_rasp.indices, tracr_rasp.indices, lambda k, q: k + 1 == q))
    assert isinstance(custom.predicate, ir.Fn) and custom.holds(1, 2) and not custom.holds(2, 2)


def test_constants_and_selector_combinations_convert():
    full = tracr_rasp.Full(2)
    lt = tracr_rasp.Select(tracr_rasp.indices, tracr_rasp.indices, tracr_rasp.Comparison.LT)
    eq = tracr_rasp.Select(tracr_rasp.tokens, tracr_rasp.tokens, tracr_rasp.Comparison.EQ)
    programs = [
        tracr_rasp.SequenceMap(lambda a, b: a * b, full, tracr_rasp.tokens),
        tracr_rasp.SelectorWidth(tracr_rasp.SelectorAnd(lt, eq)),
        tracr_rasp.SelectorWidth(tracr_rasp.SelectorOr(lt, eq)),
        tracr_rasp.SelectorWidth(tracr_rasp.SelectorNot(lt)),
        tracr_rasp.Aggregate(tracr_rasp.ConstantSelector([[0, 1, 0], [0, 0, 1], [1, 0, 0]]), tracr_rasp.tokens),
        tracr_rasp.ConstantSOp([7, 8, 9]),
    ]
    xs = [1, 3, 1]
    for program in programs:
        expected = tracr_rasp.evaluate(program, xs)
        model = rc.compile_rasp_to_model(program, vocab={1, 3}, max_seq_len=3)
        assert rc.run(model, xs) == expected, program


def test_what_is_not_a_tracr_expression_is_refused_in_one_line():
    with pytest.raises(TypeError, match="converts tracr RASP expressions, not int"):
        rc.from_tracr(3)
