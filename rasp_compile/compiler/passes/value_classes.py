"""value-classes: a numerical s-op read categorically keeps only the values its reader tells apart.

A categorical view (lowering/views.py) plainly has one dimension per value of the number. Its
reader often computes the same thing from many values (a select's row of answers, a
sequence_map's row of its table): values with equal `signature` share one dimension, named by
the first of them, and a reader computing on that value gets what it would on any other.

Needs: nothing from earlier passes; runs as the `view_classes` rewrite of the lowering.
Guarantees: every reader of the view computes what it would from the full view.
"""

from __future__ import annotations

from typing import Callable

from ..lowering.state import LoweringState
from ..variables import Var


def reader_classes(state: LoweringState, var: Var, signature: Callable) -> Callable:
    """The reader's own signature: values it tells apart get dimensions of their own."""
    return signature
