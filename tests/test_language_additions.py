"""Constants where an s-op is expected, n-ary sequence_map, the new lambda forms (tuples, `in`,
indexing, `len`, `str`) and `not` of a selector over none: each program compiles, and the
compiled model, the reference interpreter and an independent plain-Python function agree on
every input up to a small max_len and on seeded random inputs at a larger one."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rasp_compile as rc
from rasp_compile import ir
from rasp_compile.runtime.prediction import predict
from rasp_compile.runtime.model import n_params
from rasp_compile.testing.differential import every_input, random_inputs, same_value


def shifted(xs: list, by: int = 1) -> list:
    """xs[i - by] at position i, None where i - by < 0."""
    return [xs[i - by] if i >= by else None for i in range(len(xs))]


def not_equal_width(xs: list) -> list:
    """At each query: how many keys k do NOT satisfy (xs[k] and xs[q] both present and equal)."""
    return [sum(not (k is not None and q is not None and k == q) for k in xs) for q in xs]


def dyck_pairs(xs: list) -> list:
    """Whether the previous token and this one form "()" or "[]" (False at position 0)."""
    return [i > 0 and xs[i - 1] + x in ("()", "[]") for i, x in enumerate(xs)]


# name: (program text, vocab for the header, small max_len, larger max_len, reference)
PROGRAMS = {
    "constant_query": (
        'output selector_width(select(tokens, "+", ==))',
        'a, "+", b', 4, 8, lambda xs: [xs.count("+")] * len(xs),
    ),
    "constant_key": (
        "output selector_width(select(1, tokens, ==))",
        "1, 2", 4, 8, lambda xs: [len(xs) if x == 1 else 0 for x in xs],
    ),
    "constant_both_sides": (
        "output selector_width(select(1, 2, <))",
        "1, 2", 3, 7, lambda xs: [len(xs)] * len(xs),
    ),
    "aggregate_of_one": (
        'output aggregate(select(tokens, "a", ==), 1)',
        "a, b", 4, 8, lambda xs: [1 if "a" in xs else None] * len(xs),
    ),
    "mean_of_one": (
        'output numerical(aggregate(select(tokens, "a", ==), 1))',
        "a, b", 4, 8, lambda xs: [1 if "a" in xs else 0] * len(xs),
    ),
    "mean_of_one_before": (
        "output numerical(aggregate(select(indices, indices, <), 1, default=5))",
        "a, b", 4, 8, lambda xs: [1 if i > 0 else 5 for i in range(len(xs))],
    ),
    "mean_of_numerical_constant": (
        "half = numerical(0.5)\noutput numerical(aggregate(select(tokens, tokens, ==), half))",
        "a, b", 4, 8, lambda xs: [0.5] * len(xs),
    ),
    "sequence_map_with_constant": (
        "output sequence_map(lambda x, y: x * 10 + y, tokens, 3)",
        "1, 2, 3", 4, 8, lambda xs: [x * 10 + 3 for x in xs],
    ),
    "sequence_map_of_constants_only": (
        "output sequence_map(lambda x, y: x * 10 + y, 4, 2)",
        "1, 2", 3, 7, lambda xs: [42] * len(xs),
    ),
    "nary_three": (
        "output sequence_map(lambda a, b, c: a * 100 + b * 10 + c, tokens, indices, length)",
        "1, 2, 3", 4, 7, lambda xs: [x * 100 + i * 10 + len(xs) for i, x in enumerate(xs)],
    ),
    "nary_five_with_repeats_and_constants": (
        "output sequence_map(lambda a, b, c, d, e: str(a) + str(b) + c + str(d) + str(e), "
        'tokens, indices, "-", tokens, length - indices)',
        "1, 2", 4, 7, lambda xs: [f"{x}{i}-{x}{len(xs) - i}" for i, x in enumerate(xs)],
    ),
    "nary_four_distinct": (
        "output sequence_map(lambda a, b, c, d: (a + b) * c - d, tokens, indices, length, tokens * 2)",
        "1, 2", 4, 6, lambda xs: [(x + i) * len(xs) - 2 * x for i, x in enumerate(xs)],
    ),
    "nary_values_that_read_alike": (  # ("a,b", "c") and ("a", "b,c") are two packs, not one
        "prev = aggregate(select(indices, indices, lambda k, q: k == q - 1), tokens, default=\"-\")\n"
        'output sequence_map(lambda p, t, i: p + "|" + t + str(i), prev, tokens, indices)',
        '"a,b", c, a, "b,c"', 3, 6,
        lambda xs: [f"{'-' if p is None else p}|{x}{i}" for i, (p, x) in enumerate(zip(shifted(xs), xs))],
    ),
    "nary_with_none": (
        "prev = aggregate(select(indices, indices, lambda k, q: k == q - 1), tokens)\n"
        "output sequence_map(lambda p, t, i: p + t + str(i), prev, tokens, indices)",
        "a, b", 4, 8, lambda xs: [None if p is None else f"{p}{x}{i}" for i, (p, x) in enumerate(zip(shifted(xs), xs))],
    ),
    "nary_numerical_with_none": (
        "prev = aggregate(select(indices, indices, lambda k, q: k == q - 1), tokens)\n"
        "output numerical(sequence_map(lambda p, t, i: p * t + i, prev, tokens, indices))",
        "1, 2, 3", 4, 8, lambda xs: [0 if p is None else p * x + i for i, (p, x) in enumerate(zip(shifted(xs), xs))],
    ),
    "nary_with_a_mean": (
        "frac = numerical(aggregate(select(indices, indices, <=), numerical(map(lambda t: 1 if t == \"a\" else 0, tokens))))\n"
        "output sequence_map(lambda f, t, i: str(round(f, 2)) + t + str(i), frac, tokens, indices)",
        "a, b", 4, 7, lambda xs: [f"{round(xs[:i + 1].count('a') / (i + 1), 2)}{x}{i}" for i, x in enumerate(xs)],
    ),
    "nary_read_by_a_select": (
        "code = sequence_map(lambda a, b, c: a + b + c, tokens, indices, length)\n"
        "output selector_width(select(code, code, <))",
        "1, 2, 3", 4, 6, lambda xs: [sum(c < q for c in codes) for codes in [[x + i + len(xs) for i, x in enumerate(xs)]] for q in codes],
    ),
    "digit_table": (
        'output map(lambda d: "0123456789"[d * 3 % 10], tokens)',
        "0, 1, 2, 3", 4, 8, lambda xs: [str(x * 3 % 10) for x in xs],
    ),
    "tuple_lookup": (
        'names = ("zero", "one", "two")\noutput map(lambda d: names[d] + "!", tokens)',
        "0, 1, 2", 4, 8, lambda xs: [["zero", "one", "two"][x] + "!" for x in xs],
    ),
    "in_and_not_in": (
        'output sequence_map(lambda t, i: t in ("a", "c") and i not in (0, 2), tokens, indices)',
        "a, b, c", 4, 8, lambda xs: [x in "ac" and i != 0 and i != 2 for i, x in enumerate(xs)],
    ),
    "dyck_pairs": (
        "prev = aggregate(select(indices, indices, lambda k, q: k == q - 1), tokens, default=\"-\")\n"
        'pairs = ("()", "[]")\noutput sequence_map(lambda p, t: p + t in pairs, prev, tokens)',
        '"(", ")", "[", "]"', 3, 6, dyck_pairs,
    ),
    "len_and_str": (
        'output map(lambda t: str(len(t)) + str(t == "bb") + str((t, 1)[1]), tokens)',
        "a, bb, ccc", 3, 6, lambda xs: [f"{len(x)}{'true' if x == 'bb' else 'false'}1" for x in xs],
    ),
    "not_selects_none_keys": (
        "prev = aggregate(select(indices, indices, lambda k, q: k == q - 1), tokens)\n"
        "output selector_width(not select(prev, prev, ==))",
        "a, b", 4, 8, lambda xs: not_equal_width(shifted(xs)),
    ),
    "not_selects_all_for_a_none_query_causal": (
        "causal\nprev = aggregate(select(indices, indices, lambda k, q: k == q - 1), tokens)\n"
        "output selector_width(not select(tokens, prev, ==))",
        "a, b", 4, 8,
        lambda xs: [sum(not (p is not None and xs[k] == p) for k in range(q + 1)) for q, p in enumerate(shifted(xs))],
    ),
    "output_constant": ("output 7", "a, b", 3, 6, lambda xs: [7] * len(xs)),
    "parameter_hides_def": (
        "def g(s) { return s * 100 }\ndef f(g) { return g + 1 }\noutput f(tokens)",
        "1, 2", 3, 6, lambda xs: [x + 1 for x in xs],
    ),
}


def program_text(name: str, max_len: int) -> str:
    body, vocab, *_ = PROGRAMS[name]
    return f"vocab {{{vocab}}}\nmax_len {max_len}\n{body}\n"


def check(name: str, max_len: int, inputs_of) -> None:
    """The model, the interpreter and the reference agree on every input `inputs_of` gives."""
    program = rc.parse_program(program_text(name, max_len), f"{name}.rasp")
    reference = PROGRAMS[name][4]
    model = rc.compile(program)
    inputs = inputs_of(program.vocab, max_len)
    numerical = program.output.encoding == ir.NUMERICAL
    got = predict(model, inputs)
    for tokens, predicted in zip(inputs, got):
        expected = reference(list(tokens))
        interpreted = rc.evaluate(program, tokens)
        assert all(same_value(e, i, numerical) for e, i in zip(expected, interpreted)), (tokens, expected, interpreted)
        assert all(same_value(e, p, numerical) for e, p in zip(expected, predicted)), (tokens, expected, predicted)


@pytest.mark.parametrize("name", PROGRAMS)
def test_every_input_at_a_small_max_len(name):
    check(name, PROGRAMS[name][2], every_input)


@pytest.mark.slow
@pytest.mark.parametrize("name", PROGRAMS)
def test_random_inputs_at_a_larger_max_len(name):
    check(name, PROGRAMS[name][3], lambda vocab, n: random_inputs(vocab, n, 150, rng=len(name)))


def size(text: str) -> int:
    return n_params(rc.compile(rc.parse_program(text)))


HEADER = "vocab {1, 2, 3}\nmax_len 5\n"


@pytest.mark.parametrize(
    "written, folded",
    [
        ("sequence_map(lambda x, y: x * y + 1, tokens, 4)", "map(lambda x: x * 4 + 1, tokens)"),
        ("sequence_map(lambda x, y, z: x * y - z, tokens, indices, tokens)",
         "sequence_map(lambda x, y: x * y - x, tokens, indices)"),
        ("sequence_map(lambda x, y, z: x + y + z, 1, tokens, 2)", "map(lambda y: 1 + y + 2, tokens)"),
    ],
)
def test_constants_and_repeats_cost_nothing(written, folded):
    """A constant argument is folded into the lambda and a repeated s-op read once: the model
    is exactly as large as the one written by hand."""
    assert size(HEADER + f"output {written}") == size(HEADER + f"output {folded}")


def test_nary_packs_first_inputs_and_applies_the_lambda_last():
    program = rc.parse_program(HEADER + "output sequence_map(lambda a, b, c, d: a + b + c + d, tokens, indices, length, tokens + 1)")
    final = program.output
    assert isinstance(final, ir.SequenceMap) and final.fn.text == "lambda a, b, c, d: a + b + c + d"
    assert isinstance(final.first, ir.SequenceMap) and isinstance(final.first.first, ir.SequenceMap)
    assert final.first.first.first is ir.tokens and final.first.first.second is ir.indices


def test_a_constant_s_op_is_folded_into_the_embedding():
    """`aggregate(sel, 1)` costs what an aggregate of any one-valued s-op costs: one layer."""
    model = rc.compile(rc.parse_program('vocab {a, b}\nmax_len 5\noutput aggregate(select(tokens, "a", ==), 1)'))
    assert model.n_layers == 1


# Arguments a random n-ary sequence_map may take: (as written, its value at position i of xs).
ARGUMENTS = {
    "tokens": lambda xs, i: xs[i],
    "indices": lambda xs, i: i,
    "length": lambda xs, i: len(xs),
    "prev": lambda xs, i: xs[i - 1] if i > 0 else 0,
    "0": lambda xs, i: 0,
    "7": lambda xs, i: 7,
}
PREV = "prev = aggregate(select(indices, indices, lambda k, q: k == q - 1), tokens, default=0)\n"


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from(sorted(ARGUMENTS)), min_size=2, max_size=5), st.lists(st.integers(1, 9), min_size=5, max_size=5))
def test_random_nary_sequence_maps_agree_with_python(names, weights):
    """sequence_map(lambda a0, ..., an: a weighted sum, spelled with its arguments, of any mix
    of s-ops (repeated or not) and constants): model, interpreter and Python agree on every input."""
    params = [f"a{k}" for k in range(len(names))]
    body = " + ".join(f"{w} * {p}" for w, p in zip(weights, params))
    text = f"vocab {{1, 2}}\nmax_len 3\n{PREV}output sequence_map(lambda {', '.join(params)}: str({body}), {', '.join(names)})\n"
    program = rc.parse_program(text)
    inputs = every_input(program.vocab, 3)
    predicted = predict(rc.compile(program), inputs)
    for tokens, got in zip(inputs, predicted):
        expected = [str(sum(w * ARGUMENTS[n](tokens, i) for w, n in zip(weights, names))) for i in range(len(tokens))]
        assert rc.evaluate(program, tokens) == expected == got, (text, tokens)
