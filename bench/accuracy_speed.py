"""How fast `rasp-run --accuracy` checks a model: the command end to end, beside the same command
of another checkout of this project (an earlier commit), and where its time goes.

    python bench/accuracy_speed.py [--program sort] [--max-len 30] [--samples 100000] [--runs 3]
                                   [--before DIR] [--out bench/results/accuracy_speed.md]

The program (programs/NAME.rasp) is compiled at `--max-len` into a weights file. Each figure is
the best of `--runs` runs, wall time:

  command, this checkout     `rasp-run WEIGHTS --accuracy --samples N`, a new process: wall time,
                             and its CPU time (user + system)
  command, --before DIR      the same command run from the checkout DIR (its own code, this Python)
  inputs                     drawing the sample (`accuracy.sampled_inputs`)
  interpreter                `interpret.evaluate_vocab_indices` on every batch, one memo for all
  model                      `comparison.model_outputs` on every batch (ids, forward pass, decoding)
  measure                    `accuracy.measure` end to end, in this process

The two commands alternate, so that the load of the moment weighs on both alike. They run with
Python's bytecode cache allowed (PYTHONDONTWRITEBYTECODE unset: a new process then reads its
compiled modules instead of compiling ~100 of them). Everything runs on one BLAS thread: on a
shared machine a multi-threaded BLAS call waits for whichever thread the system has descheduled. Writes OUT (markdown: the
machine, the settings, the table) and prints it.
"""

from __future__ import annotations

import os
import resource

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):  # before NumPy loads its BLAS
    os.environ.setdefault(_variable, "1")

import argparse  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from harness import RESULTS, ROOT, best_of, machine, machine_line, markdown, revision  # noqa: E402

from rasp_compile.cli import accuracy, comparison  # noqa: E402
from rasp_compile.cli.reference import Reference  # noqa: E402
from rasp_compile.compiler import compile_program  # noqa: E402
from rasp_compile.frontend import load_program  # noqa: E402
from rasp_compile.runtime.prediction import input_vocab  # noqa: E402
from rasp_compile.runtime.weights_file import save  # noqa: E402
from rasp_compile.tools.interpret import evaluate_vocab_indices  # noqa: E402


def command(checkout: Path, weights: Path, samples: int):
    """A call running `rasp-run WEIGHTS --accuracy` with the code of `checkout`, in a new process."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env |= {"PYTHONPATH": str(checkout), "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    argv = [sys.executable, "-m", "rasp_compile.cli.run_cmd", str(weights), "--accuracy", "--samples", str(samples)]

    def run() -> float:  # the process's CPU seconds (user + system)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        done = subprocess.run(argv, env=env, capture_output=True, text=True, cwd=tempfile.gettempdir())
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode != 0 or "100.0%" not in done.stdout:
            raise SystemExit(f"{checkout}: rasp-run --accuracy failed or disagreed:\n{done.stdout}{done.stderr}")
        return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return run


def checkout_name(path: Path) -> str:
    """"commit abc1234" for a git checkout (its HEAD, harness.revision), else the path."""
    commit = revision(path)
    return str(path) if commit is None else f"commit {commit}"


def alternating(runs: int, calls: list) -> list[tuple[float, float]]:
    """Per call, its best (wall time, CPU time) over `runs` rounds in which the calls alternate."""
    wall, cpu = [float("inf")] * len(calls), [float("inf")] * len(calls)
    for _ in range(runs):
        for i, call in enumerate(calls):
            started = time.perf_counter()
            cpu[i] = min(cpu[i], call())
            wall[i] = min(wall[i], time.perf_counter() - started)
    return list(zip(wall, cpu))


def parts(model, program, samples: int, runs: int) -> list[tuple[str, float]]:
    """The in-process figures of this checkout: drawing, interpreter, model, measure."""
    reference = Reference(model, "program.rasp", compiled=program)
    vocab = input_vocab(model)
    by_length = accuracy.sampled_inputs(model, samples, 0)
    batches = [picks[start:start + comparison.BATCH] for picks in by_length.values()
               for start in range(0, len(picks), comparison.BATCH)]

    def interpreter():
        memo: dict = {}
        for batch in batches:
            evaluate_vocab_indices(program, vocab, batch, memo)

    return [("inputs", best_of(runs, lambda: accuracy.sampled_inputs(model, samples, 0))),
            ("interpreter (batched)", best_of(runs, interpreter)),
            ("model (ids, forward, decoding)", best_of(runs, lambda: [comparison.model_outputs(model, b) for b in batches])),
            ("accuracy.measure, in process", best_of(runs, lambda: accuracy.measure(model, reference, samples, 0, False)))]


def report(args, figures: list[tuple[str, float]], count: int) -> str:
    info = machine()
    seconds = dict(figures)
    lines = [
        "# bench/accuracy_speed.py results", "",
        f"{machine_line(info)}; load average {os.getloadavg()[0]:.1f} "
        "at the end (the machine is shared).",
        f"Settings: program {args.program}, max_len {args.max_len}, samples {args.samples:,}, seed 0, "
        f"runs {args.runs} (best of; the two commands alternate), batch {comparison.BATCH:,}, {count:,} inputs; "
        "one BLAS thread; bytecode cache allowed.", "",
        markdown(["what", "s", "inputs/s"], [[what, f"{s:.2f}", f"{count / s:,.0f}"] for what, s in figures]), "",
    ]
    if args.before:
        ratios = [seconds[f"rasp-run --accuracy, {args.before_name}{kind}"] / seconds[f"rasp-run --accuracy, this checkout{kind}"]
                  for kind in ("", ", CPU time")]
        lines.append(f"`rasp-run --accuracy`: {ratios[0]:.1f}x the inputs per second of {args.before_name} in wall "
                     f"time, {ratios[1]:.1f}x in CPU time (process start, imports and the check that meta.source "
                     "compiles to these weights included). Measure on a quiet machine: under other load both "
                     "figures grow, a long run's more than a short one's (slower memory and caches slow even "
                     "its CPU time), which flatters the faster command.")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--program", default="sort")
    parser.add_argument("--max-len", type=int, default=30)
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--before", type=Path, help="another checkout of this project, to run beside this one")
    parser.add_argument("--out", type=Path, default=RESULTS / "accuracy_speed.md")
    args = parser.parse_args()
    program = load_program(ROOT / "programs" / f"{args.program}.rasp", max_len=args.max_len)
    model = compile_program(program)
    args.before_name = None if args.before is None else checkout_name(args.before)
    checkouts = [("this checkout", ROOT)] + ([] if args.before is None else [(args.before_name, args.before)])
    with tempfile.TemporaryDirectory() as folder:
        weights = Path(folder) / f"{args.program}.npz"
        save(model, weights)
        times = alternating(args.runs, [command(path, weights, args.samples) for _, path in checkouts])
    figures = [(f"rasp-run --accuracy, {name}{kind}", s) for (name, _), (wall, cpu) in zip(checkouts, times)
               for kind, s in (("", wall), (", CPU time", cpu))]
    text = report(args, figures + parts(model, program, args.samples, args.runs), args.samples)
    args.out.write_text(text)
    print(text, end="")


if __name__ == "__main__":
    main()
