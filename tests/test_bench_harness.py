"""bench/harness.py: the commit a figure was measured on, as git names it, marked when the measured
code differs from it, and None outside a git checkout; the markdown tables every results file uses."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import harness  # bench/harness.py: bench/ is on the tests' path (pyproject.toml)


def git(tree: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(tree), "-c", "user.name=t", "-c", "user.email=t@localhost", *args],
                          capture_output=True, text=True, check=True).stdout.strip()


def test_revision_names_the_commit_and_marks_changes_to_the_code_or_the_programs(tmp_path):
    for folder in ("rasp_compile", "programs", "docs"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "a.txt").write_text("first\n")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "first")
    head = git(tmp_path, "rev-parse", "--short", "HEAD")
    assert harness.revision(tmp_path) == head
    (tmp_path / "docs" / "a.txt").write_text("second\n")  # not what is measured
    assert harness.revision(tmp_path) == head
    for folder in ("rasp_compile", "programs"):
        (tmp_path / folder / "a.txt").write_text("second\n")
        assert harness.revision(tmp_path) == f"{head} + changes"
        assert harness.revision(tmp_path, head) == head  # another revision than HEAD: no checkout to differ
        git(tmp_path, "checkout", "-q", "--", folder)


def test_revision_outside_a_checkout_is_none(tmp_path):
    assert harness.revision(tmp_path) is None


def test_a_markdown_table_has_its_header_rule_and_rows():
    assert harness.markdown(["a", "b c"], [["1", "2"], ["3", "-"]]) == "| a | b c |\n|---|---|\n| 1 | 2 |\n| 3 | - |"
    table = harness.Table("sizes", ["n"], [["5"]])
    assert harness.to_markdown(table) == "### sizes\n\n| n |\n|---|\n| 5 |"


def test_run_limited_reports_output_status_and_cpu_time_and_kills_at_the_cpu_limit():
    done = harness.run_limited([sys.executable, "-c", "import sys; print('out'); sys.exit('err')"], 60)
    assert (done.status, done.stdout, done.stderr.strip()) == ("error", "out\n", "err")
    assert done.cpu_s > 0 and done.wall_s > 0
    spinning = harness.run_limited([sys.executable, "-c", "print('started', flush=True)\nwhile True: pass"], 0.3)
    assert (spinning.status, spinning.stdout) == ("timeout", "started\n")
    assert spinning.cpu_s >= 0.3  # killed once the CPU limit is passed, polled every 0.1 s
