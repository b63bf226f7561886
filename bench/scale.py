"""How the compiled models scale with max_len: size, cost, compile time, speed and exactness.

    python bench/scale.py [--programs reverse,sort] [--max-lens 5,10,...,4096] [--jobs 2] [--timeout 300]
    python bench/scale.py --tables-only    (results.md and scale.svg again from results.json, nothing measured)

Per program (default: every programs/*.rasp) and max_len (default 5 to 4,096, the language's cap),
one "cell", measured by a worker process (bench/scale_cell.py, one JSON line per finished stage):
  layers, heads per layer, d_model   from the compiled model's meta
  params, non-zero                   every weight, and those not exactly 0
  FLOPs                              `count_flops(model, max_len + 1)`: one forward at max_len, BOS included
  compile CPU s                      CPU seconds of `compile_program` in the worker (parse and checks
                                     included, imports not): every cell, refused ones too (the time to
                                     the refusal); the figure bench/results/scale.svg plots
  cold CPU s, cold wall s            a cold `rasp-compile PROGRAM --max-len N --json`: a new process,
                                     imports included; its CPU seconds (user + system, from os.wait4),
                                     which other work on a shared machine inflates little, and its wall
                                     seconds; the median of the cold runs (below); up to max_len 1,024
  seq/s, ms/1000                     `execute.logits` on a batch of random inputs of length max_len,
                                     float32, the best of `--runs` runs
  accuracy %, skipped                compiled float32 vs the (batched) interpreter at every position of
                                     seeded random inputs: agreeing positions / all positions; inputs on
                                     which the program errs are skipped
  float32, float64 (past 1,024)      exact on inputs of the longest lengths, or the share of positions
                                     and a numerical answer's largest error, or the located refusal;
                                     float64 is compiled and checked where float32 is refused for
                                     precision or is not exact
  float64 weights cast to float32    the float64 model's weights cast to float32, on the same inputs: a
                                     numerical answer's largest error, or "exact" or the share of
                                     positions that agreed

Samples shrink with max_len (`plan`; a sequence of length n costs at least n times more):
  max_len <= 64        `--samples` (2,000) inputs of lengths 1..max_len, a forward batch of `--batch`
                       (1,000), `--runs` (3) cold compiles
  128 .. 1,024         samples x 64/max_len inputs (125 at 1,024, at least 32), batch x (64/max_len)^2
                       (at least 4), one cold compile
  past 1,024           `--long-samples` (8) inputs of the longest lengths, max_len, max_len - 1, ...,
                       a batch of 4, no cold compile (compile CPU s is the figure)

Every process runs NumPy's BLAS on one thread (BLAS_THREADS). Programs run `--jobs` at a time
(default 2), the costliest of the last run's first (OUT/results.json).
A worker that has used `--timeout` CPU seconds (or 20 times that in wall seconds) is killed, the
cell keeps the stages it finished and is marked "timeout"; each cold compile has the same limit.
A cell that would surely run out of time is "skipped" (`not_worth_trying`): after a compile that
ran out of time, or where the last compile's CPU seconds times the growth of max_len pass the limit.

Writes OUT/results.md, OUT/results.json and OUT/scale.svg (bench/scale_plot.py; OUT = `--out`,
default bench/results/), prints the tables, the comparison with tracr (bench/tracr_figures.py) and
the goal checks (bench/goals.py).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import resource
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from rich.console import Console

from cells import CONTEXT, PROGRAMS_DIR, library_programs
from goals import goal_checks, goal_lines
from harness import RESULTS, Table, machine, machine_line, run_limited, to_markdown, to_rich
from scale_plot import write_plot
from scale_tables import comparison_table, long_table, program_table

MAX_LENS = (5, 10, 20, 40, 64, 128, 256, 512, 1024, 2048, 4096)
SCALED_FROM = 64
"""Past this max_len a cell's samples shrink (`plan`)."""
MIN_SAMPLES, MIN_BATCH = 32, 4
CELL_SCRIPT = Path(__file__).resolve().parent / "scale_cell.py"


# ---------------------------------------------------------------------------------------------
# The driver: workers and cold compiles, each in a process with a time limit.


@dataclasses.dataclass(frozen=True)
class Plan:
    """What one cell measures on: accuracy inputs (of the longest lengths or of lengths 1..max_len),
    forward batch and runs, cold compiles."""

    samples: int
    longest: bool
    batch: int
    runs: int
    cold_runs: int


def plan(max_len: int, args) -> Plan:
    """The samples of a cell at `max_len` (module docstring)."""
    if max_len <= SCALED_FROM:
        return Plan(args.samples, False, args.batch, args.runs, args.runs)
    if max_len > CONTEXT:
        return Plan(args.long_samples, True, MIN_BATCH, args.runs, 0)
    share = SCALED_FROM / max_len
    return Plan(max(MIN_SAMPLES, int(args.samples * share)), False, max(MIN_BATCH, int(args.batch * share ** 2)),
                args.runs, 1)


def run_cell(path: Path, max_len: int, args) -> dict:
    """One cell's figures (module docstring), with "status" ok, refused, timeout or error."""
    cell: dict[str, Any] = {"program": path.stem, "max_len": max_len}
    sample = plan(max_len, args)
    command = [sys.executable, str(CELL_SCRIPT), str(path), str(max_len), "--samples", str(sample.samples),
               "--batch", str(sample.batch), "--runs", str(sample.runs), "--seed", str(args.seed)]
    done = run_limited(command + ["--longest"] * sample.longest, args.timeout)
    for line in done.stdout.splitlines():
        cell.update(json.loads(line))
    cell["status"] = "refused" if done.status == "ok" and "refused" in cell else done.status
    if done.status == "error":
        cell["error"] = (done.stderr.strip().splitlines() or ["exit status not 0"])[-1]
    spent = [done.wall_s, done.cpu_s]
    if "layers" in cell and sample.cold_runs:
        cell.update(cold_compiles(path, max_len, sample.cold_runs, args.timeout))
        spent = [spent[0] + sum(r["wall_s"] for r in cell["cold_runs"] if isinstance(r, dict)),
                 spent[1] + sum(r["cpu_s"] for r in cell["cold_runs"] if isinstance(r, dict))]
    cell["cell_wall_s"], cell["cell_cpu_s"] = spent
    return cell


def cold_compiles(path: Path, max_len: int, runs: int, timeout: float) -> dict:
    """`runs` cold compiles ({"cpu_s", "wall_s"} each, or "timeout" / "error", stopping at the first
    failure) and their medians (None unless all ran)."""
    results: list[dict | str] = []
    for _ in range(runs):
        done = run_limited(compile_command(path, max_len), timeout)
        results.append({"cpu_s": done.cpu_s, "wall_s": done.wall_s} if done.status == "ok" else done.status)
        if done.status != "ok":
            break
    timed = [run for run in results if isinstance(run, dict)]
    whole = len(timed) == runs
    return {"cold_runs": results,
            "cold_cpu_s": statistics.median(run["cpu_s"] for run in timed) if whole else None,
            "cold_wall_s": statistics.median(run["wall_s"] for run in timed) if whole else None}


def compile_command(path: Path, max_len: int) -> list[str]:
    """The installed `rasp-compile` script beside this Python, or the same entry point through -c."""
    script = Path(sys.executable).with_name("rasp-compile")
    entry = ([str(script)] if script.exists() else
             [sys.executable, "-c", "import sys; from rasp_compile.cli.compile_cmd import main; sys.exit(main())"])
    return entry + [str(path), "--max-len", str(max_len), "--json"]


def run_program(path: Path, max_lens: list[int], args, console: Console) -> list[dict]:
    """Every cell of one program, but those `not_worth_trying`."""
    cells: list[dict[str, Any]] = []
    for max_len in max_lens:
        why = not_worth_trying(cells, max_len, args.timeout)
        cell = {"program": path.stem, "max_len": max_len, "status": "skipped", "error": why} if why else \
            run_cell(path, max_len, args)
        console.print(f"  {path.stem} max_len {max_len}: {cell['status']} "
                      f"({cell.get('cell_wall_s', 0):.1f} s wall, {cell.get('cell_cpu_s', 0):.1f} s CPU)", highlight=False)
        cells.append(cell)
    return cells


def not_worth_trying(cells: list[dict], max_len: int, limit: float) -> str | None:
    """Why a cell at `max_len` would surely run out of time, given the program's smaller cells: a
    compile that ran out of time, or one whose CPU seconds, times the growth of max_len (a compile's
    time grows at least linearly with it), pass the limit; None if it is worth trying."""
    for cell in cells:
        if cell["status"] == "timeout" and "compile_cpu_s" not in cell:
            return f"not run: the compile ran out of time at max_len {cell['max_len']:,}"
    timed = [c for c in cells if c.get("compile_cpu_s") is not None]
    if timed and timed[-1]["compile_cpu_s"] * max_len / timed[-1]["max_len"] > limit:
        last = timed[-1]
        return (f"not run: the compile took {last['compile_cpu_s']:.0f} CPU s at max_len {last['max_len']:,}, "
                f"at least {max_len / last['max_len']:g}x that here: past the {limit:g} s limit")
    return None


def costliest_first(names: list[str], previous: Path) -> list[str]:
    """`names`, those whose cells took longest in the last run (`previous`, a results.json) first, so
    that parallel jobs end together; the order given where there is no last run."""
    if not previous.exists():
        return names
    cost: dict[str, float] = {}
    for cell in json.loads(previous.read_text()).get("cells", []):
        compiles = (cell.get("compile_cpu_s") or 0) + (cell.get("cold_cpu_s") or cell.get("compile_s") or 0)
        forward = (cell.get("forward_ms_per_1000") or 0) / 1e6 * (cell.get("inputs", 0) + 1)  # s per sequence
        cost[cell["program"]] = cost.get(cell["program"], 0.0) + compiles + forward
    return sorted(names, key=lambda name: -cost.get(name, float("inf")))


# ---------------------------------------------------------------------------------------------
# Output files and the command line.


def write_results(out: Path, cells: list[dict], tables: list[Table], goals: dict, settings: dict, info: dict) -> None:
    """OUT/results.md (settings, samples per max_len, tables, goal lines), OUT/results.json, OUT/scale.svg;
    `info`: the machine, date and commit the cells were measured on (harness.machine)."""
    out.mkdir(parents=True, exist_ok=True)
    header = [
        "# bench/scale.py results", "",
        f"{machine_line(info)}.",
        f"Settings: {', '.join(f'{key} {value}' for key, value in settings.items())}. "
        "Columns: see bench/README.md. Compile times are CPU seconds (user + system) unless marked wall: "
        "the machine is shared, and CPU time is what its load inflates least.", "",
        "Samples per max_len: " + "; ".join(plan_text(n, plan(n, argparse.Namespace(**settings)))
                                           for n in settings["max_lens"]) + ".", "",
    ]
    body = "\n\n".join(map(to_markdown, tables))
    checks = "\n\n".join("\n".join([f"### goals: {group}", "", "```", *goal_lines(lines), "```"])
                         for group, lines in goals.items())
    (out / "results.md").write_text("\n".join(header) + "\n" + body + "\n\n" + checks + "\n")
    goal_json = [{"group": group, "goal": goal, "passed": passed, "detail": detail}
                 for group, lines in goals.items() for goal, passed, detail in lines]
    (out / "results.json").write_text(json.dumps(
        {"machine": info, "settings": settings, "cells": cells, "goals": goal_json}, indent=1) + "\n")
    write_plot(cells, out / "scale.svg")


def plan_text(max_len: int, sample: Plan) -> str:
    lengths = "the longest lengths" if sample.longest else "lengths 1..max_len"
    return (f"{max_len:,}: {sample.samples:,} inputs of {lengths}, forward batch {sample.batch:,} "
            f"(best of {sample.runs}), {sample.cold_runs} cold compile{'s' * (sample.cold_runs != 1)}")


def parse_args(argv: list[str] | None):
    parser = argparse.ArgumentParser(description="Size, cost, speed and exactness of compiled programs.")
    parser.add_argument("--programs", help="comma-separated names in programs/ (default: all)")
    parser.add_argument("--max-lens", default=",".join(map(str, MAX_LENS)),
                        help="default " + ",".join(map(str, MAX_LENS)))
    parser.add_argument("--jobs", type=int, default=2, help="programs measured at a time (default 2)")
    parser.add_argument("--timeout", type=float, default=300.0,
                        help="CPU seconds per process (default 300; and 20 times that in wall seconds)")
    parser.add_argument("--samples", type=int, default=2_000,
                        help="accuracy inputs per cell up to max_len 64 (default 2000; fewer past it)")
    parser.add_argument("--long-samples", type=int, default=8,
                        help="accuracy inputs of the longest lengths past max_len 1,024 (default 8)")
    parser.add_argument("--batch", type=int, default=1_000, help="forward batch (default 1000; smaller past max_len 64)")
    parser.add_argument("--runs", type=int, default=3, help="forward runs (best) and cold compiles up to 64 (median)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    parser.add_argument("--out", type=Path, default=RESULTS, help="results directory (default bench/results/)")
    parser.add_argument("--tables-only", action="store_true",
                        help="measure nothing: write the tables, goals and plot again from OUT/results.json's cells "
                             "(the goals' wording may have changed; the figures and their commit stay the run's)")
    return parser.parse_args(argv)


BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
"""Set to 1 for every child process (unless already set): two programs run at once on two cores,
and a multi-threaded BLAS's waiting threads spin: under load they burnt 30 times the CPU seconds
of the work itself (shuffle_dyck2 at max_len 128: 15 CPU s for 1,000 inputs, 0.5 s on one thread)."""


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    for variable in BLAS_THREADS:
        os.environ.setdefault(variable, "1")
    console = Console(width=None if sys.stdout.isatty() else 200)  # files and pipes get whole rows
    if args.tables_only:
        run = json.loads((args.out / "results.json").read_text())
        names = list(dict.fromkeys(cell["program"] for cell in run["cells"]))
        report(args.out, console, names, run["cells"], run["settings"], run["machine"])
        return 0
    names = args.programs.split(",") if args.programs else library_programs()
    max_lens = [int(n) for n in args.max_lens.split(",")]
    started = time.perf_counter()
    with ThreadPoolExecutor(args.jobs) as pool:
        measured = dict(zip(order := costliest_first(names, args.out / "results.json"), pool.map(
            lambda name: run_program(PROGRAMS_DIR / f"{name}.rasp", max_lens, args, console), order)))
    cells = [cell for name in names for cell in measured[name]]
    settings = {key: getattr(args, key) for key in ("jobs", "timeout", "samples", "long_samples", "batch", "runs",
                                                     "seed")}
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    report(args.out, console, names, cells, {"max_lens": max_lens, **settings,
                                             "minutes": round((time.perf_counter() - started) / 60, 1),
                                             "cpu_minutes": round((children.ru_utime + children.ru_stime) / 60, 1)},
           machine())
    return 0


def report(out: Path, console: Console, names: list[str], cells: list[dict], settings: dict, info: dict) -> None:
    """The tables and goal lines of `cells`, printed and written to OUT (write_results)."""
    tables = [program_table(name, [c for c in cells if c["program"] == name]) for name in names]
    tables.append(comparison_table(cells))
    if any(n > CONTEXT for n in settings["max_lens"]):
        tables.append(long_table(cells))
    goals = goal_checks(cells)
    for table in tables:
        console.print(to_rich(table))
    for group, lines in goals.items():
        console.print(f"goals: {group}", highlight=False)
        for line in goal_lines(lines):
            console.print(line, highlight=False)
    write_results(out, cells, tables, goals, settings, info)


if __name__ == "__main__":
    sys.exit(main())
