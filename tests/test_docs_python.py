"""Every ```python block of README.md and docs/*.md runs as a reader would run it: the blocks of one
page in order, in one namespace (as cells of a notebook), in a fresh folder that holds a link to
`programs/`. What a statement shows is checked too: the `# ...` lines right under a statement that
shows something (an expression's value, or what it prints) are what it shows, as a notebook would:
the value's repr or str, or the printed text.

Blocks that need an optional extra (examples/make_tutorial_notebook.py `needed_extras`: they import
torch, safetensors, transformer_lens or tracr) run in a second test of their page, with the page's
other blocks, only where the extra is installed (tests/extras.py). Every `rasp-compile` / `rasp-run`
command line of a page's shell blocks runs too, in its place among the Python blocks, and must
succeed.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import io
import re
import shlex
from pathlib import Path

import pytest

from extras import require

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```\n", re.MULTILINE | re.DOTALL)
SHELL = ("", "sh", "bash", "shell", "console")
EXTRA_MODULES = {"interop": "transformer_lens", "tracr": "tracr"}


def generator():
    spec = importlib.util.spec_from_file_location("make_tutorial_notebook", ROOT / "examples" / "make_tutorial_notebook.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


needed_extras = generator().needed_extras


def blocks(page: Path, kinds: tuple[str, ...]) -> list[tuple[int, str]]:
    """(line of the first line of code, text) of each fenced block of `page` of one of `kinds`."""
    text = page.read_text(encoding="utf-8")
    return [(text.count("\n", 0, m.start(2)) + 1, m.group(2)) for m in FENCE.finditer(text) if m.group(1) in kinds]


def runs() -> list:
    """(page, extra): each page with Python blocks or command lines, once without extras and once
    per extra its blocks need."""
    found = []
    for page in PAGES:
        code = blocks(page, ("python",))
        if code or commands(page):
            extras = sorted({extra for _, text in code for extra in needed_extras(text)})
            found += [pytest.param(page, extra, id=f"{page.name}" + (f"[{extra}]" if extra else ""))
                      for extra in (None, *extras)]
    return found


def shown_below(lines: list[str], end: int) -> str | None:
    """The `# ...` comment lines right under line `end` (1-based) of `lines`, as text; None for none."""
    shown = []
    for line in lines[end:]:
        if not line.startswith("#"):
            break
        shown.append(line[2:] if line.startswith("# ") else line[1:])
    return "\n".join(shown) if shown else None


def run_block(code: str, namespace: dict, where: str) -> None:
    """Run `code` statement by statement in `namespace`; check each statement's `# ...` lines below it."""
    lines = code.splitlines()
    for statement in ast.parse(code).body:
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            if isinstance(statement, ast.Expr):
                value = eval(compile(ast.Expression(statement.value), where, "eval"), namespace)  # our own docs
            else:
                value = None
                exec(compile(ast.Module([statement], []), where, "exec"), namespace)  # our own docs
        expected = shown_below(lines, statement.end_lineno)
        shows = [printed.getvalue().rstrip("\n")] if printed.getvalue() else [] if value is None else [repr(value), str(value)]
        if expected is not None and shows:
            assert expected in shows, (
                f"{where}, line {statement.lineno} of the block: the doc shows\n{expected}\nthe code shows\n{shows[0]}")


def commands(page: Path) -> list[tuple[int, str]]:
    """(line, command) of each `rasp-compile ...` / `rasp-run ...` line of the page's shell blocks
    (the `$ `-prefixed transcripts of docs/cli.md are tests/test_docs_cli.py's)."""
    found = []
    for first, text in blocks(page, SHELL):
        for offset, line in enumerate(text.splitlines()):
            if line.startswith(("rasp-compile ", "rasp-run ")):
                found.append((first + offset, line))
    return found


def run_command(command: str, where: str) -> None:
    """Run one `rasp-compile` / `rasp-run` command line; it must exit 0."""
    from rasp_compile.cli import compile_cmd, run_cmd

    name, *argv = shlex.split(command, comments=True)
    errors = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(errors):
        status = {"rasp-compile": compile_cmd.main, "rasp-run": run_cmd.main}[name](argv)
    assert status == 0, f"{where}: `{command}` exits {status}: {errors.getvalue()}"


@pytest.mark.parametrize("page, extra", runs())
def test_python_blocks_and_commands_run_and_show_what_the_page_says(page, extra, tmp_path, monkeypatch):
    """The page's Python blocks (those that need no extra, or `extra`) and its command lines, in order."""
    if extra:
        require(EXTRA_MODULES[extra], extra)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "programs").symlink_to(ROOT / "programs")
    steps = [(line, "python", code) for line, code in blocks(page, ("python",))
             if set(needed_extras(code)) <= {extra}]
    steps += [(line, "shell", command) for line, command in commands(page)]
    namespace = {"__name__": "doc_example"}
    for line, kind, text in sorted(steps):
        where = f"{page.relative_to(ROOT)}:{line}"
        run_block(text, namespace, where) if kind == "python" else run_command(text, where)


def test_pages_with_python_and_commands_are_found():
    assert {param.id for param in runs()} >= {"README.md", "inspect.md", "interop.md", "interop.md[interop]",
                                              "tutorial.md", "from_tracr.md[tracr]"}
    assert any(page.name == "interop.md" for page in PAGES if commands(page))
