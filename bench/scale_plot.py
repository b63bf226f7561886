"""Params and compile time against max_len, log-log, one line per program: an SVG drawn from
bench/scale.py's cells, written as text the way rasp_compile/tools/svg.py draws its heatmaps (no
plotting library; monospace labels; every name HTML-escaped; a tooltip on each point).

    python bench/scale_plot.py [--results bench/results/results.json] [--out bench/results/scale.svg]

Two panels side by side, params (every weight of the float32 model) and compile CPU seconds (of
`compile_program` in the measuring worker), a legend of the programs on the right. A program's line
joins the max_lens where it compiled in float32; it stops where the compiler refused the program or
the cell timed out. scale.py writes the plot after each run; this command redraws it from a results.json.
"""

from __future__ import annotations

import argparse
import html
import json
import math
import sys
from pathlib import Path

from harness import RESULTS

from rasp_compile.tools.svg import FONT

PANELS = (("params", "params", "parameters of the float32 model"),
          ("compile_cpu_s", "compile", "compile CPU seconds"))
"""(the cell's key, the panel's id, its title)."""
COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
           "#17becf")
DASHES = ("", "6 3", "2 2")  # after each round of COLOURS, the next dash pattern
WIDTH, HEIGHT = 400, 300  # px of one panel's plotting area
LEFT, TOP, BOTTOM, GAP = 60, 56, 40, 40  # px around the plotting areas: labels, title, max_len axis, between panels
LEGEND_ROW, LEGEND_WIDTH = 14, 150  # px
SMALLEST = 1e-3
"""Values below this (a compile the CPU clock calls 0 s) are drawn at it."""


def series(cells: list[dict], key: str) -> dict[str, list[tuple[int, float]]]:
    """Per program (in the cells' order), its (max_len, value) points in order of max_len."""
    points: dict[str, list[tuple[int, float]]] = {}
    for cell in cells:
        points.setdefault(cell["program"], [])
        if cell.get(key) is not None and "layers" in cell:
            points[cell["program"]].append((cell["max_len"], max(float(cell[key]), SMALLEST)))
    return {program: sorted(found) for program, found in points.items()}


def decades(values: list[float]) -> tuple[int, int]:
    """The powers of ten just below the smallest value and just above the largest."""
    return math.floor(math.log10(min(values))), math.ceil(math.log10(max(values)) + 1e-9)


def number(value: float) -> str:
    """10, 1k, 1M; 0.01 for values below 1."""
    for size, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= size:
            return f"{value / size:g}{suffix}"
    return f"{value:g}"


def panel(x0: float, title: str, ident: str, lines: dict[str, list[tuple[int, float]]], max_lens: list[int],
          styles: dict[str, str]) -> str:
    """One log-log panel at x0: axes, grid, one polyline (with point markers) per program that has points."""
    values = [v for found in lines.values() for _, v in found] or [1.0]
    low, high = decades(values)
    x_low, x_high = math.log10(min(max_lens)), math.log10(max(max_lens)) + 1e-9

    def x(n: float) -> float:
        return x0 + WIDTH * (math.log10(n) - x_low) / (x_high - x_low)

    def y(v: float) -> float:
        return TOP + HEIGHT * (1 - (math.log10(v) - low) / (high - low))

    parts = [f'<g class="panel" id="{ident}">',
             f'<text x="{x0}" y="{TOP - 12}" font-weight="bold">{html.escape(title)}</text>',
             f'<rect x="{x0}" y="{TOP}" width="{WIDTH}" height="{HEIGHT}" fill="none" stroke="#999"/>']
    for k in range(low, high + 1):
        parts.append(f'<path d="M{x0} {y(10.0 ** k):.1f}H{x0 + WIDTH}" stroke="#e4e4e4"/>'
                     f'<text x="{x0 - 4}" y="{y(10.0 ** k) + FONT / 3:.1f}" text-anchor="end">{number(10.0 ** k)}</text>')
    for n in max_lens:
        parts.append(f'<path d="M{x(n):.1f} {TOP}V{TOP + HEIGHT}" stroke="#f0f0f0"/>'
                     f'<text x="{x(n):.1f}" y="{TOP + HEIGHT + 12}" font-size="{FONT - 2}" text-anchor="end" '
                     f'transform="rotate(-40 {x(n):.1f} {TOP + HEIGHT + 12})">{n:,}</text>')
    parts.append(f'<text x="{x0 + WIDTH / 2}" y="{TOP + HEIGHT + BOTTOM - 2}" text-anchor="middle">max_len</text>')
    for program, found in lines.items():
        if not found:
            continue
        name = html.escape(program)
        coords = " ".join(f"{x(n):.1f},{y(v):.1f}" for n, v in found)
        dots = "".join(f'<circle cx="{x(n):.1f}" cy="{y(v):.1f}" r="2.5"><title>{name} at max_len {n:,}: '
                       f'{v:,.4g}</title></circle>' for n, v in found)
        parts.append(f'<g class="series" data-program="{name}" {styles[program]}>'
                     f'<polyline points="{coords}" fill="none" stroke-width="1.5"/>{dots}</g>')
    return "".join(parts) + "</g>"


def plot(cells: list[dict]) -> str:
    """The SVG document: both panels and the legend."""
    programs = list(dict.fromkeys(cell["program"] for cell in cells))
    max_lens = sorted({cell["max_len"] for cell in cells}) or [1]
    styles = {}
    for i, program in enumerate(programs):
        colour, dash = COLOURS[i % len(COLOURS)], DASHES[i // len(COLOURS) % len(DASHES)]
        styles[program] = f'stroke="{colour}" fill="{colour}"' + (f' stroke-dasharray="{dash}"' if dash else "")
    panels = "".join(panel(LEFT + i * (WIDTH + LEFT + GAP), title, ident, series(cells, key), max_lens, styles)
                     for i, (key, ident, title) in enumerate(PANELS))
    legend_x = LEFT + len(PANELS) * (WIDTH + LEFT + GAP) - LEFT
    legend = "".join(f'<g class="legend" {styles[p]}><path d="M{legend_x} {TOP + LEGEND_ROW * i + 4}h24"/>'
                     f'<text x="{legend_x + 30}" y="{TOP + LEGEND_ROW * i + 8}" stroke="none" fill="#222">'
                     f'{html.escape(p)}</text></g>' for i, p in enumerate(programs))
    width = legend_x + LEGEND_WIDTH
    height = max(TOP + HEIGHT + BOTTOM, TOP + LEGEND_ROW * len(programs)) + 10
    title = "params and compile time against max_len (log-log), one line per program"
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="monospace" '
            f'font-size="{FONT}" role="img" aria-label="{title}"><rect width="100%" height="100%" fill="white"/>'
            f'<text x="4" y="{FONT + 2}" font-weight="bold">{title}</text>{panels}{legend}</svg>\n')


def write_plot(cells: list[dict], out: Path) -> None:
    out.write_text(plot(cells), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Draw bench/scale.py's params and compile times as an SVG.")
    parser.add_argument("--results", type=Path, default=RESULTS / "results.json", help="a results.json of scale.py")
    parser.add_argument("--out", type=Path, default=RESULTS / "scale.svg", help="the SVG file to write")
    args = parser.parse_args(argv)
    write_plot(json.loads(args.results.read_text(encoding="utf-8"))["cells"], args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
