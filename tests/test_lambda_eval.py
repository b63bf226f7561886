"""The lambda evaluator: Python's semantics on scalars, and what it refuses."""

import pytest

from rasp_compile.frontend import syntax_tree, lambda_eval
from rasp_compile.errors import RaspError, RaspNameError, RaspSyntaxError, RaspTypeError
from rasp_compile.frontend.lambda_eval import LambdaFailure
from rasp_compile.frontend.parse import parse


def make(lam: str, **constants):
    """The ir.Fn of a lambda written as text, with `constants` in scope."""
    call = parse(f"f = g({lam})").statements[0].value
    assert isinstance(call.args[0], syntax_tree.Lambda)

    def resolve(name: syntax_tree.Name):
        if name.name not in constants:
            raise RaspNameError(f"unknown name '{name.name}'", name.loc)
        return constants[name.name]

    return lambda_eval.make_fn(call.args[0], resolve)


@pytest.mark.parametrize(
    "lam, args, expected",
    [
        ("lambda x: x + 1", (2,), 3),
        ("lambda x: x / 2", (3,), 1.5),
        ("lambda x: x // 2", (-3,), -2),
        ("lambda x: x % 3", (-1,), 2),
        ("lambda x: -x * 2 - 1", (3,), -7),
        ("lambda x, y: x + y", ("a", "b"), "ab"),
        ("lambda x, y: x * y", (True, 3), 3),
        ("lambda x, y: x < y", ("a", "b"), True),
        ("lambda x, y: x == y", (1, 1.0), True),
        ("lambda x, y: x != y", ("1", 1), True),
        ("lambda x, y: x >= y and y > 0", (2, 1), True),
        ("lambda x, y: x or y", (0, "z"), "z"),
        ("lambda x, y: x and y", ("", 5), ""),
        ("lambda x: not x", (0,), True),
        ("lambda x: not x == 1", (1,), False),
        ("lambda x: 1 + 2 * x", (3,), 7),
        ("lambda x: (1 + 2) * x", (3,), 9),
        ("lambda x: 'big' if x > 2 else 'small' if x > 0 else 'none'", (1,), "small"),
        ("lambda x: min(x, 3, 2)", (5,), 2),
        ("lambda x: max(x, 0)", (-4,), 0),
        ("lambda x: abs(x)", (-4.5,), 4.5),
        ("lambda x: round(x)", (2.5,), 2),
        ("lambda x: round(x, 1)", (2.25,), 2.2),
        ("lambda x: round(x, -2)", (1250,), 1200),
        ("lambda x: round(x, -1000000000)", (10**18,), 0),  # was 10**(10**9): minutes
        ("lambda x: round(x, -1000000000)", (-1.5e300,), -0.0),
        ("lambda x: int(x)", ("12",), 12),
        ("lambda x: float(x) / 4", (1,), 0.25),
        ("lambda x: true if x else false", (1,), True),
        ("lambda x: x + k", (1,), 11),
        ('lambda d: "0123"[d]', (2,), "2"),
        ('lambda d: ("a", "b")[d]', (-1,), "b"),
        ("lambda t: t[0] + t[-1]", ("abc",), "ac"),
        ("lambda x: x in (1, 2)", (2.0,), True),
        ("lambda x: x not in (1, 2)", (3,), True),
        ('lambda t: t in "abc"', ("bc",), True),
        ('lambda t: t not in ("(", "[")', ("(",), False),
        ("lambda x: x in ()", (1,), False),
        ("lambda t: len(t)", ("abc",), 3),
        ("lambda x: len((x, x, (x,)))", (1,), 3),
        ("lambda x: str(x)", (1.5,), "1.5"),
        ("lambda x: str(x) + str(x > 0)", (3,), "3true"),
        ('lambda x: str(("a", x, (true,)))', (2,), '("a", 2, (true,))'),
        ("lambda x: ((1, 2) + (x,))[2]", (7,), 7),
        ("lambda x: (1, x) < (1, 3)", (2,), True),
    ],
)
def test_semantics_are_pythons(lam, args, expected):
    result = make(lam, k=10)(*args)
    assert result == expected and type(result) is type(expected)


def test_and_or_short_circuit():
    fn = make("lambda x: x != 0 and 10 / x > 1")
    assert fn(0) is False and fn(5) is True
    assert make("lambda x: x == 0 or 10 / x > 1")(0) is True


def test_fn_keeps_text_and_location():
    fn = make("lambda k,   q: k == q - 1")
    assert fn.text == "lambda k,   q: k == q - 1" and (fn.loc.line, fn.loc.col) == (1, 7)


@pytest.mark.parametrize(
    "lam, args, message",
    [
        ("lambda x: x * 3", ("ab",), "string repetition is not allowed"),
        ("lambda x: 3 * x", ("ab",), "string repetition is not allowed"),
        ("lambda x: x % 3", ("%0999999d",), "string formatting is not allowed"),
        ("lambda x: x + x", ("a" * 6000,), "string result longer than 10,000 characters"),
        ("lambda x: x * x", (10**10,), "integer result larger than 10**18"),
        ("lambda x: int(x)", (1e30,), "integer result larger than 10**18"),
        ("lambda x: x * 1000000000000000000.0 * 1000000000000000000.0", (1e300,), "not a finite number"),
        ("lambda x: float(x)", ("inf",), "not a finite number"),
        ("lambda x: (x,) * 3", (1,), "tuple repetition is not allowed"),
        ("lambda x: (x, 1)", (1,), "the result is the tuple (1, 1)"),
        ('lambda d: "ab"[d]', (2,), 'index 2 is out of range for "ab" (length 2)'),
        ('lambda d: "ab"[d]', (-3,), "index -3 is out of range"),
        ('lambda d: "ab"[d]', (True,), "an index must be a whole number, not true"),
        ('lambda d: "ab"[d]', (1.0,), "an index must be a whole number, not 1.0"),
        ("lambda d: d[0]", (5,), "only a string or a tuple can be indexed, not 5"),
        ("lambda d: len(d)", (5,), "len takes a string or a tuple, not 5"),
        ("lambda d: d in 5", (5,), "'in' needs a string or a tuple on its right, not 5"),
        ('lambda d: d in "15"', (5,), "'in' a string needs a string on its left, not 5"),
    ],
)
def test_bombs_are_refused(lam, args, message):
    with pytest.raises(LambdaFailure) as caught:
        make(lam)(*args)
    assert message in str(caught.value)


@pytest.mark.parametrize(
    "lam, args, error",
    [
        ("lambda x: 1 / x", (0,), ZeroDivisionError),
        ("lambda x: x // 0", (1,), ZeroDivisionError),
        ("lambda x: x < 1", ("a",), TypeError),
        ("lambda x: -x", ("a",), TypeError),
        ("lambda x: int(x)", ("one",), ValueError),
    ],
)
def test_failures_raise_plain_exceptions(lam, args, error):
    # lambda_calls.call_checked turns these into a located RaspValueError naming the values.
    with pytest.raises(error):
        make(lam)(*args)


@pytest.mark.parametrize(
    "lam, error, message",
    [
        ("lambda x: x.real", RaspSyntaxError, "unexpected character '.'"),
        ("lambda x: x[0:1]", RaspSyntaxError, "unexpected ':'"),
        ("lambda x: x[]", RaspSyntaxError, "unexpected ']'"),
        ("lambda x: x ** 2", RaspSyntaxError, "unexpected '*'"),
        ("lambda x: lambda y: y", RaspSyntaxError, "'lambda' is a keyword"),
        ("lambda x: __import__('os')", RaspTypeError, "'__import__' is not one of them"),
        ("lambda x: eval('1')", RaspTypeError, "'eval' is not one of them"),
        ("lambda x: ord(x)", RaspTypeError, "'ord' is not one of them"),
        ("lambda x: tuple(x)", RaspTypeError, "'tuple' is not one of them"),
        ("lambda min: min(1, 2)", RaspTypeError, "cannot call 'min': in this lambda it is a parameter, not a function"),
        ("lambda x: map(x)", RaspTypeError, "'map' is not one of them"),
        ("lambda x: round(x, ndigits=1)", RaspTypeError, "a keyword argument is not allowed inside a lambda body"),
        ("lambda x: min(x)", RaspTypeError, "min takes 2 or more arguments, got 1"),
        ("lambda x: abs(x, 1)", RaspTypeError, "abs takes 1 argument, got 2"),
        ("lambda x: round(x, 1, 2)", RaspTypeError, "round takes 1 to 2 arguments, got 3"),
        ("lambda x: y", RaspNameError, "unknown name 'y'"),
    ],
)
def test_only_the_scalar_language_is_accepted(lam, error, message):
    with pytest.raises(RaspError) as caught:
        make(lam)
    assert type(caught.value) is error and message in caught.value.message
