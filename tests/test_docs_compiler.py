"""docs/compiler.md cannot drift from the compiler: the (aab)* matrices it shows are regenerated
here, by running examples/print_weights.py as a reader would, and must appear there verbatim;
so must the model's sizes, as the compiler and count_flops give them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from rasp_compile.compiler import compile_program
from rasp_compile.tools.flops import count_flops
from rasp_compile.frontend import load_program
from rasp_compile.runtime.model import n_nonzero, n_params

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "compiler.md"
COMMAND = "python examples/print_weights.py programs/aab.rasp"


def test_the_aab_matrices_in_the_doc_are_the_compilers():
    printed = subprocess.run([sys.executable, *COMMAND.split()[1:]], cwd=ROOT, capture_output=True,
                             text=True, check=True).stdout
    block = f"```text\n{printed}```\n"
    assert block in DOC.read_text(encoding="utf-8"), (
        "docs/compiler.md no longer shows the compiled (aab)* weights: regenerate them with "
        f"`{COMMAND}`, paste the output into its ```text block, and check the reading below it")


def test_the_aab_summary_in_the_doc_gives_the_compiled_sizes():
    model = compile_program(load_program(ROOT / "programs" / "aab.rasp"))
    summary = (f"d_model {model.d_model}, {n_params(model)} parameters ({n_nonzero(model)} non-zero, "
               f"{model.dtype}), {count_flops(model, model.n_ctx)['total']:,} FLOPs")
    text = " ".join(DOC.read_text(encoding="utf-8").split())  # the doc wraps lines
    assert summary in text, f"docs/compiler.md's (aab)* summary is out of date: it should read '{summary}'"
