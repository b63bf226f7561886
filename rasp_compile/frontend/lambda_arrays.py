"""A lambda body evaluated on whole NumPy arrays of numbers at once, where that gives exactly what
the scalar evaluator (lambda_eval) gives element by element; else it declines.

A select on the indices at max_len 1,024 asks its predicate about a million (key, query) pairs,
and value-set inference and the lowering both need every answer: one array operation per node
of the body instead of a million walks of it. The arrays path covers numbers and booleans under
`+ - * / // %`, unary `-` and `not`, comparisons, `and or`, `A if C else B`, `abs`, `min` and
`max`; anything else (strings, tuples, indexing, `in`, the other functions) has no array form,
and the caller asks the scalar evaluator instead.

It declines (raises `Declined`) wherever NumPy could part from Python: an operand that is no
int, float or bool, an integer beyond 2^53 in magnitude (float64 no longer holds it, and
int64 may overflow where Python does not), a division or remainder by zero, a result that is not
finite. Declining is always safe: the scalar evaluator then computes every value, failures
included, as before. Python's `and`/`or` return an operand: `np.where` picks the same one,
computed for every element (so a division the short-circuit guards may decline the whole array).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from . import ast
from ..element_fn import EXACT_INTEGER, Declined


def array_closure(expr: ast.Expr) -> Callable[[dict], np.ndarray] | None:
    """The body as a function of {name: array} -> array, or None when some node has no array form."""
    if isinstance(expr, ast.Literal):
        value = expr.value
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return (lambda env: np.asarray(value)) if isinstance(value, bool) else None
        return lambda env: _checked(np.asarray(value))
    if isinstance(expr, ast.Name):
        name = expr.name
        return lambda env: env[name]
    if isinstance(expr, ast.Unary):
        operand = array_closure(expr.operand)
        if operand is None:
            return None
        if expr.op == "not":
            return lambda env: np.logical_not(operand(env))
        return lambda env: _checked(np.negative(_numbers(operand(env))))
    if isinstance(expr, ast.Binary):
        return _binary(expr)
    if isinstance(expr, ast.Ternary):
        parts = [array_closure(e) for e in (expr.cond, expr.then, expr.orelse)]
        if None in parts:
            return None
        cond, then, orelse = parts
        return lambda env: np.where(_truth(cond(env)), then(env), orelse(env))
    if isinstance(expr, ast.Call) and expr.func in ARRAY_FUNCTIONS:
        args = [array_closure(a) for a in expr.args]
        if None in args:
            return None
        function = ARRAY_FUNCTIONS[expr.func]
        return lambda env: _checked(function(*(a(env) for a in args)))
    return None


def _binary(expr: ast.Binary):
    left, right = array_closure(expr.left), array_closure(expr.right)
    if left is None or right is None or (expr.op not in ARRAY_OPERATORS and expr.op not in ("and", "or")):
        return None
    if expr.op == "and":
        return lambda env: (lambda a: np.where(_truth(a), right(env), a))(left(env))
    if expr.op == "or":
        return lambda env: (lambda a: np.where(_truth(a), a, right(env)))(left(env))
    op = expr.op

    def apply(env):
        a, b = left(env), right(env)
        if op in ARITHMETIC:  # True + True is 2 in Python, True in NumPy
            a, b = _numbers(a), _numbers(b)
        if op in ("/", "//", "%") and np.any(b == 0):
            raise Declined("division by zero")
        if op == "*" and np.any(np.abs(a.astype(float)) * np.abs(b.astype(float)) > EXACT_INTEGER):
            raise Declined("a product beyond 2^53")
        return _checked(ARRAY_OPERATORS[op](a, b))

    return apply


def _numbers(values: np.ndarray) -> np.ndarray:
    """Booleans as the integers 0 and 1, as Python computes with them."""
    return values.astype(np.int64) if values.dtype.kind == "b" else values


def _truth(values: np.ndarray) -> np.ndarray:
    """Python's truth of each value (a NaN never gets here: _checked declines it)."""
    return values.astype(bool)


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
    "min": lambda *args: _fold(np.minimum, args),
    "max": lambda *args: _fold(np.maximum, args),
}


def _fold(function, args):
    result = args[0]
    for arg in args[1:]:
        result = function(result, arg)
    return result
