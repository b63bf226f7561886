"""Calls of the built-in functions (`map`, `sequence_map`, `select`, `aggregate`,
`selector_width`, `numerical`, `categorical`): their arguments counted and checked, their
lambdas made, their IR nodes built. Also what every call is checked for first: that its name
names a function here (a parameter or a binding of the same name hides it).
"""

from __future__ import annotations

from typing import Any, NoReturn
from collections.abc import Iterable

from . import syntax_tree, lambda_eval
from .. import ir
from ..errors import Loc, RaspNameError, RaspTypeError
from ..suggest import did_you_mean
from .elementwise import elementwise
from .scope import BUILTIN_FUNCTIONS, BUILTIN_SOPS, SCALAR, Lowering, Scope, Value, check_distinct, kind

ORDINALS = ("first", "second", "third", "fourth", "fifth")

SOP_OR_CONSTANT = (ir.SOp,) + SCALAR
"""Where an s-op is expected, a scalar constant is taken too (as the constant s-op)."""

KIND_NAMES = {
    ir.Selector: "a selector",
    syntax_tree.Lambda: "a lambda",
    SOP_OR_CONSTANT: "an s-op",
    (syntax_tree.CompareOp, syntax_tree.Lambda, bool): "a comparison (== != < <= > >=), true, false or a lambda",
    (ir.SOp, ir.Selector, tuple) + SCALAR: "an s-op, a selector or a constant",
}


def check_callable(call: syntax_tree.Call, scope: Scope) -> None:
    """A call of a name that a def's parameter or a binding hides: a located RaspTypeError."""
    binding = scope.find(call.func)
    if binding is not None:
        raise RaspTypeError(
            f"cannot call '{call.func}': here it is the parameter or name bound at line {binding.loc.line}, "
            f"column {binding.loc.col}, not a function",
            call.loc,
        )


def not_a_function(call: syntax_tree.Call, defs: Iterable[str] = ()) -> NoReturn:
    """The error of a call of something that is neither a built-in nor one of the `defs`."""
    if call.func in lambda_eval.FUNCTIONS:
        raise RaspTypeError(f"'{call.func}' can only be called inside a lambda", call.loc)
    if call.func in BUILTIN_SOPS:
        raise RaspTypeError(f"'{call.func}' is not a function", call.loc)
    suggestion = did_you_mean(call.func, [*BUILTIN_FUNCTIONS, *defs])
    raise RaspNameError(f"unknown function '{call.func}'{suggestion}", call.loc)


def arguments(
    call: syntax_tree.Call, fewest: int, most: int | None, keywords: tuple[str, ...] = ()
) -> tuple[list, dict[str, syntax_tree.Keyword]]:
    """The positional and the keyword arguments of a call, their counts and names checked."""
    positional = [a for a in call.args if not isinstance(a, syntax_tree.Keyword)]
    named: dict[str, syntax_tree.Keyword] = {}
    for keyword in (a for a in call.args if isinstance(a, syntax_tree.Keyword)):
        if keyword.name not in keywords:
            allowed = f"; it takes only {', '.join(k + '=' for k in keywords)}" if keywords else ""
            raise RaspTypeError(f"{call.func} has no keyword argument '{keyword.name}'{allowed}", keyword.loc)
        if keyword.name in named:
            raise RaspTypeError(f"keyword argument '{keyword.name}' given twice", keyword.loc)
        named[keyword.name] = keyword
    if len(positional) < fewest or (most is not None and len(positional) > most):
        where = positional[most].loc if most is not None and len(positional) > most else call.loc
        wanted = f"{fewest}" if fewest == most else f"{fewest} or more"
        plural = "s" if wanted != "1" else ""
        raise RaspTypeError(f"{call.func} takes {wanted} argument{plural}, got {len(positional)}", where)
    return positional, named


def lambda_arity(func: str, index: int, count: int) -> int | None:
    """How many parameters the lambda at argument `index` of a built-in call with `count`
    positional arguments takes; None where the built-in takes no lambda."""
    if func in ("map", "sequence_map") and index == 0:
        return count - 1  # one per s-op after it
    if func == "select" and index == 2:
        return 2  # key, query
    return None


def make_lambda(lam: syntax_tree.Lambda, call: syntax_tree.Call, arity: int, scope: Scope, lowering: Lowering) -> ir.Fn:
    """The function of a lambda given to `call`, checked: its parameter count, its names."""
    if len(lam.params) != arity:
        plural = "s" if arity != 1 else ""
        per_sop = " (one per argument after it)" if call.func == "sequence_map" else ""
        raise RaspTypeError(
            f"{call.func} expects a lambda of {arity} parameter{plural}{per_sop}, got {len(lam.params)}", lam.loc
        )
    check_distinct(lam.params)

    def resolve(name: syntax_tree.Name) -> ir.Value | tuple[Any, ...] | None:
        value = lowering.lookup(name, scope)
        if isinstance(value, (ir.SOp, ir.Selector)):
            raise RaspTypeError(
                f"'{name.name}' is {kind(value)}; a lambda can use only its parameters and constants", name.loc
            )
        return value

    def bound(name: str):
        binding = scope.find(name)
        return binding.loc if binding is not None else None

    return lambda_eval.make_fn(lam, resolve, bound)


class BuiltinCall:
    """One call of a built-in being lowered: its arguments, lowered on demand and checked."""

    def __init__(self, call: syntax_tree.Call, scope: Scope, lowering: Lowering):
        fewest, most, keywords = BUILTIN_FUNCTIONS[call.func]
        self.call, self.scope, self.lowering = call, scope, lowering
        self.args, self.named = arguments(call, fewest, most, keywords)

    def expect(self, index: int, wanted: type | tuple):
        """Argument `index`, lowered; a RaspTypeError unless it is of the `wanted` kind."""
        arg = self.args[index]
        unlowered = isinstance(arg, (syntax_tree.Lambda, syntax_tree.CompareOp))
        value = arg if unlowered else self.lowering.expr(arg, self.scope)
        if isinstance(value, wanted):
            return value
        ordinal = ORDINALS[index] if index < len(ORDINALS) else f"{index + 1}th"
        raise RaspTypeError(
            f"{self.call.func} expects {KIND_NAMES[wanted]} as its {ordinal} argument, got {kind(value)}", arg.loc
        )

    def sop(self, index: int, encoding: str = ir.CATEGORICAL) -> ir.SOp:
        """Argument `index` as an s-op (a scalar given there is the constant s-op)."""
        return self._as_sop(self.expect(index, SOP_OR_CONSTANT), self.args[index].loc, encoding)

    def _as_sop(self, value: Value, loc: Loc | None, encoding: str) -> ir.SOp:
        """lowering.as_sop of an s-op or a scalar (what SOP_OR_CONSTANT lets through): an s-op."""
        sop = self.lowering.as_sop(value, loc, encoding)
        assert isinstance(sop, ir.SOp)  # as_sop makes a scalar the constant s-op
        return sop

    def function(self, index: int) -> ir.Fn:
        """The lambda at argument `index`, made."""
        arity = lambda_arity(self.call.func, index, len(self.args))
        assert arity is not None  # function() is asked only where the built-in takes a lambda
        return make_lambda(self.expect(index, syntax_tree.Lambda), self.call, arity, self.scope, self.lowering)

    def to_ir(self):
        """The IR node (or, for an element-wise call on constants only, the constant) of the call."""
        func, loc = self.call.func, self.call.loc
        if func in ("map", "sequence_map"):
            fn = self.function(0)
            return elementwise(fn, [self.expect(i, SOP_OR_CONSTANT) for i in range(1, len(self.args))], loc)
        if func == "select":
            return ir.Select(self.sop(0), self.sop(1), self.predicate(), loc=loc)
        if func == "aggregate":
            return ir.Aggregate(self.expect(0, ir.Selector), self.sop(1), self.default(), loc=loc)
        if func == "selector_width":
            return ir.SelectorWidth(self.expect(0, ir.Selector), loc=loc)
        return self.encoded()

    def predicate(self) -> str | ir.Fn:
        predicate = self.expect(2, (syntax_tree.CompareOp, syntax_tree.Lambda, bool))
        if isinstance(predicate, syntax_tree.Lambda):
            return self.function(2)
        if isinstance(predicate, syntax_tree.CompareOp):
            return predicate.op
        return "true" if predicate else "false"

    def default(self) -> ir.Value | None:
        if "default" not in self.named:
            return None
        keyword = self.named["default"]
        value = self.lowering.expr(keyword.value, self.scope)
        if not isinstance(value, SCALAR):
            scalar_only = "; a default is a string, number or boolean" if isinstance(value, tuple) else ""
            raise RaspTypeError(f"default= expects a constant, got {kind(value)}{scalar_only}", keyword.loc)
        return value

    def encoded(self) -> ir.SOp:
        """`numerical(E)` / `categorical(E)`: a copy of E's s-op with that encoding. A constant
        given there becomes a constant s-op of that encoding, and so does a constant an aggregate
        reads (`numerical(aggregate(sel, 1))` is the mean of a numerical 1)."""
        encoding = ir.NUMERICAL if self.call.func == "numerical" else ir.CATEGORICAL
        value = self.expect(0, SOP_OR_CONSTANT)
        if not isinstance(value, ir.SOp):
            return self._as_sop(value, self.args[0].loc, encoding)
        node = ir.numerical(value) if encoding == ir.NUMERICAL else ir.categorical(value)
        if isinstance(node, ir.Aggregate):
            read = self.lowering.constant_of(node.sop)
            if read is not None:  # the constant an aggregate reads takes the aggregate's encoding
                node.sop = self._as_sop(read, node.sop.loc, encoding)
        node.label, node.loc = None, value.loc or self.call.loc  # a new node: named when bound, like any other
        return node
