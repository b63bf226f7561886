"""Did-you-mean: a misspelled built-in, name or flag is answered with the closest known one
(rasp_compile/suggest.py); nothing is suggested when nothing is close."""

from __future__ import annotations

from pathlib import Path

import pytest

import rasp_compile as rc
from rasp_compile.cli import compile_cmd, run_cmd
from rasp_compile.suggest import did_you_mean

ROOT = Path(__file__).resolve().parent.parent
HEAD = "vocab {a, b}\nmax_len 4\n"


@pytest.mark.parametrize("body, message", [
    ("x = selct(tokens, tokens, ==)\noutput tokens", "unknown function 'selct'; did you mean 'select'?"),
    ("output aggregat(select(indices, indices, ==), tokens)", "unknown function 'aggregat'; did you mean 'aggregate'?"),
    ("output tokenz", "unknown name 'tokenz'; did you mean 'tokens'?"),
    ("shifted = tokens\noutput shiftd", "unknown name 'shiftd'; did you mean 'shifted'?"),
    ("def twice(s) { return s }\noutput twic(tokens)", "unknown function 'twic'; did you mean 'twice'?"),
    ("def f(s) {\n  back = s\n  return bak\n}\noutput f(tokens)", "unknown name 'bak'; did you mean 'back'?"),
    ("output xyz", "unknown name 'xyz'"),
])
def test_a_misspelled_name_gets_the_closest_one_in_the_located_error(body, message):
    with pytest.raises(rc.RaspError) as caught:
        rc.parse_program(HEAD + body)
    assert caught.value.message == message and caught.value.loc is not None


@pytest.mark.parametrize("main, argv, flag", [
    (run_cmd.main, ["programs/aab.rasp", "aab", "--tarce"], "--trace"),
    (compile_cmd.main, ["programs/aab.rasp", "--jsno"], "--json"),
    (compile_cmd.main, ["programs/aab.rasp", "--emti=x.npz"], "--emit"),
])
def test_a_misspelled_flag_gets_one_line_with_the_closest_flag(main, argv, flag, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"did you mean '{flag}'?" in err


def test_nothing_is_suggested_for_a_flag_unlike_any(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert compile_cmd.main(["programs/aab.rasp", "--bogus"]) == 2
    assert capsys.readouterr().err == "rasp-compile: error: unrecognized arguments: --bogus (see --help)\n"


def test_did_you_mean_never_suggests_the_word_itself():
    assert did_you_mean("tokens", ["tokens"]) == "" and did_you_mean("x", []) == ""


@pytest.mark.parametrize("name", ["out.pt", "out", "out.npz.bak"])
def test_emit_refuses_a_name_of_another_format_and_writes_nothing(name, tmp_path, monkeypatch, capsys):
    program = tmp_path / "aab.rasp"
    program.write_text(HEAD + "output tokens\n")
    monkeypatch.chdir(tmp_path)
    assert compile_cmd.main([str(program), "--emit", name]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and ".npz or .safetensors" in err and not (tmp_path / name).exists()


@pytest.mark.parametrize("name", ["out.npz", "OUT.NPZ", "out.SafeTensors"])
def test_emit_writes_the_accepted_extensions_in_any_case(name, tmp_path, monkeypatch, capsys):
    program = tmp_path / "aab.rasp"
    program.write_text(HEAD + "output tokens\n")
    monkeypatch.chdir(tmp_path)
    assert compile_cmd.main([str(program), "--emit", name, "--json"]) == 0
    assert rc.run(rc.load(tmp_path / name), "ab") == ["a", "b"]
