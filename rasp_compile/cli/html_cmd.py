"""`rasp-run WEIGHTS INPUT --html REPORT.html`: write the inspection page of one input (docs/inspect.md).

The page (tools/html_report.py) is one self-contained file: the program's source, the residual
stream decoded into s-ops after every sub-layer, each head's attention heatmap titled with the
select it computes, and the labelled weight matrices. `check` refuses, before any work, a REPORT
that names WEIGHTS (under any name), or a program or weights file unless `--force` is given
(cli/outputs.py); the write itself refuses WEIGHTS again (runtime/atomic_write).
"""

from __future__ import annotations

from pathlib import Path

from ..runtime.atomic_write import write_atomically
from ..runtime.model import Model
from ..safe_text import markup_safe, terminal_safe
from ..tools.html_report import report
from ..tools.trace import Trace
from .common import CliError, check_one_pass
from .outputs import check_output_file
from .tokens import join_tokens

REPORT = "an HTML report"


def check(out: str, weights: str, force: bool) -> None:
    """OutputError when the report may not be written to `out` (the module docstring)."""
    check_output_file("--html", out, [weights], REPORT, force)


def write(model: Model, weights: str, tokens: list, out: str) -> dict:
    """Write the report of `tokens` to `out`, whole or not at all, never over the weights file
    (runtime/atomic_write: OutputError when `out` is WEIGHTS under any name; `check` it first)."""
    check_one_pass(model, tokens, "--html")
    text = report(Trace(model, tokens), title=f"{Path(weights).name}: {join_tokens(model, tokens)}")
    data = text.encode("utf-8")
    try:
        write_atomically(out, data, [weights])
    except OSError as error:
        raise CliError(f"error: cannot write {terminal_safe(out)}: {error.strerror or error}") from None
    return {"html": out, "bytes": len(data)}


def render(written: dict, console) -> None:
    console.print(f"wrote {markup_safe(written['html'])} ({written['bytes'] / 1024:.0f} KB)",
                  highlight=False)
