"""How rasp-run shows a long input: `--trace` draws every attention heatmap in panels that fit
the terminal, each cell at its key's column (a rich Table squeezed 31 columns into 80 characters
as `…`, and measured each of the million cells of 1,024 tokens for minutes); outputs a causal model
read through a sliding window (an input beyond max_len) say so on stderr."""

from __future__ import annotations

import re
from pathlib import Path

from rasp_compile.cli import run_cmd

AAB = str(Path(__file__).resolve().parent.parent / "programs" / "aab.rasp")
CORNER = " query \\ key "


def heatmap_panels(out: str) -> list[list[str]]:
    """The heatmap's panels, each its header line and then one line per query."""
    lines = out[out.index("\nlayer 0 head 0:"):].splitlines()[2:]
    panels: list[list[str]] = []
    for line in lines:
        if line.startswith(CORNER):
            panels.append([])
        if panels and line.strip():
            panels[-1].append(line)
    return panels


def test_a_long_inputs_heatmap_continues_in_panels_that_fit_the_terminal(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    tokens = ("aab" * 14)[:40]
    assert run_cmd.main([AAB, tokens, "--max-len", "40", "--trace"]) == 0
    panels = heatmap_panels(capsys.readouterr().out)
    keys = [key for panel in panels for key in panel[0][len(CORNER):].split()]
    assert keys == ["BOS"] + [f"{i}:{t}" for i, t in enumerate(tokens)] and len(panels) > 3
    for panel in panels:
        assert all(len(line) <= 80 for line in panel) and "…" not in "".join(panel)
        assert len(panel) == 1 + len(tokens)
        # a key's column starts where its label does; a cell's text is right-aligned in its first 4 characters
        columns = {m.start(): m.group() for m in re.finditer(r"\S+", panel[0][len(CORNER):])}
        for q, line in enumerate(panel[1:]):  # prev attends to key q - 1 (BOS for the first token)
            ones = [columns.get(m.start() - 3) for m in re.finditer(r"1", line[len(CORNER):])]
            key = "BOS" if q == 0 else f"{q - 1}:{tokens[q - 1]}"
            assert ones == ([key] if key in columns.values() else []), (q, line)


def test_outputs_read_through_a_sliding_window_say_so_on_stderr(capsys):
    frac_prevs = str(Path(AAB).with_name("frac_prevs.rasp"))  # causal, max_len 8
    for flags in ([], ["--json"]):
        assert run_cmd.main([frac_prevs, "xyyxyxyxyx", *flags]) == 0
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "10 tokens, more than the model's max_len 8" in err and "sliding window" in err
    assert run_cmd.main([frac_prevs, "xyyxyxyx"]) == 0 and capsys.readouterr().err == ""  # max_len: one pass
    assert run_cmd.main([AAB, "aabaabaa", "--steps", "3"]) == 0 and capsys.readouterr().err == ""  # a completion


NARY = """vocab {a, b}
max_len 3
u = map(lambda t: t == "a", tokens)
z = sequence_map(lambda i, t, v: str(i) + t + str(v), indices, tokens, u)
output z
"""


def test_an_nary_sequence_maps_inner_tuples_show_as_their_items(capsys, tmp_path):
    """sequence_map of three s-ops packs the first two into one tuple-valued s-op: shown as
    `(0, a)` in meta.residual, the summary, --trace and --html, not as ("(0, 'a')", 0, 'a')."""
    import rasp_compile as rc
    from rasp_compile.cli import compile_cmd

    (tmp_path / "nary.rasp").write_text(NARY)
    model = rc.compile(rc.load_program(tmp_path / "nary.rasp"), disabled=rc.OPTIMIZATIONS)
    packs = [label for label in model.meta["residual"] if label.startswith("sequence_map(indices, tokens):")]
    assert packs == [f"sequence_map(indices, tokens):({i},{t})" for i in range(3) for t in "ab"]
    rc.save(model, tmp_path / "nary.npz")
    assert compile_cmd.main([str(tmp_path / "nary.rasp"), "--no-opt", "all"]) == 0
    assert "(0, a), (0, b), (1, a)" in capsys.readouterr().out
    assert run_cmd.main([str(tmp_path / "nary.npz"), "ab", "--trace"]) == 0
    assert "│ (0, a) │ (1, b)" in capsys.readouterr().out
    assert run_cmd.main([str(tmp_path / "nary.npz"), "ab", "--html", str(tmp_path / "r.html")]) == 0
    assert "<td>(0, a)</td><td>(1, b)</td>" in (tmp_path / "r.html").read_text()
    assert "'a')" not in (tmp_path / "r.html").read_text()


def test_packs_of_equal_comparing_items_keep_labels_apart():
    from rasp_compile import ir
    from rasp_compile.compiler.variables import dim_labels

    one, one_float, text = (1, "a"), (1.0, "a"), ("1", "a")
    packs = [(repr(items), *items) for items in (one, one_float, text)]
    assert [ir.unpacked(p) for p in packs] == [one, one_float, text] and ir.unpacked(one) == one
    assert dim_labels("s", packs[:2]) == ("s:(1,a)", "s:(1.0,a)")
    assert dim_labels("s", [packs[0], packs[2]]) == ('s:(1, "a")', 's:("1", "a")')  # alike as text: literals
