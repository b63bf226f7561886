"""What identifies a token value, for the vocab's lookups (model.py's checks, the encoder)."""

from __future__ import annotations

import math


def token_key(value: object) -> tuple[str, str | bool | float] | None:
    """What identifies a token value: its kind and value, so that 1 and 1.0 are one token but
    true and 1, or "1" and 1, are two. None for anything that cannot be a token."""
    if isinstance(value, (str, bool)):
        return (type(value).__name__, value)
    if isinstance(value, (int, float)):
        try:
            number = float(value)
        except OverflowError:  # an int beyond float range (JSON allows 10**400)
            return None
        return ("number", number) if math.isfinite(number) else None
    return None
