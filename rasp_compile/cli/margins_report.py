"""`rasp-run WEIGHTS --margins`: every read-out's proven error bound beside its tolerance.

The compiler records them in meta.margins (compiler/precision.py, docs/format.md); this report
lists them worst first (the largest bound / tolerance), as a table or, with --json,
{"readouts": [{"readout", "kind", "reads", "bound", "tolerance", "share"}, ...]}. A file written
before margins were recorded has none: one line, exit status 2 (docs/cli.md).
"""

from __future__ import annotations

from rich.table import Table

from ..runtime.model import Model
from ..safe_text import markup_safe
from .common import CliError


def measure(model: Model) -> dict:
    """{"readouts": [...]} worst margin first, each with `share` = bound / tolerance."""
    if "margins" not in model.meta:
        raise CliError("error: this weights file records no margins (meta.margins): it was written before "
                       "rasp-compile recorded them; compile its program again to record them")
    readouts = [{**margin, "share": margin["bound"] / margin["tolerance"]} for margin in model.meta["margins"]]
    readouts.sort(key=lambda r: -r["share"])
    return {"readouts": readouts}


def render(report: dict, console) -> None:
    table = Table("read-out", "kind", "reads", "bound", "tolerance", "bound / tolerance", "proof",
                  title="proven error bounds, worst first")
    for r in report["readouts"]:
        table.add_row(markup_safe(r["readout"]), markup_safe(r["kind"]), markup_safe(r.get("reads", "")),
                      f"{r['bound']:.3g}", f"{r['tolerance']:.3g}", f"{r['share']:.3g}",
                      markup_safe(r.get("proof", "analysis")))
    console.print(table)
