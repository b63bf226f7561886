"""`rasp-run WEIGHTS --accuracy`: the model against the reference interpreter.

The program is `meta.source`, at the model's max_len. Inputs: every sequence of 1..max_len tokens
when there are at most EXHAUSTIVE_LIMIT of them, else `samples` seeded random inputs (uniform
length, then uniform tokens). Per length: sequences, positions, agreeing positions, percent.
Inputs on which the program itself is in error (the interpreter raises RaspRuntimeError, e.g. a
categorical aggregate selecting two values) are counted apart, not as disagreements. Inputs are
drawn as arrays of vocab indices, one per length; the interpreter runs over each batch of them at
once (`interpret.evaluate_vocab_indices`), and so does the model (ids looked up, not encoded). A source that
cannot be the weights' program (another vocab, reference.source_mismatch) is refused; one that
compiles to other weights than the file's is measured, and said so (reference.recompiled_differs).
"""

from __future__ import annotations

from itertools import product

import numpy as np
from rich.table import Table

from ..errors import RaspRuntimeError
from ..runtime.forward import decode, encode, input_vocab, logits
from ..tools.interpret import evaluate_vocab_indices
from ..runtime.model import Model
from ..safe_text import markup_safe
from .common import CliError
from .progress import progress_bar, shown_after, status
from .reference import Reference, recompiled_differs, source_mismatch
from ..runtime.token_text import value_text
from .tokens import join_tokens, same_value

EXHAUSTIVE_LIMIT = 100_000
DEFAULT_SAMPLES = 2_000
BATCH = 4_096  # inputs per model call and interpreter call
SHOWN_DISAGREEMENTS = 5


def inputs_by_length(model: Model, samples: int, seed: int) -> tuple[str, dict[int, np.ndarray]]:
    """("exhaustive" or "sampled", {length n: [inputs, n] indices into `input_vocab(model)`})."""
    vocab_size, max_len = len(input_vocab(model)), model.meta["max_len"]
    if sum(vocab_size ** n for n in range(1, max_len + 1)) <= EXHAUSTIVE_LIMIT:
        return "exhaustive", {n: np.array(list(product(range(vocab_size), repeat=n)), dtype=np.int64)
                              for n in range(1, max_len + 1)}
    rng = np.random.default_rng(seed)
    counts = np.bincount(rng.integers(1, max_len + 1, size=samples), minlength=max_len + 1)
    return "sampled", {n: rng.integers(0, vocab_size, size=(counts[n], n)) for n in range(1, max_len + 1)}


def model_outputs(model: Model, picks: np.ndarray) -> list[list]:
    """`predict` on inputs of one length given as indices into `input_vocab(model)` [batch, n]:
    the ids are looked up from the indices at once, not encoded token by token."""
    bos, vocab_ids = model.meta["bos_id"], np.array(encode(model, input_vocab(model)), dtype=np.int64)
    ids = vocab_ids[picks] if bos is None else np.insert(vocab_ids[1:][picks], 0, bos, axis=1)
    return decode(model, logits(model, ids)[:, ids.shape[1] - picks.shape[1]:])


def measure(model: Model, reference: Reference, samples: int, seed: int, progress: bool) -> dict:
    """Per-length agreement, the total, program errors and the first disagreements."""
    weights_path = reference.weights_path
    program = reference.program()
    if program is None:
        raise CliError(f"error: {weights_path} holds no program source (meta.source); "
                       "--accuracy needs it to run the reference interpreter")
    mismatch = source_mismatch(model, program)
    if mismatch:
        raise CliError(f"error: {weights_path}: meta.source is not the program of these weights ({mismatch}); "
                       "--accuracy would compare the model with another program")
    mode, by_length = inputs_by_length(model, samples, seed)
    vocab = input_vocab(model)
    rows, disagreements, errors = [], [], []
    memo: dict = {}  # the interpreter's predicate tables, kept from batch to batch
    bar = progress_bar(progress)
    with shown_after(bar):
        task = bar.add_task("comparing with the interpreter", total=sum(map(len, by_length.values())))
        for n, picks in by_length.items():
            row = {"length": n, "sequences": len(picks), "positions": 0, "agree": 0, "program_errors": 0}
            for start in range(0, len(picks), BATCH):
                batch = picks[start:start + BATCH]
                expected = evaluate_vocab_indices(program, vocab, batch, memo)
                for chosen, want, got in zip(batch, expected, model_outputs(model, batch)):
                    if isinstance(want, RaspRuntimeError):
                        row["program_errors"] += 1
                        errors.append({"input": join_tokens(model, [vocab[j] for j in chosen]), "error": want.message})
                        continue
                    agree = [True] * len(want) if want == got else list(map(same_value, want, got))
                    row["positions"] += len(agree)
                    row["agree"] += sum(agree)
                    if not all(agree):
                        disagreements.append({"input": join_tokens(model, [vocab[j] for j in chosen]),
                                              "expected": [value_text(v) for v in want],
                                              "got": [value_text(v) for v in got]})
                bar.advance(task, len(batch))
            rows.append(_with_percent(row))
    totals = {key: sum(row[key] for row in rows)
              for key in ("sequences", "positions", "agree", "program_errors")}
    return {"mode": mode, "seed": seed if mode == "sampled" else None, "lengths": rows,
            "total": _with_percent(totals), "disagreements": disagreements[:SHOWN_DISAGREEMENTS],
            "n_disagreeing_inputs": len(disagreements), "program_errors": errors[:SHOWN_DISAGREEMENTS],
            "recompiles_to_other_weights": _recompiled_differs(reference, progress)}


def _recompiled_differs(reference: Reference, progress: bool) -> bool:
    """recompiled_differs for a weights file (a model just compiled from its program is its program's)."""
    if reference.compiled is not None:
        return False
    with status("compiling meta.source again, to compare", progress):
        return recompiled_differs(reference.model, reference.program())


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
