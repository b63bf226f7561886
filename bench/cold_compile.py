"""Cold compile time of this checkout beside another revision, measured interleaved.

    python bench/cold_compile.py --against REV [--max-len 20] [--runs 5] [--programs aab,sort]
                                 [--out bench/results/cold_compile.md]

A cold compile is what a user waits for: `rasp-compile PROGRAM --max-len N --json` in a new Python
process, imports included. Timings on a shared machine drift with its load by more than the
differences that matter, so the two versions are never measured apart: for each run, every program
is compiled once by this checkout and once by REV (checked out into a temporary git worktree),
alternately, with the same Python and the same installed dependencies. Per program the table gives
the median of each side and their ratio; the last line, the ratio of the summed medians.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from harness import RESULTS, ROOT, machine, machine_line, markdown, revision, wall_seconds

ENTRY = "import sys; from rasp_compile.cli.compile_cmd import main; sys.exit(main())"


def cold_compile(tree: Path, program: Path, max_len: int) -> float:
    """Wall seconds of one compile of `program` by the package in `tree`, in a new process."""
    command = [sys.executable, "-c", ENTRY, str(program), "--max-len", str(max_len), "--json"]
    return wall_seconds(lambda: subprocess.run(command, cwd=tree, env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"},
                                               check=True, capture_output=True))


def measure(trees: dict[str, Path], programs: list[Path], max_len: int, runs: int) -> dict:
    """{(side, program stem): [seconds per run]}, the sides alternating within each run."""
    times: dict[tuple[str, str], list[float]] = {}
    for run in range(runs):
        order = list(trees.items()) if run % 2 == 0 else list(reversed(trees.items()))
        for program in programs:
            for side, tree in order:
                times.setdefault((side, program.stem), []).append(cold_compile(tree, program, max_len))
    return times


def table(times: dict, programs: list[Path], against: str) -> str:
    """A markdown table: program, median here, median at REV, ratio; then the total."""
    rows = []
    totals = {"here": 0.0, "there": 0.0}
    for program in programs:
        here = statistics.median(times[("here", program.stem)])
        there = statistics.median(times[("there", program.stem)])
        totals["here"] += here
        totals["there"] += there
        rows.append([program.stem, f"{here:.3f}", f"{there:.3f}", f"{here / there:.2f}"])
    rows.append(["all", f"{totals['here']:.3f}", f"{totals['there']:.3f}", f"{totals['here'] / totals['there']:.2f}"])
    return markdown(["program", "this checkout (s)", f"{against} (s)", "ratio"], rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Cold compile time here beside another revision, interleaved.")
    parser.add_argument("--against", required=True, metavar="REV", help="the git revision to compare with")
    parser.add_argument("--max-len", type=int, default=20, metavar="N", help="compile at this max_len (default 20)")
    parser.add_argument("--runs", type=int, default=5, metavar="R", help="compiles per program and side (default 5)")
    parser.add_argument("--programs", default="", help="comma-separated names from programs/ (default: all)")
    parser.add_argument("--out", type=Path, default=RESULTS / "cold_compile.md", help="the results file")
    args = parser.parse_args(argv)
    names = [name for name in args.programs.split(",") if name]
    programs = [ROOT / "programs" / f"{name}.rasp" for name in names] or sorted((ROOT / "programs").glob("*.rasp"))
    with tempfile.TemporaryDirectory() as scratch:
        other = Path(scratch) / "other"
        subprocess.run(["git", "worktree", "add", "--detach", "--quiet", str(other), args.against],
                       cwd=ROOT, check=True)
        try:
            times = measure({"here": ROOT, "there": other}, programs, args.max_len, args.runs)
            against = f"{args.against} ({revision(other)})"
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(other)], cwd=ROOT, check=True)
    lines = [
        "# bench/cold_compile.py results", "",
        f"This checkout ({revision(ROOT)}) beside {against}: `rasp-compile PROGRAM --max-len {args.max_len} "
        f"--json` in a new process, {args.runs} runs per program and side, interleaved; medians.",
        f"{machine_line(machine())}.", "",
        table(times, programs, against),
    ]
    text = "\n".join(lines) + "\n"
    print(text, end="")
    args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
