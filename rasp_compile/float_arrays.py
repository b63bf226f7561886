"""Numeric value sets as NumPy arrays: what their gaps, sizes and order need, without a Python
call per value.

A running mean over max_len 4,096 positions takes about 5 million values; forming, sorting and
measuring them one Python float at a time took most of a compile. Each function here gives what
its plain-Python twin gives (the same floats, the same order), computed on a float64 array.
Value sets hold finite numbers only (the frontend refuses inf and nan).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any

import numpy as np


def floats(values: Iterable[Any]) -> np.ndarray:
    """float(v) for each of `values` (numbers: int, float, bool), in their order. [len(values)]"""
    count = len(values) if isinstance(values, Collection) else -1
    return np.fromiter(values, dtype=float, count=count)


def only_floats(values: Collection[Any]) -> bool:
    """Whether every one of `values` is a Python float (a mean's value set), and there is one."""
    return bool(values) and set(map(type, values)) == {float}


def sorted_floats(values: Collection[float]) -> list[float]:
    """sorted(values) for finite Python floats (value sets never hold inf or nan), the same list:
    a stable sort, so 0.0 and -0.0 keep their order as sorted keeps it."""
    return np.sort(floats(values), kind="stable").tolist()


def distinct_sorted(values: Iterable[Any]) -> np.ndarray:
    """The distinct float(v) of `values`, ascending (0.0 and -0.0 one value). [distinct]"""
    flat = np.sort(floats(values))
    return flat[np.concatenate(([True], flat[1:] != flat[:-1]))] if len(flat) else flat
