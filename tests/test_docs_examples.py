"""docs/language.md cannot drift from the code: every ```rasp block there parses and checks, and
every ```rasp-error block fails with exactly the message shown in the ```text block after it."""

import re
from pathlib import Path

import pytest

from rasp_compile import ir
from rasp_compile.errors import RaspError, format_error
from rasp_compile.frontend import parse_program

DOC = Path(__file__).parent.parent / "docs" / "language.md"
FILENAME = "example.rasp"  # the file name the error examples are shown with

# A fenced block: its info string and its text (fences start a line; blocks do not nest).
FENCE = re.compile(r"^```([\w-]*)\n(.*?)^```\n", re.MULTILINE | re.DOTALL)


def blocks() -> list[tuple[int, str, str]]:
    """Every fenced block of the doc: (line of its opening fence, info string, text)."""
    text = DOC.read_text(encoding="utf-8")
    return [(text.count("\n", 0, m.start()) + 1, m.group(1), m.group(2)) for m in FENCE.finditer(text)]


def examples(info: str) -> list:
    return [pytest.param(text, i, id=f"line{line}") for i, (line, kind, text) in enumerate(blocks()) if kind == info]


@pytest.mark.parametrize("source, index", examples("rasp"))
def test_example_parses(source, index):
    assert isinstance(parse_program(source, FILENAME), ir.Program)


@pytest.mark.parametrize("source, index", examples("rasp-error"))
def test_error_example_gives_the_message_shown(source, index):
    following = blocks()[index + 1]
    assert following[1] == "text", f"the rasp-error block at line {blocks()[index][0]} needs a ```text block after it"
    with pytest.raises(RaspError) as caught:
        parse_program(source, FILENAME)
    assert format_error(caught.value, source, FILENAME) == following[2].rstrip("\n")


def test_the_doc_has_examples_of_both_kinds():
    kinds = [kind for _, kind, _ in blocks()]
    assert kinds.count("rasp") >= 15 and kinds.count("rasp-error") >= 10
