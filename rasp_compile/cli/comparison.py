"""The model against the reference interpreter on a batch of inputs, and the tally of the results.

A `Tally` is what `--accuracy` reports, for any part of its inputs: per length, sequences,
positions, agreeing positions and program errors; how many inputs disagree; and the first
SHOWN disagreements and program errors, each under its key (length, number of the input), so that
tallies of parts merged in any order give the same first ones as one run through every input.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .. import ir
from ..errors import RaspRuntimeError
from ..runtime.execute import logits
from ..runtime.prediction import decode, encode, input_vocab
from ..runtime.model import Model
from ..runtime.token_text import value_text
from ..tools.interpret import evaluate_vocab_indices
from .tokens import join_tokens, same_value

BATCH = 4_096  # inputs per model call and interpreter call
SHOWN = 5  # disagreements and program errors listed
COUNTS = ("sequences", "positions", "agree", "program_errors")


@dataclass
class Subject:
    """A model and the program it implements, with the interpreter's predicate tables (`memo`)
    kept from batch to batch."""

    model: Model
    program: ir.Program
    memo: dict = field(default_factory=dict)

    @property
    def vocab(self) -> list:
        return input_vocab(self.model)


@dataclass
class Tally:
    """Counts per length ({length: {COUNTS...}}), disagreeing inputs, and the first SHOWN
    disagreements and program errors as (key, case) pairs, key = (length, input number)."""

    rows: dict[int, dict[str, int]] = field(default_factory=dict)
    n_disagreeing: int = 0
    disagreements: list[tuple[tuple[int, int], dict]] = field(default_factory=list)
    errors: list[tuple[tuple[int, int], dict]] = field(default_factory=list)

    def merge(self, other: Tally) -> None:
        """Add `other` (the tally of other inputs) into this one."""
        for length, row in other.rows.items():
            mine = self.rows.setdefault(length, dict.fromkeys(COUNTS, 0))
            for key in COUNTS:
                mine[key] += row[key]
        self.n_disagreeing += other.n_disagreeing
        self.disagreements = _first(self.disagreements + other.disagreements)
        self.errors = _first(self.errors + other.errors)


def _first(cases: list) -> list:
    return sorted(cases, key=lambda pair: pair[0])[:SHOWN]


def model_outputs(model: Model, picks: np.ndarray) -> list[list]:
    """`predict` on inputs of one length given as indices into `input_vocab(model)` [batch, n]:
    the ids are looked up from the indices at once, not encoded token by token."""
    bos, vocab_ids = model.meta["bos_id"], np.array(encode(model, input_vocab(model)), dtype=np.int64)
    ids = vocab_ids[picks] if bos is None else np.insert(vocab_ids[1:][picks], 0, bos, axis=1)
    return decode(model, logits(model, ids)[:, ids.shape[1] - picks.shape[1]:])


def compare(subject: Subject, picks: np.ndarray, first: int) -> Tally:
    """The tally of inputs of one length, picks [count, n] indices into the vocab, numbered from
    `first` (in BATCH-sized calls of the model and the interpreter)."""
    n = picks.shape[1]
    tally = Tally(rows={n: dict.fromkeys(COUNTS, 0)})
    row, vocab = tally.rows[n], subject.vocab
    for start in range(0, len(picks), BATCH):
        batch = picks[start:start + BATCH]
        expected = evaluate_vocab_indices(subject.program, vocab, batch, subject.memo)
        for i, (chosen, want, got) in enumerate(zip(batch, expected, model_outputs(subject.model, batch))):
            row["sequences"] += 1
            key = (n, first + start + i)
            if isinstance(want, RaspRuntimeError):
                row["program_errors"] += 1
                if len(tally.errors) < SHOWN:
                    tally.errors.append((key, {"input": _text(subject, chosen), "error": want.message}))
                continue
            agree = [True] * len(want) if want == got else list(map(same_value, want, got))
            row["positions"] += len(agree)
            row["agree"] += sum(agree)
            if not all(agree):
                tally.n_disagreeing += 1
                if len(tally.disagreements) < SHOWN:
                    tally.disagreements.append((key, {"input": _text(subject, chosen),
                                                      "expected": [value_text(v) for v in want],
                                                      "got": [value_text(v) for v in got]}))
    return tally


def _text(subject: Subject, chosen: np.ndarray) -> str:
    return join_tokens(subject.model, [subject.vocab[j] for j in chosen])
