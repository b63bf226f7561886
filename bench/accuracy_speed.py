"""How fast `rasp-run --accuracy` checks a model: the reference interpreter, one input at a time,
against the batched one it uses, and where the rest of the time goes.

    python bench/accuracy_speed.py [--program sort] [--max-len 30] [--samples 100000] [--runs 3]
                                   [--out bench/accuracy_speed.md]

The program (programs/NAME.rasp) is compiled at `--max-len`; the inputs are the ones `--accuracy`
draws (`accuracy.inputs_by_length`, seed 0), cut in its batches. Each figure is the best of
`--runs` runs, wall time, the runs of the compared paths taken back to back:

  inputs             drawing the sample
  reference          `interpret.evaluate_each` on every batch (what `--accuracy` ran before)
  batched            `interpret.evaluate_batch` on every batch, one memo for all (what it runs now);
                     checked equal to the reference
  model              `forward.predict` on every batch
  --accuracy before  `accuracy.measure` end to end with `evaluate_each` in place of `evaluate_batch`
  --accuracy now     `accuracy.measure` end to end, as shipped

Writes OUT (markdown: the machine, the settings, the table) and prints it.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from scale import machine  # noqa: E402  (bench/ is on sys.path)

from rasp_compile.cli import accuracy  # noqa: E402
from rasp_compile.cli.reference import Reference  # noqa: E402
from rasp_compile.compiler import compile_program  # noqa: E402
from rasp_compile.frontend import load_program  # noqa: E402
from rasp_compile.runtime.forward import predict  # noqa: E402
from rasp_compile.tools.interpret import evaluate_batch, evaluate_each  # noqa: E402


def best_of(runs: int, work) -> tuple[float, object]:
    """(the shortest wall time of `runs` calls of `work`, the last call's result)."""
    best, result = float("inf"), None
    for _ in range(runs):
        started = time.perf_counter()
        result = work()
        best = min(best, time.perf_counter() - started)
    return best, result


def batches(by_length: dict) -> list[list]:
    """The inputs cut as `accuracy.measure` cuts them: per length, BATCH at a time."""
    return [inputs[start:start + accuracy.BATCH] for inputs in by_length.values()
            for start in range(0, len(inputs), accuracy.BATCH)]


def batched_run(program, cut: list[list]) -> list:
    """`evaluate_batch` on every batch, one memo kept between them, as `accuracy.measure` runs it."""
    memo: dict = {}
    return [evaluate_batch(program, batch, memo) for batch in cut]


def measure(program_name: str, max_len: int, samples: int, runs: int) -> tuple[list[tuple[str, float]], str, int]:
    """([(what, seconds)] for the table, "exhaustive" or "sampled", how many inputs); exits with
    a message if the two interpreters ever differ."""
    program = load_program(ROOT / "programs" / f"{program_name}.rasp", max_len=max_len)
    model = compile_program(program)
    reference = Reference(model, f"{program_name}.rasp", compiled=program)
    drawing, (mode, by_length) = best_of(runs, lambda: accuracy.inputs_by_length(model, samples, 0))
    cut = batches(by_length)
    old, expected = best_of(runs, lambda: [evaluate_each(program, batch) for batch in cut])
    new, got = best_of(runs, lambda: batched_run(program, cut))
    if [list(map(repr, b)) for b in got] != [list(map(repr, b)) for b in expected]:
        raise SystemExit("the batched interpreter differs from the reference: a bug to report")
    forward, _ = best_of(runs, lambda: [predict(model, batch) for batch in cut])
    one_at_a_time = lambda program, batch, memo: evaluate_each(program, batch)  # noqa: E731
    with mock.patch.object(accuracy, "evaluate_batch", one_at_a_time):
        before, _ = best_of(runs, lambda: accuracy.measure(model, reference, samples, 0, progress=False))
    now, _ = best_of(runs, lambda: accuracy.measure(model, reference, samples, 0, progress=False))
    return [("inputs", drawing), ("reference interpreter", old), ("batched interpreter", new),
            ("model (predict)", forward), ("--accuracy before (reference)", before),
            ("--accuracy now (batched)", now)], mode, sum(map(len, by_length.values()))


def report(args, figures: list[tuple[str, float]], mode: str, count: int) -> str:
    info = machine()
    seconds = dict(figures)
    lines = [
        "# bench/accuracy_speed.py results", "",
        f"Machine: {info['platform']} ({info['processor']}), {info['cpu_count']} CPUs; Python {info['python']}, "
        f"numpy {info['numpy']}; {info['date']}; commit {info['commit']}.",
        f"Settings: program {args.program}, max_len {args.max_len}, samples {args.samples:,}, seed 0, "
        f"runs {args.runs} (best of), batch {accuracy.BATCH:,}: {count:,} inputs ({mode}).", "",
        "| what | s | inputs/s |", "|---|---|---|",
        *(f"| {what} | {s:.2f} | {count / s:,.0f} |" for what, s in figures), "",
        f"Interpreter: {seconds['reference interpreter'] / seconds['batched interpreter']:.1f}x the inputs per "
        f"second. `--accuracy` end to end: {seconds['--accuracy before (reference)'] / seconds['--accuracy now (batched)']:.1f}x.",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--program", default="sort")
    parser.add_argument("--max-len", type=int, default=30)
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "accuracy_speed.md")
    args = parser.parse_args()
    text = report(args, *measure(args.program, args.max_len, args.samples, args.runs))
    args.out.write_text(text)
    print(text, end="")


if __name__ == "__main__":
    main()
