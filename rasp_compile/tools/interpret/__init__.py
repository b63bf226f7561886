"""The reference interpreter: a program evaluated directly on concrete inputs (docs/language.md,
"Semantics"), the oracle the compiled model is checked against.

- `reference.py`: one input at a time, in plain Python (`evaluate`, `evaluate_many`,
  `evaluate_each`, `evaluate_all`), with an `OpCounter` for the cost of the direct rule.
- `batched.py`: many inputs at once as NumPy arrays (`evaluate_batch`, and
  `evaluate_vocab_indices` for inputs given as indices into a vocab), the same semantics,
  checked against the reference; `rasp-run --accuracy` uses it.
- `rules.py`: what both must do alike (reading an input, exact means, the error of an
  ambiguous aggregate).
"""

from .batched import evaluate_batch, evaluate_vocab_indices
from .reference import OpCounter, evaluate, evaluate_all, evaluate_each, evaluate_many

__all__ = ["OpCounter", "evaluate", "evaluate_all", "evaluate_batch", "evaluate_each", "evaluate_many",
           "evaluate_vocab_indices"]
