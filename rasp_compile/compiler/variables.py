"""The residual stream's named directions: a `Var` is one value the stream holds, and every one of
its dimensions has a label (`tokens:a`, `indices:3`, or a numerical variable's own label), so a
weight that reads or writes the wrong direction is visible in print and fails where it is made.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from .. import ir
from ..errors import Loc
from ..frontend.infer import is_number
from ..float_arrays import only_floats, sorted_floats
from ..frontend.lambda_eval import literal

CONSTANT = None
"""In a linear form over residual features, the feature that is 1 at every position (a bias);
the others are (variable, value) coordinates, value None for a numerical variable."""


@dataclass(frozen=True, eq=False)
class Var:
    """A value in the residual stream. `values`: the categorical values in dimension order, or
    the numerical values it can take (sorted). `may_be_none`: categorical only. `loc`: where
    the s-op it holds (or converts) was written, for messages."""

    label: str
    encoding: str
    values: tuple[Any, ...]
    may_be_none: bool = False
    loc: Loc | None = None

    @property
    def domain(self) -> tuple[Any, ...]:
        """The values a table over this variable must cover (None too if it may be none)."""
        return self.values + ((None,) if self.may_be_none else ())

    @cached_property
    def position(self) -> dict[Any, int]:
        """value -> its index in `values` (by equality: 1, 1.0 and True are one value)."""
        return {v: i for i, v in enumerate(self.values)}

    @cached_property
    def dim_labels(self) -> tuple[str, ...]:
        """The label of each categorical dimension, in `values` order (see `dim_labels`)."""
        return dim_labels(self.label, self.values)

    def encode(self, value: Any) -> dict[str, float]:
        """The residual coordinates of `value`, by dimension label (none: nothing)."""
        if value is None:
            return {}
        if self.encoding == ir.NUMERICAL:
            return {self.label: float(value)}
        return {coordinate(self, value): 1.0}


def empty_of(var: Var) -> int | None:
    """What a map writing `var` gives where its argument is none: 0 if numerical, else none."""
    return 0 if var.encoding == ir.NUMERICAL else None


def coordinate(var: Var, value: Any) -> str:
    """The label of one residual coordinate of `var`: its value's dimension (categorical), or
    the variable's one dimension (numerical; `value` is None)."""
    if var.encoding == ir.NUMERICAL:
        return var.label
    return var.dim_labels[var.position[value]]


def dim_labels(var_label: str, values: Sequence[Any]) -> tuple[str, ...]:
    """`tokens:a`, `indices:3`: the names of a categorical variable's dimensions, one per value,
    each `var_label:` and the value as `value_text` spells it (a pack as its items: `(0,a)`,
    element_fn.unpacked). Where two of the values spell
    alike (the string "1" and the number 1, "true" and true), every value of this variable is
    spelled as a program writes it instead (`x:"1"`, `x:1`, `x:"true"`, `x:true`), and in the
    rare case that these too coincide (strings holding both quote marks, inside tuples), as
    Python's repr spells it, which tells any two values apart."""
    for spell in (value_text, literal):
        labels = tuple(f"{var_label}:{spell(ir.unpacked(value))}" for value in values)
        if len(set(labels)) == len(labels):
            return labels
    return tuple(f"{var_label}:{value!r}" for value in values)


def value_text(value: object) -> str:
    """A value as a dimension label spells it: true/false, none, (a,b) for a tuple."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return "(" + ",".join(value_text(v) for v in value) + ")"
    if value is None:
        return "none"
    return str(value)


def sorted_values(values: Collection[Any]) -> list[Any]:
    """`values` ordered by sort_key; a set of floats (a mean's, hundreds of thousands) sorted as
    plain numbers, which is the same order several times faster."""
    if only_floats(values):
        return sorted_floats(values)
    return sorted(values, key=sort_key)


def sort_key(value: Any) -> tuple[Any, ...]:
    """Orders mixed values deterministically: numbers by value, then strings, then tuples."""
    if isinstance(value, tuple):
        return (3, tuple(sort_key(v) for v in value))
    if value is None:
        return (0, 0)
    if is_number(value):
        return (1, float(value))
    return (2, str(value))
