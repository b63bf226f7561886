"""`rasp-run WEIGHTS --accuracy`: the model against the reference interpreter.

The program is `meta.source`, at the model's max_len. Inputs: every sequence of 1..max_len tokens
when there are at most EXHAUSTIVE_LIMIT of them or `--all` asks for every one (in chunks, verify.py),
else `samples` seeded random inputs (uniform length, then uniform tokens). Per length: sequences,
positions, agreeing positions, percent. Inputs on which the program itself is in error (the
interpreter raises RaspRuntimeError, e.g. a categorical aggregate selecting two values) are counted
apart, not as disagreements. Inputs are arrays of vocab indices; the interpreter and the model run
over a batch of them at once (comparison.py). A source that
cannot be the weights' program (another vocab, reference.source_mismatch) is refused; one that
compiles to other weights than the file's is measured, and said so (reference.recompiled_differs).
"""

from __future__ import annotations

import numpy as np
from rich.table import Table

from .. import ir
from ..runtime.prediction import input_vocab
from ..runtime.model import Model
from ..safe_text import markup_safe
from ..tools.all_inputs import count_inputs
from .common import CliError
from .comparison import BATCH, COUNTS, Subject, Tally, compare
from .progress import progress_bar, shown_after, status
from .reference import Reference, recompiled_differs, source_mismatch
from .verify import Spread, compare_every

EXHAUSTIVE_LIMIT = 100_000
DEFAULT_SAMPLES = 2_000


def sampled_inputs(model: Model, samples: int, seed: int) -> dict[int, np.ndarray]:
    """`samples` seeded random inputs: {length n: [inputs, n] indices into `input_vocab(model)`}
    for every n in 1..max_len (uniform length, then uniform tokens)."""
    vocab_size, max_len = len(input_vocab(model)), model.meta["max_len"]
    rng = np.random.default_rng(seed)
    counts = np.bincount(rng.integers(1, max_len + 1, size=samples), minlength=max_len + 1)
    return {n: rng.integers(0, vocab_size, size=(counts[n], n)) for n in range(1, max_len + 1)}


def compare_sample(subject: Subject, samples: int, seed: int, progress: bool) -> Tally:
    """The tally of `sampled_inputs`, input number i of length n being the i-th drawn of that length."""
    tally = Tally()
    bar = progress_bar(progress)
    with shown_after(bar):
        task = bar.add_task("comparing with the interpreter", total=samples)
        for picks in sampled_inputs(subject.model, samples, seed).values():
            for start in range(0, len(picks), BATCH):
                tally.merge(compare(subject, picks[start:start + BATCH], start))
                bar.advance(task, len(picks[start:start + BATCH]))
    return tally


def measure(model: Model, reference: Reference, samples: int, seed: int, progress: bool,
            spread: Spread | None = None) -> dict:
    """Per-length agreement, the total, program errors and the first disagreements: on every input
    when `spread` is given (--all, run as it says) or there are at most EXHAUSTIVE_LIMIT, else on
    `samples` random inputs from `seed`."""
    weights_path = reference.weights_path
    program = reference.program()
    if program is None:
        raise CliError(f"error: {weights_path} holds no program source (meta.source); "
                       "--accuracy needs it to run the reference interpreter")
    mismatch = source_mismatch(model, program)
    if mismatch:
        raise CliError(f"error: {weights_path}: meta.source is not the program of these weights ({mismatch}); "
                       "--accuracy would compare the model with another program")
    subject, max_len = Subject(model, program), model.meta["max_len"]
    if spread is None and count_inputs(len(input_vocab(model)), max_len) > EXHAUSTIVE_LIMIT:
        mode, tally = "sampled", compare_sample(subject, samples, seed, progress)
    else:
        mode, tally = "exhaustive", compare_every(subject, weights_path, spread or Spread(), progress)
    rows = [_with_percent({"length": n, **tally.rows.get(n, dict.fromkeys(COUNTS, 0))})
            for n in range(1, max_len + 1)]
    totals = {key: sum(row[key] for row in rows) for key in COUNTS}
    return {"mode": mode, "seed": seed if mode == "sampled" else None, "lengths": rows,
            "total": _with_percent(totals), "disagreements": [case for _, case in tally.disagreements],
            "n_disagreeing_inputs": tally.n_disagreeing, "program_errors": [case for _, case in tally.errors],
            "recompiles_to_other_weights": _recompiled_differs(reference, program, progress)}


def _recompiled_differs(reference: Reference, program: ir.Program, progress: bool) -> bool:
    """recompiled_differs for a weights file (a model just compiled from its program is its program's)."""
    if reference.compiled is not None:
        return False
    with status("compiling meta.source again, to compare", progress):
        return recompiled_differs(reference.model, program)


def _with_percent(row: dict) -> dict:
    return {**row, "percent": 100.0 * row["agree"] / row["positions"] if row["positions"] else None}


def render(report: dict, console) -> None:
    errors = report["total"]["program_errors"] > 0
    title = ("every input" if report["mode"] == "exhaustive"
             else f"{report['total']['sequences']:,} random inputs, seed {report['seed']}")
    table = Table("length", "sequences", "positions", "agree", "percent",
                  *(["program errors"] if errors else []),
                  title=f"model vs interpreter: {title}", title_justify="left")
    for row in report["lengths"] + [{**report["total"], "length": "total"}]:
        table.add_row(str(row["length"]), f"{row['sequences']:,}", f"{row['positions']:,}",
                      f"{row['agree']:,}", _percent(row["percent"]),
                      *([f"{row['program_errors']:,}"] if errors else []),
                      end_section=row["length"] == report["lengths"][-1]["length"])
    console.print(table)
    if report["disagreements"]:
        console.print(f"{report['n_disagreeing_inputs']:,} inputs disagree; the first:")
        shown = Table("input", "expected", "got")
        for case in report["disagreements"]:
            shown.add_row(*(markup_safe(text) for text in (case["input"], " ".join(case["expected"]),
                                                          " ".join(case["got"]))))
        console.print(shown)
    if report["program_errors"]:
        errors = Table("input", "program error (the interpreter's)", title="inputs on which the program "
                       "is in error (not counted)", title_justify="left")
        for case in report["program_errors"]:
            errors.add_row(markup_safe(case["input"]), markup_safe(case["error"]))
        console.print(errors)


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}%"
