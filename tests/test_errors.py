"""The malformed corpus: each program fails with the right class, at the right line and column,
with a message that says what was expected."""

import time

import pytest

import rasp_compile

from rasp_compile import ir
from rasp_compile.errors import (
    Loc,
    RaspError,
    RaspNameError,
    RaspSyntaxError,
    RaspTypeError,
    RaspValueError,
    format_error,
)
from rasp_compile.compiler import compile_program, precision
from rasp_compile.frontend import load_program, parse_program
from rasp_compile.frontend.infer import infer_value_sets
from rasp_compile.frontend.means import MAX_MEANS

H = "vocab {a, b}\nmax_len 5\n"  # two lines: the body starts on line 3

CORPUS = [
    # -- syntax ---------------------------------------------------------------------------
    ("missing_paren", H + "x = map(lambda x: x, tokens\noutput x", RaspSyntaxError, 3, 28, "missing ')' to close the '(' at line 3, column 8 (the next line starts with 'output')"),
    ("missing_paren_call_over_lines", H + "x = map(lambda x: x,\n  tokens  # the end\n\noutput x", RaspSyntaxError, 4, 9, "missing ')' to close the '(' at line 3, column 8"),
    ("missing_outer_paren", H + "x = map(lambda x: x, (tokens + 1)\noutput x", RaspSyntaxError, 3, 34, "missing ')' to close the '(' at line 3, column 8"),
    ("missing_paren_in_def", H + "def f(s) {\n  t = map(lambda x: x, s\n  return t\n}\noutput f(tokens)", RaspSyntaxError, 4, 25, "(the next line starts with 'return')"),
    ("missing_vocab_brace", "vocab {a, b\nmax_len 5\noutput tokens", RaspSyntaxError, 1, 12, "missing '}' to close the '{' at line 1, column 7"),
    ("missing_separator_before_return", H + "def f(s) { t = s return t }\noutput f(tokens)", RaspSyntaxError, 3, 18, "unexpected 'return'; expected one of a newline, an operator, '(', ';', '}'"),
    ("missing_paren_at_end", H + "output map(lambda x: x, tokens", RaspSyntaxError, 3, 31, "unexpected end of the program; expected one of an operator, '(', ')', ','"),
    ("extra_paren", H + "x = indices)\noutput x", RaspSyntaxError, 3, 12, "unexpected ')'"),
    ("bad_token", H + "x = indices + * 2\noutput x", RaspSyntaxError, 3, 15, "unexpected '*'; expected one of a name, a number"),
    ("unterminated_string", H + 'x = tokens == "a\noutput x', RaspSyntaxError, 3, 15, "unterminated string"),
    ("stray_character", H + "x = indices $ 1\noutput x", RaspSyntaxError, 3, 13, "unexpected character '$'"),
    ("attribute_access", H + "x = tokens.upper\noutput x", RaspSyntaxError, 3, 11, "unexpected character '.'"),
    ("missing_return", H + "def f(s) {\n  t = s\n}\noutput f(tokens)", RaspSyntaxError, 5, 1, "the body of 'f' must end with 'return EXPR'"),
    ("return_not_last", H + "def f(s) { return s; t = s }\noutput f(tokens)", RaspSyntaxError, 3, 22, "'return' must be the last statement of 'f'"),
    ("keyword_as_name", H + "if = tokens\noutput tokens", RaspSyntaxError, 3, 1, "'if' is a keyword and cannot be used as a name"),
    ("chained_comparison", H + "x = map(lambda i: 0 < i < 3, indices)\noutput x", RaspSyntaxError, 3, 25, "chained comparisons are not supported"),
    ("lambda_without_params", H + "x = map(lambda: 1, indices)\noutput x", RaspSyntaxError, 3, 15, "expected a name"),
    ("number_too_large", H + "x = indices + 10000000000000000000\noutput x", RaspSyntaxError, 3, 15, "number too large"),
    ("two_statements_one_line", H + "x = indices y = tokens\noutput x", RaspSyntaxError, 3, 13, "unexpected name 'y'"),
    ("def_not_at_top_level", H + "def f(s) { def g(t) { return t } return s }\noutput tokens", RaspSyntaxError, 3, 12, "'def' is a keyword and cannot be used as a name"),
    # -- names ----------------------------------------------------------------------------
    ("unknown_name", H + "x = tokenz + 1\noutput x", RaspNameError, 3, 5, "unknown name 'tokenz'"),
    ("used_before_bound", H + "y = x + 1\nx = indices\noutput y", RaspNameError, 3, 5, "'x' is used before it is bound (line 4)"),
    ("unknown_output", H + "output nothing", RaspNameError, 3, 8, "unknown name 'nothing'"),
    ("rebinding", H + "x = tokens\n\nx = indices\noutput x", RaspNameError, 5, 1, "'x' is already bound (line 3)"),
    ("rebinding_builtin", H + "indices = tokens\noutput indices", RaspNameError, 3, 1, "'indices' is built in and cannot be rebound"),
    ("rebinding_builtin_function", H + "select = tokens\noutput tokens", RaspNameError, 3, 1, "'select' is built in"),
    ("duplicate_declaration", H + "causal\ncausal\noutput tokens", RaspNameError, 4, 1, "'causal' is declared twice (first at line 3)"),
    ("duplicate_max_len", H + "max_len 3\noutput tokens", RaspNameError, 3, 1, "'max_len' is declared twice (first at line 2)"),
    ("missing_vocab", "max_len 5\noutput tokens", RaspNameError, 1, 1, "missing 'vocab' declaration"),
    ("missing_max_len", "vocab {a}\noutput tokens", RaspNameError, 1, 1, "missing 'max_len' declaration"),
    ("missing_output", H + "x = tokens", RaspNameError, 1, 1, "missing 'output' declaration"),
    ("unknown_function", H + "x = mapp(lambda x: x, tokens)\noutput x", RaspNameError, 3, 5, "unknown function 'mapp'"),
    ("direct_recursion", H + "def f(s) {\n  return f(s) + 1\n}\noutput tokens", RaspNameError, 4, 10, "recursive call of 'f' (f -> f)"),
    ("mutual_recursion", H + "def f(s) { return g(s) }\ndef g(s) { return f(s) }\noutput f(tokens)", RaspNameError, 4, 19, "recursive call of 'f' (f -> g -> f)"),
    ("duplicate_def", H + "def f(s) { return s }\ndef f(t) { return t }\noutput f(tokens)", RaspNameError, 4, 5, "'f' is already defined (line 3)"),
    ("duplicate_parameter", H + "x = sequence_map(lambda a, a: a, tokens, tokens)\noutput x", RaspNameError, 3, 28, "parameter 'a' is listed twice"),
    ("lambda_unknown_name", H + "x = map(lambda t: t + offset, tokens)\noutput x", RaspNameError, 3, 23, "unknown name 'offset'"),
    # -- defs that are never called: checked where they are written ---------------------
    ("uncalled_def_unknown_name", H + "def f(s) {\n  return tokenz + s\n}\noutput tokens", RaspNameError, 4, 10, "unknown name 'tokenz'"),
    ("uncalled_def_local_used_before_bound", H + "def f(s) {\n  t = u + s\n  u = s\n  return t\n}\noutput tokens", RaspNameError, 4, 7, "unknown name 'u'"),
    ("uncalled_def_rebinds_parameter", H + "def f(s) {\n  s = s + 1\n  return s\n}\noutput tokens", RaspNameError, 4, 3, "'s' is already bound (line 3)"),
    ("uncalled_def_unknown_function", H + "def f(s) { return mapp(lambda x: x, s) }\noutput tokens", RaspNameError, 3, 19, "unknown function 'mapp'"),
    ("uncalled_def_builtin_arity", H + "def f(s) { return map(lambda x: x, s, s) }\noutput tokens", RaspTypeError, 3, 39, "map takes 2 arguments, got 3"),
    ("uncalled_def_lambda_arity", H + "def f(s) { return select(s, s, lambda k: k) }\noutput tokens", RaspTypeError, 3, 32, "select expects a lambda of 2 parameters, got 1"),
    ("uncalled_def_lambda_unknown_name", H + "def f(s) { return map(lambda x: x + k, s) }\noutput tokens", RaspNameError, 3, 37, "unknown name 'k'"),
    ("uncalled_def_lambda_uses_sop", H + "def f(s) { return map(lambda x: x == tokens, s) }\noutput tokens", RaspTypeError, 3, 38, "'tokens' is an s-op"),
    ("uncalled_def_bad_keyword", H + "def f(s) { return aggregate(s, s, defalt=1) }\noutput tokens", RaspTypeError, 3, 35, "aggregate has no keyword argument 'defalt'"),
    ("uncalled_def_calls_def_badly", H + "def f(s) { return g(s, s) }\ndef g(a) { return a }\noutput tokens", RaspTypeError, 3, 24, "g takes 1 argument, got 2"),
    # -- kinds and counts -----------------------------------------------------------------
    ("selector_as_sop", H + "s = select(indices, indices, ==)\nx = aggregate(s, s)\noutput x", RaspTypeError, 4, 18, "aggregate expects an s-op as its second argument, got a selector"),
    ("sop_as_selector", H + "x = aggregate(indices, tokens)\noutput x", RaspTypeError, 3, 15, "aggregate expects a selector as its first argument, got an s-op"),
    ("tuple_as_sop", H + "x = map(lambda x: x, (3,))\noutput x", RaspTypeError, 3, 22, "map expects an s-op as its second argument, got the tuple (3,)"),
    ("selector_width_of_sop", H + "x = selector_width(tokens)\noutput x", RaspTypeError, 3, 20, "selector_width expects a selector"),
    ("sop_in_lambda", H + "x = map(lambda t: t == tokens, tokens)\noutput x", RaspTypeError, 3, 24, "'tokens' is an s-op; a lambda can use only its parameters and constants"),
    ("map_arity", H + "x = map(lambda t: t, tokens, indices)\noutput x", RaspTypeError, 3, 30, "map takes 2 arguments, got 3"),
    ("lambda_arity", H + "x = select(indices, indices, lambda k: k)\noutput x", RaspTypeError, 3, 30, "select expects a lambda of 2 parameters, got 1"),
    ("def_too_few", H + "def f(a, b) { return a + b }\noutput f(tokens)", RaspTypeError, 4, 8, "f takes 2 arguments, got 1"),
    ("def_too_many", H + "def f(a) { return a }\noutput f(tokens, indices)", RaspTypeError, 4, 18, "f takes 1 argument, got 2"),
    ("bad_keyword", H + "x = aggregate(select(indices, indices, ==), tokens, otherwise=1)\noutput x", RaspTypeError, 3, 53, "aggregate has no keyword argument 'otherwise'"),
    ("default_not_scalar", H + "x = aggregate(select(indices, indices, ==), tokens, default=tokens)\noutput x", RaspTypeError, 3, 53, "default= expects a constant, got an s-op"),
    ("bad_predicate", H + "x = select(indices, indices, 3)\noutput x", RaspTypeError, 3, 30, "a comparison (== != < <= > >=), true, false or a lambda"),
    ("selector_plus_number", H + "x = select(indices, indices, ==) + 1\noutput x", RaspTypeError, 3, 34, "'+' applies to s-ops and constants, not to a selector"),
    ("selector_and_sop", H + "x = select(indices, indices, ==) and tokens\noutput x", RaspTypeError, 3, 34, "combines a selector with another selector, not with an s-op"),
    ("output_selector", H + "output select(indices, indices, ==)", RaspTypeError, 3, 8, "output must be an s-op, got a selector"),
    ("output_tuple", H + "output (3,)", RaspTypeError, 3, 8, "output must be an s-op, got the tuple (3,)"),
    ("function_as_value", H + "x = map\noutput x", RaspTypeError, 3, 5, "'map' is a function; call it as map(...)"),
    ("lambda_calls_builtin", H + "x = map(lambda t: ord(t), tokens)\noutput x", RaspTypeError, 3, 19, "a lambda can call only min, max, abs, round, int, float"),
    ("min_outside_lambda", H + "x = min(tokens, 1)\noutput x", RaspTypeError, 3, 5, "'min' can only be called inside a lambda"),
    ("conditional_on_sops", H + "x = tokens if indices else 1\noutput x", RaspTypeError, 3, 12, "'A if C else B' outside a lambda works on constants only"),
    ("numerical_mean_of_categorical", H + "x = numerical(aggregate(select(indices, indices, <=), indices))\noutput x", RaspTypeError, 3, 15, "a numerical mean needs a numerical s-op"),
    ("non_numeric_numerical", H + "x = numerical(map(lambda t: t, tokens))\noutput x", RaspTypeError, 3, 15, "takes the non-numeric value"),
    # -- values ---------------------------------------------------------------------------
    ("lambda_division_by_zero", H + "x = map(lambda i: 10 / i, indices)\noutput x", RaspValueError, 3, 9, "lambda i: 10 / i fails on (0): division by zero"),
    ("sugar_division_by_zero", H + "x = 10 // indices\noutput x", RaspValueError, 3, 8, "operator 10 // x fails on (0): integer division or modulo by zero"),
    ("constant_division_by_zero", H + "n = 1 % 0\noutput tokens", RaspValueError, 3, 7, "cannot compute '%' on these constants"),
    ("lambda_compares_str_with_int", H + "x = map(lambda t: t < 1, tokens)\noutput x", RaspValueError, 3, 9, "'<' not supported"),
    ("lambda_string_repetition", H + "x = map(lambda t: t * 3, tokens)\noutput x", RaspValueError, 3, 9, "string repetition is not allowed"),
    ("default_0_beside_booleans", H + 'x = aggregate(select(indices, indices, <), tokens == "a", default=0)\noutput x', RaspValueError, 3, 5, "takes both false and 0"),
    ("map_true_beside_1", H + 'x = map(lambda t: true if t == "a" else 1.0, tokens)\noutput x', RaspValueError, 3, 5, "takes both true and 1.0"),
    ("select_incomparable", H + "x = selector_width(select(tokens, indices, <))\noutput x", RaspValueError, 3, 20, "select cannot compare key"),
    ("max_len_zero", "vocab {a}\nmax_len 0\noutput tokens", RaspValueError, 2, 9, "max_len must be a whole number from 1"),
    ("max_len_fraction", "vocab {a}\nmax_len 2.5\noutput tokens", RaspValueError, 2, 9, "got 2.5"),
    ("max_len_negative", "vocab {a}\nmax_len -3\noutput tokens", RaspValueError, 2, 10, "got -3"),
    ("vocab_duplicate", "vocab {a, b, a}\nmax_len 5\noutput tokens", RaspValueError, 1, 14, 'vocab lists "a" twice'),
    ("number_underflows", "vocab {0." + "0" * 400 + "1, 0}\nmax_len 5\noutput tokens", RaspSyntaxError, 1, 8, "number too small"),
    ("vocab_same_float", "vocab {9007199254740992, 9007199254740993}\nmax_len 5\noutput tokens", RaspValueError, 1, 26, "(as 9007199254740992: one number as a float)"),
    ("vocab_empty", "vocab {}\nmax_len 5\noutput tokens", RaspValueError, 1, 1, "vocab must list at least one token"),
    ("vocab_keyword", "vocab {true}\nmax_len 5\noutput tokens", RaspSyntaxError, 1, 8, "'true' is a keyword"),
]


@pytest.mark.parametrize(
    "source, error, line, col, fragment", [case[1:] for case in CORPUS], ids=[case[0] for case in CORPUS]
)
def test_malformed_program(source, error, line, col, fragment):
    with pytest.raises(RaspError) as caught:
        parse_program(source)
    assert type(caught.value) is error, caught.value.message
    assert (caught.value.line, caught.value.col) == (line, col), caught.value.message
    assert fragment in caught.value.message


def test_corpus_is_large_and_names_are_unique():
    assert len(CORPUS) >= 30 and len({case[0] for case in CORPUS}) == len(CORPUS)


def test_format_error_points_at_the_column():
    source = H + "x = tokenz + 1\noutput x"
    with pytest.raises(RaspNameError) as caught:
        parse_program(source, "prog.rasp")
    assert format_error(caught.value, source, "prog.rasp").splitlines() == [
        "prog.rasp:3:5: error: unknown name 'tokenz'; did you mean 'tokens'?",
        "x = tokenz + 1",
        "    ^",
    ]


def test_format_error_shows_no_terminal_escapes_and_cuts_long_lines_around_the_caret():
    source = 'vocab {"\x1b[2J", "\x1b[2J"}\nmax_len 3\noutput tokens\n'
    with pytest.raises(RaspValueError) as caught:
        parse_program(source)
    shown = format_error(caught.value, source, "prog.rasp")
    assert "\x1b" not in shown and shown.splitlines()[1:] == ['vocab {"\\x1b[2J", "\\x1b[2J"}', " " * 18 + "^"]
    vocab = ", ".join([*(f"v{i}" for i in range(150)), "v7", *(f"v{i}" for i in range(150, 300))])
    source = f"vocab {{{vocab}}}\nmax_len 3\noutput tokens\n"
    with pytest.raises(RaspValueError) as caught:
        parse_program(source)
    line, caret = format_error(caught.value, source).splitlines()[1:]
    assert len(line) == 3 + 120 + 3 and line.startswith("...") and line.endswith("...")
    assert line[len(caret) - 1:].startswith("v7, v150") and caret.strip() == "^"


def test_errors_about_built_in_s_ops_point_at_the_output(monkeypatch):
    """`length` is written nowhere: its float32 refusal points at `output length` (a float32
    refusal of a width takes a step window far below any the compiler uses: set here; and a
    width head: position-widths off)."""
    monkeypatch.setattr(precision, "STEP_WINDOW", 1e-6)
    source = "vocab {a}\nmax_len 1000\noutput length\n"
    with pytest.raises(RaspError) as caught:
        compile_program(parse_program(source), disabled=["position-widths"])
    assert (caught.value.line, caught.value.col) == (3, 8) and "float64" in caught.value.message


@pytest.mark.slow
def test_a_vocab_of_more_tokens_than_any_value_set_takes_is_refused_at_the_first_one_too_many():
    vocab = ", ".join(f"v{i}" for i in range(100_001))
    with pytest.raises(RaspValueError, match="vocab lists more than 100,000 tokens") as caught:
        parse_program(f"vocab {{{vocab}}}\nmax_len 3\noutput tokens\n")
    assert caught.value.col == len("vocab {" + ", ".join(f"v{i}" for i in range(100_000)) + ", ") + 1


def test_lambda_failure_names_the_lambda_and_values():
    with pytest.raises(RaspValueError) as caught:
        parse_program(H + "x = sequence_map(lambda a, b: a / (b - 1), indices, length)\noutput x")
    message = caught.value.message
    assert message.startswith("lambda a, b: a / (b - 1) fails on (") and ", 1): division by zero" in message


def test_python_function_failure_is_named_once():
    def inverse(x):
        return 1 / x

    for fn, named in [(inverse, "function inverse"), (lambda x: 1 / x, "a Python function")]:
        with pytest.raises(RaspValueError) as caught:
            infer_value_sets(ir.Program(ir.Map(fn, ir.indices), ("a",), 3))
        assert caught.value.message == f"in the map: {named} fails on (0): division by zero"


def test_crlf_line_ends_put_the_caret_where_lf_would():
    source = "vocab {a}\r\nmax_len 2\r\nx =\r\noutput tokens\r\n"
    with pytest.raises(RaspSyntaxError) as crlf:
        parse_program(source)
    with pytest.raises(RaspSyntaxError) as lf:
        parse_program(source.replace("\r\n", "\n"))
    assert (crlf.value.line, crlf.value.col) == (lf.value.line, lf.value.col) == (3, 4)


def test_a_byte_order_mark_is_skipped(tmp_path):
    path = tmp_path / "bom.rasp"
    path.write_bytes(b"\xef\xbb\xbf" + b"vocab {a}\nmax_len 2\noutput tokens\n")
    assert load_program(path).vocab == ("a",)


@pytest.mark.slow
def test_max_len_given_at_load_replaces_the_declared_one(tmp_path):
    """A program too large at its own max_len (here: more than MAX_MEANS possible means) loads,
    and its lambdas are checked, at the max_len it will be compiled at."""
    path = tmp_path / "long.rasp"
    path.write_text("vocab {x, y}\nmax_len 1000\noutput numerical(aggregate(select(indices, indices, <=), numerical(indices)))\n")
    with pytest.raises(RaspValueError, match=f"{MAX_MEANS:,} values"):
        load_program(path)
    assert load_program(path, max_len=8).max_len == 8
    assert rasp_compile.compile(path, max_len=8).meta["max_len"] == 8  # the API's path and text forms too
    assert rasp_compile.compile(path.read_text(), max_len=8).meta["max_len"] == 8


@pytest.mark.slow
@pytest.mark.parametrize(
    "link",
    [
        "a{j} = map(lambda x: x + 1, a{i})",  # folded maps compose into one function
        "a{j} = aggregate(select(indices, indices, ==), a{i})",
        "def f{j}(x) {{ return f{i}(x) }}",  # defs expand recursively
    ],
)
def test_chains_too_long_for_the_recursive_passes_are_refused_at_the_output(link: str):
    first = "def f0(x) { return x }" if link.startswith("def") else "a0 = indices"
    chain = [link.format(i=i, j=i + 1) for i in range(1200)]
    last = "output f1200(indices)" if link.startswith("def") else "output a1200"
    source = "\n".join(["vocab {a}", "max_len 2", first, *chain, last]) + "\n"
    with pytest.raises(RaspValueError, match="too long for this compiler") as refused:
        compile_program(parse_program(source))
    assert refused.value.line == (1204 if link.startswith("def") else 1203)  # the output, or its s-op


def test_models_beyond_the_parameter_budget_are_refused_before_building():
    """Each `a + tokens` link adds the vocab to the value set: d_model and the tables grow
    until the estimate passes MAX_PARAMETERS (before: minutes and gigabytes)."""
    chain = [f"a{i + 1} = a{i} + tokens" for i in range(120)]
    source = "\n".join(["vocab {1, 2}", "max_len 3", "a0 = tokens", *chain, "output a120"]) + "\n"
    with pytest.raises(RaspValueError, match="more than this compiler builds") as refused:
        compile_program(parse_program(source))
    assert refused.value.line == 123  # where the output s-op is written


@pytest.mark.slow
def test_a_model_the_checker_accepts_but_too_large_says_which_part_is():
    """Every value set is small (the largest, the numerical output's, 1,201 values): the checker accepts; the
    combined key of `picked`'s selects takes one dimension per combination of three s-ops'
    values, 17 x 31 x 16 of them: the refusal names that key, not the value sets."""
    source = """vocab {0, 1, 2}
max_len 16
width = numerical(selector_width(select(length, length, lambda k, q: (k + q) % 2 == 0)))
gap = sequence_map(lambda x, y: x - y, length, indices)
parity = numerical(map(lambda x: x % 2, length))
mean = numerical(aggregate(select(numerical(map(lambda x: x, indices)), gap, lambda k, q: (k + q) % 2 == 0), parity))
picked = select(width, indices, >) or (select(gap, width, >) and select(indices, mean, <=))
output numerical(aggregate(picked, numerical(map(lambda x: x, indices))))
"""
    program = parse_program(source)
    assert max(map(len, infer_value_sets(program).values())) == 1_201  # the output, one number
    with pytest.raises(RaspValueError, match="more than this compiler builds") as refused:
        compile_program(program)
    assert ("within the checker's limits, but the combined key of the one-hot of 'width', 'gap', 'indices'"
            in str(refused.value))
    assert "takes 8,432 residual dimensions" in str(refused.value)  # refused before its score is built


def test_a_model_too_large_whose_output_is_tokens_is_refused_at_the_output_statement():
    """`tokens` is one built-in node, written nowhere: the refusal points at `output tokens`."""
    vocab = ", ".join(f"v{i}" for i in range(7_200))
    with pytest.raises(RaspValueError, match="more than this compiler builds") as refused:
        compile_program(parse_program(f"vocab {{{vocab}}}\nmax_len 3\noutput tokens\n"))
    assert (refused.value.line, refused.value.col) == (3, 8)


@pytest.mark.slow
def test_a_vocab_too_large_for_any_model_is_refused_before_the_graph_is_built():
    """wte alone is vocab x d_model, d_model >= vocab: 20,000 tokens are refused at once (the
    read-out's identity matrix took 3 s and 3 GB before the layout's budget check)."""
    vocab = ", ".join(f"v{i}" for i in range(20_000))
    with pytest.raises(RaspValueError, match="at least 400,000,000 parameters"):
        compile_program(parse_program(f"vocab {{{vocab}}}\nmax_len 3\noutput tokens == \"v1\"\n"))


def test_the_caret_counts_terminal_columns_for_wide_characters_and_escapes():
    source = 'vocab {"日本", "日本"}\nmax_len 3\noutput tokens\n'
    with pytest.raises(RaspValueError) as caught:
        parse_program(source)
    assert format_error(caught.value, source).splitlines()[1:] == ['vocab {"日本", "日本"}', " " * 15 + "^"]
    wide = ", ".join(f'"\x1b字{i}"' for i in range(80))  # a line of about 800 columns, cut
    source = f'vocab {{{wide}, "\x1b字7"}}\nmax_len 3\noutput tokens\n'
    with pytest.raises(RaspValueError) as caught:
        parse_program(source)
    line, caret = format_error(caught.value, source).splitlines()[1:]

    def columns(text: str) -> int:
        return sum(2 if "\u4e00" <= c <= "\u9fff" else 1 for c in text)

    assert "\x1b" not in line and line.startswith("...") and columns(line) <= 3 + 120 + 3
    before = next(i for i in range(len(line)) if columns(line[:i]) == len(caret) - 1)
    assert line[before:].startswith('"\\x1b字7"}')  # the caret under the duplicate's quote


def test_a_caret_in_a_line_of_megabytes_is_shown_at_once():
    line = "x" * 2_000_000
    start = time.monotonic()
    shown = format_error(RaspError("m", Loc(1, 1_000_000)), line, "f").splitlines()
    assert time.monotonic() - start < 0.5
    assert shown[1] == "..." + "x" * 120 + "..." and shown[2] == " " * 63 + "^"
