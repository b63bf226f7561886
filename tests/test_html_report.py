"""`rasp-run WEIGHTS INPUT --html REPORT.html`: one self-contained page (nothing fetched, no script),
holding the source, the decoded residual stream per sub-layer, a heatmap per head titled with its
select, the labelled weights; text from the program escaped; the input file never overwritten."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

import rasp_compile as rc
from rasp_compile.cli import run_cmd

PROGRAMS = Path(__file__).resolve().parent.parent / "programs"


@pytest.fixture(scope="module")
def most_freq(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("html") / "most_freq.npz"
    rc.save(rc.compile(PROGRAMS / "most_freq.rasp"), path)
    return path


def write_report(capsys, weights, text: str, out: Path) -> str:
    assert run_cmd.main([str(weights), text, "--html", str(out)]) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    return out.read_text(encoding="utf-8")


def test_report_holds_source_stages_heads_and_weights(capsys, most_freq, tmp_path):
    page = write_report(capsys, most_freq, "bacac", tmp_path / "report.html")
    model = rc.load(most_freq)
    t = rc.trace(model, list("bacac"))
    assert html.escape("more_frequent = numerical(selector_width(select(count, count, >)") in page
    for stage in t.stages:
        assert f"<h3>{stage.name}</h3>" in page
    for head in t.heads:  # one heatmap per head, titled with what it computes
        assert page.count(f'<div class="title">{html.escape(head.title)}</div><svg') == 1
    for name in ("wte", "wpe", "blocks.2.attn.c_attn.w", "unembed"):
        assert f'<div class="title">{name} [' in page
    assert re.search(r"<td>count</td>(<td>[12]</td>){5}", page)  # a decoded s-op row: 1 2 2 2 2


def test_report_fetches_nothing_and_runs_nothing(capsys, most_freq, tmp_path):
    page = write_report(capsys, most_freq, "bacac", tmp_path / "report.html")
    assert "Content-Security-Policy\" content=\"default-src 'none'" in page
    assert "<script" not in page.lower() and "<link" not in page.lower() and "@import" not in page
    assert not re.search(r"\b(src|href)\s*=", page, re.IGNORECASE)
    assert set(re.findall(r"https?://[^\"' )]+", page)) == {"http://www.w3.org/2000/svg"}  # a namespace name


def test_program_text_is_escaped(capsys, tmp_path):
    source = (PROGRAMS / "aab.rasp").read_text() + "\n# <script>alert(1)</script> & <b>\n"
    program = tmp_path / "hostile.rasp"
    program.write_text(source)
    page = write_report(capsys, program, "aab", tmp_path / "report.html")
    assert "<script" not in page and "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;b&gt;" in page


@pytest.mark.parametrize("which", ["weights", "program"])
def test_the_input_file_is_never_overwritten(capsys, most_freq, tmp_path, which):
    target = most_freq if which == "weights" else tmp_path / "aab.rasp"
    if which == "program":
        target.write_text((PROGRAMS / "aab.rasp").read_text())
    before = target.read_bytes()
    link = tmp_path / "link.html"
    link.symlink_to(target)
    for out in (target, link):
        assert run_cmd.main([str(target), "bacac" if which == "weights" else "aab", "--html", str(out)]) == 2
        assert "refusing to overwrite" in capsys.readouterr().err
    assert target.read_bytes() == before


def test_bad_report_paths_are_one_line_errors(capsys, most_freq, tmp_path):
    for out, message in ((tmp_path, "is a directory"), (tmp_path / "no" / "r.html", "no such directory")):
        assert run_cmd.main([str(most_freq), "bacac", "--html", str(out)]) == 2
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1
    assert run_cmd.main([str(most_freq), "bacacab", "--html", str(tmp_path / "r.html")]) == 2
    assert "longer than max_len 6" in capsys.readouterr().err and not (tmp_path / "r.html").exists()


def test_the_docs_figure_is_what_the_api_draws():
    """docs/inspect.md's figure is `t.attention(1, 1).to_svg()` of most_freq on bacac, made now."""
    t = rc.trace(rc.compile(PROGRAMS / "most_freq.rasp"), list("bacac"))
    figure = Path(__file__).resolve().parent.parent / "docs" / "figures" / "most_freq_attention.svg"
    assert figure.read_text(encoding="utf-8") == t.attention(1, 1).to_svg(), (
        "regenerate: open('docs/figures/most_freq_attention.svg', 'w').write(t.attention(1, 1).to_svg())")
    assert "figures/most_freq_attention.svg" in (figure.parent.parent / "inspect.md").read_text(encoding="utf-8")
