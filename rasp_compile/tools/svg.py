"""Heatmaps as SVG text, written directly: no plotting library, nothing fetched, so a report is one
self-contained file that any browser (or a notebook) draws.

`heatmap(matrix, rows, columns, title)` draws one labelled matrix in a `<figure>`: the title on
top (HTML text, so it wraps and reads as text), then the SVG: a cell per entry, row labels on the
left, column labels slanted above, each nonzero cell's value in its tooltip and, where the text
fits the cell, written in it (zero cells are the white background, so a sparse matrix costs
little); below the cells, a legend of the colour scale.
Colours: a pattern (`scale="unit"`, values in 0..1) from white to blue; weights and residuals
(`scale="signed"`) from red (negative) through white (0) to blue (positive), scaled to the
largest magnitude, the matrix's own or a whole panel's (`largest`, `scale_of`), so the heatmaps
of one panel share one scale. Every string is HTML-escaped here: labels and titles come from programs and
files.
"""

from __future__ import annotations

import html

import numpy as np

MAX_CELL, MIN_CELL = 22, 7  # px: a cell's side, shrunk from MAX_CELL so that wide matrices fit MAX_WIDTH
MAX_WIDTH = 1100  # px of cells per heatmap
FONT = 11  # px
CHAR = 0.62 * FONT  # px: the width of one character of the monospace labels
MAX_LABEL = 28  # characters of a label shown; longer ones end in "…" (the tooltip has them whole)
SLANT = 0.71  # sin(45°): column labels run up at 45°, taking this share of their length in height
BLUE, RED = (33, 102, 172), (178, 24, 43)
ZERO = 1e-5  # a value below this is drawn and shown as 0 (float32 noise), its cell left white
VALUE_FONT = 8  # px: the values written inside cells
VALUE_CHAR = 0.62 * VALUE_FONT
LEGEND_STEPS, LEGEND_SWATCH = 11, 14  # the colour legend: swatches from the scale's low end to its top, px each
LEGEND_WIDTH, LEGEND_HEIGHT = LEGEND_STEPS * LEGEND_SWATCH + 20, 30  # px the legend takes below the cells
MAX_CELLS = 20_000
"""Cells one heatmap covers at most (a nonzero one takes about 150 bytes of page): a larger matrix
(a wide c_attn at a long max_len) gets a note instead, so a page stays a few MB and opens quickly."""


def _colour(value: float, scale: str, top: float) -> str:
    """The fill of one cell: white at 0, BLUE at +top (and at 1 on a unit scale), RED at -top."""
    share = 0.0 if top == 0 or not np.isfinite(value) else max(-1.0, min(1.0, value / top))
    ink = BLUE if share >= 0 else RED
    mixed = (round(255 + (c - 255) * abs(share)) for c in ink)
    return "rgb({},{},{})".format(*mixed)


def _short(label: str) -> str:
    return label if len(label) <= MAX_LABEL else label[: MAX_LABEL - 1] + "…"


def _number(value: float) -> str:
    return "0" if abs(value) < ZERO else f"{value:.4g}"


def heatmap(matrix, rows, columns, title: str, scale: str = "signed", caption: str = "",
            largest: float | None = None) -> str:
    """One `<figure>` drawing `matrix` [len(rows), len(columns)] with its labels and its title
    above; `largest`: the magnitude drawn at full colour (a panel's one scale; else the matrix's own)."""
    note = f"<figcaption>{html.escape(caption)}</figcaption>" if caption else ""
    matrix = np.asarray(matrix, dtype=np.float64)
    if matrix.size > MAX_CELLS:
        too_large = f"{matrix.shape[0]} x {matrix.shape[1]}: too large to draw here (format_model prints it)"
        return f'<figure><div class="title">{html.escape(title)}</div><p class="note">{too_large}</p>{note}</figure>'
    svg = _svg(matrix, rows, columns, title, scale, 0, largest)
    return f'<figure><div class="title">{html.escape(title)}</div>{svg}{note}</figure>'


def standalone_svg(matrix, rows, columns, title: str, scale: str = "signed") -> str:
    """The same drawing as one SVG document, its title drawn inside (for a file: docs, slides)."""
    return _svg(np.asarray(matrix, dtype=np.float64), rows, columns, title, scale, 2 * FONT)


def scale_of(matrices, scale: str = "signed") -> float:
    """The one scale of a panel of heatmaps: 1 for patterns, else the largest magnitude in any."""
    return 1.0 if scale == "unit" else max((float(np.max(np.abs(m), initial=0.0)) for m in matrices), default=0.0)


def _svg(matrix: np.ndarray, rows, columns, title: str, scale: str, title_height: int,
         largest: float | None = None) -> str:
    n_rows, n_cols = matrix.shape
    cell = max(MIN_CELL, min(MAX_CELL, MAX_WIDTH // max(n_cols, 1)))
    left = CHAR * max((len(_short(r)) for r in rows), default=1) + 8
    top_labels = SLANT * CHAR * max((len(_short(c)) for c in columns), default=1) + 8
    top = title_height + top_labels
    width = max(left + cell * n_cols + top_labels + 10, CHAR * len(title) + 14 if title_height else 0,
                left + LEGEND_WIDTH)
    height = top + cell * n_rows + 10 + LEGEND_HEIGHT
    if largest is None:
        largest = scale_of([matrix], scale)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="heatmap" width="{width:.0f}" height="{height:.0f}" '
        f'font-family="monospace" font-size="{FONT}" role="img" aria-label="{html.escape(title)}">',
        '<rect width="100%" height="100%" fill="white"/>' if title_height else "",
        f'<text x="4" y="{FONT + 2}" font-weight="bold">{html.escape(title)}</text>' if title_height else "",
    ]
    for i, label in enumerate(rows):
        y = top + cell * i + cell / 2 + FONT / 3
        parts.append(f'<text x="{left - 6:.0f}" y="{y:.1f}" text-anchor="end"><title>{html.escape(label)}</title>'
                     f"{html.escape(_short(label))}</text>")
    for j, label in enumerate(columns):
        x, y = left + cell * j + cell / 2 + FONT / 3, top - 6
        parts.append(f'<text x="{x:.1f}" y="{y:.0f}" transform="rotate(-45 {x:.1f} {y:.0f})">'
                     f"<title>{html.escape(label)}</title>{html.escape(_short(label))}</text>")
    x0, y0, x1, y1 = round(left), round(top), round(left) + cell * n_cols, round(top) + cell * n_rows
    grid = "".join(f"M{x0 + cell * j} {y0}V{y1}" for j in range(n_cols + 1))
    grid += "".join(f"M{x0} {y0 + cell * i}H{x1}" for i in range(n_rows + 1))
    parts.append(f'<g class="cells"><rect x="{x0}" y="{y0}" width="{x1 - x0}" height="{y1 - y0}" fill="white"/>')
    for i, j in zip(*np.nonzero(np.abs(matrix) >= ZERO)):  # a white cell is drawn by the background
        tip = html.escape(f"{rows[i]} × {columns[j]}: {_number(matrix[i, j])}")
        parts.append(f'<rect x="{x0 + cell * j}" y="{y0 + cell * i}" width="{cell}" height="{cell}" '
                     f'fill="{_colour(matrix[i, j], scale, largest)}"><title>{tip}</title></rect>')
    parts.append(f'<path d="{grid}" stroke="#ddd" stroke-width="0.5" fill="none"/></g>')
    parts.append(_cell_values(matrix, x0, y0, cell, scale, largest))
    parts.append(_legend(x0, y1 + 8, scale, largest))
    return "".join(parts) + "</svg>"


def _cell_values(matrix: np.ndarray, x0: int, y0: int, cell: int, scale: str, largest: float) -> str:
    """Each nonzero cell's value written in it, where the text fits the cell (dark cells in white)."""
    if cell * 1.0 < VALUE_FONT + 4:
        return ""
    texts = []
    for i, j in zip(*np.nonzero(np.abs(matrix) >= ZERO)):
        text = _cell_text(matrix[i, j])
        if len(text) * VALUE_CHAR > cell - 2:
            continue
        share = abs(matrix[i, j]) / largest if largest else 0.0
        x, y = x0 + cell * j + cell / 2, y0 + cell * i + cell / 2 + VALUE_FONT / 3
        texts.append(f'<text x="{x:.1f}" y="{y:.1f}" fill="{"white" if share > 0.55 else "#222"}">{text}</text>')
    return (f'<g class="values" font-size="{VALUE_FONT}" text-anchor="middle" pointer-events="none">'
            f'{"".join(texts)}</g>') if texts else ""


def _cell_text(value: float) -> str:
    """A value as short as a cell holds it: `.86`, `-1.5`, `12`."""
    text = f"{value:.2g}" if abs(value) < 100 else f"{value:.0f}"
    return text.replace("0.", ".", 1) if text.startswith(("0.", "-0.")) else text


def _legend(x: float, y: float, scale: str, largest: float) -> str:
    """The colour scale: LEGEND_STEPS swatches from -largest (0 for a pattern) to +largest, labelled."""
    low = 0.0 if scale == "unit" else -largest
    steps = np.linspace(low, largest, LEGEND_STEPS)
    swatch = LEGEND_SWATCH
    rects = "".join(f'<rect x="{x + swatch * k:.0f}" y="{y:.0f}" width="{swatch}" height="10" '
                    f'fill="{_colour(v, scale, largest)}" stroke="#ccc" stroke-width="0.3"/>' for k, v in enumerate(steps))
    end = x + swatch * LEGEND_STEPS
    labels = (f'<text x="{x:.0f}" y="{y + 21:.0f}">{_number(low)}</text>'
              f'<text x="{end:.0f}" y="{y + 21:.0f}" text-anchor="end">{_number(largest)}</text>')
    return f'<g class="legend" font-size="{VALUE_FONT}">{rects}{labels}</g>'


def nonzero_part(matrix, rows, columns) -> tuple[np.ndarray, list[str], list[str], str]:
    """The rows and columns of `matrix` holding a nonzero entry, their labels, and a note of how
    many were left out ('' when none)."""
    matrix = np.asarray(matrix)
    keep_rows = np.flatnonzero(np.any(matrix != 0, axis=1))
    keep_cols = np.flatnonzero(np.any(matrix != 0, axis=0))
    left_out = [f"{n} zero {what}{'s' * (n != 1)}" for n, what in
                ((matrix.shape[0] - len(keep_rows), "row"), (matrix.shape[1] - len(keep_cols), "column")) if n]
    note = "not shown: " + " and ".join(left_out) if left_out else ""
    return (matrix[np.ix_(keep_rows, keep_cols)], [rows[i] for i in keep_rows],
            [columns[j] for j in keep_cols], note)


def nonzero_heatmap(matrix, rows, columns, title: str, empty_note: str = "", largest: float | None = None) -> str:
    """`heatmap` of the rows and columns holding a nonzero entry, captioned with what was left out."""
    part, kept_rows, kept_columns, note = nonzero_part(matrix, rows, columns)
    return heatmap(part, kept_rows, kept_columns, title, caption=note or empty_note, largest=largest)
