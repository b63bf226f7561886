"""One cell of bench/scale.py (one program at one max_len), measured in this process: the worker
that scale.py starts and kills after its time limit.

    python bench/scale_cell.py PROGRAM.rasp MAX_LEN --samples 125 --batch 4 --runs 3 --seed 0 [--longest]

Prints one JSON line per finished stage, so that a killed worker leaves the stages it finished:
  compile    compile_program in float32 (parse and checks included): its CPU and wall seconds, then
             the model's figures (layers, heads, d_model, params, non-zero, FLOPs, its largest array
             and the s-op holding most residual dimensions); or {"refused": the located error}
  forward    sequences per second through `execute.logits` on `--batch` random inputs of length
             max_len, best of `--runs`
  accuracy   the float32 model against the batched interpreter at every position of `--samples`
             seeded random inputs: of lengths 1..max_len, or with `--longest` of the longest lengths
             (max_len, max_len - 1, ...); inputs on which the program errs are skipped; a numerical
             answer's largest error beside
  float64    only where float32 was refused for precision or was not exact: the same compile and
             accuracy in float64, and under "cast_to_float32" the accuracy of its weights cast to
             float32 on the same inputs (what a float32 model of this construction measures, against
             the 1e-5, relative past 1, a numerical answer must stay within)
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import random
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np

from harness import best_of

from rasp_compile import ir
from rasp_compile.compiler import compile_program
from rasp_compile.compiler.assemble import cast_to
from rasp_compile.errors import RaspError, RaspPrecisionError, RaspRuntimeError, format_error
from rasp_compile.frontend import load_program
from rasp_compile.runtime.execute import logits
from rasp_compile.runtime.model import Model, n_nonzero, n_params
from rasp_compile.runtime.prediction import encode, predict
from rasp_compile.testing.differential import same_value
from rasp_compile.tools.flops import count_flops
from rasp_compile.tools.interpret import evaluate_batch


def measure_cell(path: Path, max_len: int, args) -> None:
    """Print the figures of one cell, each line as soon as it is known (module docstring)."""
    program = dataclasses.replace(load_program(path), max_len=max_len)
    inputs = sampled_inputs(program, args.samples, args.longest, random.Random(args.seed))
    outputs = functools.cache(lambda: evaluate_batch(program, inputs))  # the interpreter's, run once when needed
    model, figures = compiled(program, path, np.float32)
    emit(figures)
    if model is None:
        if figures.get("refusal") == RaspPrecisionError.__name__:
            emit({"float64": float64_figures(program, path, inputs, outputs)})
        return
    emit(forward_speed(model, program, args.batch, args.runs, random.Random(args.seed + 1)))
    checked = accuracy(model, inputs, outputs())
    emit(checked)
    if checked["accuracy"] not in (100.0, None):
        emit({"float64": float64_figures(program, path, inputs, outputs)})


def compiled(program: ir.Program, path: Path, dtype) -> tuple[Model | None, dict]:
    """(the model or None, its figures or the located refusal), the compile's CPU and wall seconds in both."""
    cpu, wall = time.process_time(), time.perf_counter()
    try:
        model = compile_program(program, dtype=dtype)
    except RaspError as error:
        return None, {"refused": format_error(error, path.read_text(encoding="utf-8"), path.name),
                      "refusal": type(error).__name__, **seconds(cpu, wall)}
    return model, {**seconds(cpu, wall), **model_figures(model, program.max_len)}


def seconds(cpu: float, wall: float) -> dict:
    return {"compile_cpu_s": time.process_time() - cpu, "compile_wall_s": time.perf_counter() - wall}


def model_figures(model: Model, max_len: int) -> dict:
    largest = max(model.params, key=lambda name: model.params[name].size)
    owners = Counter(label.split(":")[0] for label in model.meta["residual"])
    widest, dims = owners.most_common(1)[0]
    return {
        "layers": model.n_layers,
        "heads": [layer["n_head"] for layer in model.meta["layers"]],
        "d_model": model.d_model,
        "params": n_params(model),
        "nonzero": n_nonzero(model),
        "flops": count_flops(model, max_len + 1)["total"],
        "largest_array": f"{largest} {'x'.join(f'{n:,}' for n in model.params[largest].shape)}",
        "widest_sop": f"{widest} {dims:,} of {model.d_model:,} residual dims",
    }


def float64_figures(program: ir.Program, path: Path, inputs: list[list], outputs: Callable[[], list]) -> dict:
    """The float64 model's figures and accuracy on the same inputs (`outputs()`: the interpreter's
    answers to them), and the accuracy of its weights cast to float32 ("cast_to_float32"); or its refusal."""
    model, figures = compiled(program, path, np.float64)
    if model is None:
        return figures
    return {**figures, **accuracy(model, inputs, outputs()),
            "cast_to_float32": accuracy(cast_to(model, np.float32), inputs, outputs())}


def emit(figures: dict) -> None:
    print(json.dumps(figures), flush=True)


def forward_speed(model: Model, program: ir.Program, batch: int, runs: int, rng: random.Random) -> dict:
    """Sequences per second through `execute.logits` on `batch` inputs of length max_len, best of `runs`."""
    ids = np.array([encode(model, [rng.choice(program.vocab) for _ in range(program.max_len)])
                    for _ in range(batch)], dtype=np.int64)
    best = best_of(runs, lambda: logits(model, ids))
    return {"seqs_per_s": batch / best, "forward_ms_per_1000": best / batch * 1000 * 1000}


def sampled_inputs(program: ir.Program, count: int, longest: bool, rng: random.Random) -> list[list]:
    """`count` inputs over the program's vocab: of uniformly random lengths 1..max_len, or (`longest`)
    of lengths max_len, max_len - 1, ... (at most max_len inputs)."""
    n = program.max_len
    lengths = range(n, n - min(count, n), -1) if longest else [rng.randint(1, n) for _ in range(count)]
    return [[rng.choice(program.vocab) for _ in range(length)] for length in lengths]


def accuracy(model: Model, inputs: list[list], outputs: list) -> dict:
    """Positions where model and interpreter agree (rasp_compile.testing.differential.same_value), over every
    position of the inputs on which the program does not err (`outputs`: the interpreter's answer to
    each input, or its RaspRuntimeError); for a numerical answer its largest error."""
    checked, expected = [], []
    for tokens, output in zip(inputs, outputs):
        if not isinstance(output, RaspRuntimeError):
            checked.append(tokens)
            expected.append(output)
    numerical = model.meta["output"]["encoding"] == ir.NUMERICAL
    got = predict(model, checked) if checked else []
    pairs = [(e, g) for want, have in zip(expected, got) for e, g in zip(want, have)]
    agree = sum(same_value(e, g, numerical) for e, g in pairs)
    figures = {"inputs": len(inputs), "skipped": len(inputs) - len(checked), "agree": agree,
               "positions": len(pairs), "accuracy": percent(agree, len(pairs)),
               "lengths": [min(map(len, inputs), default=0), max(map(len, inputs), default=0)]}
    if numerical and pairs:
        figures["max_error"] = max(abs(float(g) - float(e)) for e, g in pairs)
    return figures


def percent(part: int, whole: int) -> float | None:
    """part / whole in percent, 2 decimals, never rounded up to 100.0 unless exactly all."""
    if whole == 0:
        return None
    return 100.0 if part == whole else min(round(100 * part / whole, 2), 99.99)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="One cell of bench/scale.py, as JSON lines.")
    parser.add_argument("program", type=Path)
    parser.add_argument("max_len", type=int)
    parser.add_argument("--samples", type=int, required=True, help="accuracy inputs")
    parser.add_argument("--batch", type=int, required=True, help="forward batch")
    parser.add_argument("--runs", type=int, required=True, help="forward runs (the best is kept)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--longest", action="store_true", help="accuracy inputs of the longest lengths")
    args = parser.parse_args(argv)
    measure_cell(args.program, args.max_len, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
