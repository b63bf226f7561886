"""The evaluator of lambda bodies: scalar expressions over a lambda's parameters (docs/language.md, BODY).

A body may hold literals, tuple literals, the lambda's parameters, names of constants,
`+ - * / // %`, unary `-`, comparisons, `in`, `not in`, `and or not`, `A if C else B`, indexing
(`"0123"[d]`) and calls of `min max abs round int float len str`. Values follow Python's
semantics (str, int, float, bool, tuple), except that `str` spells booleans as the language
does (`true`). The AST is walked directly: no `eval`, no attribute access (the grammar has no
`.`), no other builtins.

Results are kept small, so that a lambda cannot exhaust memory or time: string and tuple
repetition and `%`-formatting are refused, strings and tuples are capped at MAX_STR items,
integers at MAX_INT in magnitude, and floats must be finite. A lambda's own result must be a
string, number or boolean (tuples live inside a body only). A failure raises `LambdaFailure` (or
Python's own ZeroDivisionError, TypeError, ...) with a short message; `lambda_calls.call_checked` turns
it into a located error naming the lambda and the values.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

from . import syntax_tree
from .lambda_arrays import array_closure
from .. import ir
from ..element_fn import as_array
from ..errors import Loc, RaspTypeError

MAX_INT = 10**18
"""The largest integer magnitude a lambda (or a literal) may produce."""

MAX_STR = 10_000
"""The longest string a lambda may produce."""


def _round(value, ndigits=None):
    """Python's round, with ndigits below -400 taken as -400: the same answer for every value a
    lambda holds (integers up to 10**18, floats below 10**309), without computing 10**(10**9)
    for `round(1, -1000000000)`, which took minutes."""
    if ndigits is None:
        return round(value)
    if isinstance(ndigits, int) and ndigits < -400:
        ndigits = -400
    return round(value, ndigits)


def text(value) -> str:
    """`str(value)` as the language writes values: booleans `true` / `false`, a string as it
    is, a number as Python prints it, a tuple as a tuple literal (`("a", 1)`)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return "(" + ", ".join(literal(item) for item in value) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, (str, int, float)):
        return str(value)
    raise TypeError(f"str takes a string, number, boolean or tuple, not {type(value).__name__}")


def literal(value) -> str:
    """A value as a program would write it: `"a"` (or `'"'`), `3`, `0.5`, `true`, `("a", 1)`."""
    if isinstance(value, str):
        return f"'{value}'" if '"' in value else f'"{value}"'
    return text(value)


def _length(value) -> int:
    """`len` of a string or a tuple (Python's, with the language's words when it fails)."""
    if not isinstance(value, (str, tuple)):
        raise LambdaFailure(f"len takes a string or a tuple, not {literal(value)}")
    return len(value)


def index(container, position) -> ir.Value:
    """`container[position]`: one character of a string or one item of a tuple, counted from 0
    (from the end when negative, as in Python)."""
    if not isinstance(container, (str, tuple)):
        raise LambdaFailure(f"only a string or a tuple can be indexed, not {literal(container)}")
    if isinstance(position, bool) or not isinstance(position, int):
        raise LambdaFailure(f"an index must be a whole number, not {literal(position)} (int(...) makes one)")
    if not -len(container) <= position < len(container):
        raise LambdaFailure(f"index {position} is out of range for {literal(container)} (length {len(container)})")
    return container[position]


def contains(item, container) -> bool:
    """`item in container`: an item of a tuple (by ==), or a substring of a string."""
    if isinstance(container, tuple):
        return item in container
    if isinstance(container, str) and isinstance(item, str):
        return item in container
    if isinstance(container, str):
        raise LambdaFailure(f"'in' a string needs a string on its left, not {literal(item)}")
    raise LambdaFailure(f"'in' needs a string or a tuple on its right, not {literal(container)}")


FUNCTIONS: dict[str, tuple[Callable, int, int | None]] = {
    # name: (function, fewest arguments, most arguments or None for any number)
    "min": (min, 2, None),
    "max": (max, 2, None),
    "abs": (abs, 1, 1),
    "round": (_round, 1, 2),
    "int": (int, 1, 1),
    "float": (float, 1, 1),
    "len": (_length, 1, 1),
    "str": (text, 1, 1),
}

OPERATORS: dict[str, Callable] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "//": operator.floordiv,
    "%": operator.mod,
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


class LambdaFailure(Exception):
    """A lambda refused to compute a value (a result too large, a forbidden operation)."""


class FailedOn(Exception):
    """A lambda called through an adapter (the last step of an n-ary sequence_map, or a lambda
    with constant arguments folded in) failed: `values` are the arguments as the user's lambda
    received them, `cause` the failure. `lambda_calls.call_checked` reports these values."""

    def __init__(self, values: tuple, cause: Exception):
        super().__init__(str(cause))
        self.values = values
        self.cause = cause


def bounded(value: ir.Value) -> ir.Value:
    """`value`, if it is within the limits above; LambdaFailure otherwise."""
    if isinstance(value, str) and len(value) > MAX_STR:
        raise LambdaFailure(f"string result longer than {MAX_STR:,} characters")
    if isinstance(value, tuple) and len(value) > MAX_STR:
        raise LambdaFailure(f"tuple result longer than {MAX_STR:,} items")
    if isinstance(value, int) and abs(value) > MAX_INT:
        raise LambdaFailure("integer result larger than 10**18 in magnitude")
    if isinstance(value, float) and not math.isfinite(value):
        raise LambdaFailure(f"result {value} is not a finite number")
    return value


def scalar(value):
    """`value`, if it may be the value of an s-op (a string, number or boolean): a lambda or an
    operator on s-ops may use tuples inside, but its result at a position is never one."""
    if isinstance(value, tuple):
        raise LambdaFailure(f"the result is the tuple {literal(value)}; an s-op holds strings, numbers or booleans")
    return value


def unary(op: str, value: Any) -> ir.Value:
    """`-value` or `not value` (of any value: Python's own TypeError refuses `-"a"`)."""
    if op == "not":
        return not value
    return bounded(-value)


def binary(op: str, left: ir.Value | tuple[Any, ...], right: ir.Value | tuple[Any, ...]) -> ir.Value | tuple[Any, ...]:
    """`left op right` on two values (`and`/`or` as Python's, on already computed operands)."""
    if op == "and":
        return right if left else left
    if op == "or":
        return left if left else right
    if op == "in":
        return contains(left, right)
    if op == "not in":
        return not contains(left, right)
    if op == "*" and (isinstance(left, str) or isinstance(right, str)):
        raise LambdaFailure("string repetition is not allowed")
    if op == "*" and (isinstance(left, tuple) or isinstance(right, tuple)):
        raise LambdaFailure("tuple repetition is not allowed")
    if op == "%" and isinstance(left, str):
        raise LambdaFailure("string formatting is not allowed")
    return bounded(OPERATORS[op](left, right))


def evaluate(expr: syntax_tree.Expr, env: dict[str, ir.Value]) -> ir.Value | tuple[Any, ...]:
    """The value of a checked lambda body, its names taken from `env`."""
    return closure(expr)(env)


def closure(expr: syntax_tree.Argument) -> Callable[[dict], ir.Value | tuple[Any, ...]]:
    """The body turned once into nested Python closures, env -> value: the tree is dispatched
    on here, not at every call (value sets call a lambda on every combination of values)."""
    if isinstance(expr, syntax_tree.Literal):
        value = expr.value
        return lambda env: value
    if isinstance(expr, syntax_tree.Name):
        name = expr.name
        return lambda env: env[name]
    if isinstance(expr, syntax_tree.Unary):
        op, operand = expr.op, closure(expr.operand)
        return lambda env: unary(op, operand(env))
    if isinstance(expr, syntax_tree.Binary):
        op, left, right = expr.op, closure(expr.left), closure(expr.right)
        if op == "and":  # short-circuit, as in Python: `x != 0 and 1 / x > 2` is safe
            return lambda env: (lambda a: right(env) if a else a)(left(env))
        if op == "or":
            return lambda env: (lambda a: a if a else right(env))(left(env))
        return lambda env: binary(op, left(env), right(env))
    if isinstance(expr, syntax_tree.Ternary):
        cond, then, orelse = closure(expr.cond), closure(expr.then), closure(expr.orelse)
        return lambda env: then(env) if cond(env) else orelse(env)
    if isinstance(expr, syntax_tree.Tuple):
        items = [closure(item) for item in expr.items]
        return lambda env: tuple(item(env) for item in items)
    if isinstance(expr, syntax_tree.Index):
        container, position = closure(expr.value), closure(expr.index)
        return lambda env: index(container(env), position(env))
    if isinstance(expr, syntax_tree.Call):
        function, args = FUNCTIONS[expr.func][0], [closure(arg) for arg in expr.args]
        return lambda env: bounded(function(*(arg(env) for arg in args)))
    raise TypeError(f"not a lambda body expression: {type(expr).__name__}")


def make_fn(
    lam: syntax_tree.Lambda,
    resolve: Callable[[syntax_tree.Name], ir.Value | tuple[Any, ...] | None],
    bound: Callable[[str], Loc | None] = lambda name: None,
) -> ir.Fn:
    """Check `lam`'s body and build its `ir.Fn`.

    Names other than the parameters are looked up once, now, with `resolve` (which returns a
    constant or raises a located RaspError): the Fn closes over their values. `bound(name)` is
    where `name` is bound in the scope around the lambda (None if it is not): a parameter or a
    bound name hides the function of the same name, so calling it is an error.
    """
    params = [p.name for p in lam.params]
    constants: dict[str, ir.Value | tuple[Any, ...] | None] = {}  # None: in a def's check (defs.check_def)
    for node in syntax_tree.walk(lam.body):
        if isinstance(node, syntax_tree.Name) and node.name not in params:
            constants[node.name] = resolve(node)
        elif isinstance(node, syntax_tree.Call):
            _check_not_shadowed(node, params, bound(node.func))
            _check_call(node)
        elif isinstance(node, (syntax_tree.Lambda, syntax_tree.Keyword, syntax_tree.CompareOp)):
            raise RaspTypeError(f"{_FORBIDDEN[type(node)]} is not allowed inside a lambda body", node.loc)

    body = closure(lam.body)

    def call(*args: ir.Value) -> ir.Value:
        return scalar(body({**constants, **dict(zip(params, args))}))

    return ir.Fn(call, lam.text, lam.loc, on_arrays=_on_arrays(lam.body, params, constants))


def _on_arrays(body: syntax_tree.Expr, params: list[str], constants: dict) -> Callable | None:
    """The body on arrays of the parameters' values (lambda_arrays.py), when it and its
    constants have an array form; else None."""
    arrays = array_closure(body)
    constant_arrays = {name: as_array([value]) for name, value in constants.items()}
    if arrays is None or any(a is None for a in constant_arrays.values()):
        return None
    constant_arrays = {name: a.reshape(()) for name, a in constant_arrays.items() if a is not None}
    return lambda *values: arrays({**constant_arrays, **dict(zip(params, values))})


def _check_not_shadowed(call: syntax_tree.Call, params: list[str], bound_at: Loc | None) -> None:
    """A call of a name that a parameter or a binding hides: a located RaspTypeError."""
    if call.func in params:
        raise RaspTypeError(f"cannot call '{call.func}': in this lambda it is a parameter, not a function", call.loc)
    if bound_at is not None:
        raise RaspTypeError(
            f"cannot call '{call.func}': here it is the parameter or name bound at line {bound_at.line}, "
            f"column {bound_at.col}, not a function",
            call.loc,
        )


_FORBIDDEN = {
    syntax_tree.Lambda: "a lambda",
    syntax_tree.Keyword: "a keyword argument",
    syntax_tree.CompareOp: "a bare comparison operator",
}


def _check_call(call: syntax_tree.Call) -> None:
    if call.func not in FUNCTIONS:
        allowed = ", ".join(FUNCTIONS)
        raise RaspTypeError(f"a lambda can call only {allowed}; '{call.func}' is not one of them", call.loc)
    _, fewest, most = FUNCTIONS[call.func]
    count = len(call.args)
    if count < fewest or (most is not None and count > most):
        wanted = f"{fewest}" if fewest == most else f"{fewest} or more" if most is None else f"{fewest} to {most}"
        plural = "" if wanted == "1" else "s"
        raise RaspTypeError(f"{call.func} takes {wanted} argument{plural}, got {count}", call.loc)
