"""Past GPT-2's context: the programs whose models grow linearly, at max_len 1,024, 2,048 and 4,096.

    python bench/scale_long.py [--programs length,reverse] [--max-lens 1024,2048,4096] [--samples 4]

Per program (default: LINEAR) and max_len, one cell measured in a worker process (this script
with `--cell`, killed after `--timeout` seconds of wall time):
  layers, params        of the float32 model
  compile CPU s         time.process_time() of compile_program (parse and checks included) in the
                        worker: CPU seconds, not wall, so a loaded machine does not inflate them
  exact                 model vs the batched interpreter at every position of `--samples` seeded
                        random inputs of the longest lengths, max_len, max_len - 1, ...
  refused               the located error when the compiler refuses float32 (a precision bound or
                        the size budget); the cell then compiles float64 and checks it the same way
The params of a float64 model are marked so; growth is params at each max_len over those at the
first one measured.

Writes OUT/scale_4096.md and OUT/scale_4096.json (OUT = `--out`, default bench/results/).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import sys
import time
from pathlib import Path

import numpy as np

from cells import PROGRAMS_DIR
from scale import Table, accuracy, emit, machine, run_limited, to_markdown

from rasp_compile.compiler import compile_program
from rasp_compile.errors import RaspError, format_error
from rasp_compile.frontend import load_program
from rasp_compile.runtime.model import n_params

LINEAR = ("length", "reverse", "hist", "count", "shift_by", "frac_prevs", "pair_balance", "paren_depth", "aab")
"""The library programs whose models grow linearly with max_len."""
MAX_LENS = (1024, 2048, 4096)


def measure_cell(path: Path, max_len: int, samples: int, seed: int) -> None:
    """Print the float32 figures of one cell as JSON lines, or its refusal and the float64 figures."""
    program = dataclasses.replace(load_program(path), max_len=max_len)
    for dtype in (np.float32, np.float64):
        started = time.process_time()
        try:
            model = compile_program(program, dtype=dtype)
        except RaspError as error:
            emit({"dtype": dtype.__name__, "refused": format_error(error, path.read_text(), path.name)})
            continue
        emit({"dtype": dtype.__name__, "layers": model.n_layers, "params": n_params(model),
              "compile_cpu_s": time.process_time() - started})
        rng = random.Random(seed)
        inputs = [[rng.choice(program.vocab) for _ in range(max_len - i)] for i in range(min(samples, max_len))]
        emit({"dtype": dtype.__name__, **accuracy(model, program, inputs)})
        return


def run_cell(name: str, max_len: int, args) -> dict:
    """One cell: the worker's lines gathered per dtype, and "status" ok / error / timeout."""
    command = [sys.executable, __file__, "--cell", str(PROGRAMS_DIR / f"{name}.rasp"), str(max_len),
               "--samples", str(args.samples), "--seed", str(args.seed)]
    status, out, err = run_limited(command, args.timeout)
    cell: dict = {"program": name, "max_len": max_len, "status": status}
    for line in out.splitlines():
        figures = json.loads(line)
        cell.setdefault(figures.pop("dtype"), {}).update(figures)
    if status == "error":
        cell["error"] = (err.strip().splitlines() or ["exit status not 0"])[-1]
    return cell


COLUMNS = ["program", "max_len", "layers", "params", "growth", "compile CPU s", "float32", "float64"]


def table(cells: list[dict]) -> Table:
    """One row per cell; growth is params over those of the program's first max_len measured."""
    rows = []
    for cell in cells:
        first = next(c for c in cells if c["program"] == cell["program"])
        dtype, built = model_built(cell)
        base = model_built(first)[1].get("params")
        growth = f"{built['params'] / base:.2f}x" if "params" in built and base else "-"
        rows.append([cell["program"], f"{cell['max_len']:,}", str(built.get("layers", "-")),
                     f"{built['params']:,}{'' if dtype == 'float32' else ' (float64)'}" if "params" in built else "-",
                     growth,
                     f"{built['compile_cpu_s']:.1f}" if "compile_cpu_s" in built else "-",
                     verdict(cell, "float32"), verdict(cell, "float64")])
    return Table("programs that grow linearly, past max_len 1,024", COLUMNS, rows)


def model_built(cell: dict) -> tuple[str, dict]:
    """The dtype whose model the cell built (float32, else float64) and its figures ({} if none)."""
    for dtype in ("float32", "float64"):
        if "params" in cell.get(dtype, {}):
            return dtype, cell[dtype]
    return "float32", {}


def verdict(cell: dict, dtype: str) -> str:
    """exact (n inputs) / the share that agreed / refused: the error's first line / not run."""
    figures = cell.get(dtype)
    if figures is None:
        return "not needed" if dtype == "float64" and "float32" in cell else cell.get("error", cell["status"])
    if "refused" in figures and figures["refused"] == cell.get("float32", {}).get("refused") and dtype == "float64":
        return "refused: the same"
    if "refused" in figures:
        return "refused: " + figures["refused"].splitlines()[0].replace("|", "\\|")
    if "accuracy" not in figures:
        return cell["status"]
    shown = "exact" if figures["accuracy"] == 100.0 else f"{figures['accuracy']:.2f}% of positions"
    return f"{shown} on {figures['inputs'] - figures['skipped']} inputs of {cell['max_len'] - figures['inputs'] + 1:,}..{cell['max_len']:,} tokens"


def parse_args(argv: list[str] | None):
    parser = argparse.ArgumentParser(description="The linearly growing programs at max_len 2,048 and 4,096.")
    parser.add_argument("--programs", default=",".join(LINEAR), help="comma-separated names in programs/")
    parser.add_argument("--max-lens", default=",".join(map(str, MAX_LENS)), help="default 1024,2048,4096")
    parser.add_argument("--samples", type=int, default=4, help="inputs per cell, of the longest lengths (default 4)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    parser.add_argument("--timeout", type=float, default=900.0, help="wall seconds per cell process (default 900)")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results", help="results directory")
    parser.add_argument("--cell", nargs=2, metavar=("PATH", "MAX_LEN"), help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.cell:
        measure_cell(Path(args.cell[0]), int(args.cell[1]), args.samples, args.seed)
        return 0
    cells = []
    for name in args.programs.split(","):
        for max_len in map(int, args.max_lens.split(",")):
            cells.append(run_cell(name, max_len, args))
            print(json.dumps(cells[-1]), flush=True)
    info = machine()
    settings = {key: getattr(args, key) for key in ("max_lens", "samples", "seed", "timeout")}
    header = ["# bench/scale_long.py results", "",
              f"Machine: {info['platform']} ({info['processor']}), {info['cpu_count']} CPUs; Python {info['python']}, "
              f"numpy {info['numpy']}; {info['date']}; commit {info['commit']}.",
              f"Settings: {', '.join(f'{key} {value}' for key, value in settings.items())}. "
              "Columns: see the docstring of bench/scale_long.py.", ""]
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "scale_4096.md").write_text("\n".join(header) + "\n" + to_markdown(table(cells)) + "\n")
    (args.out / "scale_4096.json").write_text(json.dumps({"machine": info, "settings": settings, "cells": cells},
                                                         indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
