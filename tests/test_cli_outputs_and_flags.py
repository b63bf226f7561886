"""Output files and repeated flags (docs/cli.md): no flag that writes a file replaces a program,
a weights file or the input by a typo, and no flag that takes one value is given twice in silence.
Both rules are checked over every flag the two parsers declare, so that a flag added later gets
them without a test of its own."""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

import pytest

from rasp_compile.cli import compile_cmd, dump_cmd, run_cmd
from rasp_compile.cli.common import StoreOnce
from rasp_compile.cli.outputs import PROGRAM, WEIGHTS, existing_kind

PROGRAMS = Path(__file__).resolve().parent.parent / "programs"
AAB = str(PROGRAMS / "aab.rasp")
COMMANDS = {"rasp-compile": compile_cmd, "rasp-run": run_cmd, "python -m rasp_compile.compiler.dump": dump_cmd}
APPEND = type(argparse.ArgumentParser().add_argument("--x", action="append"))  # a flag declared to repeat


@pytest.fixture(scope="module")
def aab(tmp_path_factory) -> str:
    path = str(tmp_path_factory.mktemp("outputs") / "aab.npz")
    assert compile_cmd.main([AAB, "--emit", path]) == 0
    return path


def run(capsys, main, *argv) -> tuple[int, str, str]:
    status = main([str(arg) for arg in argv])
    out, err = capsys.readouterr()
    return status, out, err


def one_line_error(capsys, main, *argv) -> str:
    status, out, err = run(capsys, main, *argv)
    assert (status, out, err.count("\n")) == (2, "", 1), (status, out, err)
    return err


def some_files(folder: Path, aab: str) -> dict[str, Path]:
    """A program and a weights file under their own names and under names that do not say so."""
    files = {"other.rasp": PROGRAMS / "reverse.rasp", "notes.txt": PROGRAMS / "reverse.rasp",
             "other.npz": Path(aab), "weights.bin": Path(aab)}
    for name, source in files.items():
        shutil.copy(source, folder / name)
    return {name: folder / name for name in files}


def test_a_report_never_replaces_a_program_or_weights_file_without_force(capsys, aab, tmp_path):
    for name, path in some_files(tmp_path, aab).items():
        before = path.read_bytes()
        err = one_line_error(capsys, run_cmd.main, aab, "aab", "--html", path)
        assert "refusing to replace it" in err and "--force" in err
        assert path.read_bytes() == before, name
    path = tmp_path / "notes.txt"
    status, out, _ = run(capsys, run_cmd.main, aab, "aab", "--html", path, "--force")
    assert status == 0 and path.read_text().startswith("<!DOCTYPE html>")
    assert run(capsys, run_cmd.main, aab, "aab", "--html", path)[0] == 0  # a report replaces a report


def test_weights_never_replace_a_program_without_force_and_never_the_input(capsys, aab, tmp_path):
    files = some_files(tmp_path, aab)
    before = files["notes.txt"].read_bytes()  # a program under another name: refused (not a weights name)
    assert "must end in .npz or .safetensors" in one_line_error(capsys, compile_cmd.main, AAB, "--emit",
                                                                files["notes.txt"], "--force")
    assert files["notes.txt"].read_bytes() == before
    assert "that file is a program" in one_line_error(capsys, run_cmd.main, aab, "aab", "--html", files["notes.txt"])
    assert run(capsys, compile_cmd.main, AAB, "--emit", files["other.npz"], "--json")[0] == 0  # weights replace weights
    assert existing_kind(files["other.npz"]) == WEIGHTS
    program = tmp_path / "p.npz"  # a program with another name is still the input
    shutil.copy(AAB, program)
    for flags in ([], ["--force"]):
        assert "is the input" in one_line_error(capsys, compile_cmd.main, program, "--emit", program, *flags)
        assert "is the input" in one_line_error(capsys, run_cmd.main, program, "ab", "--html", program, *flags)
    assert "a name ending in .rasp" in one_line_error(capsys, compile_cmd.main, AAB, "--emit", tmp_path / "w.RASP",
                                                      "--force")


def test_force_without_an_output_is_refused(capsys, aab):
    assert "--force applies only with --emit" in one_line_error(capsys, compile_cmd.main, AAB, "--force")
    assert "--force applies only with --html" in one_line_error(capsys, run_cmd.main, aab, "aab", "--force")


def test_what_an_existing_file_is_is_told_by_name_or_content(aab, tmp_path):
    files = some_files(tmp_path, aab)
    assert [existing_kind(files[n]) for n in ("other.rasp", "notes.txt", "other.npz", "weights.bin")] == \
        [PROGRAM, PROGRAM, WEIGHTS, WEIGHTS]
    (tmp_path / "one_line.txt").write_text("vocab {a, b}; max_len 4\noutput tokens\n")
    (tmp_path / "w.SafeTensors").write_bytes(b"")
    (tmp_path / "page.html").write_text("<p>vocab is a word; max_len too</p>")
    (tmp_path / "plain.zip").write_bytes(b"PK\x05\x06" + bytes(18))  # an empty zip: no meta entry
    assert existing_kind(tmp_path / "one_line.txt") == PROGRAM
    assert existing_kind(tmp_path / "w.SafeTensors") == WEIGHTS
    assert existing_kind(tmp_path / "page.html") is None and existing_kind(tmp_path / "plain.zip") is None
    assert existing_kind(tmp_path / "missing.npz") is None and existing_kind(tmp_path) is None
    safetensors = tmp_path / "w.bin"
    assert compile_cmd.main([AAB, "--emit", str(tmp_path / "w.safetensors"), "--json"]) == 0
    shutil.copy(tmp_path / "w.safetensors", safetensors)
    assert existing_kind(safetensors) == WEIGHTS


def valid_value(action: argparse.Action, folder: Path) -> str:
    """A value the option accepts: one of its choices, a small number or a file name."""
    candidates = [*(action.choices or []), "3", str(folder / "out.html")]
    for text in candidates:
        try:
            (action.type or str)(text)
            if action.choices is None or text in action.choices:
                return text
        except (argparse.ArgumentTypeError, ValueError, TypeError):
            continue
    raise AssertionError(f"no value found for {action.option_strings}")


@pytest.mark.parametrize("command", COMMANDS)
def test_every_flag_that_takes_one_value_is_refused_given_twice(capsys, command, tmp_path):
    parser = COMMANDS[command].build_parser()
    once = [a for a in parser._actions if a.option_strings and isinstance(a, StoreOnce)]
    assert {"--max-len", "--dtype"} <= {a.option_strings[0] for a in once}
    for action in parser._actions:  # a value flag either takes one value or is declared to repeat
        if action.option_strings and action.nargs != 0:
            assert isinstance(action, (StoreOnce, APPEND)), action.option_strings
    for action in once:
        flag, value = action.option_strings[-1], valid_value(action, tmp_path)
        err = one_line_error(capsys, COMMANDS[command].main, AAB, f"{flag}={value}", flag, value)
        assert f"argument {'/'.join(action.option_strings)}: given twice" in err and "give it once" in err


def test_a_flag_meant_to_repeat_still_repeats(capsys):
    status, out, _ = run(capsys, compile_cmd.main, AAB, "--no-opt", "prune", "--no-opt", "split-keys", "--json")
    assert status == 0
    status, out, _ = run(capsys, run_cmd.main, AAB, "--no-opt", "prune", "--no-opt", "prune", "aab")
    assert status == 0 and "aab ::" in out


def test_an_abbreviated_flag_is_the_same_flag(capsys):
    err = one_line_error(capsys, compile_cmd.main, AAB, "--max-len", "6", "--max", "7")
    assert "given twice (6, then 7)" in err


def test_report_and_weights_outputs_are_checked_alike_before_any_work(tmp_path, capsys):
    """--html is refused for a name the system cannot take before the weights are even read, as
    --emit is before compiling: both use one check."""
    too_long = str(tmp_path / ("x" * 5_000 + ".html"))
    missing = str(tmp_path / "missing.npz")
    assert run_cmd.main([missing, "ab", "--html", too_long]) == 2
    error = capsys.readouterr().err
    assert error.startswith("rasp-run: error: argument --html:") and "File name too long" in error
    assert error.count("\n") == 1
