"""Running means past max_len 1,024: how exact float32 and float64 models of them are.

    python bench/means_long.py [--programs frac_prevs,pair_balance] [--max-lens 1024,2048,4096]

Per program and max_len, in this process, one after another:
  float32               the float32 compile: "compiled" or its refusal (a precision bound)
  params, layers        of the float64 model (the same construction: the dtype changes no weight's
                        value before the final cast)
  compile CPU s         time.process_time() of the float64 compile_program
  float64 error         its largest |model - interpreter| over every position of `--samples` seeded
                        random inputs of the longest lengths, max_len, max_len - 1, ...
  float32 error         the float64 model's weights cast to float32, run on the same inputs: what
                        a float32 model of this construction measures, against the 1e-5 (relative
                        past 1) a numerical answer must stay within
Writes OUT/means_long.md (OUT = `--out`, default bench/results/).
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import time
from pathlib import Path

import numpy as np

from cells import PROGRAMS_DIR
from harness import machine, machine_line

from rasp_compile.compiler import compile_program
from rasp_compile.compiler.assemble import cast_to
from rasp_compile.errors import RaspError, format_error
from rasp_compile.frontend import load_program
from rasp_compile.runtime.model import Model, n_params
from rasp_compile.runtime.prediction import predict
from rasp_compile.tools.interpret import evaluate_batch

PROGRAMS = ("frac_prevs", "pair_balance")
MAX_LENS = (1024, 2048, 4096)
COLUMNS = ["program", "max_len", "float32 compile", "layers", "params", "compile CPU s", "float64 error", "float32 error"]


def largest_error(model: Model, inputs: list[list], expected: list[list]) -> float:
    """The largest |model's answer - expected| over every position of `inputs`."""
    got = predict(model, inputs)
    return max(abs(float(g) - float(e)) for have, want in zip(got, expected) for g, e in zip(have, want))


def measure(name: str, max_len: int, samples: int, seed: int) -> list[str]:
    """One row of the table (COLUMNS)."""
    path = PROGRAMS_DIR / f"{name}.rasp"
    program = dataclasses.replace(load_program(path), max_len=max_len)
    try:
        compile_program(program, dtype=np.float32)
        float32 = "compiled"
    except RaspError as error:
        float32 = "refused: " + format_error(error, path.read_text(), path.name).splitlines()[0]
    started = time.process_time()
    model = compile_program(program, dtype=np.float64)
    seconds = time.process_time() - started
    rng = random.Random(seed)
    inputs = [[rng.choice(program.vocab) for _ in range(max_len - i)] for i in range(samples)]
    expected = evaluate_batch(program, inputs)
    return [name, f"{max_len:,}", float32, str(model.n_layers), f"{n_params(model):,}", f"{seconds:.1f}",
            f"{largest_error(model, inputs, expected):.2g}",
            f"{largest_error(cast_to(model, np.float32), inputs, expected):.2g}"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", default=",".join(PROGRAMS))
    parser.add_argument("--max-lens", default=",".join(map(str, MAX_LENS)))
    parser.add_argument("--samples", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results")
    args = parser.parse_args()
    rows = [measure(name, int(n), args.samples, args.seed)
            for name in args.programs.split(",") for n in args.max_lens.split(",")]
    lines = ["# bench/means_long.py results", "", machine_line(machine()) + ".", f"Settings: samples {args.samples}, seed {args.seed}. "
             "Columns: see the docstring of bench/means_long.py.", "",
             "| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "means_long.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
