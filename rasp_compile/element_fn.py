"""The element-wise functions of the IR: `Fn`, a map's, sequence_map's or predicate's function of
scalar values, with the text it reads as, and the comparison predicates of `select`.

`ir` re-exports every name here (`ir.Fn`, `ir.as_fn`, `ir.compare`, ...); this module needs
nothing of the graph, so the frontend's evaluators and the IR share it without a cycle.
"""

from __future__ import annotations

import math
import numbers
import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .errors import ArgumentTypeError, Loc
from .safe_text import shortened

Value = str | int | float | bool
VALUE_TYPES, VALUE_TEXT = (str, numbers.Real, tuple), "a str, number, bool or tuple"  # what a lambda may return


@dataclass(frozen=True, eq=False)
class Fn:
    """An element-wise scalar function of one or two values (a map's or a predicate's lambda).

    `call` must be pure and may raise; `text` is how it reads (for messages and summaries);
    `loc` is the lambda's place in the source, if it came from text.
    """

    call: Callable[..., Value | tuple[Any, ...]]  # a lambda may return a tuple (VALUE_TYPES)
    text: str = "<python function>"
    loc: Loc | None = None
    results: dict = field(default_factory=dict, repr=False)  # memo: identity keys of arguments -> result
    recent: dict = field(default_factory=dict, repr=False)  # memo: arguments -> (the same arguments, result)
    on_arrays: Callable[..., np.ndarray] | None = field(default=None, repr=False)  # frontend/lambda_arrays.py

    def __call__(self, *args: Value) -> Value:
        """`call(*args)`, exactly as Python computes it, computed once per distinct arguments:
        inference, compilation and the interpreter all ask for the same combinations. None is
        none there (as in tracr); an infinity or nan is refused (ValueError): no model holds it.

        Two memos: `recent`, keyed by the arguments themselves, answers when it holds these very
        objects (the value sets' own, asked again and again: one hash, no key to build) or others
        that are the same values (`same_value`: a running mean's floats formed again, say); equal
        arguments that are not the same (2.0 for 2, -0.0 for 0.0) go to `results`, keyed by
        `identity_key`, which tells them apart."""
        held = self.recent.get(args)
        if held is not None and (all(map(operator.is_, held[0], args)) or all(map(same_value, held[0], args))):
            return held[1]
        key = tuple(map(identity_key, args))  # 1, 1.0 and True are equal, not the same; nor are 0.0 and -0.0
        if key not in self.results:
            self.remember(args, self.call(*args), key)
        elif held is None:
            self.recent[args] = (args, self.results[key])
        return self.results[key]

    def remember(self, args: tuple, result, key: tuple | None = None) -> None:
        """Hold `result` as what `call(*args)` gives (computed by the caller, on arrays say);
        TypeError when it is no value, NotFinite when it is an infinity or nan (or holds one)."""
        result = python_value(result)
        if result is not None and not isinstance(result, VALUE_TYPES):
            raise TypeError(f"it returns {result!r}, which is no value ({VALUE_TEXT})")
        if not is_finite(result):
            raise NotFinite(result)
        self.results[tuple(map(identity_key, args)) if key is None else key] = result
        self.recent.setdefault(args, (args, result))

    def remember_all(self, rows: list[tuple], results: list) -> None:
        """Hold `results[i]` as what `call(*rows[i])` gives, for every i: values (bool, int,
        float, str, tuple) that the caller computed exactly as `call` does, on arrays say. Held
        by the arguments themselves only, at C speed: a twin of them is called as before. The
        caller holds no infinity or nan here (lambda_arrays declines them: calls refuse them)."""
        self.recent.update(zip(rows, zip(rows, results)))


FINITE_TEXT = "values are finite (no inf or nan): a model's weights and file hold finite numbers only"


class NotFinite(ValueError):
    """A function returned an infinity or nan (or a tuple holding one): `value`."""

    def __init__(self, value):
        super().__init__(f"it returns {value!r}; {FINITE_TEXT}")
        self.value = value


def is_finite(value) -> bool:
    """Whether `value` holds no infinity or nan (a float, or a tuple's items); None and every
    non-float value are finite."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, tuple):
        return all(map(is_finite, value))
    return True


def identity_key(value) -> tuple:
    """A key that only values Python tells apart by more than `==` do not share: the type, the
    value and, for a float, its sign (so 2 and 2.0, 1 and True, 0.0 and -0.0 get different keys),
    item by item in a tuple. Two values with the same key behave alike under every function."""
    kind = type(value)
    if kind is tuple:
        return (tuple, tuple(map(identity_key, value)))
    if kind is float:
        return (float, value, math.copysign(1.0, value))
    return (kind, value)


def same_value(a, b) -> bool:
    """Whether `a` and `b` are one value to Python in every respect, not only under `==`: the
    same as `identity_key(a) == identity_key(b)`, without building the keys."""
    kind = type(a)
    if kind is not type(b):
        return False
    if kind is float:
        return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
    if kind is tuple:
        return len(a) == len(b) and all(map(same_value, a, b))
    return a == b


def python_value(value):
    """A NumPy scalar (`np.int64(2)`, `np.True_`), or a tuple holding some, as the Python value it
    holds: research code computes with NumPy, and everything downstream takes Python values."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, tuple):
        return tuple(map(python_value, value))
    return value


def as_fn(f: Fn | Callable[..., Value]) -> Fn:
    """Wrap a plain Python callable as an `Fn` (the embedded API accepts either); ArgumentTypeError for
    anything else, when the program is built rather than when it is compiled."""
    if isinstance(f, Fn):
        return f
    if not callable(f) or hasattr(f, "children"):  # an s-op or selector is callable (tracr's program(xs)), no function
        raise ArgumentTypeError(f"expected a function, got {type(f).__name__} {shortened(repr(f))}")
    return Fn(f, getattr(f, "__name__", "<python function>"))


def swapped(fn: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """`fn` with its two arguments in the other order: fn(b, a) at (a, b). An `Fn` stays an Fn of
    the same text and place, computed on arrays where `fn` is (frontend/lambda_arrays.py)."""
    if not isinstance(fn, Fn):
        return lambda a, b: fn(b, a)
    on_arrays = fn.on_arrays
    return Fn(lambda a, b: fn(b, a), fn.text, fn.loc,
              on_arrays=None if on_arrays is None else (lambda a, b: on_arrays(b, a)))


def composed(outer: Callable, inner: Callable, empty=None) -> Callable:
    """`outer(inner(*args))`, and `empty` where `inner` gives none (None): a map of none is none,
    or 0 when numerical (pass empty=0), and `outer` is never called on None."""

    def call(*args):
        middle = inner(*args)
        return empty if middle is None else outer(middle)

    return call


def identity(value: Value) -> Value:
    """The value itself (the function of a map that only copies)."""
    return value


COMPARE_FUNCTIONS = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
                     ">": operator.gt, ">=": operator.ge, "true": lambda key, query: True, "false": lambda key, query: False}
COMPARISONS = tuple(COMPARE_FUNCTIONS)


def compare(op: str, key: Value, query: Value) -> bool:
    """A comparison predicate, read as `key OP query` (docs/language.md, `select`)."""
    if op not in COMPARE_FUNCTIONS:
        raise ValueError(f"unknown comparison {op!r}")
    return COMPARE_FUNCTIONS[op](key, query)


def value_order(value) -> tuple:
    """A sort key for any mix of values, the same in every run (a set of strings iterates in an
    order that changes with Python's hash seed): numbers and booleans by value, then strings, then
    tuples item by item."""
    if isinstance(value, (bool, int, float)):
        return (0, value, ())
    if isinstance(value, str):
        return (1, 0, value)
    if isinstance(value, tuple):
        return (2, 0, tuple(map(value_order, value)))
    return (3, 0, repr(value))


EXACT_INTEGER = 2**53
"""The largest integer magnitude computed on arrays (float64 holds every integer up to it, and
int64 holds the sum of two)."""


class Declined(Exception):
    """An array computation cannot promise the scalar one's values here (frontend/lambda_arrays.py)."""


ARRAY_COMPARISONS = {"==": np.equal, "!=": np.not_equal, "<": np.less, "<=": np.less_equal,
                     ">": np.greater, ">=": np.greater_equal}


def as_array(values) -> np.ndarray | None:
    """Numbers and booleans as one array (ints and bools as int64, any float making it float64,
    all bools: bool), or None when one is no number or is beyond EXACT_INTEGER."""
    values = list(values)
    if not all(isinstance(v, (int, float)) for v in values):
        return None
    if all(isinstance(v, bool) for v in values):
        return np.array(values, dtype=bool)
    if any(abs(v) > EXACT_INTEGER for v in values):
        return None
    if all(isinstance(v, int) for v in values):
        return np.array(values, dtype=np.int64)
    return np.array(values, dtype=np.float64)


def predicate_table(predicate: str | Fn, keys, queries) -> np.ndarray | None:
    """[len(keys), len(queries)] booleans: whether predicate(key, query) holds, for every pair of
    values, computed on arrays; None when that cannot promise the scalar answer (a value that is
    no number, a lambda with no array form, a division by zero anywhere, ...): ask pair by pair."""
    k, q = as_array(keys), as_array(queries)
    if k is None or q is None:
        return None
    k, q = np.broadcast_arrays(k[:, None], q[None, :])
    if isinstance(predicate, str):
        if predicate in ("true", "false"):
            return np.full(k.shape, predicate == "true")
        return ARRAY_COMPARISONS[predicate](k, q)
    if predicate.on_arrays is None:
        return None
    with np.errstate(all="ignore"):
        try:
            held = predicate.on_arrays(k, q)
        except Declined:
            return None
    if held.dtype.kind not in "biu":  # a predicate returning numbers: ask pair by pair
        return None
    return np.broadcast_to(held.astype(bool), k.shape)


def unpacked(value: Any) -> Any:
    """The items of a pack, else `value` itself. A pack is the tuple an n-ary sequence_map carries
    between its steps (frontend/elementwise.py): the items' `repr`, which keeps packs of
    equal-comparing items apart (1 and 1.0, "1" and 1), then the items. Reports show a pack as its
    items, `(0, a)`, not as `("(0, 'a')", 0, 'a')`."""
    if isinstance(value, tuple) and len(value) > 2 and isinstance(value[0], str) and value[0] == repr(value[1:]):
        return value[1:]
    return value
