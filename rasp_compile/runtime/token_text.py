"""Tokens written as text <-> token values: how the command line's INPUT (and the Python API's
`run` / `complete`) spells tokens, and how values print (docs/cli.md, "INPUT").

A token is written as the program writes it: strings bare (`a`), numbers as numbers (`3`, `0.5`),
booleans as `true` / `false`, none as `none`. A written token matches the vocab entry written the
same way, or the vocab number it spells as a program writes numbers (`3.0` matches 3).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

import numpy as np

from ..errors import InputError
from ..element_fn import Value, unpacked
from ..safe_text import shortened, terminal_safe
from .prediction import input_vocab
from .model import Model
from .token_keys import token_key


def value_text(value: object) -> str:
    """How a token or output value is shown: `a`, `3`, `0.5`, `true`, `none`; a tuple (of an
    n-ary sequence_map, which is shown by its items: ir.unpacked) as `(0, a)`."""
    if value is None:
        return "none"
    if isinstance(value, tuple):
        return "(" + ", ".join(map(value_text, unpacked(value))) + ")"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else f"{value:.6g}"
    return str(value)


def vocab_text(model: Model) -> str:
    """The input vocab as `{a, b}`, for messages: one line, terminal-safe, a long one shortened."""
    return shortened(terminal_safe("{" + ", ".join(value_text(token) for token in input_vocab(model)) + "}"), 200)


def single_characters(model: Model) -> bool:
    """Whether every vocab token is written with one character (then tokens join without spaces)."""
    return all(len(value_text(token)) == 1 for token in input_vocab(model))


def split_input(model: Model, text: str) -> list[Value]:
    """The tokens INPUT spells: one per character when every vocab token is one character and
    INPUT has no spaces, else one per whitespace-separated word, each matched by `token_of_text`."""
    words = list(text) if single_characters(model) and not any(c.isspace() for c in text) else text.split()
    if not words:
        raise InputError("the input is empty; give at least one token")
    spelled = _spellings(model)
    return [token_of_text(model, word, spelled) for word in words]


def tokens_from(model: Model, tokens: str | Iterable[object]) -> list[Value]:
    """Tokens as the Python API takes them: a list of vocab values or their texts (`["1", "2"]` on
    a number vocab, as the command line reads `12`), or one string read as the command line reads
    INPUT. A value of the vocab is itself (the string "1" in a vocab holding it; numpy scalars as
    the Python values they hold); any other string is matched by its text."""
    if isinstance(tokens, str):
        return split_input(model, tokens)
    vocab = {token_key(token): token for token in input_vocab(model)}
    spelled = None
    matched: list[Value] = []
    for token in tokens:
        token = token.item() if isinstance(token, np.generic) else token  # numpy's 3 is Python's 3
        if token_key(token) in vocab:
            matched.append(vocab[token_key(token)])
        elif isinstance(token, str):
            spelled = spelled or _spellings(model)
            matched.append(token_of_text(model, token, spelled))
        else:
            raise InputError(f"token {shortened(repr(token))} is not in the vocab {vocab_text(model)}")
    return matched


def _spellings(model: Model) -> dict[str, list[Value]]:
    """Each text -> the vocab tokens written that way (two for a vocab holding "1" and 1)."""
    spelled: dict[str, list[Value]] = {}
    for token in input_vocab(model):
        spelled.setdefault(value_text(token), []).append(token)
    return spelled


def token_of_text(model: Model, word: str, spelled: dict[str, list[Value]]) -> Value:
    """The vocab token `word` writes: by text, then as a number (`3.0` matches 3). InputError when
    it matches none, or two that print alike (a vocab holding the string "1" and the number 1)."""
    candidates = spelled.get(word)
    if candidates is None:
        number = _as_number(word)
        candidates = [t for t in input_vocab(model) if number is not None and token_key(t) == token_key(number)]
    if not candidates:
        raise InputError(f"token {shortened(repr(word))} is not in the vocab {vocab_text(model)}")
    if len(candidates) > 1:
        raise InputError(f"token {shortened(repr(word))} is ambiguous: the vocab holds "
                         f"{' and '.join(shortened(repr(t)) for t in candidates)}, both written {shortened(repr(word))}")
    return candidates[0]


NUMBER_TEXT = re.compile(r"-?(\d+\.?\d*|\.\d+)", re.ASCII)
"""A number as a program writes one (`3`, `-1`, `0.5`): not `+1`, `1_0`, `1e3`, `inf` or digits
other than 0-9, all of which Python's float() would take."""


def _as_number(word: str) -> float | None:
    if not NUMBER_TEXT.fullmatch(word) or len(word) > 400:  # float() of a huge literal: inf
        return None
    number = float(word)
    return number if math.isfinite(number) else None
