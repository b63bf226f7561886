"""atomic_write and `rasp-compile --emit`: an output never replaces an input (under any name), never
lands half-written, and never replaces what is not a writable regular file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rasp_compile.cli import compile_cmd
from rasp_compile.errors import OutputError
from rasp_compile.runtime.atomic_write import check_output, write_atomically

PROGRAM = "vocab {a, b}\nmax_len 3\noutput map(lambda t: t, tokens)\n"


@pytest.fixture
def program(tmp_path) -> Path:
    path = tmp_path / "p.rasp"
    path.write_text(PROGRAM)
    return path


def emit(capsys, program: Path, out) -> tuple[int, str]:
    status = compile_cmd.main([str(program), "--emit", str(out)])
    return status, capsys.readouterr().err


@pytest.mark.parametrize("name", ["same", "dot", "symlink", "hardlink"])
def test_emit_onto_the_program_under_any_name_is_refused(capsys, program, tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    out = {"same": program, "dot": Path("./p.rasp"), "symlink": tmp_path / "link.npz",
           "hardlink": tmp_path / "hard.npz"}[name]
    if name == "symlink":
        out.symlink_to(program)
    if name == "hardlink":
        os.link(program, out)
    status, err = emit(capsys, program, out)
    assert status == 2 and len(err.splitlines()) == 1
    assert program.read_text() == PROGRAM


def test_emit_refuses_read_only_files_and_names_ending_in_rasp(capsys, program, tmp_path):
    locked = tmp_path / "locked.npz"
    locked.write_bytes(b"keep")
    locked.chmod(0o444)  # refused by its mode bits, also for root, who may write it
    status, err = emit(capsys, program, locked)
    assert status == 2 and "read-only" in err and locked.read_bytes() == b"keep"
    other = tmp_path / "other.rasp"
    other.write_text("keep")
    status, err = emit(capsys, program, other)
    assert status == 2 and ".rasp" in err and other.read_text() == "keep"


def test_emit_writes_through_a_symlink_and_keeps_the_mode(capsys, program, tmp_path):
    target = tmp_path / "target.npz"
    target.write_bytes(b"old")
    target.chmod(0o640)
    link = tmp_path / "link.npz"
    link.symlink_to(target)
    assert emit(capsys, program, link)[0] == 0
    assert link.is_symlink() and target.read_bytes().startswith(b"PK")
    assert target.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.npz", "p.rasp", "target.npz"]


def test_an_interrupted_write_leaves_the_old_file_and_no_temporary(tmp_path):
    out = tmp_path / "w.npz"
    out.write_bytes(b"old")

    def interrupted(f):
        f.write(b"PK half")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_atomically(out, interrupted)
    assert out.read_bytes() == b"old" and [p.name for p in tmp_path.iterdir()] == ["w.npz"]
    write_atomically(out, b"new")
    assert out.read_bytes() == b"new" and [p.name for p in tmp_path.iterdir()] == ["w.npz"]


def test_check_output_refuses_inputs_directories_and_fifos(tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("x")
    with pytest.raises(OutputError, match="input"):
        check_output(tmp_path / "." / "in.txt", [source])
    with pytest.raises(OutputError, match="not a regular file"):
        check_output(tmp_path, [])
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(OutputError, match="not a regular file"):
        check_output(fifo, [])
    check_output(tmp_path / "new.npz", [source])  # a new file: nothing to refuse
