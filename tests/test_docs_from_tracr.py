"""docs/from_tracr.md cannot drift from the code: every ```python block runs as written (a block
that imports tracr runs when the [tracr] extra is installed), and every library program the page
lists is one the test suite ports."""

import re
from pathlib import Path

import pytest

import tracr_style_programs
from extras import require

DOC = Path(__file__).parent.parent / "docs" / "from_tracr.md"
FENCE = re.compile(r"^```([\w-]*)\n(.*?)^```\n", re.MULTILINE | re.DOTALL)


def python_blocks() -> list:
    text = DOC.read_text(encoding="utf-8")
    return [pytest.param(m.group(2), id=f"line{text.count(chr(10), 0, m.start()) + 1}")
            for m in FENCE.finditer(text) if m.group(1) == "python"]


@pytest.mark.parametrize("source", python_blocks())
def test_python_example_runs(source, tmp_path, monkeypatch):
    if re.search(r"^(from|import) tracr\b", source, re.MULTILINE):
        require("tracr", "tracr")
    monkeypatch.chdir(tmp_path)  # examples may save files
    exec(compile(source, str(DOC), "exec"), {"__name__": "from_tracr_example"})  # our own doc's code


def test_the_doc_lists_exactly_the_ported_library():
    listed = set(re.findall(r"`(make_\w+|shift_by|detect_pattern)`", DOC.read_text(encoding="utf-8")))
    ported = {name for name in vars(tracr_style_programs) if name.startswith(("make_", "shift_by", "detect_"))}
    assert listed == ported and len(python_blocks()) >= 2


def test_every_name_the_doc_gives_rasp_exists():
    from rasp_compile import rasp

    section = DOC.read_text(encoding="utf-8").split("## What `rasp` provides")[1].split("\n## ")[0]
    names = set(re.findall(r"`\.?(\w+)", section) + re.findall(r"Comparison\.(\w+)", section)) - {"rasp_compile"}
    comparisons = {name for name in names if name.isupper()}
    assert len(names) > 30 and comparisons == {c.name for c in rasp.Comparison}
    assert names - comparisons - {"named"} <= set(dir(rasp)), names - comparisons - set(dir(rasp))
