"""`rasp-run WEIGHTS INPUT --trace`: what the model computes, as a teacher shows it (docs/inspect.md).

First every head, named by the select it computes (meta.heads; "unknown" for a file without
it). Then one table: each residual variable at every token, read back from the residual stream
(tools/decode.py: a one-hot as its value, a number as the value it stands for, float noise as 0),
with the sub-layer(s) that wrote it, in the order they were written; the last row is the
prediction under the output's name. Then each head's attention pattern, titled with its select:
query rows x key columns, the BOS key column labelled. Labels are never wrapped mid-word; the
BOS position and the `bos` dimension are hidden.

`--json` gives the same as data: `positions`, `first_token` (1 when position 0 is BOS), `heads`,
`stages` (each with `stage`, `written` and the decoded `values` of every variable) and
`attention` (each head's `layer`, `head`, `title` and full pattern, BOS row and column included).
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
from rich.cells import cell_len
from rich.console import COLOR_SYSTEMS
from rich.style import Style
from rich.table import Table

from ..runtime.model import Model
from ..safe_text import markup_safe, terminal_safe
from ..tools.decode import AMBIGUOUS, decode
from ..tools.trace import Trace
from .common import check_one_pass
from ..runtime.token_text import value_text

READ_OUT = "read-out"
SHOWN_WEIGHT = 0.005  # a pattern weight below this is a blank cell
CELL_WIDTH = 4  # characters of a heatmap cell
HEATMAP_CORNER = "query \\ key"


def measure(model: Model, tokens: list) -> dict:
    """The decoded stream per stage (embedding, then each present sub-layer, then the read-out),
    every head's description and every pattern."""
    check_one_pass(model, tokens, "--trace")
    t = Trace(model, tokens)
    writes = t.writes()
    stages: list[dict[str, Any]] = []
    for i, stage in enumerate(t.stages):
        x = stage.x[t.first:]
        stages.append({"stage": stage.name, "written": [name for name, at in writes.items() if i in at],
                       "values": {name: decode(variable, x) for name, variable in t.variables.items()}})
    stages.append({"stage": READ_OUT, "written": [t.output_name],
                   "values": {**stages[-1]["values"], t.output_name: list(t.output)}})
    attention = [{"layer": head.layer, "head": head.head, "title": head.title,
                  "pattern": np.round(t.patterns[head.layer][head.head], 4).tolist()} for head in t.heads]
    heads = [{"layer": h.layer, "head": h.head, "title": h.title, "place": h.place, "definitions": h.definitions}
             for h in t.heads]
    return {"positions": list(t.positions), "first_token": t.first, "heads": heads, "stages": stages,
            "attention": attention}


def _shown(value) -> str:
    if isinstance(value, float):
        return f"{value:.3g}"
    return "?" if value == AMBIGUOUS and not isinstance(value, bool) else markup_safe(value_text(value))


def _short_stage(stage: str) -> str:
    """`layer 2 attention` -> `L2 attn`, `layer 0 MLP` -> `L0 MLP`: the written-by column stays narrow."""
    words = stage.split()
    if len(words) == 3 and words[0] == "layer":
        return f"L{words[1]} {'attn' if words[2] == 'attention' else words[2]}"
    return stage


def _panels(widths: list[int], room: int, gap: int = 3) -> list[list[int]]:
    """Column indices grouped so that each group's columns (`gap` characters of border and padding
    each) fit in `room`: a long input continues in further tables, never squeezed mid-value."""
    panels: list[list[int]] = [[]]
    used = 0
    for j, width in enumerate(widths):
        if panels[-1] and used + width + gap > room:
            panels.append([])
            used = 0
        panels[-1].append(j)
        used += width + gap
    return panels


def render(report: dict, console) -> None:
    first, positions = report["first_token"], report["positions"]
    tokens = [markup_safe(p) for p in positions[first:]]
    console.print("[bold]heads[/]")
    for head in report["heads"]:
        console.print(f"  {markup_safe(head['place']):<11} {markup_safe(head['title'])}")
        if head["definitions"]:
            console.print(f"  {'':<11}   where {markup_safe(head['definitions'])}")
    if not report["heads"]:
        console.print("  (none)")
    writers: dict[str, list[str]] = {}
    for stage in report["stages"]:
        for name in stage["written"]:
            writers.setdefault(name, []).append(_short_stage(stage["stage"]))
    last = report["stages"][-1]["values"]
    rows = [(markup_safe(name), " + ".join(stages), [_shown(v) for v in last[name]]) for name, stages in writers.items()]
    label_width = max((len(r[0]) for r in rows), default=4) + max((len(r[1]) for r in rows), default=10) + 7
    widths = [max(len(token), *(len(r[2][j]) for r in rows)) for j, token in enumerate(tokens)]
    for panel in _panels(widths, max(console.width - label_width, 10)):
        table = Table("s-op", "written by", *(tokens[j] for j in panel), title_justify="left",
                      title="s-ops at each token, read back from the residual stream")
        for name, stages, values in rows:
            table.add_row(name, stages, *(values[j] for j in panel), style="bold" if stages == READ_OUT else "")
        console.print(table, no_wrap=True, crop=False)
    for head in report["attention"]:
        console.print(f"[bold]{markup_safe(head['title'])}[/]")
        _heatmap(console, head["pattern"][first:], positions[first:], positions)


def _heatmap(console, pattern: list[list[float]], queries: list[str], keys: list[str]) -> None:
    """One head's pattern [query, key] as shaded cells, query labels down the side and key labels
    on top, in panels of the key columns that fit the console (as the s-op table). Written as lines
    of text with the console's colour codes, not through a rich Table or Text: those measure and
    split every cell, which took minutes for the million cells of 1,024 tokens."""
    colours = None if console.no_color else COLOR_SYSTEMS.get(console.color_system or "")
    queries = [terminal_safe(q) for q in queries]
    keys = [terminal_safe(k) for k in keys]
    side = max(cell_len(HEATMAP_CORNER), *map(cell_len, queries))
    widths = [max(cell_len(key), CELL_WIDTH) for key in keys]
    after = [" " * (width - CELL_WIDTH + 1) for width in widths]  # a cell's padding to its column's width
    for panel in _panels(widths, max(console.width - side - 2, 10), gap=2):
        lines = [f" {_padded(HEATMAP_CORNER, side)} " + "".join(f" {_padded(keys[j], widths[j])} " for j in panel)]
        lines += [f" {_padded(label, side)} " + "".join(" " + _cell(row[j], colours) + after[j] for j in panel)
                  for label, row in zip(queries, pattern)]
        console.file.write("\n".join(lines) + "\n")


def _padded(text: str, width: int) -> str:
    """`text` padded with spaces to `width` terminal columns (a wide character takes two)."""
    return text + " " * (width - cell_len(text))


@cache
def _cell(weight: float, colours) -> str:
    """A weight as a shaded cell of CELL_WIDTH characters, in `colours` (a rich ColorSystem, None
    for none): darker for 0, lighter towards 1, blank below SHOWN_WEIGHT (cached: a pattern
    repeats few weights)."""
    shade = int(40 + 215 * weight)
    ink = "black" if shade > 128 else "white"
    text = "" if weight < SHOWN_WEIGHT else "1" if weight > 1 - SHOWN_WEIGHT else f"{weight:.2f}".lstrip("0")
    return Style.parse(f"{ink} on rgb({shade},{shade},{shade})").render(f"{text:>{CELL_WIDTH}}", color_system=colours)
