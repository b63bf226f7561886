"""How fast `rasp-run --accuracy --all` verifies a model on every input: in one process, with
`--workers 2`, and on a two-worker Dask cluster (`--dask`), with the same counts in all three.

    python bench/verify_speed.py [--program dyck1] [--max-len 17] [--runs 1]
                                 [--out bench/results/verify_speed.md]

The program (programs/NAME.rasp) is compiled at `--max-len` into a weights file. Each figure is
the command as a user runs it, `rasp-run WEIGHTS --accuracy --all [...] --json`, in a new process,
wall time (the best of `--runs`), and its inputs verified per second. The cluster is a
`LocalCluster(n_workers=2, threads_per_worker=1, processes=True)` this script starts before timing
(a cluster is a standing service: its start is not the command's); `--workers 2` starts its two
processes inside the command, and that is counted. Every run must report 100% agreement on every
input, and all three the same report: the script exits non-zero otherwise. Everything runs on one
BLAS thread per process. Writes OUT (markdown: the machine, its load, the table) and OUT with
`.json`, and prints the table. Beside the wall time, the CPU time of every process that worked
(the command and its worker processes; a cluster's workers, asked through Dask): on a shared
machine the wall time shows the load, the CPU time the work.
"""

from __future__ import annotations

import os

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):  # before NumPy loads its BLAS
    os.environ.setdefault(_variable, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import resource  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from typing import Any  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from harness import RESULTS, ROOT, machine, machine_line, markdown  # noqa: E402

from rasp_compile.compiler import compile_program  # noqa: E402
from rasp_compile.frontend import load_program  # noqa: E402
from rasp_compile.runtime.weights_file import save  # noqa: E402


def cpu_seconds(who=resource.RUSAGE_CHILDREN) -> float:
    """User + system CPU seconds of this process's finished children (or of this process)."""
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def timed(weights: Path, extra: list[str], runs: int, elsewhere=lambda: 0.0) -> tuple[float, float, dict[str, Any]]:
    """The best wall time of `runs` runs of `rasp-run WEIGHTS --accuracy --all EXTRA --json`, its CPU
    time (the command's processes, and `elsewhere()`'s growth: a cluster's workers), and its report."""
    argv = [sys.executable, "-m", "rasp_compile.cli.run_cmd", str(weights), "--accuracy", "--all", *extra, "--json"]
    best, report = (float("inf"), float("inf")), {}
    for _ in range(runs):
        started, cpu = time.perf_counter(), cpu_seconds() + elsewhere()
        done = subprocess.run(argv, capture_output=True, text=True, cwd=tempfile.gettempdir())
        best = min(best, (time.perf_counter() - started, cpu_seconds() + elsewhere() - cpu))
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(argv)} failed:\n{done.stderr}")
        report = json.loads(done.stdout)
        if report["total"]["percent"] != 100.0 or report["mode"] != "exhaustive":
            raise SystemExit(f"{' '.join(argv)}: not every input agreed:\n{done.stdout}")
    return *best, report


def measure(weights: Path, runs: int) -> list[dict]:
    """One row per way of running the chunks: what, seconds, CPU seconds, inputs, inputs per second."""
    from distributed import Client, LocalCluster  # the [distributed] extra

    ways = [("one process", []), ("--workers 2", ["--workers", "2"])]
    results = [(what, *timed(weights, extra, runs)) for what, extra in ways]
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=":0") as cluster, Client(cluster) as client:
        workers = lambda: sum(client.run(cpu_seconds, resource.RUSAGE_SELF).values())  # noqa: E731
        results.append(("--dask, two-worker LocalCluster",
                        *timed(weights, ["--dask", cluster.scheduler_address], runs, workers)))
    first = results[0][3]
    for what, _, _, report in results[1:]:
        if report != first:
            raise SystemExit(f"{what} gave another report than one process")
    inputs = first["total"]["sequences"]
    return [{"what": what, "seconds": round(seconds, 2), "cpu_seconds": round(cpu, 2), "inputs": inputs,
             "inputs_per_second": round(inputs / seconds)} for what, seconds, cpu, _ in results]


def report(args, rows: list[dict], info: dict, load: tuple[float, float]) -> str:
    lines = [
        "# bench/verify_speed.py results", "",
        f"{machine_line(info)}. Load average (1 min) "
        f"{load[0]:.1f} before and {load[1]:.1f} after: the machine's {info['cpu_count']} cores are shared "
        "with other work, so two processes do not get two idle cores, and the figures are a floor.",
        f"Settings: program {args.program}, max_len {args.max_len}, runs {args.runs} (best of); one BLAS thread "
        "per process; each figure is the whole command in a new process (start, imports, loading, the "
        "check that meta.source compiles to these weights included).", "",
        markdown(["how", "wall s", "CPU s", "inputs", "inputs/s (wall)", "inputs per CPU s"],
                 [[row["what"], f"{row['seconds']:.2f}", f"{row['cpu_seconds']:.2f}", f"{row['inputs']:,}",
                   f"{row['inputs_per_second']:,}", f"{row['inputs'] / row['cpu_seconds']:,.0f}"] for row in rows]), "",
        "CPU s: every process of the run (the command, its worker processes, the cluster's workers).",
        "Every run compared every input, agreed at every position, and the three reports are identical.",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--program", default="dyck1")
    parser.add_argument("--max-len", type=int, default=17)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--out", type=Path, default=RESULTS / "verify_speed.md")
    args = parser.parse_args()
    model = compile_program(load_program(ROOT / "programs" / f"{args.program}.rasp", max_len=args.max_len))
    before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as folder:
        weights = Path(folder) / f"{args.program}.npz"
        save(model, weights)
        rows = measure(weights, args.runs)
    info, load = machine(), (before, os.getloadavg()[0])
    text = report(args, rows, info, load)
    args.out.write_text(text)
    args.out.with_suffix(".json").write_text(json.dumps(
        {"machine": info, "load_average": load, "program": args.program, "max_len": args.max_len,
         "runs": args.runs, "rows": rows}, indent=2) + "\n")
    print(text, end="")


if __name__ == "__main__":
    main()
