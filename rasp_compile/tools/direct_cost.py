"""The cost of the "direct rule": the primitive operations the reference interpreter performs for
one prediction, counted by an `OpCounter` (conventions in interpret/reference.py), beside the model's FLOPs.

Whole sequence: one evaluation on the input. Last position: the evaluation on the input minus the
evaluation on the input without its last token. For a causal program the shorter run computes
exactly positions 0..n-2 of the longer one (each position sees only itself and earlier ones), so
the difference is what the last position adds: the direct rule's counterpart of a KV-cached step.
For a non-causal program it is the extra cost of one more token (every position changes).
"""

from __future__ import annotations

from dataclasses import asdict, fields

from .. import ir
from .interpret import OpCounter, evaluate


def counts(counter: OpCounter) -> dict[str, int]:
    """The counter's fields and their total."""
    return {**asdict(counter), "total": counter.total}


def direct_rule_cost(program: ir.Program, tokens: list) -> dict[str, dict[str, int]]:
    """{"whole": counts over the input, "last": counts the last position adds}."""
    whole, before = OpCounter(), OpCounter()
    evaluate(program, tokens, whole)
    evaluate(program, tokens[:-1], before)
    last = OpCounter(**{f.name: getattr(whole, f.name) - getattr(before, f.name) for f in fields(OpCounter)})
    return {"whole": counts(whole), "last": counts(last)}
