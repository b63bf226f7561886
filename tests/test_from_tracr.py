"""`rc.from_tracr`: live tracr programs (tracr's own `lib` and README example) compile through our
compiler and predict what tracr's own evaluator (`rasp.evaluate`) says, on seeded random inputs.

Needs the `[tracr]` extra (`pip install -e '.[tracr]'`, as `.ci/run` does); the module is skipped
only when tracr cannot be imported (the one-line message without tracr: tests/test_rasp_api.py).
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest

import rasp_compile as rc
from rasp_compile import ir
from rasp_compile.testing.differential import same_value

from extras import require
from tracr_style_programs import CASES


tracr_rasp = require("tracr.rasp.rasp", "tracr")
tracr_lib = require("tracr.compiler.lib", "tracr")

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


def test_a_tracr_comparison_of_two_sops_is_refused_with_what_to_write():
    """tracr's `<` takes a constant: between two s-ops it makes a map returning tracr maps."""
    from rasp_compile.errors import RaspValueError

    with pytest.raises(RaspValueError, match="compare two s-ops with a SequenceMap"):
        rc.compile_rasp_to_model(tracr_rasp.tokens < tracr_rasp.indices, vocab={1, 2}, max_seq_len=3)


def test_what_is_not_a_tracr_expression_is_refused_in_one_line():
    with pytest.raises(TypeError, match="converts tracr RASP expressions, not int"):
        rc.from_tracr(3)


def _unary_forms(r: Any, c: int) -> list[Callable[[Any], Any]]:
    """Unary forms of an s-op and the constant c, in the `rasp` module `r` (c is a parameter here, so
    each lambda keeps its own c, also the Map's, which runs after the loop has moved on)."""
    return [lambda s: s + c, lambda s: s - c, lambda s: s * c, lambda s: s < c,
            lambda s: s == c, lambda s: ~(s > c), lambda s: r.Map(lambda x: x // c, s)]


def _binary_forms(r: Any, a: Any, b: Any, c: int) -> list[Callable[[], Any]]:
    """Forms of two s-ops (and the constant c)."""
    return [lambda: a + b, lambda: a - b, lambda: (a == c) & (b < c),
            lambda: r.SequenceMap(lambda x, y: x * 2 + y, a, b)]


def _selector_forms(selector: Any, other: Any) -> list[Callable[[], Any]]:
    """Selectors combined from two."""
    return [lambda: selector & other, lambda: selector | other, lambda: ~selector]


def random_program(r, rng):
    """A random program over int tokens 0..3, built with the `rasp` module `r` (tracr's or ours:
    the same calls build both). It stays where tracr's meaning and ours agree (no none reaches a
    select; a categorical aggregate selects at most one key; a numerical mean comes last), and
    mixes operators, maps, sequence maps, widths of combined selectors and shifts."""
    pool = [(r.tokens, False), (r.indices, False)]  # (s-op, may be none)
    comparisons = list(r.Comparison)
    for _ in range(rng.randint(2, 6)):
        (a, a_none), (b, b_none) = rng.choice(pool), rng.choice(pool)
        c = rng.randint(1, 3)
        kind = rng.randrange(6)
        if kind == 0:
            new = rng.choice(_unary_forms(r, c))(a), a_none
        elif kind == 1 and a is not b:
            new = rng.choice(_binary_forms(r, a, b, c))(), a_none or b_none
        elif kind in (2, 3) and not (a_none or b_none):
            selector = r.Select(a, b, rng.choice(comparisons))
            if kind == 3:
                other = r.Select(r.indices, r.indices, rng.choice(comparisons))
                selector = rng.choice(_selector_forms(selector, other))()
            new = r.SelectorWidth(selector), False
        elif kind == 4:
            new = r.Aggregate(r.Select(r.indices, r.indices, lambda k, q, d=c: k == q - d), a), True
        else:
            continue
        pool.append(new)
    last, last_none = pool[-1]
    if not last_none and rng.random() < 0.3:
        upto = r.Select(r.indices, r.indices, r.Comparison.LEQ)
        last = r.numerical(r.Aggregate(upto, r.numerical(last > 1), default=0))
    return last


@pytest.mark.parametrize("seed", range(40))
def test_random_tracr_programs_convert_and_agree_with_tracr(seed):
    import random

    from rasp_compile import rasp as ours

    built = [random_program(r, random.Random(seed)) for r in (tracr_rasp, ours)]
    vocab, max_len = (0, 1, 2, 3), 5
    sops = [rc.from_tracr(built[0]), built[1]]
    models = [rc.compile_rasp_to_model(sop, vocab=vocab, max_seq_len=max_len) for sop in sops]
    numerical = tracr_rasp.is_numerical(built[0])
    rng = random.Random(seed)
    for _ in range(20):
        xs = [rng.choice(vocab) for _ in range(rng.randint(1, max_len))]
        expected = tracr_rasp.evaluate(built[0], xs)
        for model in models:
            got = rc.run(model, xs)
            assert len(got) == len(expected)
            assert all(same_value(e, g, numerical) for e, g in zip(expected, got)), (seed, xs, expected, got)


def test_our_rasp_has_every_name_tracrs_library_uses():
    import inspect
    import re

    from rasp_compile import rasp as ours

    used = set(re.findall(r"\brasp\.(\w+)", inspect.getsource(tracr_lib)))
    assert used and used <= set(dir(ours)), used - set(dir(ours))
