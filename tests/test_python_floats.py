"""A value a function returns is kept exactly as Python computed it, in the interpreter and in the
compiled model's labels, so a discrete answer built on it is Python's: tracr-style programs over
`math` functions, compared with plain Python by `==` (docs/language.md, "Floats";
docs/from_tracr.md). Means are exact rationals rounded once, the same in the interpreter and in
the inference."""

from __future__ import annotations

import itertools
import math
import random
from fractions import Fraction

import pytest

import rasp_compile as rc
from rasp_compile import rasp
from rasp_compile.element_fn import identity_key

VOCAB = (2, 3, 5, 7, 10)
MAX_LEN = 3
FUNCTIONS = {"sqrt": math.sqrt, "sin": math.sin, "cos": math.cos, "tan": math.tan, "atan": math.atan,
             "log": math.log, "exp": math.exp, "cbrt": math.cbrt, "cosh": math.cosh}
OTHER_WAY = {  # the same number computed another way, as research code often does
    "sqrt": lambda x: x ** 0.5, "sin": lambda x: math.cos(math.pi / 2 - x), "cos": lambda x: math.sin(math.pi / 2 - x),
    "tan": lambda x: math.sin(x) / math.cos(x), "atan": lambda x: math.asin(x / math.sqrt(1 + x * x)),
    "log": lambda x: math.log2(x) * math.log(2), "exp": lambda x: math.e ** x, "cbrt": lambda x: x ** (1 / 3),
    "cosh": lambda x: (math.exp(x) + math.exp(-x)) / 2,
}


def inputs():
    for n in range(1, MAX_LEN + 1):
        yield from map(list, itertools.product(VOCAB, repeat=n))


def exactly(values: list) -> list:
    return [identity_key(v) for v in values]


def agrees_with_python(sop, python) -> None:
    """Model, interpreter and plain Python give the same values, type and bits, on every input."""
    model = rc.compile_rasp_to_model(sop, vocab=set(VOCAB), max_seq_len=MAX_LEN)
    for xs in inputs():
        want = exactly(python(xs))
        assert exactly(rasp.evaluate(sop, xs)) == want, xs
        assert exactly(rc.run(model, xs)) == want, xs


def test_the_square_root_computed_two_ways_agrees_with_tracr_and_python():
    root = rasp.Map(lambda x: x ** 0.5, rasp.tokens)
    same = rasp.SequenceMap(lambda r, x: r == math.sqrt(x), root, rasp.tokens)
    model = rc.compile_rasp_to_model(same, vocab={10, 2, 4}, max_seq_len=3)
    assert rasp.evaluate(same, [10, 2, 4]) == rc.run(model, [10, 2, 4]) == [True, True, True]


@pytest.mark.parametrize("name", FUNCTIONS)
def test_a_math_function_s_values_are_pythons(name):
    f = FUNCTIONS[name]
    agrees_with_python(rasp.Map(f, rasp.tokens), lambda xs: [f(x) for x in xs])


@pytest.mark.slow
@pytest.mark.parametrize("name", FUNCTIONS)
def test_a_discrete_answer_on_a_math_function_is_pythons(name):
    """`r == g(x)` with r computed another way, and the last digits of r: each flips if r moves by
    one bit."""
    f, g = FUNCTIONS[name], OTHER_WAY[name]
    r = rasp.Map(g, rasp.tokens)
    agrees_with_python(rasp.SequenceMap(lambda a, x: a == f(x), r, rasp.tokens), lambda xs: [g(x) == f(x) for x in xs])
    digits = rasp.Map(lambda a: int(abs(a) * 1e15) % 100, rasp.Map(f, rasp.tokens))
    agrees_with_python(digits, lambda xs: [int(abs(f(x)) * 1e15) % 100 for x in xs])


@pytest.mark.parametrize("name", ["sqrt", "atan", "cbrt"])
def test_a_mean_of_a_math_function_is_the_exact_mean_rounded_once(name):
    f = FUNCTIONS[name]
    values = rasp.numerical(rasp.Map(f, rasp.tokens))
    mean = rasp.numerical(rasp.Aggregate(rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ), values, default=0))
    above = rasp.Map(lambda m: int(m * 1e15) % 100, mean)  # reads every bit of the mean

    def python(xs):
        ys = [f(x) for x in xs]
        return [int(float(sum(map(Fraction, ys[:i + 1])) / (i + 1)) * 1e15) % 100 for i in range(len(xs))]

    agrees_with_python(above, python)


def test_a_sum_that_is_not_its_decimal_stays_as_python_computed_it():
    text = "vocab {0, 1}\nmax_len 2\noutput map(lambda x: x + 0.1 + 0.2, tokens)"
    program = rc.parse_program(text)
    model = rc.compile(program)
    assert rc.evaluate(program, [0, 1]) == rc.run(model, [0, 1]) == [0 + 0.1 + 0.2, 1 + 0.1 + 0.2]
    assert rc.run(model, [0])[0] != 0.3


def test_means_of_floats_agree_between_interpreter_and_inference_on_random_values():
    """Each mean the interpreter computes is one of those the inference found, bit for bit."""
    from rasp_compile.frontend.means import possible_means
    from rasp_compile.tools.interpret.rules import exact_mean

    rng = random.Random(7)
    for _ in range(200):
        pool = [rng.choice([math.sqrt(rng.randint(1, 50)), rng.random(), rng.randint(-3, 3), 0.1, 1 / 3])
                for _ in range(3)]
        chosen = [rng.choice(pool) for _ in range(rng.randint(1, 4))]
        mean = exact_mean(chosen)
        assert mean == float(sum(map(Fraction, chosen)) / len(chosen))
        assert mean in possible_means(frozenset(pool), 4, rasp.tokens)


def outputs(source: str, tokens: list) -> tuple[list, list]:
    """The interpreter's and the compiled model's outputs of the program `source` on `tokens`."""
    program = rc.parse_program(source)
    return rc.evaluate(program, tokens), rc.run(rc.compile(program), tokens)


def test_a_float_a_lambda_returns_is_kept_as_python_computed_it():
    source = """vocab {0, 1}
max_len 2
output map(lambda x: str(x + 0.1 + 0.2) + "," + str(0.1 + 0.2 == 0.3) + "," + str(x + 0.1 + 0.2 - 0.3), tokens)
"""
    interpreted, compiled = outputs(source, [0, 1])
    assert interpreted == compiled == ["0.30000000000000004,false,5.551115123125783e-17",
                                       "1.3,false,1.0"]
    interpreted, compiled = outputs("vocab {0}\nmax_len 1\noutput map(lambda x: x + 0.1 + 0.2, tokens)", [0])
    assert interpreted == compiled == [0 + 0.1 + 0.2] != [0.3]
