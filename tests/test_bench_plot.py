"""bench/scale_plot.py draws a results.json of bench/scale.py as valid SVG: in each panel (params,
compile CPU seconds) one line per program, through the max_lens where it compiled, left to right
and higher for larger values (log-log); names are escaped. Made-up cells: no timing."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import scale_plot  # bench/scale_plot.py: bench/ is on the tests' path (pyproject.toml)

SVG = "{http://www.w3.org/2000/svg}"
ROOT = Path(__file__).resolve().parent.parent


def fake_cells() -> list[dict]:
    """Three programs at max_len 8, 64, 512; "b<&>" is refused at 512 (no model: no point there)."""
    cells = []
    for k, program in enumerate(("a", "b<&>", "c")):
        for n in (8, 64, 512):
            if program == "b<&>" and n == 512:
                cells.append({"program": program, "max_len": n, "status": "refused", "compile_cpu_s": 9.0,
                              "refused": "b.rasp:1:1: error: too large"})
                continue
            cells.append({"program": program, "max_len": n, "status": "ok", "layers": 1, "params": (k + 1) * n * 10,
                          "compile_cpu_s": 0.01 * n})
    return cells


def drawn(tmp_path: Path) -> ET.Element:
    """The SVG that `python bench/scale_plot.py` writes from a results.json of the fake cells."""
    results, out = tmp_path / "results.json", tmp_path / "scale.svg"
    results.write_text(json.dumps({"cells": fake_cells()}))
    subprocess.run([sys.executable, str(ROOT / "bench" / "scale_plot.py"), "--results", str(results), "--out", str(out)],
                   check=True)
    return ET.fromstring(out.read_text(encoding="utf-8"))  # raises on malformed XML


def points(series: ET.Element) -> list[tuple[float, float]]:
    [line] = series.findall(f"{SVG}polyline")
    pairs = [pair.split(",") for pair in line.get("points", "").split()]
    return [(float(x), float(y)) for x, y in pairs]


def test_each_panel_has_one_line_per_program_through_its_models(tmp_path):
    svg = drawn(tmp_path)
    assert svg.tag == f"{SVG}svg"
    panels = {panel.get("id"): panel for panel in svg.iter(f"{SVG}g") if panel.get("class") == "panel"}
    assert set(panels) == {"params", "compile"}
    for panel in panels.values():
        series = [g for g in panel.iter(f"{SVG}g") if g.get("class") == "series"]
        assert [g.get("data-program") for g in series] == ["a", "b<&>", "c"]
        assert [len(points(g)) for g in series] == [3, 2, 3]  # b has no model at 512
        for g in series:
            xs, ys = zip(*points(g))
            assert list(xs) == sorted(xs) and list(ys) == sorted(ys, reverse=True)  # grows: up is smaller y
            assert len(g.findall(f"{SVG}circle")) == len(xs)


def test_log_scales_put_equal_ratios_at_equal_distances(tmp_path):
    params = next(g for g in drawn(tmp_path).iter(f"{SVG}g") if g.get("id") == "params")
    [a] = [g for g in params.iter(f"{SVG}g") if g.get("data-program") == "a"]
    (x8, y8), (x64, y64), (x512, y512) = points(a)  # params 80, 640, 5,120: x8 each time
    assert x64 - x8 == pytest.approx(x512 - x64, abs=0.2) and y8 - y64 == pytest.approx(y64 - y512, abs=0.2)


def test_the_legend_names_every_program_once():
    texts = [t.text for t in ET.fromstring(scale_plot.plot(fake_cells())).iter(f"{SVG}text")]
    assert [text for text in texts if text in ("a", "b<&>", "c")] == ["a", "b<&>", "c"]


def test_the_committed_plot_has_a_line_per_library_program_and_the_performance_doc_shows_it():
    committed = ROOT / "bench" / "results" / "scale.svg"
    assert "](../bench/results/scale.svg)" in (ROOT / "docs" / "performance.md").read_text(encoding="utf-8")
    svg = ET.fromstring(committed.read_text(encoding="utf-8"))
    programs = sorted(path.stem for path in (ROOT / "programs").glob("*.rasp"))
    for panel in (g for g in svg.iter(f"{SVG}g") if g.get("class") == "panel"):
        assert sorted(g.get("data-program") for g in panel.iter(f"{SVG}g") if g.get("class") == "series") == programs
