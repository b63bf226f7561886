"""How the compiled models scale with max_len: size, cost, compile time, speed and exactness.

    python bench/scale.py [--programs reverse,sort] [--max-lens 5,10,20,40,64] [--timeout 300]

Per program (default: every programs/*.rasp) and max_len, one "cell":
  layers, heads per layer, d_model   from the compiled model's meta
  params, non-zero                   every weight, and those not exactly 0
  FLOPs                              `count_flops(model, max_len + 1)`: one forward at max_len, BOS included
  compile s                          a cold `rasp-compile PROGRAM --max-len N --json`: a new process,
                                     imports included, wall time; the median of `--runs` runs
  seq/s, ms/1000                     `forward.logits` on a batch of `--batch` random inputs of length
                                     max_len, float32, the best of `--runs` runs
  accuracy %, skipped                compiled float32 vs the interpreter at every position of `--samples`
                                     seeded random inputs of lengths 1..max_len: agreeing positions / all
                                     positions; inputs on which the program itself errs are skipped

Each cell's model, forward and accuracy figures come from a worker process (this script with
`--cell`) that prints one JSON line per stage; a worker still running after `--timeout` seconds is
killed, the cell keeps the stages it finished and is marked "timeout", and a program whose compile
timed out is not tried at larger max_lens. Each cold compile run has the same limit.

Writes OUT/results.md and OUT/results.json (OUT = `--out`, default bench/), prints the tables,
the comparison with tracr (bench/tracr_figures.py) and the goal checks of issue 5.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table as RichTable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # tests/differential.py: the comparison rule (no __init__)
sys.path.insert(0, str(ROOT / "examples"))  # examples/handmade_aab.py: goal 5's reference model

import tracr_figures as tracr  # noqa: E402  (this directory is on sys.path when run as a script)
from differential import same_value  # noqa: E402

from rasp_compile import ir  # noqa: E402
from rasp_compile.compiler import compile_program  # noqa: E402
from rasp_compile.errors import RaspRuntimeError  # noqa: E402
from rasp_compile.tools.flops import count_flops  # noqa: E402
from rasp_compile.runtime.forward import encode, logits, predict  # noqa: E402
from rasp_compile.frontend import load_program  # noqa: E402
from rasp_compile.tools.interpret import evaluate  # noqa: E402
from rasp_compile.runtime.model import Model, n_nonzero, n_params  # noqa: E402

PROGRAMS_DIR = ROOT / "programs"
MAX_LENS = (5, 10, 20, 40, 64)
GOAL_5_TOKENS = 5  # goal 5 compares the (aab)* models on a 5-token input


# ---------------------------------------------------------------------------------------------
# The worker: one cell, measured in this process, one JSON line per finished stage.


def measure_cell(path: Path, max_len: int, samples: int, batch: int, runs: int, seed: int) -> None:
    """Print the model, forward and accuracy figures of one cell, each line as soon as it is known."""
    program = dataclasses.replace(load_program(path), max_len=max_len)
    model = compile_program(program, dtype=np.float32)
    emit(model_figures(model, max_len))
    emit(forward_speed(model, program, batch, runs, random.Random(seed + 1)))
    emit(accuracy(model, program, sampled_inputs(program, samples, random.Random(seed))))


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
    """Sequences per second through `forward.logits` on `batch` inputs of length max_len, best of `runs`."""
    ids = np.array([encode(model, [rng.choice(program.vocab) for _ in range(program.max_len)])
                    for _ in range(batch)], dtype=np.int64)
    best = min(wall_seconds(lambda: logits(model, ids)) for _ in range(runs))
    return {"seqs_per_s": batch / best, "forward_ms_per_1000": best / batch * 1000 * 1000}


def wall_seconds(action) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def sampled_inputs(program: ir.Program, count: int, rng: random.Random) -> list[list]:
    """`count` inputs of uniformly random lengths 1..max_len over the program's vocab."""
    return [[rng.choice(program.vocab) for _ in range(rng.randint(1, program.max_len))] for _ in range(count)]


def accuracy(model: Model, program: ir.Program, inputs: list[list]) -> dict:
    """Positions where model and interpreter agree (tests/differential.same_value), over every
    position of the inputs on which the program does not err."""
    checked, expected = [], []
    for tokens in inputs:
        try:
            expected.append(evaluate(program, tokens))
        except RaspRuntimeError:
            continue
        checked.append(tokens)
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
    cells = []
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
# Reports: one table structure, rendered with rich and as markdown.


@dataclasses.dataclass
class Table:
    title: str
    columns: list[str]
    rows: list[list[str]]


def to_rich(table: Table) -> RichTable:
    rich = RichTable(*table.columns, title=table.title, title_justify="left")
    for row in table.rows:
        rich.add_row(*row)
    return rich


def to_markdown(table: Table) -> str:
    lines = [f"### {table.title}", "", "| " + " | ".join(table.columns) + " |",
             "|" + "|".join("---" for _ in table.columns) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in table.rows]
    return "\n".join(lines)


def shown(cell: dict, key: str, fmt: str) -> str:
    """A cell's figure formatted, or why it is missing (the cell's status)."""
    value = cell.get(key)
    if value is None:
        return "-" if cell["status"] == "ok" else cell["status"]
    return format(value, fmt)


PROGRAM_COLUMNS = ["max_len", "layers", "heads", "d_model", "params", "non-zero", "FLOPs", "compile s",
                   "seq/s", "ms/1000", "accuracy %", "skipped"]


def program_table(program: str, cells: list[dict]) -> Table:
    rows = [[str(c["max_len"]), shown(c, "layers", "d"), heads_text(c),
             shown(c, "d_model", "d"), shown(c, "params", ","), shown(c, "nonzero", ","), shown(c, "flops", ","),
             compile_text(c), shown(c, "seqs_per_s", ",.0f"), shown(c, "forward_ms_per_1000", ",.1f"),
             shown(c, "accuracy", ".2f"), shown(c, "skipped", ",")]
            for c in cells]
    return Table(program, PROGRAM_COLUMNS, rows)


def heads_text(cell: dict) -> str:
    """Heads per layer as 1/0/2, "-" for a model without layers."""
    if "heads" not in cell:
        return cell["status"]
    return "/".join(map(str, cell["heads"])) or "-"


def compile_text(cell: dict) -> str:
    runs = cell.get("compile_runs", [])
    failed = [run for run in runs if isinstance(run, str)]
    return failed[0] if failed else shown(cell, "compile_s", ".2f")


def find(cells: list[dict], program: str, max_len: int) -> dict | None:
    return next((c for c in cells if c["program"] == program and c["max_len"] == max_len), None)


def comparison_table(cells: list[dict]) -> Table:
    """Ours beside tracr on every program and max_len the issue quotes tracr for."""
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
    return Table("ours vs tracr (issue 5's figures)", columns, rows)


# ---------------------------------------------------------------------------------------------
# Goal checks of issue 5: each a (goal, passed, detail) from the measured cells.


def ratio_text(ratio: float | None) -> str:
    """ours / tracr as 1/N, N with a decimal while it is below 10 (1/1.8 is not 1/2)."""
    if ratio is None:
        return "-"
    if ratio >= 1:
        return f"{ratio:.2f}"
    return f"1/{1 / ratio:.1f}" if 1 / ratio < 10 else f"1/{1 / ratio:,.0f}"


def library_programs() -> list[str]:
    return sorted(path.stem for path in PROGRAMS_DIR.glob("*.rasp"))


def verdict(goal: str, failures: list[str], missing: list[str], success: str) -> tuple[str, bool, str]:
    """(goal, passed, detail): passed when nothing failed and nothing the goal needs is missing."""
    problems = failures + ([f"not measured: {', '.join(missing)}"] if missing else [])
    return goal, not problems, "; ".join(problems) or success


def goal_exact(cells: list[dict]) -> tuple[str, bool, str]:
    n, least = tracr.EXACT_MAX_LEN, tracr.EXACT_MIN_INPUTS
    failures, missing, compared = [], [], []
    for program in library_programs():
        cell = find(cells, program, n) or {}
        if "accuracy" not in cell:
            missing.append(f"{program} ({cell.get('status', 'not run')})")
        elif cell["accuracy"] != 100.0 or cell["inputs"] < least:
            failures.append(f"{program} {shown(cell, 'accuracy', '.2f')}% on {cell['inputs']:,} inputs")
        else:
            compared.append(cell["inputs"] - cell["skipped"])
    success = f"fewest inputs compared (not erring) {min(compared, default=0):,}"
    return verdict(f"1 exact at max_len {n} on >= {least:,} inputs", failures, missing, success)


def goal_layers(cells: list[dict]) -> tuple[str, bool, str]:
    failures, missing = [], []
    for program in library_programs():
        limits = [(tracr.RASP_PAPER_LAYERS[program], "RASP")] if program in tracr.RASP_PAPER_LAYERS else []
        limits += sorted({(f.layers, "tracr") for f in tracr.TRACR if f.program == program})
        measured = [c["layers"] for c in cells if c["program"] == program and "layers" in c]
        if limits and not measured:
            missing.append(program)
        failures += [f"{program} {max(measured)} > {limit} ({source})"
                     for limit, source in limits if measured and max(measured) > limit]
    return verdict("2 layers <= RASP analysis and tracr", failures, missing, "every program within both")


def goal_params(cells: list[dict]) -> tuple[str, bool, str]:
    failures, missing, ratios = [], [], []
    for figure in tracr.TRACR:
        if figure.max_len != tracr.COMPARISON_MAX_LEN or figure.program not in library_programs():
            continue
        cell = find(cells, figure.program, figure.max_len) or {}
        limit = tracr.PARAMS_GOAL[figure.program]
        if "params" not in cell:
            missing.append(figure.program)
        elif cell["params"] > limit * figure.params:
            failures.append(f"{figure.program} {cell['params']:,} > {limit:g} x {figure.params:,}")
        else:
            ratios.append(f"{figure.program} {ratio_text(cell['params'] / figure.params)}")
    return verdict(f"3 params at max_len {tracr.COMPARISON_MAX_LEN} <= 1/10 (length, hist: 1/2) of tracr",
                   failures, missing, ", ".join(ratios))


def goal_compile_time(cells: list[dict]) -> tuple[str, bool, str]:
    n, limit = tracr.COMPARISON_MAX_LEN, tracr.COLD_COMPILE_GOAL_SECONDS
    failures, missing, timed = [], [], []
    for program in library_programs():
        cell = find(cells, program, n) or {"status": "not run"}
        if cell.get("compile_s") is None:
            missing.append(f"{program} ({compile_text(cell)})")
        elif cell["compile_s"] > limit:
            failures.append(f"{program} {cell['compile_s']:.2f} s")
        else:
            timed.append((cell["compile_s"], program))
    slowest = max(timed, default=(0.0, "none"))
    return verdict(f"4a cold compile at max_len {n} <= {limit} s", failures, missing,
                   f"slowest {slowest[1]} {slowest[0]:.2f} s")


def goal_forward_time(cells: list[dict]) -> tuple[str, bool, str]:
    failures, missing, speedups = [], [], []
    for figure in tracr.TRACR:
        if figure.forward_ms_per_1000 is None:
            continue
        ms = (find(cells, figure.program, figure.max_len) or {}).get("forward_ms_per_1000")
        if ms is None:
            missing.append(figure.program)
        elif figure.forward_ms_per_1000 / ms < tracr.FORWARD_SPEEDUP_GOAL:
            failures.append(f"{figure.program} {ms:,.1f} ms vs tracr {figure.forward_ms_per_1000:,.0f} ms")
        else:
            speedups.append(f"{figure.program} {figure.forward_ms_per_1000 / ms:,.1f}x faster")
    return verdict(f"4b forward on 1,000 at max_len {tracr.COMPARISON_MAX_LEN} >= "
                   f"{tracr.FORWARD_SPEEDUP_GOAL:g}x faster than tracr", failures, missing, ", ".join(speedups))


def goal_flops() -> tuple[str, bool, str]:
    """The compiled programs/aab.rasp against examples/handmade_aab.py on a 5-token input."""
    import handmade_aab  # examples/ (on sys.path above)

    compiled = compile_program(load_program(PROGRAMS_DIR / "aab.rasp"), max_len=GOAL_5_TOKENS)
    ours, theirs = (count_flops(m, GOAL_5_TOKENS + (m.meta["bos_id"] is not None))["total"]
                    for m in (compiled, handmade_aab.build()))
    return ("5 (aab)* FLOPs <= the hand-made model's", ours <= theirs,
            f"compiled {ours:,} vs hand-made {theirs:,} at {GOAL_5_TOKENS} tokens")


def goal_checks(cells: list[dict]) -> list[tuple[str, bool, str]]:
    return [goal_exact(cells), goal_layers(cells), goal_params(cells), goal_compile_time(cells),
            goal_forward_time(cells), goal_flops()]


def goal_lines(goals: list[tuple[str, bool, str]]) -> list[str]:
    return [f"{'PASS' if passed else 'FAIL'}  goal {goal}: {detail}" for goal, passed, detail in goals]


# ---------------------------------------------------------------------------------------------
# Output files and the command line.


def machine() -> dict:
    """Where and on what the figures were measured, the compiler's commit included."""
    return {"platform": platform.platform(), "processor": platform.processor() or platform.machine(),
            "cpu_count": os.cpu_count(), "python": platform.python_version(), "numpy": np.__version__,
            "date": datetime.datetime.now().isoformat(timespec="seconds"), "commit": compiler_commit()}


def compiler_commit() -> str:
    """The git commit of the rasp_compile package that was measured, "+ changes" when its
    rasp_compile/ or programs/ differ from it; "unknown" outside a git checkout."""
    source = Path(compile_program.__code__.co_filename).resolve().parent.parent.parent
    git = ["git", "-C", str(source)]
    head = subprocess.run(git + ["rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    if head.returncode != 0:
        return "unknown"
    changes = subprocess.run(git + ["status", "--porcelain", "--", "rasp_compile", "programs"],
                             capture_output=True, text=True).stdout.strip()
    return head.stdout.strip() + (" + changes" if changes else "")


def write_results(out: Path, cells: list[dict], tables: list[Table], goals: list, settings: dict) -> None:
    info = machine()
    out.mkdir(parents=True, exist_ok=True)
    header = [
        "# bench/scale.py results", "",
        f"Machine: {info['platform']} ({info['processor']}), {info['cpu_count']} CPUs; Python {info['python']}, "
        f"numpy {info['numpy']}; {info['date']}; commit {info['commit']}.",
        f"Settings: {', '.join(f'{key} {value}' for key, value in settings.items())}. "
        "Columns: see bench/README.md.", "",
    ]
    body = "\n\n".join(map(to_markdown, tables))
    checks = "\n".join(["### goals of issue 5", "", "```", *goal_lines(goals), "```"])
    (out / "results.md").write_text("\n".join(header) + body + "\n\n" + checks + "\n")
    goal_json = [{"goal": goal, "passed": passed, "detail": detail} for goal, passed, detail in goals]
    (out / "results.json").write_text(json.dumps(
        {"machine": info, "settings": settings, "cells": cells, "goals": goal_json}, indent=1) + "\n")


def parse_args(argv: list[str] | None):
    parser = argparse.ArgumentParser(description="Size, cost, speed and exactness of compiled programs.")
    parser.add_argument("--programs", help="comma-separated names in programs/ (default: all)")
    parser.add_argument("--max-lens", default=",".join(map(str, MAX_LENS)), help="default 5,10,20,40,64")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per cell process (default 300)")
    parser.add_argument("--samples", type=int, default=2_000, help="accuracy inputs per cell (default 2000)")
    parser.add_argument("--batch", type=int, default=1_000, help="forward batch (default 1000)")
    parser.add_argument("--runs", type=int, default=3, help="cold compiles (median) and forward runs (best)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent, help="results directory")
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
    for line in goal_lines(goals):
        console.print(line, highlight=False)
    settings = {key: getattr(args, key) for key in ("timeout", "samples", "batch", "runs", "seed")}
    write_results(args.out, cells, tables, goals, {"max_lens": max_lens, **settings})
    return 0


if __name__ == "__main__":
    sys.exit(main())
