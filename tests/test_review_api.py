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


def test_python_functions_may_return_numpy_scalars():
    """Research code computes with NumPy: a function returning np.int64, np.bool_ or np.float32
    (alone or in a tuple) means the Python value it holds."""
    import numpy as np

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


def test_a_python_function_returning_none_gives_none_in_the_model_too():
    """The compiled model gave 2 where the interpreter gave none (a map returning None for 1):
    None from a function is none at that position, in the interpreter and the model alike."""
    partial = rasp.Map(lambda x: None if x == 1 else x, rasp.tokens).named("partial")
    model = rc.compile_rasp_to_model(partial, vocab={1, 2}, max_seq_len=2)
    assert rasp.evaluate(partial, [1, 2]) == rc.run(model, [1, 2]) == [None, 2]


def test_a_function_that_is_not_callable_is_refused_when_the_program_is_built():
    import pytest

    from rasp_compile import ir

    for build in (lambda: ir.Select(ir.tokens, ir.tokens, 5), lambda: rasp.Map(3, rasp.tokens),
                  lambda: rasp.SequenceMap("x", rasp.tokens, rasp.indices),
                  lambda: rasp.Select(rasp.tokens, rasp.tokens, None)):
        with pytest.raises(TypeError, match="expected a function"):
            build()


def test_a_max_len_override_from_python_is_checked_like_the_command_lines():
    """rc.compile(text, max_len=-1) failed with an IndexError, "3" with a TypeError, 0 with a
    WeightsError about meta; 10**6 compiled a model the command line would refuse."""
    import pytest

    from rasp_compile import ir

    text = "vocab {a}\nmax_len 5\noutput tokens"
    program = ir.Program(ir.tokens, ("a",), 5)
    for max_len in (0, -1, "3", 2.5, True, 10**6):
        for source in (text, program):
            with pytest.raises(ValueError, match="max_len must be a whole number from 1 to 1,024"):
                rc.compile(source, max_len=max_len)
        with pytest.raises(ValueError, match="max_len must be"):
            rc.parse_program(text, max_len=max_len)
    assert rc.compile(text, max_len=1_024).meta["max_len"] == 1_024


def test_a_python_vocab_holding_equal_tokens_is_refused():
    """ir.Program(vocab=(1, True)): the value sets held one token, the model embedded two, and
    compiling a map of the tokens crashed with a KeyError inside the compiler."""
    import pytest

    from rasp_compile import ir

    for vocab in ((1, True), (1, 1.0), ("a", "a")):
        program = ir.Program(ir.Map(lambda t: str(t), ir.tokens), vocab, 2)
        with pytest.raises(rc.RaspError, match="which are equal to Python; keep one"):
            rc.compile(program)


def test_a_trace_of_too_many_tokens_says_max_len_not_n_ctx():
    import pytest

    model = rc.compile(rc.load_program(__import__("pathlib").Path(__file__).parent.parent / "programs" / "aab.rasp"))
    with pytest.raises(rc.InputError, match="an input of 7 tokens is longer than max_len 5"):
        rc.trace(model, list("aaaaaaa"))
