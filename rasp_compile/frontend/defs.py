"""`def`s: declared (hoisted), checked where written, refused when recursive, expanded at calls.

- A call (dispatched by expressions.py) expands the def's body in place (fresh IR nodes per
  call) in a scope of its parameters, then its own earlier locals, then the top-level names bound
  when the call is expanded. A parameter or a local hides a def or function of the same name.
- Every def, called or not, is also checked where it is written without being expanded: its
  names (against its parameters, its earlier locals and every top-level name), its calls and
  argument counts, its lambdas. Kinds depend on a call's arguments, so they wait for the expansion.
- Recursion, direct or mutual, is refused for every def, called or not, at the call that closes
  the cycle.
"""

from __future__ import annotations

from . import syntax_tree
from .. import ir
from ..errors import RaspNameError, RaspTypeError, RaspValueError
from .calls import KIND_NAMES, ORDINALS, arguments, check_callable, lambda_arity, make_lambda, not_a_function
from .scope import BUILTIN_FUNCTIONS, SCALAR, Binding, Lowering, Scope, check_bindable, check_distinct

MAX_EXPANSIONS = 10_000
"""The most def calls a program may expand (nested defs could otherwise grow exponentially)."""

ANY_KIND = (ir.SOp, ir.Selector, tuple) + SCALAR


def define(d: syntax_tree.Def, defs: dict[str, syntax_tree.Def]) -> None:
    """Record a def (hoisting it); a RaspNameError if its name or parameters cannot be used."""
    check_bindable(d.name, d.loc)
    if d.name in defs:
        raise RaspNameError(f"'{d.name}' is already defined (line {defs[d.name].loc.line})", d.loc)
    check_distinct(d.params)
    defs[d.name] = d


def expand(call: syntax_tree.Call, scope: Scope, lowering: Lowering):
    """The value a def's body returns for the arguments of `call` (written in `scope`)."""
    d = lowering.defs[call.func]
    args, _ = arguments(call, len(d.params), len(d.params))
    lowering.expansions += 1
    if lowering.expansions > MAX_EXPANSIONS:
        raise RaspValueError(f"more than {MAX_EXPANSIONS:,} def calls to expand; the program is too large", call.loc)
    local = Scope(parent=lowering.globals)
    for index, (param, arg) in enumerate(zip(d.params, args)):
        value = _argument(call, arg, index, scope, lowering)
        local.names[param.name] = Binding(value, param.loc)
    for stmt in d.body:
        value = lowering.expr(stmt.value, local)
        lowering.bind(stmt.name, value, stmt.loc, local)
        lowering.name_local(value, f"{d.name}.{stmt.name}")
    return lowering.expr(d.result, local)


def _argument(call: syntax_tree.Call, arg: syntax_tree.Argument, index: int, scope: Scope, lowering: Lowering):
    """Argument `index` of a def call: an s-op, a selector or a constant (not a lambda)."""
    if isinstance(arg, (syntax_tree.Lambda, syntax_tree.CompareOp)):
        shown = "a lambda" if isinstance(arg, syntax_tree.Lambda) else f"the comparison operator '{arg.op}'"
        raise _wrong_kind(call, index, shown, arg)
    return lowering.expr(arg, scope)


def _wrong_kind(call: syntax_tree.Call, index: int, shown: str, arg: syntax_tree.Argument) -> RaspTypeError:
    ordinal = ORDINALS[index] if index < len(ORDINALS) else f"{index + 1}th"
    return RaspTypeError(f"{call.func} expects {KIND_NAMES[ANY_KIND]} as its {ordinal} argument, got {shown}", arg.loc)


def check_def(d: syntax_tree.Def, lowering: Lowering) -> None:
    """Check a def's body without expanding it (see the module docstring). The scopes bind
    every name the body may see to None, a value not known until a call."""
    visible = Scope({name: Binding(None, loc) for name, loc in lowering.bound_later.items()})
    local = Scope({p.name: Binding(None, p.loc) for p in d.params}, parent=visible)
    for stmt in d.body:
        _check_unexpanded(stmt.value, local, lowering)
        lowering.bind(stmt.name, None, stmt.loc, local)
    _check_unexpanded(d.result, local, lowering)


def _check_unexpanded(e: syntax_tree.Node, scope: Scope, lowering: Lowering) -> None:
    """Check the names and calls of an expression of an unexpanded def body."""
    if isinstance(e, syntax_tree.Name):
        lowering.lookup(e, scope)
    elif isinstance(e, syntax_tree.Call):
        _check_call(e, scope, lowering)
    else:
        for child in syntax_tree.children(e):
            _check_unexpanded(child, scope, lowering)


def _check_call(call: syntax_tree.Call, scope: Scope, lowering: Lowering) -> None:
    """A call's function and argument counts; lambdas where the built-in takes one; then the
    arguments themselves. A lambda elsewhere is a wrong kind, reported at expansion."""
    check_callable(call, scope)
    if call.func in BUILTIN_FUNCTIONS:
        args, named = arguments(call, *BUILTIN_FUNCTIONS[call.func])
    elif call.func in lowering.defs:
        count = len(lowering.defs[call.func].params)
        args, named = arguments(call, count, count)
    else:
        not_a_function(call)
    for index, arg in enumerate(args):
        arity = lambda_arity(call.func, index, len(args))
        if isinstance(arg, syntax_tree.Lambda) and arity is not None:
            make_lambda(arg, call, arity, scope, lowering)
        elif not isinstance(arg, syntax_tree.Lambda):
            _check_unexpanded(arg, scope, lowering)
    for keyword in named.values():
        _check_unexpanded(keyword.value, scope, lowering)


def check_recursion(defs: dict[str, syntax_tree.Def]) -> None:
    """Refuse any cycle of def calls, at the call that closes it (`f -> g -> f`). A call of a
    name the def's parameters or earlier locals hide calls no def; a lambda calls none either."""
    done: set[str] = set()

    def visit(d: syntax_tree.Def, path: list[str]) -> None:
        path.append(d.name)
        for call in _def_calls(d, defs):
            if call.func in path:
                cycle = " -> ".join(path[path.index(call.func):] + [call.func])
                raise RaspNameError(f"recursive call of '{call.func}' ({cycle}); defs cannot recurse", call.loc)
            if call.func not in done:
                visit(defs[call.func], path)
        path.pop()
        done.add(d.name)

    for d in defs.values():
        if d.name not in done:
            visit(d, [])


def _def_calls(d: syntax_tree.Def, defs: dict[str, syntax_tree.Def]) -> list[syntax_tree.Call]:
    """The calls of defs in `d`'s body, in textual order, outside lambdas and not hidden."""
    hidden: set[str | None] = {p.name for p in d.params}  # + None, the result's, added last
    found: list[syntax_tree.Call] = []
    for name, expr in [(stmt.name, stmt.value) for stmt in d.body] + [(None, d.result)]:
        stack: list[syntax_tree.Node] = [expr]
        while stack:
            node = stack.pop()
            if isinstance(node, syntax_tree.Call) and node.func in defs and node.func not in hidden:
                found.append(node)
            if not isinstance(node, syntax_tree.Lambda):
                stack.extend(reversed(list(syntax_tree.children(node))))
        hidden.add(name)
    return found
