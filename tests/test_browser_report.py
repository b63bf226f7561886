"""report.html in a real browser: headless Chromium (Debian's package) loads the page `rasp-run --html`
writes, and the test checks what it draws: every head's heatmap is there, laid out, and not blank
(a tenth or more of its cells' pixels coloured, not white or the grey grid), every title is readable text on
the page, every heatmap has its colour legend and values written in cells that hold them, the
attention axes name the values their select compares, the program's graph is drawn, a 200-token
input scrolls inside its tables instead of widening the page, and the page fetched nothing but itself.

Skipped only when chromium is not installed locally; `.ci/run` installs it and runs this file again
with RASP_COMPILE_TEST_EXTRAS=browser, under which a missing browser fails the test.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import rasp_compile as rc
from browser import Chromium, chromium_path
from extras import missing
from rasp_compile.cli import run_cmd

PROGRAMS = Path(__file__).resolve().parent.parent / "programs"
GREY = 30  # a pixel whose channels differ by more than this is coloured (the page and grid are grey)

FIGURES = """JSON.stringify([...document.querySelectorAll('figure')].map(f => {
  const cells = f.querySelector('g.cells').getBoundingClientRect();
  const title = f.querySelector('.title'); const t = title.getBoundingClientRect();
  const style = getComputedStyle(title);
  return {title: title.innerText, x: cells.x + scrollX, y: cells.y + scrollY, width: cells.width,
          height: cells.height, title_width: t.width, title_height: t.height, visible: style.visibility,
          font: parseFloat(style.fontSize), rows: f.querySelectorAll('svg > text').length};
}))"""


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    binary = chromium_path()
    if binary is None:
        missing("browser", "chromium")
    chromium = Chromium(binary, str(tmp_path_factory.mktemp("chromium-profile")))
    yield chromium
    chromium.close()


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> tuple[Path, rc.Model]:
    folder = tmp_path_factory.mktemp("report")
    model = rc.compile(PROGRAMS / "most_freq.rasp")
    rc.save(model, folder / "most_freq.npz")
    assert run_cmd.main([str(folder / "most_freq.npz"), "bacac", "--html", str(folder / "report.html")]) == 0
    return folder / "report.html", model


def test_report_draws_every_heatmap_with_its_title(browser, report):
    path, model = report
    browser.open(path.as_uri())
    figures = json.loads(browser.evaluate(FIGURES))
    heads = rc.trace(model, list("bacac")).heads
    by_title = {figure["title"]: figure for figure in figures}
    for head in heads:
        figure = by_title[head.title]  # the title is on the page, as text
        assert figure["visible"] == "visible" and figure["font"] >= 10 and figure["title_height"] >= 10
        assert figure["width"] == figure["height"] > 50  # BOS + 5 tokens square, laid out
        pixels = browser.screenshot(figure["x"], figure["y"], figure["width"], figure["height"])[..., :3]
        tinted = pixels.max(axis=-1).astype(int) - pixels.min(axis=-1) > GREY  # not white, not the grey grid
        assert tinted.mean() > 0.1, f"{head.title}: the heatmap looks blank"
    weights = [f for f in figures if f["title"].startswith("blocks.0.attn.c_attn.w")]
    assert len(weights) == 1 and weights[0]["rows"] > 10  # a weight matrix with its axis labels
    requested = [event["params"]["request"]["url"] for event in browser.events
                 if event.get("method") == "Network.requestWillBeSent"]
    assert requested == [path.as_uri()]


@pytest.mark.slow
def test_a_query_reading_bos_only_is_dark_in_the_bos_column(browser, report):
    """layer 0 head 1 (repeated): queries 0:b, 1:a, 2:c read only BOS; 3:a reads 1:a. The cell
    colours must say so: full blue where the weight is 1, white where it is 0."""
    path, _ = report
    browser.open(path.as_uri())
    figures = json.loads(browser.evaluate(FIGURES))
    figure = next(f for f in figures if f["title"].startswith("layer 0 head 1: repeated"))
    pixels = browser.screenshot(figure["x"], figure["y"], figure["width"], figure["height"])[..., :3].astype(int)
    cell = figure["width"] / 6  # BOS + 5 tokens

    def colour(query: int, key: int) -> np.ndarray:  # near the cell's corner: its value is written in the middle
        return pixels[int((query + 0.2) * cell), int((key + 0.2) * cell)]

    blue, white = np.array([33, 102, 172]), np.array([255, 255, 255])
    for query, key in ((1, 0), (2, 0), (3, 0), (4, 2)):  # rows: BOS, 0:b, 1:a, 2:c, 3:a, 4:c
        assert np.abs(colour(query, key) - blue).max() <= 3
    for query, key in ((1, 1), (4, 0), (4, 4)):
        assert np.abs(colour(query, key) - white).max() <= 3


LEGENDS = """JSON.stringify([...document.querySelectorAll('figure')].filter(f => f.querySelector('g.cells')).map(f => ({
  title: f.querySelector('.title').innerText,
  legend: [...f.querySelectorAll('g.legend rect')].map(r => getComputedStyle(r).fill),
  legend_labels: [...f.querySelectorAll('g.legend text')].map(t => t.textContent),
  values: [...f.querySelectorAll('g.values text')].map(t => t.textContent),
  rows: [...f.querySelectorAll('svg > text')].map(t => t.lastChild.textContent),  // the label, not its tooltip
})))"""


def test_every_heatmap_has_a_legend_and_the_attention_axes_name_the_values_compared(browser, report):
    path, model = report
    browser.open(path.as_uri())
    figures = {f["title"]: f for f in json.loads(browser.evaluate(LEGENDS))}
    for title, figure in figures.items():
        assert len(figure["legend"]) == 11 and len(set(figure["legend"])) > 5, title  # a drawn colour scale
        assert len(figure["legend_labels"]) == 2, title
    head = rc.trace(model, list("bacac")).heads[0]  # count = selector_width(select(tokens, tokens, ==))
    pattern = figures[head.title]
    assert pattern["legend_labels"] == ["0", "1"]
    assert "0:b tokens=b" in pattern["rows"] and "3:a tokens=a" in pattern["rows"]  # queries and keys, with tokens
    assert {"1", ".86", ".14", ".75"} <= set(pattern["values"])  # BOS's share and each key's, in the cells


GRAPH = """JSON.stringify({boxes: [...document.querySelectorAll('svg.program-graph g.sop text')].map(t => t.textContent),
  dashed: [...document.querySelectorAll('svg.program-graph g.sop rect[stroke-dasharray]')].length,
  arrows: document.querySelectorAll('svg.program-graph path[marker-end]').length,
  width: document.querySelector('svg.program-graph').getBoundingClientRect().width})"""


def test_the_report_draws_the_program_graph_over_the_layers(browser, report):
    path, _ = report
    browser.open(path.as_uri())
    graph = json.loads(browser.evaluate(GRAPH))
    named = {"tokens", "indices", "one", "repeated", "count", "more_frequent", "tied_earlier", "rank", "output"}
    assert named <= set(graph["boxes"])
    assert graph["dashed"] >= 1 and graph["arrows"] >= 12 and graph["width"] > 300  # rank is folded away


OVERFLOW = "JSON.stringify([document.documentElement.scrollWidth, document.documentElement.clientWidth])"


def test_a_200_token_input_scrolls_inside_its_tables_not_the_page(browser, tmp_path):
    model = rc.compile(PROGRAMS / "frac_prevs.rasp", max_len=200)
    rc.save(model, tmp_path / "frac_prevs.npz")
    tokens = ["x", "y", "y", "x"] * 50
    assert run_cmd.main([str(tmp_path / "frac_prevs.npz"), " ".join(tokens), "--html", str(tmp_path / "long.html")]) == 0
    browser.open((tmp_path / "long.html").as_uri())
    scroll_width, page_width = json.loads(browser.evaluate(OVERFLOW))
    assert scroll_width <= page_width
    widest = browser.evaluate("String(Math.max(...[...document.querySelectorAll('table')].map(t => t.scrollWidth)))")
    assert int(widest) > page_width  # the tables are wider than the page: they scroll within their boxes
