"""How the compiled models scale with max_len: size, cost, compile time, speed and exactness.

    python bench/scale.py [--programs reverse,sort] [--max-lens 5,10,20,64,1024] [--timeout 300]

`--max-lens` takes up to 4,096, the language's cap; bench/scale_long.py measures the programs that
grow linearly at 2,048 and 4,096 in CPU seconds (bench/results/scale_4096.md), which a loaded machine
inflates less than the wall time of the cold compiles here.

Per program (default: every programs/*.rasp) and max_len, one "cell":
  layers, heads per layer, d_model   from the compiled model's meta
  params, non-zero                   every weight, and those not exactly 0
  FLOPs                              `count_flops(model, max_len + 1)`: one forward at max_len, BOS included
  compile s                          a cold `rasp-compile PROGRAM --max-len N --json`: a new process,
                                     imports included, wall time; the median of `--runs` runs
  seq/s, ms/1000                     `execute.logits` on a batch of `--batch` random inputs of length
                                     max_len, float32, the best of `--runs` runs
  accuracy %, skipped                compiled float32 vs the (batched) interpreter at every position of
                                     `--samples` seeded random inputs of lengths 1..max_len: agreeing
                                     positions / all positions; inputs on which the program errs are skipped
Past max_len 64 the batch and the samples shrink in proportion to 64 / max_len (at least 50 each):
at 1,024, 62 sequences in the forward batch and 125 accuracy inputs by default.

Each cell's model, forward and accuracy figures come from a worker process (this script with
`--cell`) that prints one JSON line per stage; a worker still running after `--timeout` seconds is
killed, the cell keeps the stages it finished and is marked "timeout", and a program whose compile
timed out is not tried at larger max_lens. Each cold compile run has the same limit.

Writes OUT/results.md and OUT/results.json (OUT = `--out`, default bench/results/), prints the tables,
the comparison with tracr (bench/tracr_figures.py) and the goal checks (bench/goals.py).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import statistics
import subprocess
import sys
import time
from typing import Any
from pathlib import Path

import numpy as np
from rich.console import Console

import tracr_figures as tracr
from cells import PROGRAMS_DIR, compile_text, find, heads_text, library_programs, ratio_text, shown
from goals import goal_checks, goal_lines
from harness import RESULTS, Table, best_of, machine, machine_line, to_markdown, to_rich

from rasp_compile import ir
from rasp_compile.compiler import compile_program
from rasp_compile.errors import RaspRuntimeError
from rasp_compile.tools.flops import count_flops
from rasp_compile.runtime.execute import logits
from rasp_compile.runtime.prediction import encode, predict
from rasp_compile.frontend import load_program
from rasp_compile.tools.interpret import evaluate_batch
from rasp_compile.runtime.model import Model, n_nonzero, n_params
from rasp_compile.testing.differential import same_value

MAX_LENS = (5, 10, 20, 40, 64, 128, 256, 512, 1024)
SCALED_FROM = 64
"""Past this max_len a cell's forward batch and accuracy inputs shrink in proportion (a
sequence costs at least max_len times more), to no fewer than MIN_SCALED of each."""
MIN_SCALED = 50


# ---------------------------------------------------------------------------------------------
# The worker: one cell, measured in this process, one JSON line per finished stage.


def measure_cell(path: Path, max_len: int, samples: int, batch: int, runs: int, seed: int) -> None:
    """Print the model, forward and accuracy figures of one cell, each line as soon as it is known."""
    program = dataclasses.replace(load_program(path), max_len=max_len)
    model = compile_program(program, dtype=np.float32)
    emit(model_figures(model, max_len))
    emit(forward_speed(model, program, scaled(batch, max_len), runs, random.Random(seed + 1)))
    emit(accuracy(model, program, sampled_inputs(program, scaled(samples, max_len), random.Random(seed))))


def scaled(count: int, max_len: int) -> int:
    """`count` up to max_len SCALED_FROM, then in proportion to SCALED_FROM / max_len (module docstring)."""
    if max_len <= SCALED_FROM:
        return count
    return max(min(count, MIN_SCALED), count * SCALED_FROM // max_len)


def emit(figures: dict) -> None:
    print(json.dumps(figures), flush=True)


def model_figures(model: Model, max_len: int) -> dict:
    return {
        "layers": model.n_layers,
        "heads": [layer["n_head"] for layer in model.meta["layers"]],
        "d_model": model.d_model,
        "params": n_params(model),
        "nonzero": n_nonzero(model),
        "flops": count_flops(model, max_len + 1)["total"],
    }


def forward_speed(model: Model, program: ir.Program, batch: int, runs: int, rng: random.Random) -> dict:
    """Sequences per second through `execute.logits` on `batch` inputs of length max_len, best of `runs`."""
    ids = np.array([encode(model, [rng.choice(program.vocab) for _ in range(program.max_len)])
                    for _ in range(batch)], dtype=np.int64)
    best = best_of(runs, lambda: logits(model, ids))
    return {"seqs_per_s": batch / best, "forward_ms_per_1000": best / batch * 1000 * 1000}


def sampled_inputs(program: ir.Program, count: int, rng: random.Random) -> list[list]:
    """`count` inputs of uniformly random lengths 1..max_len over the program's vocab."""
    return [[rng.choice(program.vocab) for _ in range(rng.randint(1, program.max_len))] for _ in range(count)]


def accuracy(model: Model, program: ir.Program, inputs: list[list]) -> dict:
    """Positions where model and interpreter agree (rasp_compile.testing.differential.same_value), over every
    position of the inputs on which the program does not err."""
    checked, expected = [], []
    for tokens, output in zip(inputs, evaluate_batch(program, inputs)):
        if not isinstance(output, RaspRuntimeError):
            checked.append(tokens)
            expected.append(output)
    numerical = model.meta["output"]["encoding"] == ir.NUMERICAL
    got = predict(model, checked) if checked else []
    agree = sum(same_value(e, g, numerical) for want, have in zip(expected, got) for e, g in zip(want, have))
    positions = sum(map(len, checked))
    return {"inputs": len(inputs), "skipped": len(inputs) - len(checked), "agree": agree,
            "positions": positions, "accuracy": percent(agree, positions)}


def percent(part: int, whole: int) -> float | None:
    """part / whole in percent, 2 decimals, never rounded up to 100.0 unless exactly all."""
    if whole == 0:
        return None
    return 100.0 if part == whole else min(round(100 * part / whole, 2), 99.99)


# ---------------------------------------------------------------------------------------------
# The driver: workers and cold compiles, each in a process with a time limit.


def run_cell(path: Path, max_len: int, args) -> dict:
    """One cell's figures (see the module docstring), with "status" ok, timeout or error."""
    cell = {"program": path.stem, "max_len": max_len}
    command = [sys.executable, __file__, "--cell", str(path), str(max_len), "--samples", str(args.samples),
               "--batch", str(args.batch), "--runs", str(args.runs), "--seed", str(args.seed)]
    status, out, err = run_limited(command, args.timeout)
    for line in out.splitlines():
        cell.update(json.loads(line))
    cell["status"] = status
    if status == "error":
        cell["error"] = (err.strip().splitlines() or ["exit status not 0"])[-1]
    if "layers" in cell:
        cell["compile_runs"] = cold_compiles(path, max_len, args.runs, args.timeout)
        seconds = [run for run in cell["compile_runs"] if isinstance(run, float)]
        cell["compile_s"] = statistics.median(seconds) if len(seconds) == args.runs else None
    return cell


def run_limited(command: list[str], timeout: float) -> tuple[str, str, str]:
    """(status "ok" / "error" / "timeout", stdout so far, stderr so far) of a process given `timeout` s."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as expired:
        return "timeout", (expired.stdout or b"").decode(), (expired.stderr or b"").decode()
    return ("ok" if done.returncode == 0 else "error"), done.stdout, done.stderr


def cold_compiles(path: Path, max_len: int, runs: int, timeout: float) -> list[float | str]:
    """Wall seconds of `runs` cold compiles (or "timeout" / "error"); stops at the first failure."""
    results: list[float | str] = []
    for _ in range(runs):
        started = time.perf_counter()
        status, _, _ = run_limited(compile_command(path, max_len), timeout)
        results.append(time.perf_counter() - started if status == "ok" else status)
        if status != "ok":
            break
    return results


def compile_command(path: Path, max_len: int) -> list[str]:
    """The installed `rasp-compile` script beside this Python, or the same entry point through -c."""
    script = Path(sys.executable).with_name("rasp-compile")
    entry = ([str(script)] if script.exists() else
             [sys.executable, "-c", "import sys; from rasp_compile.cli.compile_cmd import main; sys.exit(main())"])
    return entry + [str(path), "--max-len", str(max_len), "--json"]


def run_program(path: Path, max_lens: list[int], args, console: Console) -> list[dict]:
    """Every cell of one program; after a compile that timed out, larger max_lens are not tried."""
    cells: list[dict[str, Any]] = []
    for max_len in max_lens:
        given_up = next((c for c in cells if c["status"] == "timeout" and "layers" not in c), None)
        if given_up:
            cell = {"program": path.stem, "max_len": max_len, "status": "timeout",
                    "error": f"not run: the compile timed out at max_len {given_up['max_len']}"}
        else:
            cell = run_cell(path, max_len, args)
        console.print(f"  {path.stem} max_len {max_len}: {cell['status']}", highlight=False)
        cells.append(cell)
    return cells


# ---------------------------------------------------------------------------------------------
# Reports: harness.Table, rendered with rich and as markdown.


PROGRAM_COLUMNS = ["max_len", "layers", "heads", "d_model", "params", "non-zero", "FLOPs", "compile s",
                   "seq/s", "ms/1000", "accuracy %", "skipped"]


def program_table(program: str, cells: list[dict]) -> Table:
    rows = [[str(c["max_len"]), shown(c, "layers", "d"), heads_text(c),
             shown(c, "d_model", "d"), shown(c, "params", ","), shown(c, "nonzero", ","), shown(c, "flops", ","),
             compile_text(c), shown(c, "seqs_per_s", ",.0f"), shown(c, "forward_ms_per_1000", ",.1f"),
             shown(c, "accuracy", ".2f"), shown(c, "skipped", ",")]
            for c in cells]
    return Table(program, PROGRAM_COLUMNS, rows)


def comparison_table(cells: list[dict]) -> Table:
    """Ours beside tracr on every program and max_len of the tracr figures (tracr_figures.py)."""
    columns = ["program", "max_len", "layers ours/tracr", "params ours", "params tracr", "ratio",
               "exact ours", "exact tracr", "compile s ours", "compile s tracr", "ms/1000 ours", "ms/1000 tracr"]
    rows = []
    for figure in tracr.TRACR:
        cell = find(cells, figure.program, figure.max_len) or {"status": "not measured"}
        ratio = cell["params"] / figure.params if "params" in cell else None
        low, high = figure.compile_seconds
        rows.append([figure.program, str(figure.max_len), f"{shown(cell, 'layers', 'd')}/{figure.layers}",
                     shown(cell, "params", ","), f"{figure.params:,}",
                     ratio_text(ratio),
                     shown(cell, "accuracy", ".2f") + ("%" if "accuracy" in cell else ""), figure.exactness,
                     compile_text(cell), f"{low}-{high}", shown(cell, "forward_ms_per_1000", ",.1f"),
                     "-" if figure.forward_ms_per_1000 is None else f"{figure.forward_ms_per_1000:,.0f}"])
    return Table("ours vs tracr", columns, rows)


# ---------------------------------------------------------------------------------------------
# Output files and the command line.


def write_results(out: Path, cells: list[dict], tables: list[Table], goals: list, settings: dict) -> None:
    info = machine()
    out.mkdir(parents=True, exist_ok=True)
    header = [
        "# bench/scale.py results", "",
        f"{machine_line(info)}.",
        f"Settings: {', '.join(f'{key} {value}' for key, value in settings.items())}. "
        "Columns: see bench/README.md.", "",
    ]
    body = "\n\n".join(map(to_markdown, tables))
    checks = "\n\n".join("\n".join([f"### goals: {group}", "", "```", *goal_lines(lines), "```"])
                         for group, lines in goals.items())
    (out / "results.md").write_text("\n".join(header) + body + "\n\n" + checks + "\n")
    goal_json = [{"group": group, "goal": goal, "passed": passed, "detail": detail}
                 for group, lines in goals.items() for goal, passed, detail in lines]
    (out / "results.json").write_text(json.dumps(
        {"machine": info, "settings": settings, "cells": cells, "goals": goal_json}, indent=1) + "\n")


def parse_args(argv: list[str] | None):
    parser = argparse.ArgumentParser(description="Size, cost, speed and exactness of compiled programs.")
    parser.add_argument("--programs", help="comma-separated names in programs/ (default: all)")
    parser.add_argument("--max-lens", default=",".join(map(str, MAX_LENS)),
                        help="default 5,10,20,40,64,128,256,512,1024")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per cell process (default 300)")
    parser.add_argument("--samples", type=int, default=2_000,
                        help="accuracy inputs per cell (default 2000; fewer past max_len 64)")
    parser.add_argument("--batch", type=int, default=1_000, help="forward batch (default 1000; smaller past max_len 64)")
    parser.add_argument("--runs", type=int, default=3, help="cold compiles (median) and forward runs (best)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    parser.add_argument("--out", type=Path, default=RESULTS, help="results directory (default bench/results/)")
    parser.add_argument("--cell", nargs=2, metavar=("PATH", "MAX_LEN"), help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.cell:
        measure_cell(Path(args.cell[0]), int(args.cell[1]), args.samples, args.batch, args.runs, args.seed)
        return 0
    names = args.programs.split(",") if args.programs else library_programs()
    max_lens = [int(n) for n in args.max_lens.split(",")]
    console = Console(width=None if sys.stdout.isatty() else 200)  # files and pipes get whole rows
    cells = []
    for name in names:
        cells += run_program(PROGRAMS_DIR / f"{name}.rasp", max_lens, args, console)
    tables = [program_table(name, [c for c in cells if c["program"] == name]) for name in names]
    tables.append(comparison_table(cells))
    goals = goal_checks(cells)
    for table in tables:
        console.print(to_rich(table))
    for group, lines in goals.items():
        console.print(f"goals: {group}", highlight=False)
        for line in goal_lines(lines):
            console.print(line, highlight=False)
    settings = {key: getattr(args, key) for key in ("timeout", "samples", "batch", "runs", "seed")}
    write_results(args.out, cells, tables, goals, {"max_lens": max_lens, **settings})
    return 0


if __name__ == "__main__":
    sys.exit(main())
