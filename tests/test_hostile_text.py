"""No string from a program, a weights file or a file name reaches the terminal raw: every command
and report is run on vocab tokens, labels, names, meta fields and file names holding ESC sequences,
BEL, line separators, bidirectional overrides and rich markup, and everything printed must be
printable characters and line breaks, with the markup shown as written; the reprs a REPL prints
are escaped and short too, and a lone surrogate in program text is a located syntax error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rasp_compile import compile, ir, load_program, parse_program, rasp
from rasp_compile.cli import compile_cmd, run_cmd
from rasp_compile.errors import RaspSyntaxError, format_error
from rasp_compile.runtime.model import Model
from rasp_compile.runtime.weights_file import save

PROGRAMS = Path(__file__).resolve().parent.parent / "programs"
TITLE = "\x1b]0;owned\x07"  # sets the terminal window's title
CLEAR = "\x1b[2J"
BIDI = "\u202eba"  # shows as "ab"
MARKUP = "[bold]m[/]:smile:"  # rich markup, and an emoji code rich would replace
HOSTILE = (TITLE, CLEAR, BIDI, MARKUP)

# A program's vocab must be typable (no controls, no spaces), so the program brings its hostile
# text as a value it outputs; the weights file, which may come from anywhere, holds every hostile
# token in its vocab too (see the fixture).
SOURCE = (f'vocab {{a, b, c, "{MARKUP}"}}\nmax_len 3\ncausal\n'
          "prev = aggregate(select(indices, indices, ==), tokens)\n"
          f'shown = map(lambda t: "{TITLE}" if t == "a" else t, prev)\noutput shown\n')


def assert_terminal_safe(text: str) -> None:
    bad = sorted({c for c in text if not (c.isprintable() or c == "\n")})
    assert not bad, f"raw characters reached the terminal: {bad!r}"


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> dict:
    """A program file with a hostile name and vocab, and a weights file with hostile meta too."""
    folder = tmp_path_factory.mktemp("hostile")
    program = folder / f"p{CLEAR}\u2028.rasp"
    program.write_text(SOURCE)
    model = compile(SOURCE)
    model.meta["vocab"] = [TITLE, CLEAR, BIDI, MARKUP, "BOS"]  # as a file from elsewhere may hold
    model.meta["residual"] = [label if label == "bos" else label + TITLE for label in model.meta["residual"]]
    model.meta["output"]["name"] = f"out{CLEAR}{MARKUP}"
    weights = folder / f"w{TITLE}.npz"
    save(model, weights)
    return {"program": str(program), "weights": str(weights), "input": " ".join((TITLE, BIDI, MARKUP))}


def run_all(capsys, main, *argv) -> str:
    status = main(list(argv))
    out, err = capsys.readouterr()
    assert status in (0, 1, 2), (status, err)
    assert "Traceback" not in err
    return out + err


def test_every_report_on_hostile_text_is_terminal_safe(capsys, hostile, tmp_path):
    program, weights, tokens = hostile["program"], hostile["weights"], hostile["input"]
    outputs = [
        run_all(capsys, compile_cmd.main, program, "--emit", str(tmp_path / f"o{BIDI}.npz")),
        run_all(capsys, run_cmd.main, weights, tokens),
        run_all(capsys, run_cmd.main, weights, tokens, "--steps", "2"),
        run_all(capsys, run_cmd.main, weights, tokens, "--trace"),
        run_all(capsys, run_cmd.main, weights, tokens, "--flops"),
        run_all(capsys, run_cmd.main, weights, "--accuracy"),
        run_all(capsys, run_cmd.main, weights, "--score", f"{tokens} {tokens}"),
        run_all(capsys, run_cmd.main, program, tokens),
        run_all(capsys, run_cmd.main, weights, f"{CLEAR}x"),  # not in the vocab: the error quotes it
        run_all(capsys, run_cmd.main, f"{TITLE}.npz", "a"),  # no such file: the error names it
        run_all(capsys, compile_cmd.main, program, "--emit", program),  # refused: the error names it
        run_all(capsys, compile_cmd.main, program, "--no-opt", f"x{TITLE}"),  # an invalid choice
    ]
    for shown in outputs:
        assert_terminal_safe(shown)
    assert all(MARKUP in shown for shown in outputs[:2])  # markup shown as written, not applied
    assert "\\x1b]0;owned\\x07" in outputs[3]


def test_a_hostile_source_error_is_terminal_safe_with_the_caret_in_place(capsys, tmp_path):
    bad = tmp_path / "bad.rasp"
    bad.write_text(f'vocab {{"{TITLE}", "{TITLE}"}}\nmax_len 3\noutput tokens\n')
    shown = run_all(capsys, compile_cmd.main, str(bad))
    assert_terminal_safe(shown)
    line, caret = shown.splitlines()[1:3]
    assert line[len(caret) - 1:] == '"\\x1b]0;owned\\x07"}'  # the caret under the second string


def rewritten(source_npz, target, extra: dict[str, bytes] | None = None, meta_edit=None) -> str:
    """A copy of the weights file `source_npz` with members added and meta edited."""
    import io
    import zipfile

    import numpy as np

    with zipfile.ZipFile(source_npz) as original, zipfile.ZipFile(target, "w") as copy:
        for info in original.infolist():
            data = original.read(info.filename)
            if info.filename == "meta.npy" and meta_edit:
                meta = meta_edit(json.loads(str(np.load(io.BytesIO(data)))))
                buffer = io.BytesIO()
                np.save(buffer, np.array(json.dumps(meta)))
                data = buffer.getvalue()
            copy.writestr(info.filename, data)
        for name, data in (extra or {}).items():
            copy.writestr(name, data)
    return str(target)


def test_odd_weights_files_get_one_safe_line(capsys, tmp_path):
    weights = tmp_path / "plain.npz"
    save(compile("vocab {a, b}\nmax_len 3\noutput map(lambda t: t, tokens)\n"), weights)
    odd = {
        "a folder entry": rewritten(weights, tmp_path / "folder.npz", {"sub/": b""}),
        "a member named with ESC": rewritten(weights, tmp_path / "esc.npz", {f"{CLEAR}x.npy": b"\x93NUMPY"}),
        "meta.source with ESC": rewritten(weights, tmp_path / "source.npz",
                                          meta_edit=lambda meta: {**meta, "source": TITLE + meta["source"]}),
        "meta.format with ESC": rewritten(weights, tmp_path / "format.npz",
                                          meta_edit=lambda meta: {**meta, "format": TITLE}),
    }
    for what, path in odd.items():
        for argv in ([path, "ab"], [path, "--accuracy"], [path, "ab", "--flops"]):
            status = run_cmd.main(argv)
            out, err = capsys.readouterr()
            assert_terminal_safe(out + err)
            assert "Traceback" not in err and (status == 0 or err.strip()), (what, argv, status)
    status = run_cmd.main([odd["meta.source with ESC"], "--accuracy"])
    err = capsys.readouterr().err
    assert status == 1 and "meta.source:1:1: error: unexpected character '\\x1b'" in err


@pytest.mark.slow
def test_an_output_encoding_without_the_characters_gets_escapes_not_a_traceback(tmp_path):
    import os
    import subprocess
    import sys

    program = tmp_path / "accent.rasp"
    program.write_text('vocab {"é", a}\nmax_len 3\noutput tokens\n', encoding="utf-8")
    for extra in ([], ["--trace"]):
        done = subprocess.run([sys.executable, "-m", "rasp_compile.cli.run_cmd", str(program), "éa", *extra],
                              capture_output=True, timeout=60, env={**os.environ, "PYTHONIOENCODING": "ascii"})
        assert done.returncode == 0 and b"Traceback" not in done.stderr and b"\\xe9" in done.stdout


def test_reprs_of_hostile_strings_stay_short_and_terminal_safe():
    """A REPL prints reprs to the terminal: vocab tokens, names and titles from a file or from
    Python are escaped and shortened there too."""
    hostile_text = "</script><img src=x onerror=alert(1)>\x1b]0;pwned\x07\u202e"
    aab = compile(load_program(PROGRAMS / "aab.rasp"))
    meta = dict(aab.meta, vocab=[hostile_text * 1000, "b\x1b[2J", "BOS"],
                heads=[[dict(aab.meta["heads"][0][0], sop=hostile_text * 1000)]],
                output=dict(aab.meta["output"], name=hostile_text))
    hostile_model = Model(meta, aab.params)
    head = hostile_model.head(0, 0)
    named = rasp.Map(lambda x: x, rasp.tokens).named(hostile_text * 10_000)
    program = ir.Program(ir.Map(ir.Fn(lambda t: t, hostile_text * 1000), ir.tokens), (hostile_text, "b"), 3,
                         filename=hostile_text, output_name=hostile_text)
    for text in (repr(hostile_model), repr(head), repr(head.QK), repr(named), repr(program), repr(program.output)):
        assert all(c.isprintable() for c in text) and len(text) < 1_000, text[:200]
    assert "\\x1b]0;pwned\\x07\\u202e" in repr(program)


def test_a_lone_surrogate_in_program_text_is_a_located_syntax_error():
    """A Python str can hold "\\udcff" (a file cannot): the value it made could be neither saved
    nor shown, and compiling ended in a WeightsError about meta."""
    text = 'vocab {a}\nmax_len 2\noutput map(lambda t: t + "\udcff", tokens)'
    with pytest.raises(RaspSyntaxError, match="lone surrogate") as caught:
        parse_program(text)
    assert (caught.value.loc.line, caught.value.loc.col) == (3, 27)
    assert "\\udcff" in format_error(caught.value, text, "p.rasp")
