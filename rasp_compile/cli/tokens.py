"""INPUT text <-> tokens (docs/cli.md): splitting, matching the vocab by text, and printing values.

A token is written as the program writes it: strings bare (`a`), numbers as numbers (`3`, `0.5`),
booleans as `true` / `false`, none as `none`.
"""

from __future__ import annotations

import math
import re

from ..errors import InputError
from ..runtime.forward import input_vocab
from ..runtime.model import Model, token_key
from ..safe_text import terminal_safe


def value_text(value) -> str:
    """How a token or output value is shown: `a`, `3`, `0.5`, `true`, `none`."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else f"{value:.6g}"
    return str(value)


def vocab_text(model: Model) -> str:
    """The input vocab as `{a, b}`, for messages: control characters escaped, so one line stays one."""
    return "{" + ", ".join(terminal_safe(value_text(token)) for token in input_vocab(model)) + "}"


def single_characters(model: Model) -> bool:
    """Whether every vocab token is written with one character (then tokens join without spaces)."""
    return all(len(value_text(token)) == 1 for token in input_vocab(model))


def split_input(model: Model, text: str) -> list:
    """The tokens INPUT spells: one per character when every vocab token is one character and
    INPUT has no spaces, else one per whitespace-separated word. Matched to the vocab by text,
    then as a number (`3.0` matches 3); InputError names the first token that matches nothing."""
    words = list(text) if single_characters(model) and not any(c.isspace() for c in text) else text.split()
    if not words:
        raise InputError("the input is empty; give at least one token")
    by_text: dict[str, object] = {}
    for token in input_vocab(model):
        by_text.setdefault(value_text(token), token)
    by_number = {token_key(token): token for token in input_vocab(model)}
    tokens = []
    for word in words:
        token = by_text.get(word)
        if token is None:  # vocab tokens are never None
            token = by_number.get(token_key(_as_number(word)))
        if token is None:
            raise InputError(f"token {word!r} is not in the vocab {vocab_text(model)}")
        tokens.append(token)
    return tokens


NUMBER_TEXT = re.compile(r"-?(\d+\.?\d*|\.\d+)", re.ASCII)
"""A number as a program writes one (`3`, `-1`, `0.5`): not `+1`, `1_0`, `1e3`, `inf` or digits
other than 0-9, all of which Python's float() would take."""


def _as_number(word: str) -> float | None:
    if not NUMBER_TEXT.fullmatch(word):
        return None
    number = float(word)
    return number if math.isfinite(number) else None


def join_tokens(model: Model, values: list) -> str:
    """Values as one string: without spaces when every vocab token is one character."""
    return ("" if single_characters(model) else " ").join(value_text(value) for value in values)


def same_value(expected, got, tolerance: float = 1e-5) -> bool:
    """Whether the model's output agrees with the interpreter's: equal as the interpreter's value
    sets compare them (none only with none), or numbers within `tolerance` (relative or absolute)."""
    if expected == got:
        return True
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (expected, got))
    return numbers and math.isclose(expected, got, rel_tol=tolerance, abs_tol=tolerance)
