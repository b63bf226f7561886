"""Expressions -> IR: names, operators (constant folding and the map / sequence_map sugar),
`A if C else B`, tuples, indexing, and the dispatch of calls.

Operators on constants only are folded into a constant; with one s-op operand they become an
`ir.Map`, with two an `ir.SequenceMap`; `and`, `or` and `not` on selectors combine them. Tuples
and indexing outside a lambda work on constants only. Inside a lambda, a name is one of its
parameters or a constant in scope (a top-level constant or a def's constant parameter); the
lambda closes over the constant's value.
"""

from __future__ import annotations

from collections.abc import Callable

from . import syntax_tree, lambda_eval
from .. import ir
from ..errors import Loc, RaspNameError, RaspTypeError, RaspValueError
from ..suggest import did_you_mean
from .calls import BuiltinCall, check_callable, not_a_function
from .defs import expand
from .elementwise import constant_sop
from .lambda_calls import reason
from .infer import is_number
from .scope import BUILTIN_FUNCTIONS, BUILTIN_SOPS, SCALAR, Binding, Scope, Value, check_bindable, kind


class ExpressionLowering:
    """The state of lowering one module (its top-level scope, its defs, the constant s-ops made
    so far) and the lowering of its expressions: the `scope.Lowering` the other modules use."""

    def __init__(self, module: syntax_tree.Module):
        self.globals = Scope()
        self.defs: dict[str, syntax_tree.Def] = {}
        self.bound_later = {s.name: s.loc for s in module.statements if isinstance(s, syntax_tree.Assign)}
        self.expansions = 0
        self.constants: dict[ir.SOp, ir.Value] = {}  # constant s-op -> its scalar (nodes hash by identity)
        self.def_locals: set = set()  # the nodes labelled by a def's local name (name_local)
        self.local_labels: set[str] = set()  # the labels name_local gave out

    def expr(self, e: syntax_tree.Node, scope: Scope) -> Value:
        """Lower an expression to an s-op, a selector or a constant."""
        if isinstance(e, syntax_tree.Literal):
            return e.value
        if isinstance(e, syntax_tree.Name):
            value = self.lookup(e, scope)
            assert value is not None  # None is bound only in a def's check (defs.check_def), which lowers nothing
            return value
        if isinstance(e, syntax_tree.Unary):
            return self._unary(e, self.expr(e.operand, scope))
        if isinstance(e, syntax_tree.Binary):
            return self._binary(e, self.expr(e.left, scope), self.expr(e.right, scope))
        if isinstance(e, syntax_tree.Ternary):
            return self._ternary(e, scope)
        if isinstance(e, syntax_tree.Tuple):
            return tuple(self._constant(item, scope, "a tuple") for item in e.items)
        if isinstance(e, syntax_tree.Index):
            container, position = (self._constant(part, scope, "indexing") for part in (e.value, e.index))
            return _fold(e, "cannot index this constant", lambda: lambda_eval.index(container, position))
        if isinstance(e, syntax_tree.Call):
            return self._call(e, scope)
        raise TypeError(f"no lowering for {type(e).__name__}")  # the grammar lets nothing else through

    def _call(self, call: syntax_tree.Call, scope: Scope) -> Value:
        """A call of a built-in or a def, lowered (a def expanded)."""
        check_callable(call, scope)
        if call.func in BUILTIN_FUNCTIONS:
            return BuiltinCall(call, scope, self).to_ir()
        if call.func in self.defs:
            return expand(call, scope, self)
        not_a_function(call, self.defs)

    def lookup(self, name: syntax_tree.Name, scope: Scope) -> Value | None:
        if name.name in BUILTIN_SOPS:
            return BUILTIN_SOPS[name.name]
        binding = scope.find(name.name)
        if binding is not None:
            return binding.value
        if name.name in self.defs or name.name in BUILTIN_FUNCTIONS:
            raise RaspTypeError(f"'{name.name}' is a function; call it as {name.name}(...)", name.loc)
        later = self.bound_later.get(name.name)
        if later is not None:
            raise RaspNameError(f"'{name.name}' is used before it is bound (line {later.line})", name.loc)
        raise RaspNameError(f"unknown name '{name.name}'{did_you_mean(name.name, self.visible(scope))}", name.loc)

    def visible(self, scope: Scope | None) -> set[str]:
        """Every name an expression in `scope` may use: built-in s-ops and the names bound so far."""
        names, here = set(BUILTIN_SOPS), scope
        while here is not None:
            names |= set(here.names)
            here = here.parent
        return names

    def bind(self, name: str, value: Value | None, loc: Loc, scope: Scope) -> None:
        check_bindable(name, loc)
        if name in scope.names:
            raise RaspNameError(f"'{name}' is already bound (line {scope.names[name].loc.line})", loc)
        if scope is self.globals and name in self.defs:
            raise RaspNameError(f"'{name}' is already a function (line {self.defs[name].loc.line})", loc)
        if scope is self.globals and isinstance(value, (ir.SOp, ir.Selector)) and (
                value.label is None or value in self.def_locals):
            value.label = name  # a top-level name wins over a def's local one
            self.def_locals.discard(value)
        scope.names[name] = Binding(value, loc)

    def name_local(self, value: Value, name: str) -> None:
        """Label a def's local s-op or selector `def.local` when nothing named it (the first call's
        `f.x`, the next `f.x_2`, ...), so residual labels and head names keep the def's names."""
        if not isinstance(value, (ir.SOp, ir.Selector)) or value.label is not None:
            return
        label, k = name, 2
        while label in self.local_labels:
            label, k = f"{name}_{k}", k + 1
        self.local_labels.add(label)
        value.label = label
        self.def_locals.add(value)

    def as_sop(self, value: Value, loc: Loc | None, encoding: str = ir.CATEGORICAL) -> Value:
        if not isinstance(value, SCALAR):
            return value
        if encoding == ir.NUMERICAL and not is_number(value):
            raise RaspTypeError(f"a numerical s-op holds numbers only, got {kind(value)}", loc)
        sop = constant_sop(value, encoding, loc)
        self.constants[sop] = value
        return sop

    def constant_of(self, sop: ir.SOp) -> ir.Value | None:
        return self.constants.get(sop)

    def _constant(self, e: syntax_tree.Expr, scope: Scope, where: str) -> ir.Value | tuple:
        value = self.expr(e, scope)
        if isinstance(value, (ir.SOp, ir.Selector)):
            raise RaspTypeError(
                f"{where} outside a lambda works on constants, not on {kind(value)}; "
                "inside a lambda, write e.g. map(lambda x: ..., s)",
                e.loc,
            )
        return value

    def _unary(self, e: syntax_tree.Unary, operand: Value) -> Value:
        if isinstance(operand, ir.Selector):
            if e.op == "not":
                return ir.SelectNot(operand, loc=e.loc)
            raise RaspTypeError(f"'{e.op}' applies to s-ops and constants, not to a selector", e.loc)
        if isinstance(operand, ir.SOp):
            fn = _operator(lambda x: lambda_eval.unary(e.op, x), f"{e.op}{' ' if e.op == 'not' else ''}x", e.loc)
            return ir.Map(fn, operand, loc=e.loc)
        return _fold(e, f"cannot compute '{e.op}' on this constant", lambda: lambda_eval.unary(e.op, operand))

    def _binary(self, e: syntax_tree.Binary, left: Value, right: Value) -> Value:
        if isinstance(left, ir.Selector) and isinstance(right, ir.Selector) and e.op in ("and", "or"):
            return (ir.SelectAnd if e.op == "and" else ir.SelectOr)(left, right, loc=e.loc)
        if isinstance(left, ir.Selector) or isinstance(right, ir.Selector):
            other = right if isinstance(left, ir.Selector) else left
            if e.op in ("and", "or"):
                raise RaspTypeError(f"'{e.op}' combines a selector with another selector, not with {kind(other)}", e.loc)
            raise RaspTypeError(f"'{e.op}' applies to s-ops and constants, not to a selector", e.loc)
        op = e.op
        if isinstance(left, ir.SOp) and isinstance(right, ir.SOp):
            fn = _operator(lambda x, y: lambda_eval.binary(op, x, y), f"x {op} y", e.loc)
            return ir.SequenceMap(fn, left, right, loc=e.loc)
        if isinstance(left, ir.SOp):
            constant = right
            assert not isinstance(constant, ir.SOp)  # both s-ops: a SequenceMap, above
            fn = _operator(lambda x: lambda_eval.binary(op, x, constant), f"x {op} {lambda_eval.literal(right)}", e.loc)
            return ir.Map(fn, left, loc=e.loc)
        if isinstance(right, ir.SOp):
            fn = _operator(lambda y: lambda_eval.binary(op, left, y), f"{lambda_eval.literal(left)} {op} x", e.loc)
            return ir.Map(fn, right, loc=e.loc)
        return _fold(e, f"cannot compute '{op}' on these constants", lambda: lambda_eval.binary(op, left, right))

    def _ternary(self, e: syntax_tree.Ternary, scope: Scope) -> Value:
        parts = [self.expr(part, scope) for part in (e.then, e.cond, e.orelse)]
        if any(isinstance(part, (ir.SOp, ir.Selector)) for part in parts):
            raise RaspTypeError(
                "'A if C else B' outside a lambda works on constants only; use it inside a map or sequence_map lambda",
                e.loc,
            )
        then, cond, orelse = parts
        return then if cond else orelse


def _operator(compute: Callable[..., Value], text: str, loc: Loc) -> ir.Fn:
    """The function of an operator on s-ops (`x + 1`): its result at a position is a scalar."""
    return ir.Fn(lambda *values: lambda_eval.scalar(compute(*values)), text, loc)


def _fold(e: syntax_tree.Expr, failed: str, compute: Callable[[], Value]) -> Value:
    """The value of an operator on constants; a RaspValueError at the operator if it fails
    (`failed` says what could not be done)."""
    try:
        return compute()
    except Exception as failure:  # the evaluator's refusals and Python's own (1 / 0, "a" < 1)
        raise RaspValueError(f"{failed}: {reason(failure)}", e.loc) from None
