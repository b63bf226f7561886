"""Our NumPy forward pass beside tracr's jitted one, on the same machine, the same programs and the
same 1,000 sequences; each model's achieved GFLOP/s beside a float32 matmul's.

    python bench/forward_vs_tracr.py [--programs hist,sort] [--max-lens 5,10,20,40] [--batch 1000]
                                     [--runs 7] [--timeout 600] [--out bench/results/]

Needs tracr (`pip install -e '.[tracr]'`, which brings jax). Writes `forward_vs_tracr.md` and
`forward_vs_tracr.json` to `--out`. Columns are described in bench/README.md.

Each cell runs in its own process (tracr's compile of a large program can take minutes and the
memory of jax's compiled functions is only returned when the process ends); a cell past
`--timeout` seconds shows `timeout`. Both forward passes, and the matmul, run on one thread
(`--all-threads` lifts that): on a shared machine a multi-threaded BLAS call waits for its
descheduled thread, which made single cells 10 to 70 times slower from one run to the next. Their
timed runs alternate, so that the load of the moment weighs on both alike.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from harness import RESULTS, ROOT, machine, machine_line, markdown

PROGRAMS_DIR = ROOT / "programs"
MAX_LENS = (5, 10, 20, 40)
MATMUL_SIZE = 1024  # [n, n] @ [n, n] in float32: large enough for the BLAS to reach its peak


def tracr_builders() -> dict:
    """tracr's `lib` program for each library program it shares with programs/ (the same
    algorithm, tracr's own construction), as (lib, max_len) -> (s-op, causal)."""
    return {
        "length": lambda lib, n: (lib.make_length(), False),
        "reverse": lambda lib, n: (lib.make_reverse(lib.rasp.tokens), False),
        "hist": lambda lib, n: (lib.make_hist(), False),
        "sort_unique": lambda lib, n: (lib.make_sort_unique(lib.rasp.tokens, lib.rasp.tokens), False),
        "sort": lambda lib, n: (lib.make_sort(lib.rasp.tokens, lib.rasp.tokens, max_seq_len=n, min_key=1), False),
        "sort_freq": lambda lib, n: (lib.make_sort_freq(max_seq_len=n), False),
        "frac_prevs": lambda lib, n: (lib.make_frac_prevs(lib.rasp.tokens == "x"), True),
        "pair_balance": lambda lib, n: (lib.make_pair_balance(lib.rasp.tokens, "(", ")"), True),
        "shuffle_dyck": lambda lib, n: (lib.make_shuffle_dyck(["()"]), False),
        "shuffle_dyck2": lambda lib, n: (lib.make_shuffle_dyck(["()", "{}"]), False),
    }


ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
              "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"}
"""The environment of a cell process that keeps NumPy's BLAS and XLA on one thread each."""

MIN_SECONDS, MAX_SECONDS = 2.0, 30.0
"""Timed runs go on past `--runs` until each side has spent MIN_SECONDS (a batch of a small model
takes about a millisecond: its best of a few hundred runs is the one the machine's load spared),
and stop early once one side has spent MAX_SECONDS (tracr's reverse at max_len 40 takes seconds
per batch)."""


def best_seconds(actions: list, runs: int) -> list[float]:
    """Per action, the fastest of its timed calls (at least `runs`, see MIN_SECONDS) after one
    untimed warm-up call; the actions' calls alternate."""
    for action in actions:
        action()
    times: list[list[float]] = [[] for _ in actions]
    while ((min(map(len, times)) < runs or min(map(sum, times)) < MIN_SECONDS)
           and max(map(sum, times)) < MAX_SECONDS):
        for action, taken in zip(actions, times):
            started = time.perf_counter()
            action()
            taken.append(time.perf_counter() - started)
    return [min(taken) for taken in times]


def matmul_gflops(runs: int) -> float:
    """Float32 GFLOP/s of one [n, n] @ [n, n] NumPy matmul (2·n³ FLOPs), best of `runs`."""
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((MATMUL_SIZE, MATMUL_SIZE), dtype=np.float32) for _ in range(2))
    return 2 * MATMUL_SIZE**3 / best_seconds([lambda: a @ b], runs)[0] / 1e9


# ---------------------------------------------------------------------------------------------
# The worker: one cell, in this process, one JSON line.


def measure_cell(name: str, max_len: int, batch: int, runs: int) -> dict:
    from rasp_compile.compiler import compile_program
    from rasp_compile.frontend import load_program
    from rasp_compile.runtime.execute import logits
    from rasp_compile.runtime.prediction import encode
    from rasp_compile.runtime.model import n_params
    from rasp_compile.tools.flops import count_flops

    program = dataclasses.replace(load_program(PROGRAMS_DIR / f"{name}.rasp"), max_len=max_len)
    ours = compile_program(program, dtype=np.float32)
    rng = random.Random(max_len)
    inputs = [[rng.choice(program.vocab) for _ in range(max_len)] for _ in range(batch)]
    ids = np.array([encode(ours, tokens) for tokens in inputs], dtype=np.int64)
    tracr_forward, tracr_figures = compile_tracr(name, program, inputs)
    ours_s, tracr_s = best_seconds([lambda: logits(ours, ids), tracr_forward], runs)
    flops = count_flops(ours, max_len + 1)["total"]
    return {"program": name, "max_len": max_len, "params": n_params(ours), "flops": flops,
            "ours_ms": ours_s * 1e3, "ours_gflops": flops * batch / ours_s / 1e9,
            "tracr_ms": tracr_s * 1e3, **tracr_figures, "matmul_gflops": matmul_gflops(runs)}


def compile_tracr(name: str, program, inputs: list[list]) -> tuple:
    """tracr's model of the program, and a call of its jitted forward on `inputs` (BOS added)."""
    import jax
    import jax.numpy as jnp
    from tracr.compiler import compiling, lib

    sop, causal = tracr_builders()[name](lib, program.max_len)
    started = time.perf_counter()
    model = compiling.compile_rasp_to_model(sop, vocab=set(program.vocab), max_seq_len=program.max_len,
                                            compiler_bos="BOS", causal=causal)
    compile_s = time.perf_counter() - started
    tokens = jnp.array([model.input_encoder.encode(["BOS", *xs]) for xs in inputs])
    jitted = jax.jit(model.forward)
    params = sum(int(np.size(array)) for module in model.params.values() for array in module.values())
    return (lambda: jax.block_until_ready(jitted(model.params, tokens)),
            {"tracr_params": params, "tracr_compile_s": compile_s})


# ---------------------------------------------------------------------------------------------
# The driver: cells in child processes, then the table.


def run_cell(name: str, max_len: int, args) -> dict:
    command = [sys.executable, __file__, "--cell", name, str(max_len), "--batch", str(args.batch),
               "--runs", str(args.runs)]
    env = {**os.environ, **({} if args.all_threads else ONE_THREAD)}
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout, env=env)
    except subprocess.TimeoutExpired:
        return {"program": name, "max_len": max_len, "status": "timeout"}
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {"program": name, "max_len": max_len, "status": "error", "error": last}
    return {**json.loads(done.stdout.strip().splitlines()[-1]), "status": "ok"}


COLUMNS = ["program", "max_len", "params ours", "params tracr", "ms ours", "ms tracr", "speed-up",
           "GFLOP/s ours", "GFLOP/s matmul", "% of matmul"]


def table_rows(cells: list[dict]) -> list[list[str]]:
    rows = []
    for cell in cells:
        if cell["status"] != "ok":
            rows.append([cell["program"], str(cell["max_len"]), *[cell["status"]] * (len(COLUMNS) - 2)])
            continue
        rows.append([cell["program"], str(cell["max_len"]), f"{cell['params']:,}", f"{cell['tracr_params']:,}",
                     f"{cell['ours_ms']:,.1f}", f"{cell['tracr_ms']:,.1f}",
                     f"{cell['tracr_ms'] / cell['ours_ms']:,.1f}x", f"{cell['ours_gflops']:.2f}",
                     f"{cell['matmul_gflops']:.1f}", f"{100 * cell['ours_gflops'] / cell['matmul_gflops']:.0f}%"])
    return rows


def summary(cells: list[dict]) -> str:
    measured = [cell for cell in cells if cell["status"] == "ok"]
    if not measured:
        return "no cell measured"
    slowest = min(measured, key=lambda cell: cell["tracr_ms"] / cell["ours_ms"])
    below = [cell for cell in measured if cell["tracr_ms"] / cell["ours_ms"] < 2]
    return (f"{len(measured)} of {len(cells)} cells measured; {len(measured) - len(below)} at least 2x faster "
            f"than tracr; the least: {slowest['program']} at max_len {slowest['max_len']}, "
            f"{slowest['tracr_ms'] / slowest['ours_ms']:.1f}x")


def write_report(out: Path, cells: list[dict], batch: int, runs: int, threads: str,
                 load: tuple[float, float]) -> str:
    """Write forward_vs_tracr.md and .json to `out`; returns the markdown. `load`: the machine's
    1-minute load average when the cells began and when they ended."""
    import jax

    info = {**machine(), "jax": jax.__version__, "load": list(load)}
    text = "\n".join([
        "# Forward pass: ours beside tracr's jit", "",
        f"{machine_line(info)}; jax {info['jax']}. Batch {batch} sequences of length max_len (BOS added), float32, "
        f"{threads}; after a warm-up, the best of at least {runs} alternating runs each, and of as many "
        f"as fit in {MIN_SECONDS:g} s. GFLOP/s ours: `count_flops` of the model at max_len + 1 "
        f"positions (the model's FLOPs, every weight counted; the pass skips products with zero weights), "
        f"times the batch, over the time; GFLOP/s matmul: a float32 {MATMUL_SIZE}x{MATMUL_SIZE} "
        f"NumPy matmul in the same process, on the same threads. Load average (1 min) {load[0]:.1f} when the "
        f"cells began, {load[1]:.1f} when they ended: other work shares the machine, and the alternating "
        "runs make both sides bear it, but not alike: under load tracr's times have grown more than ours, so "
        "a loaded run's speed-ups are above a quiet one's.", "",
        markdown(COLUMNS, table_rows(cells)), "", summary(cells), ""])
    out.mkdir(parents=True, exist_ok=True)
    (out / "forward_vs_tracr.md").write_text(text)
    (out / "forward_vs_tracr.json").write_text(json.dumps(
        {"machine": info, "threads": threads, "batch": batch, "runs": runs, "cells": cells}, indent=1) + "\n")
    return text


def parse_args(argv: list[str] | None):
    parser = argparse.ArgumentParser(description="Forward speed: ours beside tracr's jit.")
    parser.add_argument("--programs", help="comma-separated, of: " + ", ".join(tracr_builders()))
    parser.add_argument("--max-lens", default=",".join(map(str, MAX_LENS)), help="default 5,10,20,40")
    parser.add_argument("--batch", type=int, default=1_000, help="sequences per forward (default 1000)")
    parser.add_argument("--runs", type=int, default=15, help="timed runs after a warm-up, best kept")
    parser.add_argument("--all-threads", action="store_true", help="let BLAS and XLA use every core")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per cell (default 600)")
    parser.add_argument("--out", type=Path, default=RESULTS, help="results directory (default bench/results/)")
    parser.add_argument("--cell", nargs=2, metavar=("PROGRAM", "MAX_LEN"), help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.cell:
        print(json.dumps(measure_cell(args.cell[0], int(args.cell[1]), args.batch, args.runs)))
        return 0
    names = args.programs.split(",") if args.programs else list(tracr_builders())
    began, cells = os.getloadavg()[0], []
    for name in names:
        for max_len in map(int, args.max_lens.split(",")):
            cells.append(run_cell(name, max_len, args))
            print(json.dumps(cells[-1]), flush=True)
    threads = "every core" if args.all_threads else "one thread each"
    print(write_report(args.out, cells, args.batch, args.runs, threads, (began, os.getloadavg()[0])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
