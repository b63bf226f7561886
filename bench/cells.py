"""The measured cells of bench/scale.py (one program at one max_len, as a dict of figures) and
how reports show and find them; shared by the tables (scale.py) and the goal checks (goals.py)."""

from __future__ import annotations

from pathlib import Path

PROGRAMS_DIR = Path(__file__).resolve().parent.parent / "programs"
CONTEXT = 1024
"""GPT-2's context, the max_len of the goals C1-C3; cells past it get their own table."""


def shown(cell: dict, key: str, fmt: str) -> str:
    """A cell's figure formatted, or why it is missing (the cell's status)."""
    value = cell.get(key)
    if value is None:
        return "-" if cell["status"] == "ok" else cell["status"]
    return format(value, fmt)


def heads_text(cell: dict) -> str:
    """Heads per layer as 1/0/2, "-" for a model without layers."""
    if "heads" not in cell:
        return cell["status"]
    return "/".join(map(str, cell["heads"])) or "-"


def cold_text(cell: dict, key: str = "cold_cpu_s") -> str:
    """The cold compile's CPU (or `key` "cold_wall_s": wall) seconds, or why there are none."""
    failed = [run for run in cell.get("cold_runs", []) if isinstance(run, str)]
    if failed:
        return failed[0]
    return shown(cell, key, ".2f") if "cold_runs" in cell or cell["status"] != "ok" else "-"


def reason(cell: dict) -> str:
    """Why a cell has no model, in one short line: the located refusal's first clause (its
    FILE:LINE:COL kept), the worker's last error line, or the time limit."""
    if "refused" in cell:
        return "refused: " + refusal_clause(cell["refused"])
    if "error" in cell:
        return f"{cell['status']}: {markdown_safe(clipped(cell['error']))}"
    return cell["status"]


ERROR_CHARS = 160
"""Characters of a worker's error line or a refusal's clause a table shows, cut at a word with
" ..." (results.json keeps it whole)."""


def clipped(text: str) -> str:
    """`text`, or its first ERROR_CHARS characters cut back to a whole word, then " ..." (a number
    is never shown cut short)."""
    return text if len(text) <= ERROR_CHARS else text[:ERROR_CHARS].rsplit(" ", 1)[0] + " ..."


def refusal_clause(message: str) -> str:
    """`FILE:LINE:COL: error: WHAT; advice` (format_error's first line) as `FILE:LINE:COL: WHAT`,
    cut at the first "; " or ": " of the message, markdown-safe."""
    first = message.splitlines()[0] if message else ""
    where, _, what = first.partition(" error: ")
    for stop in ("; ", ": "):
        what = what.split(stop)[0]
    return markdown_safe(f"{where} {clipped(what)}")


def markdown_safe(text: str) -> str:
    """`text` in a markdown table's cell: its pipes escaped."""
    return text.replace("|", "\\|")


def find(cells: list[dict], program: str, max_len: int) -> dict | None:
    return next((c for c in cells if c["program"] == program and c["max_len"] == max_len), None)


def ratio_text(ratio: float | None) -> str:
    """ours / tracr as 1/N, N with a decimal while it is below 10 (1/1.8 is not 1/2)."""
    if ratio is None:
        return "-"
    if ratio >= 1:
        return f"{ratio:.2f}"
    return f"1/{1 / ratio:.1f}" if 1 / ratio < 10 else f"1/{1 / ratio:,.0f}"


def library_programs() -> list[str]:
    return sorted(path.stem for path in PROGRAMS_DIR.glob("*.rasp"))
