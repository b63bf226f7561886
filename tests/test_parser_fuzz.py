"""Fuzzing the front end: random text and mutated valid programs either parse to a Program or
raise a RaspError located inside the text. Nothing else (no Lark error, no Python traceback)."""

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rasp_compile import ir
from rasp_compile.errors import RaspError, format_error
from rasp_compile.frontend import parse_program

SEEDS = [
    """\
# After "aa" comes "b"; after anything else comes "a".
vocab {a, b}
max_len 3
causal

prev = aggregate(select(indices, indices, lambda k, q: k == q - 1), tokens, default="a")
next = sequence_map(lambda p, t: "b" if p == "a" and t == "a" else "a", prev, tokens)
output next
""",
    """\
vocab {1, 2, 3}; max_len 2
def mean_before(s, n) {
  sel = select(indices, indices, <=) and not select(tokens, tokens, false)
  return numerical(aggregate(sel, numerical(s * n), default=0))
}
x = mean_before(tokens, 2)
flip = -indices + length - 1
output x
""",
    """\
output width
vocab {'(', ')'}
max_len 2
opens = select(tokens, tokens, lambda k, q: k == "(" or q != ")")
width = selector_width(opens) % 2 == 0 and indices >= 1
""",
    """\
vocab {0, 1, 2}; max_len 3
names = ("zero", "one", "two")
code = sequence_map(lambda a, b, c: names[a] + str(b) + str(len(names[c])), tokens, indices, tokens)
near = select(tokens, 1, ==) and not select(indices, 0, <)
output sequence_map(lambda s, w: s if w not in (0,) and "e" in s else "-", code, selector_width(near))
""",
]

# Characters of the language, a few outside it, and separators.
ALPHABET = "abdefklmnopqrstx_019 .,;:()[]{}=<>!+-*/%#\"'\n\t$\\é"
TOKENS = [
    "lambda", "def", "return", "map", "select", "aggregate", "selector_width", "numerical", "tokens",
    "indices", "length", "output", "vocab", "max_len", "causal", "and", "not", "if", "else", "true",
    "default=", "(", ")", "{", "}", ",", "=", "==", "<", "-", "1", "0.5", '"a"', "\n", ";", "#",
    "in", "not in", "[", "]", "len", "str", "(1,)", "()", "sequence_map",
]


def check(text: str) -> None:
    """The contract: a Program, or a RaspError whose location is inside `text`."""
    try:
        program = parse_program(text, "fuzz.rasp")
    except RaspError as error:
        lines = text.splitlines() or [""]
        assert error.loc is not None, error.message
        assert 1 <= error.line <= len(lines), (error.loc, error.message)
        assert 1 <= error.col <= len(lines[error.line - 1]) + 1, (error.loc, error.message)
        assert format_error(error, text, "fuzz.rasp").startswith(f"fuzz.rasp:{error.line}:{error.col}: error: ")
    else:
        assert isinstance(program, ir.Program) and isinstance(program.output, ir.SOp)


@st.composite
def mutated_programs(draw) -> str:
    """A seed program with 1-4 edits: characters or tokens deleted, inserted or swapped."""
    text = draw(st.sampled_from(SEEDS))
    for _ in range(draw(st.integers(1, 4))):
        pieces = re.findall(r"\w+|\s+|[^\w\s]", text)
        i = draw(st.integers(0, len(pieces) - 1))
        edit = draw(st.sampled_from(["delete", "insert", "swap", "replace", "char"]))
        if edit == "delete":
            del pieces[i]
        elif edit == "insert":
            pieces.insert(i, draw(st.sampled_from(TOKENS)))
        elif edit == "swap" and i + 2 < len(pieces):
            pieces[i], pieces[i + 2] = pieces[i + 2], pieces[i]
        elif edit == "replace":
            pieces[i] = draw(st.sampled_from(TOKENS))
        else:
            at = draw(st.integers(0, len(pieces[i])))
            pieces[i] = pieces[i][:at] + draw(st.sampled_from(ALPHABET)) + pieces[i][at + 1 :]
        text = "".join(pieces)
    return text


FUZZ = settings(max_examples=200, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(st.text(alphabet=ALPHABET, max_size=120))
def test_random_text(text):
    check(text)


@FUZZ
@given(st.lists(st.sampled_from(TOKENS), max_size=30).map(" ".join))
def test_random_token_soup(text):
    check(text)


@pytest.mark.slow
@FUZZ
@given(mutated_programs())
def test_mutated_programs(text):
    check(text)


def test_seeds_are_valid():
    for seed in SEEDS:
        assert isinstance(parse_program(seed), ir.Program)
