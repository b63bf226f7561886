"""Calling a program's lambdas on concrete values, and naming what failed in messages.

Both readers of a program's lambdas use this: the value-set inference (`infer`), which calls
each lambda on every combination of values before anything runs, and the reference interpreter
(`tools.interpret`), which calls it on the values of one input. It is the edge of the lambda
evaluator (`lambda_eval`), not part of either.
"""

from __future__ import annotations

import re

from .. import ir
from ..element_fn import FINITE_TEXT, NotFinite
from ..errors import RaspValueError
from ..safe_text import SHOWN_REASON, shortened
from .lambda_eval import FailedOn

KIND_NAMES = {"SequenceMap": "sequence_map", "SelectorWidth": "selector_width", "SelectAnd": "selector and",
              "SelectOr": "selector or", "SelectNot": "selector not"}


def describe(node: ir.Node) -> str:
    """`'prev'` for a named node, else what it is: `the map`, `the sequence_map`, ..."""
    if node.label:
        return f"'{node.label}'"
    kind = type(node).__name__
    return f"the {KIND_NAMES.get(kind, kind.lower())}"


def call_checked(fn: ir.Fn, args: tuple, node: ir.Node | None):
    """Call a lambda on concrete values; a failure becomes a RaspValueError at the lambda (or
    at `node`), naming the values the user's lambda received (`lambda_eval.FailedOn`). None is
    none, except from the function of a numerical s-op, which holds a number everywhere."""
    try:
        result = fn(*args)
    except Exception as failure:  # any failure of user code: the lambda evaluator's or Python's
        if isinstance(failure, FailedOn):
            args, failure = failure.values, failure.cause
        if isinstance(failure, NotFinite):
            raise RaspValueError(f"{describe_fn(fn)} returns {failure.value!r} on ({_shown(args)}); {FINITE_TEXT}",
                                 _loc(fn, node)) from None
        raise RaspValueError(f"{describe_fn(fn)} fails on ({_shown(args)}): {reason(failure)}", _loc(fn, node)) from None
    if result is None and isinstance(node, ir.SOp) and node.encoding == ir.NUMERICAL:
        raise RaspValueError(f"{describe_fn(fn)} returns None on ({_shown(args)}), but {describe(node)} is numerical, "
                             "which holds a number at every position: return a number there, or keep the s-op "
                             "categorical (where None is none)", _loc(fn, node))
    return result


def _shown(args: tuple) -> str:
    return ", ".join(shortened(repr(a)) for a in args)


def _loc(fn: ir.Fn, node: ir.Node | None):
    return fn.loc or (node.loc if node is not None else None)


def reason(failure: BaseException) -> str:
    """What a failure says, for a message: its text, or its kind where it has none (`assert`
    gives an AssertionError with no text, which left a bare `error:`)."""
    text = str(failure)
    if not text.strip() or isinstance(failure, KeyError):  # KeyError's text is the key alone
        text = f"{type(failure).__name__}{': ' + text if text.strip() else ''}"
    return shortened(text, SHOWN_REASON)


def describe_fn(fn: ir.Fn) -> str:
    """How a function reads in a message: a lambda as written (`lambda i: 1 / i`), an operator of
    the sugar (`operator x + 1`), a Python function of the embedded API by name (`function f`)."""
    if re.match(r"lambda\b", fn.text):
        return shortened(fn.text)
    if fn.text.isidentifier():
        return f"function {fn.text}"
    if fn.text.startswith("<"):  # "<lambda>", "<python function>": Python gives no better name
        return "a Python function"
    return f"operator {fn.text}"
