"""Make examples/tutorial.ipynb from docs/tutorial.md, so that the two cannot drift apart.

    python examples/make_tutorial_notebook.py            # rewrites examples/tutorial.ipynb

Each ```python block of the page becomes a code cell; everything between them (prose, ```rasp and
shell blocks) becomes a markdown cell. A code cell that needs an optional extra (it imports torch,
safetensors, transformer_lens or tracr, or uses `torch.` or a `tl_model`) is tagged `needs-interop` or `needs-tracr`, so that a
notebook runner can leave it out where the extra is not installed. The notebook is written with
the standard library alone (its JSON is nbformat 4.5), without outputs: run it to see them.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TUTORIAL = ROOT / "docs" / "tutorial.md"
NOTEBOOK = ROOT / "examples" / "tutorial.ipynb"

PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```\n", re.MULTILINE | re.DOTALL)
"""A fenced Python block, from its opening line to its closing fence (blocks do not nest)."""

EXTRAS = {
    "interop": re.compile(r"^\s*(import|from) (torch|safetensors|transformer_lens)\b|\btorch\.|\btl_model\b"
                          r"|\bto_transformer_lens\(|\btl_tokens\(", re.MULTILINE),
    "tracr": re.compile(r"^\s*(import|from) tracr\b", re.MULTILINE),
}
"""What marks a block of code as needing an optional extra of pyproject.toml."""


def needed_extras(code: str) -> list[str]:
    """The optional extras (`interop`, `tracr`) that running `code` needs, in EXTRAS' order."""
    return [extra for extra, pattern in EXTRAS.items() if pattern.search(code)]


def parts(markdown: str) -> list[tuple[str, str]]:
    """The page as ("markdown" | "code", text) parts, in order; blank parts left out."""
    found, start = [], 0
    for block in PYTHON_BLOCK.finditer(markdown):
        found += [("markdown", markdown[start:block.start()].strip("\n")), ("code", block.group(1).rstrip("\n"))]
        start = block.end()
    found.append(("markdown", markdown[start:].strip("\n")))
    return [(kind, text) for kind, text in found if text.strip()]


def cell(index: int, kind: str, text: str) -> dict:
    """One nbformat 4.5 cell (ids numbered, so that the file is the same on every run)."""
    source = text.splitlines(keepends=True)
    if kind == "markdown":
        return {"cell_type": "markdown", "id": f"cell-{index}", "metadata": {}, "source": source}
    tags = [f"needs-{extra}" for extra in needed_extras(text)]
    return {"cell_type": "code", "execution_count": None, "id": f"cell-{index}",
            "metadata": {"tags": tags} if tags else {}, "outputs": [], "source": source}


def notebook(markdown: str) -> str:
    """The notebook's JSON text for a tutorial page `markdown`."""
    document = {
        "cells": [cell(i, kind, text) for i, (kind, text) in enumerate(parts(markdown))],
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                     "language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(document, indent=1, ensure_ascii=False) + "\n"


def main() -> int:
    NOTEBOOK.write_text(notebook(TUTORIAL.read_text(encoding="utf-8")), encoding="utf-8")
    print(f"wrote {NOTEBOOK.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
