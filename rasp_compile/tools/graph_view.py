"""The program's graph drawn over the model's layers, as SVG (the report's "Program graph"): one
box per s-op, in the column of the first stage after its inputs' that writes it (the embedding, then each layer's
attention and MLP), an arrow from each s-op to the s-ops computed from it (an aggregate's and a
selector_width's selects included), as tracr draws a program's graph over its layers.

An s-op the residual does not hold (folded into the weights of what reads it, or pruned) is drawn
dashed, in the column of the latest of its inputs (whose writer computes it). Reads a trace
through `writes()`, `stages` and `program` only; a model without a recorded source gets a note instead.
"""

from __future__ import annotations

import html

from .. import ir
from ..compiler.naming import sop_label

BOX_HEIGHT, ROW_GAP, COLUMN_GAP = 22, 12, 56  # px
CHAR = 7.0  # px per character of the 12 px monospace box labels
MAX_LABEL = 32  # characters of an s-op's name shown in its box (the tooltip has it whole)


def graph_svg(t) -> str:
    """The drawing for trace `t` (a `<div class="graph">`), or a note when the model has no source."""
    program = t.program
    if program is None:
        return '<p class="note">no program recorded in the file: no graph to draw</p>'
    sops = [node for node in program.nodes() if isinstance(node, ir.SOp)]
    names = {node: program.output_name if node is program.output else sop_label(node, program) for node in sops}
    inputs = {node: _inputs(node) for node in sops}
    writes = t.writes()
    column: dict = {}
    for node in sops:  # program.nodes() lists every node after its children
        stages = writes.get(names[node]) or []
        latest = max((column[i][0] for i in inputs[node] if i in column), default=0)
        if stages:  # the first stage after its inputs' that writes it (the embedding writes BOS's row of any)
            column[node] = (next((s for s in stages if s > latest or not inputs[node]), stages[-1]), True)
        else:
            column[node] = (latest, False)  # folded: computed where its latest input is written
    n_columns = max(len(t.stages), max(c for c, _ in column.values()) + 1)
    width = max(len(_short(names[n])) for n in sops) * CHAR + 16
    rows: dict[int, int] = {}
    place = {}
    for node in sops:
        c = column[node][0]
        place[node] = (c * (width + COLUMN_GAP) + 8, 40 + rows.get(c, 0) * (BOX_HEIGHT + ROW_GAP))
        rows[c] = rows.get(c, 0) + 1
    total_width = n_columns * (width + COLUMN_GAP) + 8
    total_height = 40 + max(rows.values()) * (BOX_HEIGHT + ROW_GAP) + 8
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="program-graph" width="{total_width:.0f}" '
             f'height="{total_height}" font-family="monospace" font-size="12" role="img" aria-label="program graph">',
             '<defs><marker id="arrow" viewBox="0 0 6 6" refX="6" refY="3" markerWidth="6" markerHeight="6" '
             'orient="auto"><path d="M0 0L6 3L0 6z" fill="#888"/></marker></defs>']
    for c in range(n_columns):
        stage = t.stages[c].name if c < len(t.stages) else "folded"
        parts.append(f'<text x="{c * (width + COLUMN_GAP) + 8:.0f}" y="20" fill="#555">{html.escape(stage)}</text>')
    for node in sops:
        x1, y1 = place[node]
        for source in inputs[node]:
            x0, y0 = place[source]
            parts.append(f'<path d="M{x0 + width:.0f} {y0 + BOX_HEIGHT / 2:.0f}L{x1:.0f} {y1 + BOX_HEIGHT / 2:.0f}" '
                         'stroke="#888" fill="none" marker-end="url(#arrow)"/>')
    for node in sops:
        parts.append(_box(names[node], *place[node], width, column[node][1], node is program.output))
    return f'<div class="graph scroll">{"".join(parts)}</svg></div>'


def _box(name: str, x: float, y: float, width: float, held: bool, output: bool) -> str:
    dash = "" if held else ' stroke-dasharray="4 3"'
    fill = "#eef5ff" if output else "white"
    return (f'<g class="sop"><title>{html.escape(name)}{"" if held else " (not in the residual stream)"}</title>'
            f'<rect x="{x:.0f}" y="{y:.0f}" width="{width:.0f}" height="{BOX_HEIGHT}" rx="4" fill="{fill}" '
            f'stroke="#555"{dash}/><text x="{x + 8:.0f}" y="{y + 15:.0f}">{html.escape(_short(name))}</text></g>')


def _short(name: str) -> str:
    return name if len(name) <= MAX_LABEL else name[: MAX_LABEL - 1] + "…"


def _inputs(node: ir.SOp) -> list[ir.SOp]:
    """The s-ops `node` is computed from, through its selector's selects too."""
    found, seen = [], set()  # s-ops compare by building a map: told apart by identity (a set)
    stack = list(node.children())
    while stack:
        child = stack.pop(0)
        if isinstance(child, ir.SOp):
            if child not in seen:
                seen.add(child)
                found.append(child)
        else:
            stack.extend(child.children())
    return found
