"""Tokens on the command line: values joined back into text, and the model's outputs compared with
the interpreter's. Reading INPUT text into tokens is runtime/token_text.py (the API reads it too)."""

from __future__ import annotations

import math

from ..compiler.tolerances import OUTPUT_TOLERANCE
from ..runtime.model import Model
from ..runtime.token_text import single_characters, value_text


def join_tokens(model: Model, values: list) -> str:
    """Values as one string: without spaces when every vocab token is one character."""
    return ("" if single_characters(model) else " ").join(value_text(value) for value in values)


def same_value(expected, got, tolerance: float = OUTPUT_TOLERANCE) -> bool:
    """Whether the model's output agrees with the interpreter's: equal as the interpreter's value
    sets compare them (none only with none), or numbers within `tolerance` (relative or absolute)."""
    if expected == got:
        return True
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (expected, got))
    return numbers and math.isclose(expected, got, rel_tol=tolerance, abs_tol=tolerance)
