"""docs/language.md cannot drift from the code: every ```rasp block there parses and checks, and
every ```rasp-error block fails with exactly the message shown in the ```text block after it.
Every program the docs show (a ```rasp block of any docs/*.md, and the README's program) also
compiles, with the optimisations on and off, and agrees with the interpreter on every input up to
its max_len."""

import re
from pathlib import Path

import pytest

from rasp_compile import ir
from rasp_compile.compiler import OPTIMIZATIONS, compile_program
from rasp_compile.errors import RaspError, format_error
from rasp_compile.frontend import parse_program
from rasp_compile.testing.differential import assert_agree, every_input


ROOT = Path(__file__).parent.parent
DOC = ROOT / "docs" / "language.md"
FILENAME = "example.rasp"  # the file name the error examples are shown with

# A fenced block: its info string and its text (fences start a line; blocks do not nest).
FENCE = re.compile(r"^```([\w-]*)\n(.*?)^```\n", re.MULTILINE | re.DOTALL)


def blocks(doc: Path = DOC) -> list[tuple[int, str, str]]:
    """Every fenced block of `doc`: (line of its opening fence, info string, text)."""
    text = doc.read_text(encoding="utf-8")
    return [(text.count("\n", 0, m.start()) + 1, m.group(1), m.group(2)) for m in FENCE.finditer(text)]


def shown_programs() -> list:
    """Every program the docs show: the ```rasp blocks of docs/*.md, and the README's block
    that declares a vocab (its fences carry no info string)."""
    found = [pytest.param(text, id=f"{doc.name}:{line}")
             for doc in sorted((ROOT / "docs").glob("*.md")) for line, kind, text in blocks(doc) if kind == "rasp"]
    readme = ROOT / "README.md"
    found += [pytest.param(text, id=f"README.md:{line}")
              for line, kind, text in blocks(readme) if kind == "" and re.search(r"^vocab ", text, re.MULTILINE)]
    return found


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


@pytest.mark.slow
@pytest.mark.parametrize("source", shown_programs())
def test_every_program_the_docs_show_compiles_and_agrees_with_the_interpreter(source):
    program = parse_program(source, FILENAME)
    inputs = every_input(program.vocab, program.max_len)
    assert_agree(compile_program(program), program, inputs)
    assert_agree(compile_program(program, disabled=OPTIMIZATIONS), program, inputs)


def test_the_docs_show_programs_in_several_files():
    shown = {param.id.split(":")[0] for param in shown_programs()}
    assert {"language.md", "compiler.md", "README.md"} <= shown and len(shown_programs()) >= 20


def test_the_doc_has_examples_of_both_kinds():
    kinds = [kind for _, kind, _ in blocks()]
    assert kinds.count("rasp") >= 15 and kinds.count("rasp-error") >= 10
