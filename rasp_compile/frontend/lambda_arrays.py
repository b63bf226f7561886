"""A lambda body evaluated on whole NumPy arrays of numbers at once, where that gives exactly what
the scalar evaluator (lambda_eval) gives element by element; else it declines.

A select on the indices at max_len 1,024 asks its predicate about a million (key, query) pairs,
and a map of a running mean takes its lambda to some 319,000 means; value-set inference and the
lowering need every answer: one array operation per node of the body instead of a walk of it per
value (`element_fn.predicate_table` for selects, `results_on_arrays` for maps and sequence_maps,
which keeps each result's Python type). The arrays path covers numbers and booleans under
`+ - * / // %`, unary `-` and `not`, comparisons, `and or`, `A if C else B`, `abs`, `min` and
`max`, and string literals that a choice picks (`"T" if x == 0 else "F"`); anything else
(strings otherwise, tuples, indexing, `in`, the other functions) has no array form, and the
caller asks the scalar evaluator instead.

It declines (raises `Declined`) wherever NumPy could part from Python: an operand that is no
int, float or bool, an integer beyond 2^53 in magnitude (float64 no longer holds it, and
int64 may overflow where Python does not), a division or remainder by zero, a result that is not
finite. Declining is always safe: the scalar evaluator then computes every value, failures
included, as before. Python's `and`/`or` return an operand: `np.where` picks the same one,
computed for every element (so a division the short-circuit guards may decline the whole array).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from . import syntax_tree
from ..element_fn import EXACT_INTEGER, Declined, Fn

ARRAY_TYPES = {bool: np.bool_, int: np.int64, float: np.float64}
"""The Python types of values computed on arrays, and the dtype that holds each exactly (up to
EXACT_INTEGER in magnitude): a result's dtype is the Python type the lambda gives."""

FEWEST_ROWS = 64
"""Fewer argument tuples than this are called one by one: arrays would not pay for themselves."""


def results_on_arrays(fn: Fn, rows: list[tuple]) -> list | None:
    """`fn` on each argument tuple of `rows`, computed on arrays: the results in the order of
    `rows`, or None unless every row could be; then the rows it did compute are held in fn's
    memo (`Fn.remember_all`), so that the caller's calls on them are look-ups. (A memo of every
    row would cost more than computing them: half a second for a running mean's 638,000 values
    at max_len 1,024, and its keys are not the float objects later callers hold.)

    Rows are taken by groups of one Python type per argument (bool, int or float): within a
    group every node of the body computes values of one type, which its dtype tells (a node
    whose elements would differ in type declines, `_where`), so each result converts back to the
    very value Python computes, type included. A group the arrays cannot promise (a value of
    another type, a division by zero, ...: see the module docstring) is left to the scalar
    calls, which compute it, failures included, as they always did."""
    if fn.on_arrays is None or len(rows) < FEWEST_ROWS:
        return None
    results: list = [None] * len(rows)
    done: list[tuple[list[tuple], list]] = []  # (rows, their results) of each group computed
    for types, (where, members) in _by_types(rows).items():
        computed = _group_results(fn, types, members) if all(t in ARRAY_TYPES for t in types) else None
        if computed is None:
            continue
        done.append((members, computed))
        if where is None:
            results = computed
        else:
            for i, result in zip(where, computed):
                results[i] = result
    if sum(len(members) for members, _ in done) == len(rows):
        return results
    for members, computed in done:
        fn.remember_all(members, computed)
    return None


def results_at(fn: Callable[..., Any], values: Sequence, *fixed: Any) -> list:
    """fn(value, *fixed) at each of `values`, in order: on arrays where `fn` is an `Fn` and they
    give every result (results_on_arrays), else call by call (memo look-ups for the rows the
    arrays did compute)."""
    computed = results_on_arrays(fn, [(value, *fixed) for value in values]) if isinstance(fn, Fn) else None
    return computed if computed is not None else [fn(value, *fixed) for value in values]


def _by_types(rows: list[tuple]) -> Mapping[tuple, tuple[list | None, list[tuple]]]:
    """`rows` grouped by the types of their arguments: types -> (the rows' places in `rows`,
    None for all of them in order; the rows)."""
    width = len(rows[0])
    if all(len(set(map(type, (row[i] for row in rows)))) == 1 for i in range(width)):
        return {tuple(map(type, rows[0])): (None, rows)}  # the common case, value sets of one type
    groups: dict[tuple, tuple[list, list[tuple]]] = {}
    for i, row in enumerate(rows):
        where, members = groups.setdefault(tuple(map(type, row)), ([], []))
        where.append(i)
        members.append(row)
    return groups


def _group_results(fn: Fn, types: tuple, rows: list[tuple]) -> list | None:
    """fn on each of `rows` (argument `types` alike in every row) as Python values, or None."""
    columns: list[np.ndarray] = [np.array([row[i] for row in rows], dtype=ARRAY_TYPES[kind]) for i, kind in enumerate(types)]
    computed = _computed(fn, columns, (len(rows),))
    return None if computed is None else computed.tolist()


def table_on_arrays(fn: Fn, firsts: Sequence, seconds: Sequence) -> list[list] | None:
    """fn(x, y) for x in `firsts` (rows) and y in `seconds` (columns), computed on arrays: a
    sequence_map's whole table (a running mean's hundreds of thousands of values against a few),
    or None when each of `firsts` and `seconds` is not of one Python type (bool, int or float)
    or the arrays cannot promise every result (the module docstring): then ask value by value.
    Each result is the very value, type included, that `fn(x, y)` gives."""
    table = table_array(fn, firsts, seconds)
    return None if table is None else table.tolist()


def table_array(fn: Fn, firsts: Sequence, seconds: Sequence) -> np.ndarray | None:
    """table_on_arrays's table as the array [len(firsts), len(seconds)] it is computed as (its
    dtype the results' Python type: bool, int64, float64, or object for the strings a choice
    picks), or None where table_on_arrays gives None."""
    kinds = [set(map(type, values)) for values in (firsts, seconds)]
    if fn.on_arrays is None or len(firsts) * len(seconds) < FEWEST_ROWS or not all(
            len(k) == 1 and next(iter(k)) in ARRAY_TYPES for k in kinds):
        return None
    x: np.ndarray = np.array(firsts, dtype=ARRAY_TYPES[next(iter(kinds[0]))])
    y: np.ndarray = np.array(seconds, dtype=ARRAY_TYPES[next(iter(kinds[1]))])
    return _computed(fn, [x[:, None], y[None, :]], (len(firsts), len(seconds)))


def _computed(fn: Fn, columns: list[np.ndarray], shape: tuple[int, ...]) -> np.ndarray | None:
    """fn on the arguments' arrays `columns`, broadcast to `shape` (its `tolist()` the Python
    values), or None where the arrays cannot promise them."""
    on_arrays = fn.on_arrays
    assert on_arrays is not None  # asked only then
    with np.errstate(all="ignore"):
        try:
            held = on_arrays(*map(_checked, columns))
        except Declined:
            return None
    if held.dtype.kind not in "bifO":  # O: the string literals a choice picked, themselves
        return None
    if held.dtype.kind == "f" and not np.isfinite(held).all():  # calls refuse it (element_fn.NotFinite)
        return None
    return np.broadcast_to(held, shape)  # a lambda of no parameter is one value


def array_closure(expr: syntax_tree.Argument) -> Callable[[dict], np.ndarray] | None:
    """The body as a function of {name: array} -> array, or None when some node has no array form."""
    if isinstance(expr, syntax_tree.Literal):
        value = expr.value
        if isinstance(value, str):  # only ever chosen (`"T" if x else "F"`): every other use declines
            return lambda env: np.asarray(value, dtype=object)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return (lambda env: np.asarray(value)) if isinstance(value, bool) else None
        return lambda env: _checked(np.asarray(value))
    if isinstance(expr, syntax_tree.Name):
        name = expr.name
        return lambda env: env[name]
    if isinstance(expr, syntax_tree.Unary):
        operand = array_closure(expr.operand)
        if operand is None:
            return None
        if expr.op == "not":
            return lambda env: np.logical_not(_truth(operand(env)))
        return lambda env: _checked(np.negative(_numbers(operand(env))))
    if isinstance(expr, syntax_tree.Binary):
        return _binary(expr)
    if isinstance(expr, syntax_tree.Ternary):
        cond, then, orelse = [array_closure(e) for e in (expr.cond, expr.then, expr.orelse)]
        if cond is None or then is None or orelse is None:
            return None
        return lambda env: _where(_truth(cond(env)), then(env), orelse(env))
    if isinstance(expr, syntax_tree.Call) and expr.func in ARRAY_FUNCTIONS:
        closures = [array_closure(a) for a in expr.args]
        args = [a for a in closures if a is not None]
        if len(args) < len(closures):
            return None
        function = ARRAY_FUNCTIONS[expr.func]
        return lambda env: _checked(function(*(a(env) for a in args)))
    return None


def _binary(expr: syntax_tree.Binary):
    left, right = array_closure(expr.left), array_closure(expr.right)
    if left is None or right is None or (expr.op not in ARRAY_OPERATORS and expr.op not in ("and", "or")):
        return None
    if expr.op == "and":
        return lambda env: (lambda a: _where(_truth(a), right(env), a))(left(env))
    if expr.op == "or":
        return lambda env: (lambda a: _where(_truth(a), a, right(env)))(left(env))
    op = expr.op

    def apply(env):
        a, b = _numeric(left(env)), _numeric(right(env))
        if op in ARITHMETIC:  # True + True is 2 in Python, True in NumPy
            a, b = _numbers(a), _numbers(b)
        if op in ("/", "//", "%") and np.any(b == 0):
            raise Declined("division by zero")
        if op == "*" and np.any(np.abs(a.astype(float)) * np.abs(b.astype(float)) > EXACT_INTEGER):
            raise Declined("a product beyond 2^53")
        return _checked(ARRAY_OPERATORS[op](a, b))

    return apply


def _numeric(values: np.ndarray) -> np.ndarray:
    """`values`, if numbers or booleans: strings only pass through a choice (`_where`)."""
    if values.dtype.kind == "O":
        raise Declined("strings")
    return values


def _numbers(values: np.ndarray) -> np.ndarray:
    """Booleans as the integers 0 and 1, as Python computes with them."""
    return values.astype(np.int64) if _numeric(values).dtype.kind == "b" else values


def _truth(values: np.ndarray) -> np.ndarray:
    """Python's truth of each value (a NaN never gets here: _checked declines it)."""
    return _numeric(values).astype(bool)


def _where(condition: np.ndarray, chosen: np.ndarray, other: np.ndarray) -> np.ndarray:
    """`chosen` where `condition` holds, else `other`, when both are of one type: NumPy would
    make 1 and 0.5 both floats, where Python keeps the int 1 (so would `True and 2`)."""
    if chosen.dtype != other.dtype:
        raise Declined("results of different types")
    return np.where(condition, chosen, other)


def _checked(values: np.ndarray) -> np.ndarray:
    """`values`, if every one is an int, float or bool the scalar evaluator would also hold exactly."""
    if values.dtype.kind == "b":
        return values
    if values.dtype.kind not in "iuf":
        raise Declined(f"values of kind {values.dtype.kind}")
    if values.size and not np.all(np.abs(values.astype(float)) <= EXACT_INTEGER):
        raise Declined("a number beyond 2^53, or not finite")  # NaN fails the comparison too
    return values


ARRAY_OPERATORS = {
    "+": np.add, "-": np.subtract, "*": np.multiply, "/": np.true_divide, "//": np.floor_divide,
    "%": np.remainder, "==": np.equal, "!=": np.not_equal, "<": np.less, "<=": np.less_equal,
    ">": np.greater, ">=": np.greater_equal,
}

ARITHMETIC = ("+", "-", "*", "/", "//", "%")

ARRAY_FUNCTIONS = {
    "abs": lambda value: np.abs(_numbers(value)),
    "min": lambda *args: _fold(np.less, args),
    "max": lambda *args: _fold(np.greater, args),
}


def _fold(replaces, args):
    """Python's min (`replaces` <) or max (>): the first argument, replaced by each later one that
    is `replaces` than the one held (so min(0.0, -0.0) is 0.0 and min(0, 0.0) the int 0)."""
    result = _numeric(args[0])
    for arg in args[1:]:
        result = _where(replaces(_numeric(arg), result), arg, result)
    return result
