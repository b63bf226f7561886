"""The measured cells of bench/scale.py (one program at one max_len, as a dict of figures) and
how reports show and find them; shared by the tables (scale.py) and the goal checks (goals.py)."""

from __future__ import annotations

from pathlib import Path

PROGRAMS_DIR = Path(__file__).resolve().parent.parent / "programs"


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


def compile_text(cell: dict) -> str:
    runs = cell.get("compile_runs", [])
    failed = [run for run in runs if isinstance(run, str)]
    return failed[0] if failed else shown(cell, "compile_s", ".2f")


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
