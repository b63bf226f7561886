"""docs/compiler.md cannot drift from the compiler: the (aab)* matrices it shows are regenerated
here, by running examples/print_weights.py as a reader would, and must appear there verbatim;
so must the model's sizes, as the compiler and count_flops give them, the graph dumps it shows,
and its list of the driver's steps (which is also driver.py's docstring's)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from rasp_compile.cli import dump_cmd
from rasp_compile.compiler import compile_program, driver
from rasp_compile.compiler.dump import driver_steps
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


PIPELINE = re.compile(r"^## The pipeline\n.*?\n\n((?:    [^\n]*\n)+)", re.MULTILINE | re.DOTALL)
DUMP = re.compile(r"^```text\n\$ (python -m rasp_compile\.compiler\.dump [^\n]*)\n(.*?)^```\n", re.MULTILINE | re.DOTALL)


def listed_steps(block: str, rewrites_indent: int) -> list[str]:
    """The first word of each line of a list of steps indented by 4 (a step) or `rewrites_indent`
    (a lowering rewrite, under `lower`); deeper lines continue the line above."""
    indents = {4, rewrites_indent}
    return [line.split()[0] for line in block.splitlines() if len(line) - len(line.lstrip()) in indents and line.strip()]


def test_the_docs_list_of_steps_is_the_drivers():
    block = PIPELINE.search(DOC.read_text(encoding="utf-8")).group(1)
    assert listed_steps(block, 6) == driver_steps(), (
        "docs/compiler.md's list of steps (## The pipeline) is not the driver's: it should name, in order, "
        + ", ".join(driver_steps()))


def test_the_drivers_docstring_lists_its_steps():
    """driver.py's docstring names its tables (GRAPH_PASSES, MODEL_PASSES) where they run."""
    tables = {"GRAPH_PASSES": [s.label for s in driver.GRAPH_PASSES], "MODEL_PASSES": [s.label for s in driver.MODEL_PASSES],
              "lower": ["lower", *driver.LOWERING_OPTIONS, *(s.name for s in driver.LOWERING_REWRITES)]}
    named = listed_steps(driver.__doc__, 4)
    assert [step for name in named for step in tables.get(name, [name])] == driver_steps()


def test_the_dumps_in_the_doc_are_what_the_dump_prints(capsys):
    shown = DUMP.findall(DOC.read_text(encoding="utf-8"))
    assert len(shown) >= 3  # one program before and after two passes
    for command, text in shown:
        assert dump_cmd.main(command.split()[3:]) == 0
        assert capsys.readouterr().out == text, f"docs/compiler.md no longer shows what `{command}` prints: paste it again"
