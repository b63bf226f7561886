"""Reading the residual stream back as s-op values, from a model's meta.

`residual_variables(meta, d_model)` groups the residual dimensions by the variable they belong to:
`label:value` dimensions form a categorical variable (as do the dimensions meta.sops lists
under one variable's `labels`), a bare `label` a numerical one, `bos` is left out. With `meta.sops` (written by the compiler: docs/inspect.md) each variable also knows
its values, those whose dimension was pruned (no weight read it), whether it may be none, and a
numerical variable the numbers it can hold; a file without it (or with a malformed entry) is
read from the labels alone, values as text.

`decode(variable, x)` turns the [n, d_model] residual into one value per position:

    categorical   the value of the largest dimension when it exceeds ONE_HOT_THRESHOLD; else the
                  one value that has no dimension left (pruned) or none, when exactly one of
                  them is possible; AMBIGUOUS when several are
    numerical     the nearest value it can take when within SNAP_SHARE of the gap to the next
                  one; else the number rounded to 4 significant digits (|x| < NOISE is 0)
"""

from __future__ import annotations

import math
from typing import Any
from dataclasses import dataclass

import numpy as np

BOS_LABEL = "bos"
ONE_HOT_THRESHOLD = 0.5  # a categorical dimension above this is the value (exact weights give 1, else 0)
SNAP_SHARE = 0.25  # a number within this share of the gap to its neighbours is that value
NOISE = 1e-5  # float32 rounding leaves numbers like 1.4e-07 where the weights give 0
AMBIGUOUS = "?"  # a categorical variable whose dimensions do not say which value it holds
MAX_TUPLE_DEPTH = 4  # tuples in meta.sops values nest this deep at most (the compiler's: 1 level)


@dataclass(frozen=True)
class Variable:
    """One variable of the residual stream.

    dims:        the residual dimensions it has, in order
    values:      the value of each of those dimensions (categorical; empty for numerical)
    unseen:      the values it may hold without a dimension: pruned values, and None when it
                 may be none (unknown for a file without meta.sops: assumed [None])
    numbers:     a numerical variable's possible values, sorted (empty when not recorded)
    read_out:    whether unembed reads it (recorded in meta.sops)
    """

    name: str
    encoding: str
    dims: tuple[int, ...]
    values: tuple = ()
    unseen: tuple = (None,)
    numbers: tuple = ()
    read_out: bool = False  # whether unembed reads it (meta.sops)

    @property
    def readable(self) -> bool:
        """Whether every position's value can be told from the dimensions left."""
        return bool(self.dims) and (self.encoding == "numerical" or len(self.unseen) <= 1)


def residual_labels(meta: dict, d_model: int) -> list[str]:
    """meta.residual, or `d0`, `d1`, ... when the file has none (every report labels dimensions so)."""
    return list(meta.get("residual") or (f"d{i}" for i in range(d_model)))


def residual_variables(meta: dict, d_model: int) -> dict[str, Variable]:
    """Every variable with at least one residual dimension, in the order of their first dimension."""
    labels = residual_labels(meta, d_model)
    index = {label: i for i, label in enumerate(labels)}
    recorded: dict[str, Any] = meta["sops"] if isinstance(meta.get("sops"), dict) else {}
    owner = _recorded_owners(recorded, index)
    groups: dict[str, list[tuple[int, str | None]]] = {}
    for dim, label in enumerate(labels):
        if label != BOS_LABEL:
            name, colon, value = (owner[label], "", "") if label in owner else label.partition(":")
            groups.setdefault(name, []).append((dim, value if colon else None))
    variables = {}
    for name, dims in groups.items():
        described = _recorded(recorded.get(name), name, index)
        variables[name] = described or _from_labels(name, dims)
    return variables


def _recorded_owners(recorded: dict, index: dict) -> dict[str, str]:
    """Each dimension label meta.sops gives a categorical variable (a one-hot of a number is
    named `X == v`, with no `NAME:` before the value) -> that variable's name."""
    owner: dict[str, str] = {}
    for name, entry in recorded.items():
        labels = entry.get("labels") if isinstance(entry, dict) and entry.get("encoding") == "categorical" else None
        if isinstance(labels, list) and all(isinstance(label, str) and label in index for label in labels):
            owner.update((label, name) for label in labels if label not in owner)
    return owner


def _from_labels(name: str, dims: list[tuple[int, str | None]]) -> Variable:
    if dims[0][1] is None:
        return Variable(name, "numerical", (dims[0][0],))
    return Variable(name, "categorical", tuple(d for d, _ in dims), tuple(v for _, v in dims))


def _recorded(entry, name: str, index: dict) -> Variable | None:
    """The Variable meta.sops describes, or None when the entry is missing or malformed."""
    if not isinstance(entry, dict) or entry.get("encoding") not in ("categorical", "numerical"):
        return None
    values, nullable = entry.get("values"), entry.get("may_be_none") is True
    if entry["encoding"] == "numerical":
        if name not in index:  # the labels say categorical (`name:value`): believe them, not the entry
            return None
        numbers = values if isinstance(values, list) and all(_is_number(v) for v in values) else []
        return Variable(name, "numerical", (index[name],), numbers=tuple(sorted(numbers)),
                        read_out=entry.get("read_out") is True)
    labels = entry.get("labels")
    if not (isinstance(values, list) and isinstance(labels, list) and len(values) == len(labels)
            and all(isinstance(label, str) for label in labels) and all(map(_is_value, values))):
        return None
    present = [(index[label], _hashable(v)) for label, v in zip(labels, values) if label in index]
    if not present:
        return None
    unseen = [_hashable(v) for label, v in zip(labels, values) if label not in index] + [None] * nullable
    return Variable(name, "categorical", tuple(d for d, _ in present), tuple(v for _, v in present), tuple(unseen),
                    read_out=entry.get("read_out") is True)


def _is_number(value) -> bool:
    """A finite number a residual dimension can hold (JSON also has NaN, and ints beyond floats)."""
    try:
        return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    except OverflowError:  # an int beyond float range
        return False


def _is_value(value, depth: int = 0) -> bool:
    """A value the compiler writes: a JSON scalar, or a list of them (a tuple; MAX_TUPLE_DEPTH
    levels at most), never an object or a list nested deeper than any program's value."""
    if isinstance(value, list):
        return depth < MAX_TUPLE_DEPTH and all(_is_value(item, depth + 1) for item in value)
    return value is None or isinstance(value, (str, int, float))


def _hashable(value):
    """A JSON value as a Python value: a list (a joint variable's tuple) as a tuple."""
    return tuple(map(_hashable, value)) if isinstance(value, list) else value


def decode(variable: Variable, x: np.ndarray) -> list:
    """[n, d_model] residual -> the variable's value at each of the n positions."""
    columns = np.asarray(x, dtype=np.float64)[:, list(variable.dims)]  # [n, len(dims)]
    if variable.encoding == "numerical":
        return [meaning(float(v), variable.numbers) for v in columns[:, 0]]
    out = []
    for row in columns:
        if row.max() > ONE_HOT_THRESHOLD:
            out.append(variable.values[int(np.argmax(row))])
        else:
            out.append(variable.unseen[0] if len(variable.unseen) == 1 else
                       None if not variable.unseen else AMBIGUOUS)
    return out


def meaning(x: float, numbers: tuple = ()) -> float:
    """A number from the residual as the value it stands for: the nearest of `numbers` when
    within SNAP_SHARE of the gap around it, else rounded (4 significant digits, noise to 0)."""
    value = snapped(x, numbers)
    return rounded(x) if value is None else value


def snapped(x: float, numbers: tuple) -> float | None:
    """The nearest of the sorted `numbers` to x when within SNAP_SHARE of the gap around it, else None."""
    if not numbers:
        return None
    i = int(np.searchsorted(numbers, x))
    near = [j for j in (i - 1, i) if 0 <= j < len(numbers)]
    j = min(near, key=lambda j: abs(numbers[j] - x))
    gaps = [abs(numbers[k] - numbers[j]) for k in (j - 1, j + 1) if 0 <= k < len(numbers)]
    return numbers[j] if abs(numbers[j] - x) <= SNAP_SHARE * min(gaps, default=max(1.0, abs(numbers[j]))) else None


def output_numbers(variables: dict[str, Variable]) -> tuple:
    """The values a numerical output can take: those of the one numerical variable the read-out
    reads (meta.sops), () when the file does not record them."""
    read = [v for v in variables.values() if v.encoding == "numerical" and v.read_out]
    return read[0].numbers if len(read) == 1 else ()


def rounded(x: float) -> float:
    """x to 4 significant digits, and 0 for float noise below NOISE."""
    return 0.0 if abs(x) < NOISE else float(f"{x:.4g}")
