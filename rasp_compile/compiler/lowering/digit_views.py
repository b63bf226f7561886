"""Digit views: `select(x, y, ==)` between two whole numbers with thousands of values, compared
digit by digit instead of value by value.

Plainly each side is read through a categorical view (views.py) with a dimension per value, and
the head scores the equality with a column per value. dyck2's `select(level, level, ==)` at
max_len 1,024 compares a level that takes 3,073 values: 3,073 residual dimensions, which every
weight matrix has as rows or columns (budget.py), made the model 111 million parameters.

Digits. With lo the least value of either side, B = ceil(sqrt(span)) (span the values' range plus
one) and (h, l) = divmod(v - lo, B), two whole numbers are equal exactly when both their digits
are, so the select is the `and` of two terms: one on views classing the values by h, one on views
classing them by l (views.py's reader classes: values whose row of the term's table is the same
share a dimension, and one digit's rows are the same exactly when the digit is). About 2 sqrt(span)
dimensions instead of span: 55 + 56 for dyck2's level at 1,024. Each view is the exact step MLP
every view is, and its float32 errors are checked as theirs (precision.py); the low digit changes
at every value, so its MLP is as wide as the whole view's, but its few dimensions are what the
other weights multiply.

Taken only where the whole views would take more than WHOLE_VIEW_SHARE of the budget on their own
(with fewer values the plain one-hot is kept as it was, weight for weight), and only with
value-classes on (without it every view keeps a dimension per value and digits would not help).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ... import ir
from ..budget import MAX_PARAMETERS
from ..variables import Var

WHOLE_VIEW_SHARE = 1 / 2
"""The share of budget.MAX_PARAMETERS past which an equality's whole views are split into digits."""

WHOLE_VIEW_COLUMNS = 7
"""Weight columns a whole view of V values takes per value at least, each as long as its V
dimensions: two step units per value (w_in and w_out, 4 V) and a head column per value (query, key
and value sides, 3 V); so a whole view costs at least 7 V^2 parameters (31 million at 2,100 values,
66 million for dyck2's 3,073)."""


def digit_tables(select: ir.Select, keys: Var, queries: Var) -> list[np.ndarray] | None:
    """For `select(keys, queries, ==)` of two whole numbers whose whole views cost more than
    WHOLE_VIEW_SHARE of the budget: the high digit's and the low digit's tables [key value, query
    value] (module docstring), whose `and` is the select's table; else None."""
    if select.predicate != "==" or not (_whole_numbers(keys) and _whole_numbers(queries)):
        return None
    values = sorted({*keys.values, *queries.values})
    if WHOLE_VIEW_COLUMNS * len(values) ** 2 <= WHOLE_VIEW_SHARE * MAX_PARAMETERS:
        return None
    lo = int(values[0])
    base = math.isqrt(int(values[-1]) - lo) + 1  # ceil(sqrt(span)): base^2 >= span = values[-1] - lo + 1
    key_digits, query_digits = (np.divmod(np.array([int(v) - lo for v in var.values]), base) for var in (keys, queries))
    return [np.equal.outer(k, q) for k, q in zip(key_digits, query_digits)]


def _whole_numbers(var: Var) -> bool:
    """Whether `var` is a number whose values are all whole (ints, or floats that are whole)."""
    return var.encoding == ir.NUMERICAL and not var.may_be_none and all(_whole(v) for v in var.values)


def _whole(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, float) and value.is_integer()
