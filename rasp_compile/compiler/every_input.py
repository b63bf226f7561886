"""every_input: a numerical answer the error analysis cannot prove, checked on every input instead.

precision.py bounds every read-out for any input, so it must charge each float sum the most it
may round; for a short program that bound can exceed the answer's 1e-5 although no input comes
near it (a running sum of +-1 at max_len 9 in float32: bound 1.1e-5, measured a few 1e-7). When
the program has at most EVERY_INPUT_LIMIT inputs (every length from 1 to max_len), the compiler
runs the built model on all of them and compares each answer with the reference interpreter's, as
`rasp-run --accuracy` does (within 1e-5 max(1, |v|)). If all agree, the model is exact on every
input by exhaustion, and meta.margins records what was measured (`proof: "every input"`); if one
does not, or there are too many inputs, the analysis's refusal stands. Inputs on which the program
itself is in error (the interpreter raises) have no answer to compare and are left out.
"""

from __future__ import annotations

import math
from typing import Any

from .. import ir
from ..errors import RaspPrecisionError
from ..runtime.prediction import predict
from ..runtime.model import Model
from ..tools.all_inputs import chunk_inputs, chunks, count_inputs
from ..tools.interpret import evaluate_batch
from .tolerances import OUTPUT_TOLERANCE

EVERY_INPUT_LIMIT = 30_000
"""The most inputs the compiler runs to prove an answer by exhaustion: a vocab of 2 up to max_len
13 (16,382), of 3 up to 8 (9,840); a second or two of the batched interpreter and the forward pass."""


def checkable(program: ir.Program) -> bool:
    """Whether the program's inputs are few enough to run them all (EVERY_INPUT_LIMIT)."""
    return count_inputs(len(program.vocab), program.max_len) <= EVERY_INPUT_LIMIT


def verified_margin(model: Model, program: ir.Program, unproven: RaspPrecisionError, reads: str) -> dict[str, Any]:
    """meta.margins' entry for the answer, measured on every input: the largest error over
    OUTPUT_TOLERANCE max(1, |v|), as a bound in units of OUTPUT_TOLERANCE; `unproven` (the
    analysis's refusal) is raised again where an answer strays further."""
    vocab = list(program.vocab)
    worst = 0.0
    for chunk in chunks(len(vocab), program.max_len):  # every input, shortest first
        inputs = [[vocab[i] for i in row] for row in chunk_inputs(chunk, len(vocab)).tolist()]
        worst = max(worst, _worst_share(model, program, inputs, unproven))
    return {"readout": model.meta["output"]["name"], "kind": "numerical", "reads": reads,
            "bound": worst * OUTPUT_TOLERANCE, "tolerance": OUTPUT_TOLERANCE, "proof": "every input"}


def _worst_share(model: Model, program: ir.Program, inputs: list[list[Any]], unproven: RaspPrecisionError) -> float:
    """The largest |model - program| / (OUTPUT_TOLERANCE max(1, |v|)) over `inputs`; `unproven`
    when it passes 1 (or the model's answer is not a finite number)."""
    worst = 0.0
    for expected, got in zip(evaluate_batch(program, inputs), predict(model, inputs)):
        if not isinstance(expected, list):
            continue  # the program is in error on this input
        for v, x in zip(expected, got):
            if v is None:  # none: the numerical answer is 0 (docs/language.md)
                v = 0
            share = abs(float(x) - float(v)) / (OUTPUT_TOLERANCE * max(1.0, abs(float(v))))
            if not share <= 1.0 or not math.isfinite(float(x)):
                raise unproven
            worst = max(worst, share)
    return worst
