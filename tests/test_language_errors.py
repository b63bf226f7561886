"""Every misuse of the language additions is a located error (FILE:LINE:COL, the source line and
a caret), naming the user's lambda and values where a lambda fails (the same values in every run)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from rasp_compile.errors import RaspError, RaspSyntaxError, RaspTypeError, RaspValueError, format_error
from rasp_compile.frontend import parse_program

H = "vocab {1, 2, 3}\nmax_len 4\n"  # two lines: every error below is on line 3 or later

CASES = [
    # n-ary sequence_map: the user's lambda and the values it got, never a pack
    ("nary_fails", "output sequence_map(lambda a, b, c: 1 // (a + b + c - 2), tokens, indices, length)",
     RaspValueError, 3, 21, "lambda a, b, c: 1 // (a + b + c - 2) fails on (1, 0, 1): integer division or modulo by zero"),
    ("nary_fails_with_constant", "output sequence_map(lambda a, b, c: c // b, tokens, 0, length)",
     RaspValueError, 3, 21, "lambda a, b, c: c // b fails on (1, 0, 1): integer division or modulo by zero"),
    ("constants_only_fail", "output sequence_map(lambda a, b: a // b, 1, 0)",
     RaspValueError, 3, 21, "lambda a, b: a // b fails on (1, 0): integer division or modulo by zero"),
    ("nary_parameter_count", "output sequence_map(lambda a, b: a, tokens, indices, length)",
     RaspTypeError, 3, 21, "sequence_map expects a lambda of 3 parameters (one per argument after it), got 2"),
    ("sequence_map_one_sop", "output sequence_map(lambda a: a, tokens)",
     RaspTypeError, 3, 8, "sequence_map takes 3 or more arguments, got 2"),
    # the new lambda forms
    ("index_out_of_range", 'output map(lambda d: "012"[d], tokens)',
     RaspValueError, 3, 12, 'lambda d: "012"[d] fails on (3): index 3 is out of range for "012" (length 3)'),
    ("tuple_index_out_of_range", 'output map(lambda d: ("a", "b")[d], tokens)',
     RaspValueError, 3, 12, 'fails on (2): index 2 is out of range for ("a", "b") (length 2)'),
    ("index_not_whole", 'output map(lambda d: "ab"[d / 2], tokens)',
     RaspValueError, 3, 12, "fails on (1): an index must be a whole number, not 0.5"),
    ("index_a_number", "output map(lambda d: d[0], tokens)",
     RaspValueError, 3, 12, "fails on (1): only a string or a tuple can be indexed, not 1"),
    ("in_a_number", "output map(lambda d: d in 5, tokens)",
     RaspValueError, 3, 12, "fails on (1): 'in' needs a string or a tuple on its right, not 5"),
    ("number_in_a_string", 'output map(lambda d: d in "123", tokens)',
     RaspValueError, 3, 12, "fails on (1): 'in' a string needs a string on its left, not 1"),
    ("len_of_a_number", "output map(lambda d: len(d), tokens)",
     RaspValueError, 3, 12, "fails on (1): len takes a string or a tuple, not 1"),
    ("len_arity", "output map(lambda d: len(d, d), tokens)", RaspTypeError, 3, 22, "len takes 1 argument, got 2"),
    ("lambda_returns_tuple", "output map(lambda d: (d, 1), tokens)",
     RaspValueError, 3, 12, "fails on (1): the result is the tuple (1, 1); an s-op holds strings, numbers or booleans"),
    ("operator_makes_tuple", "output indices or (1, 2)",
     RaspValueError, 3, 16, "operator x or (1, 2) fails on (0): the result is the tuple (1, 2)"),
    ("tuple_repetition", "output map(lambda d: len((d,) * 3), tokens)",
     RaspValueError, 3, 12, "fails on (1): tuple repetition is not allowed"),
    ("slice", 'output map(lambda d: "abc"[0:d], tokens)', RaspSyntaxError, 3, 29, "unexpected ':'"),
    ("unclosed_bracket", 'output map(lambda d: "abc"[d, tokens)\n', RaspSyntaxError, 3, 29, "unexpected ','"),
    # tuples and indexing outside a lambda: constants only
    ("index_an_sop", "output tokens[0]", RaspTypeError, 3, 8, "indexing outside a lambda works on constants, not on an s-op"),
    ("tuple_of_sops", "output (tokens, 1)", RaspTypeError, 3, 9, "a tuple outside a lambda works on constants, not on an s-op"),
    ("constant_index_out_of_range", "x = (1, 2)[5]\noutput tokens",
     RaspValueError, 3, 11, "cannot index this constant: index 5 is out of range for (1, 2) (length 2)"),
    ("tuple_as_sop", "output map(lambda x: x, (3,))", RaspTypeError, 3, 25, "map expects an s-op as its second argument, got the tuple (3,)"),
    ("tuple_output", "output (3,)", RaspTypeError, 3, 8, "output must be an s-op, got the tuple (3,)"),
    ("tuple_default", "output aggregate(select(indices, indices, ==), tokens, default=(1,))",
     RaspTypeError, 3, 56, "default= expects a constant, got the tuple (1,); a default is a string, number or boolean"),
    # constants where an s-op is expected
    ("mean_of_a_string", 'output numerical(aggregate(select(indices, indices, ==), "a"))',
     RaspTypeError, 3, 58, 'a numerical s-op holds numbers only, got the string "a"'),
    ("numerical_string", 'output numerical("a")', RaspTypeError, 3, 18, 'a numerical s-op holds numbers only, got the string "a"'),
    ("constant_select_cannot_compare", 'output selector_width(select(1, "a", <))',
     RaspValueError, 3, 23, "select cannot compare key 1 < query 'a'"),
    # a positional argument after a keyword one
    ("positional_after_keyword", "output aggregate(select(indices, indices, ==), default=1, tokens)",
     RaspSyntaxError, 3, 59, "a positional argument cannot follow the keyword argument 'default='"),
    ("positional_after_keyword_in_def_call", "def f(a, b) { return a }\noutput f(a=1, tokens)",
     RaspSyntaxError, 4, 15, "a positional argument cannot follow the keyword argument 'a='"),
    # parameters and bindings hide functions of the same name
    ("def_parameter_called", "def g(s) { return s }\ndef f(g) { return g(tokens) }\noutput f(tokens)",
     RaspTypeError, 4, 19, "cannot call 'g': here it is the parameter or name bound at line 4, column 7, not a function"),
    ("def_parameter_named_as_its_def", "def f(f) { return f(tokens) }\noutput f(tokens)",
     RaspTypeError, 3, 19, "cannot call 'f': here it is the parameter or name bound at line 3, column 7"),
    ("def_local_called", "def g(s) { return s }\ndef f(s) { g = s; return g(s) }\noutput tokens",
     RaspTypeError, 4, 26, "cannot call 'g': here it is the parameter or name bound at line 4, column 12"),
    ("lambda_parameter_called", "output map(lambda min: min(1, 2), tokens)",
     RaspTypeError, 3, 24, "cannot call 'min': in this lambda it is a parameter, not a function"),
    ("constant_called_in_lambda", "max = 3\noutput map(lambda x: max(x, 1), tokens)",
     RaspTypeError, 4, 22, "cannot call 'max': here it is the parameter or name bound at line 3, column 1"),
    ("def_parameter_called_in_lambda", "def f(abs) { return map(lambda x: abs(x), tokens) }\noutput f(1)",
     RaspTypeError, 3, 35, "cannot call 'abs': here it is the parameter or name bound at line 3, column 7"),
    ("top_level_constant_called", "n = 3\noutput n(tokens)",
     RaspTypeError, 4, 8, "cannot call 'n': here it is the parameter or name bound at line 3, column 1"),
    ("in_is_a_keyword", "in = 3\noutput tokens", RaspSyntaxError, 3, 1, "'in' is a keyword and cannot be used as a name"),
]


@pytest.mark.parametrize("body, error, line, col, fragment", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_misuse_is_a_located_error(body, error, line, col, fragment):
    source = H + body
    with pytest.raises(RaspError) as caught:
        parse_program(source, "prog.rasp")
    assert type(caught.value) is error and fragment in caught.value.message, caught.value.message
    assert (caught.value.line, caught.value.col) == (line, col)
    shown = format_error(caught.value, source, "prog.rasp").splitlines()
    assert shown[0].startswith(f"prog.rasp:{line}:{col}: error: ")
    assert shown[1] == source.splitlines()[line - 1] and shown[2] == " " * (col - 1) + "^"


VOCABS = [
    ('vocab {"1", 1}', 13, 'vocab lists "1" and 1, which an input cannot tell apart'),
    ('vocab {2, "2.0"}', 11, 'vocab lists 2 and "2.0", which an input cannot tell apart'),
    ('vocab {0.5, "a", "0.5"}', 18, 'vocab lists 0.5 and "0.5"'),
    ('vocab {"01", 1}', 14, 'vocab lists "01" and 1'),
    ('vocab {a, ""}', 11, 'the empty string "" cannot be a token: no input can hold it'),
    ('vocab {a, "b c"}', 11, 'the token "b c" holds a space; inputs are split on whitespace, so it could never be typed'),
    ('vocab {a, "b\tc"}', 11, "holds a space"),
    ('vocab {a, "b\x07"}', 11, "holds a character a terminal does not print"),
]


@pytest.mark.parametrize("vocab, col, fragment", VOCABS)
def test_a_vocab_the_command_line_cannot_type_is_refused(vocab, col, fragment):
    with pytest.raises(RaspValueError) as caught:
        parse_program(f"{vocab}\nmax_len 3\noutput tokens")
    assert fragment in caught.value.message and (caught.value.line, caught.value.col) == (1, col)


@pytest.mark.parametrize("vocab", ['{"-1", 1}', '{"1a", 1}', '{"(", ")"}', "{1, 2.5}"])
def test_tokens_that_read_differently_are_accepted(vocab):
    assert parse_program(f"vocab {vocab}\nmax_len 3\noutput tokens").vocab


@pytest.mark.slow
def test_the_first_failure_reported_is_the_same_in_every_run():
    """Value sets are sets: tried in their iteration order, the value an error names changed with
    Python's hash seed ('cherry' in one run, 'bananas' in the next)."""
    head = "vocab {apple, bananas, cherry, b, c}\nmax_len 3\n"
    failing = {"map": 'output map(lambda t: "xyz"[len(t)], tokens)',
               "select": 'output selector_width(select(tokens, tokens, lambda k, q: "xyz"[len(k)] == q))'}
    script = ("import sys, rasp_compile as rc\n"
              "try: rc.parse_program(sys.argv[1])\n"
              "except rc.RaspError as e: print(e)\n")
    for name, line in failing.items():
        runs = {subprocess.run([sys.executable, "-c", script, head + line], capture_output=True, text=True,
                               env={**os.environ, "PYTHONHASHSEED": str(seed)}).stdout for seed in range(6)}
        assert len(runs) == 1, runs
        assert "fails on ('apple'" in runs.pop(), name
