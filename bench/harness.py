"""What every bench/ script shares: where committed results go, which code and machine a figure
was measured on, timing (wall clock, and the CPU time of a child process given a time limit), and
tables (markdown, and rich for the terminal).

The scripts import it by name (`from harness import ...`): run as `python bench/NAME.py`, bench/ is
the first entry of `sys.path`; the tests find it through the pytest `pythonpath` in pyproject.toml.
"""

from __future__ import annotations

import dataclasses
import datetime
import os
import platform
import resource
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from collections.abc import Callable

import numpy as np
from rich.table import Table as RichTable

import rasp_compile

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
"""The committed outputs (.md, .json) of each script's last full run; the code stays in bench/."""
MEASURED = Path(rasp_compile.__file__).resolve().parent.parent
"""The checkout whose rasp_compile this process imports: the code being measured."""


# ---------------------------------------------------------------------------------------------
# What was measured, and where.


def revision(tree: Path = MEASURED, rev: str = "HEAD") -> str | None:
    """The short git commit of `rev` in the checkout `tree`, with " + changes" when `rev` is HEAD
    and the checkout's rasp_compile/ or programs/ differ from it; None outside a git checkout."""
    git = ["git", "-C", str(tree)]
    commit = subprocess.run(git + ["rev-parse", "--short", rev], capture_output=True, text=True)
    if commit.returncode != 0:
        return None
    changes = rev == "HEAD" and subprocess.run(git + ["status", "--porcelain", "--", "rasp_compile", "programs"],
                                               capture_output=True, text=True).stdout.strip()
    return commit.stdout.strip() + (" + changes" if changes else "")


def machine() -> dict:
    """Where and on what the figures were measured, the measured code's commit included."""
    return {"platform": platform.platform(), "processor": platform.processor() or platform.machine(),
            "cpu_count": os.cpu_count(), "python": platform.python_version(), "numpy": np.__version__,
            "date": datetime.datetime.now().isoformat(timespec="seconds"), "commit": revision() or "unknown"}


def machine_line(info: dict) -> str:
    """`machine()` as the first sentence of a results file (without its final full stop)."""
    return (f"Machine: {info['platform']} ({info['processor']}), {info['cpu_count']} CPUs; Python {info['python']}, "
            f"numpy {info['numpy']}; {info['date']}; commit {info['commit']}")


# ---------------------------------------------------------------------------------------------
# Timing.


def wall_seconds(action: Callable[[], object]) -> float:
    """Wall seconds of one call of `action`."""
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def best_of(runs: int, action: Callable[[], object]) -> float:
    """The shortest wall time of `runs` calls of `action`: the call the machine's load spared most."""
    return min(wall_seconds(action) for _ in range(runs))


@dataclasses.dataclass
class Finished:
    """A child process run by `run_limited`: status "ok" (exit 0), "error" or "timeout" (killed),
    what it printed, its wall seconds, and its CPU seconds (user + system, its own and those of the
    children it waited for): the figure a machine shared with other work inflates least."""

    status: str
    stdout: str
    stderr: str
    wall_s: float
    cpu_s: float


WALL_PER_CPU = 20
"""A child is killed after WALL_PER_CPU times its CPU limit in wall seconds too: on a machine shared
with much other work it may get a twentieth of a core, and a child waiting on nothing still ends."""


def run_limited(command: list[str], cpu_limit: float) -> Finished:
    """Run `command`, killed once it has used `cpu_limit` CPU seconds (read from /proc, where there is
    one) or WALL_PER_CPU times that in wall seconds; its output goes to temporary files (no pipe to
    fill) and its resource usage comes from os.wait4, so threads may run several at once."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        process = subprocess.Popen(command, stdout=out, stderr=err)
        timed_out, status, usage = _reap(process.pid, cpu_limit, started + WALL_PER_CPU * cpu_limit)
        wall = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
        out.seek(0)
        err.seek(0)
        verdict = "timeout" if timed_out else "ok" if process.returncode == 0 else "error"
        return Finished(verdict, out.read().decode(errors="replace"), err.read().decode(errors="replace"),
                        wall, usage.ru_utime + usage.ru_stime)


def _reap(pid: int, cpu_limit: float, deadline: float) -> tuple[bool, int, resource.struct_rusage]:
    """(killed for a limit, wait status, resource usage) of the child `pid`, polled every 5 ms (its
    CPU time every 0.1 s)."""
    polls = 0
    while True:
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done:
            return False, status, usage
        if time.perf_counter() > deadline or (polls % 20 == 0 and cpu_seconds(pid) > cpu_limit):
            os.kill(pid, signal.SIGKILL)
            _, status, usage = os.wait4(pid, 0)
            return True, status, usage
        time.sleep(0.005)
        polls += 1


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a running process from /proc/PID/stat (fields 14 and 15, in
    clock ticks); 0 where there is no /proc (the wall-clock limit then applies alone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# ---------------------------------------------------------------------------------------------
# Tables: one structure, shown with rich and written as markdown.


@dataclasses.dataclass
class Table:
    """A titled table of already formatted cells: `rows[i][j]` under `columns[j]`."""

    title: str
    columns: list[str]
    rows: list[list[str]]


def markdown(columns: list[str], rows: list[list[str]]) -> str:
    """A markdown table: the header, its rule, one line per row."""
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])


def to_markdown(table: Table) -> str:
    """The table under a `###` heading of its title."""
    return f"### {table.title}\n\n" + markdown(table.columns, table.rows)


def to_rich(table: Table) -> RichTable:
    """The table as rich renders it in a terminal."""
    rich = RichTable(*table.columns, title=table.title, title_justify="left")
    for row in table.rows:
        rich.add_row(*row)
    return rich
