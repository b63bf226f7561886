"""Did-you-mean suggestions for a misspelled name, built-in or flag (`selct`, `tokenz`, `--tarce`)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

CUTOFF = 0.75
"""How alike a word and a known name must be (difflib's ratio, 0 to 1) to suggest the name:
`tokenz` / `tokens` and `selct` / `select` are 0.83 and 0.91; unrelated short names stay below."""


def did_you_mean(word: str, known: Iterable[str]) -> str:
    """`; did you mean 'NAME'?` for the known name closest to `word`, or "" when none is close."""
    close = difflib.get_close_matches(word, sorted(set(known) - {word}), n=1, cutoff=CUTOFF)
    return f"; did you mean '{close[0]}'?" if close else ""
