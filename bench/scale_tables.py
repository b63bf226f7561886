"""The tables of bench/scale.py's report, built from its cells (dicts of figures, cells.py):
one per program, ours beside tracr, and the cells past max_len 1,024 with float32's and float64's
exactness."""

from __future__ import annotations

import tracr_figures as tracr
from cells import CONTEXT, cold_text, find, heads_text, ratio_text, reason, shown
from harness import Table

PROGRAM_COLUMNS = ["max_len", "layers", "heads", "d_model", "params", "non-zero", "FLOPs", "compile CPU s",
                   "cold CPU s", "cold wall s", "seq/s", "ms/1000", "accuracy %", "skipped"]


def program_table(program: str, cells: list[dict]) -> Table:
    """One row per max_len; a cell without a model says why in its layers column (cells.reason)."""
    rows = []
    for c in cells:
        compile_cpu = shown(c, "compile_cpu_s", ".3f")
        if "layers" not in c:
            rows.append([f"{c['max_len']:,}", reason(c), *["-"] * 5, compile_cpu, *["-"] * 6])
            continue
        rows.append([f"{c['max_len']:,}", shown(c, "layers", "d"), heads_text(c), shown(c, "d_model", ","),
                     shown(c, "params", ","), shown(c, "nonzero", ","), shown(c, "flops", ","), compile_cpu,
                     cold_text(c), cold_text(c, "cold_wall_s"), shown(c, "seqs_per_s", ",.0f"),
                     shown(c, "forward_ms_per_1000", ",.1f"), shown(c, "accuracy", ".2f"), shown(c, "skipped", ",")])
    return Table(program, PROGRAM_COLUMNS, rows)


def comparison_table(cells: list[dict]) -> Table:
    """Ours beside tracr on every program and max_len of the tracr figures (tracr_figures.py)."""
    columns = ["program", "max_len", "layers ours/tracr", "params ours", "params tracr", "ratio",
               "exact ours", "exact tracr", "cold compile s ours (CPU)", "compile s tracr (wall)", "ms/1000 ours",
               "ms/1000 tracr"]
    rows = []
    for figure in tracr.TRACR:
        cell = find(cells, figure.program, figure.max_len) or {"status": "not measured"}
        ratio = cell["params"] / figure.params if "params" in cell else None
        low, high = figure.compile_seconds
        rows.append([figure.program, str(figure.max_len), f"{shown(cell, 'layers', 'd')}/{figure.layers}",
                     shown(cell, "params", ","), f"{figure.params:,}",
                     ratio_text(ratio),
                     shown(cell, "accuracy", ".2f") + ("%" if "accuracy" in cell else ""), figure.exactness,
                     cold_text(cell), f"{low}-{high}", shown(cell, "forward_ms_per_1000", ",.1f"),
                     "-" if figure.forward_ms_per_1000 is None else f"{figure.forward_ms_per_1000:,.0f}"])
    return Table("ours vs tracr", columns, rows)


LONG_COLUMNS = ["program", "max_len", "layers", "params", "growth", "compile CPU s", "float32", "float64",
                "float64 weights cast to float32"]


def long_table(cells: list[dict]) -> Table:
    """The cells past max_len 1,024: growth is params over those at 1,024 (of the model each cell
    built, float32 or else float64); float64 is compiled only where float32 is refused for
    precision or not exact, and its weights cast to float32 are run on the same inputs."""
    rows = []
    for cell in (c for c in cells if c["max_len"] > CONTEXT):
        built = cell if "params" in cell else cell.get("float64", {})
        base = (find(cells, cell["program"], CONTEXT) or {}).get("params")
        growth = f"{built['params'] / base:.2f}x" if "params" in built and base else "-"
        marked = "" if built is cell else " (float64)"
        rows.append([cell["program"], f"{cell['max_len']:,}", shown({"status": "-", **built}, "layers", "d"),
                     f"{built['params']:,}{marked}" if "params" in built else "-", growth,
                     shown({"status": "-", **built}, "compile_cpu_s", ".1f"),
                     exactness(cell, cell), exactness(cell.get("float64"), cell),
                     cast_exactness(cell.get("float64", {}).get("cast_to_float32"))])
    return Table(f"past max_len {CONTEXT:,}: exact in float32, float64 where float32 is not", LONG_COLUMNS, rows)


def exactness(figures: dict | None, cell: dict) -> str:
    """"exact on N inputs of A..B tokens", the share of positions that agreed (with a numerical
    answer's largest error), the refusal, or why not measured."""
    if figures is None:
        if "refused" in cell:
            return "not tried (refused, not for precision)"
        return "not needed" if cell.get("accuracy") == 100.0 else "-"
    if "accuracy" not in figures:
        return reason(figures if "refused" in figures else cell)
    low, high = figures["lengths"]
    on = f"on {figures['inputs'] - figures['skipped']:,} inputs of {low:,}..{high:,} tokens"
    if figures["accuracy"] == 100.0:
        return f"exact {on}"
    error = f", largest error {figures['max_error']:.2g}" if "max_error" in figures else ""
    return f"{figures['accuracy']:.2f}% of positions{error} {on}"


def cast_exactness(figures: dict | None) -> str:
    """The float64 weights cast to float32, on the float64 column's inputs: a numerical answer's
    largest error (what a float32 model of that construction measures, exact or not), or "exact",
    or the share of positions that agreed; "-" where float64 was not compiled or no input was checked."""
    if figures is None or figures["accuracy"] is None:
        return "-"
    share = "exact" if figures["accuracy"] == 100.0 else f"{figures['accuracy']:.2f}% of positions"
    return f"largest error {figures['max_error']:.2g} ({share})" if "max_error" in figures else share
