"""AST -> `ir.Program`: the checker. Names, kinds, argument counts, defs and declarations.

Every expression lowers to one of three kinds: an s-op (`ir.SOp`), a selector (`ir.Selector`)
or a scalar (a Python str, int, float or bool). Operators on scalars only are folded into a
scalar; with one s-op operand they become an `ir.Map`, with two an `ir.SequenceMap`; `and`, `or`
and `not` on selectors combine them.

Scoping rules (docs/language.md leaves them open):
- Top-level names must be bound before they are used, in textual order; rebinding is an error.
  `output EXPR` is resolved after all statements, so it may come first.
- Defs are hoisted: a def may be called before its text. A call expands the def's body in place
  (fresh IR nodes per call) in a scope of its parameters, then its own earlier locals, then the
  top-level names bound when the call is expanded. Recursion, direct or mutual, is refused for
  every def, called or not, at the call that closes the cycle.
- Every def, called or not, is also checked where it is written without being expanded: its names
  (against its parameters, its earlier locals and every top-level name), its calls and argument
  counts, its lambdas. Kinds depend on a call's arguments, so they wait for the expansion.
- Inside a lambda, a name is one of its parameters or a scalar constant in scope (a top-level
  scalar or a def's scalar parameter); the lambda closes over the constant's value.
- A missing declaration (vocab, max_len, output) is reported at line 1, column 1, where
  declarations conventionally stand.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, NoReturn, Union

from . import ast, lambda_eval
from .. import ir
from ..errors import Loc, RaspNameError, RaspTypeError, RaspValueError
from .infer import MAX_VALUES
from ..runtime.model import token_key

Value = Union[ir.SOp, ir.Selector, ir.Value]

BUILTIN_SOPS = {"tokens": ir.tokens, "indices": ir.indices, "length": ir.length}

# Each built-in function: its positional arity and its keyword arguments.
BUILTIN_FUNCTIONS = {
    "map": (2, ()),
    "sequence_map": (3, ()),
    "select": (3, ()),
    "aggregate": (2, ("default",)),
    "selector_width": (1, ()),
    "numerical": (1, ()),
    "categorical": (1, ()),
}

# Each built-in's lambda arguments: (function, argument index) -> the lambda's parameter count.
LAMBDA_PARAMS = {("map", 0): 1, ("sequence_map", 0): 2, ("select", 2): 2}

MAX_LEN_LIMIT = 1_000
"""The largest max_len accepted: inference tries every lambda on every pair of values, so a
select over indices costs max_len ** 2 calls."""

MAX_EXPANSIONS = 10_000
"""The most def calls a program may expand (nested defs could otherwise grow exponentially)."""

SCALAR = (str, int, float)  # bool is an int

ORDINALS = ("first", "second", "third")


@dataclass
class Binding:
    value: Value
    loc: Loc


@dataclass
class Scope:
    """Names bound in one scope (the top level, or one expansion of a def) over its parent."""

    names: dict[str, Binding] = field(default_factory=dict)
    parent: Scope | None = None

    def find(self, name: str) -> Binding | None:
        scope = self
        while scope is not None:
            if name in scope.names:
                return scope.names[name]
            scope = scope.parent
        return None


def lower(module: ast.Module, source: str, filename: str = "<program>") -> ir.Program:
    """The checked `ir.Program` of a parsed module (value sets are not inferred here)."""
    return _Lowering(module).program(source, filename)


def kind(value: Value | ast.Node) -> str:
    """How a value reads in a message: "an s-op", "a selector", "the number 3", ..."""
    if isinstance(value, ir.SOp):
        return "an s-op"
    if isinstance(value, ir.Selector):
        return "a selector"
    if isinstance(value, ast.Lambda):
        return "a lambda"
    if isinstance(value, ast.CompareOp):
        return f"the comparison operator '{value.op}'"
    if isinstance(value, bool):
        return f"the boolean {literal_text(value)}"
    if isinstance(value, str):
        return f"the string {literal_text(value)}"
    return f"the number {literal_text(value)}"


def literal_text(value: ir.Value) -> str:
    """A scalar as it would be written in a program."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f"'{value}'" if '"' in value else f'"{value}"'
    return repr(value)


class _Lowering:
    """The state of lowering one module: the top-level scope, the defs, the declarations."""

    def __init__(self, module: ast.Module):
        self.module = module
        self.globals = Scope()
        self.defs: dict[str, ast.Def] = {}
        self.bound_later = {s.name: s.loc for s in module.statements if isinstance(s, ast.Assign)}
        self.declarations: dict[type, ast.Statement] = {}
        self.expansions = 0

    # -- statements -----------------------------------------------------------------------

    def program(self, source: str, filename: str) -> ir.Program:
        for stmt in self.module.statements:
            if isinstance(stmt, ast.Def):
                self._define(stmt)
        _check_recursion(self.defs)
        for stmt in self.module.statements:
            if isinstance(stmt, ast.Assign):
                self._bind(stmt.name, self.expr(stmt.value, self.globals), stmt.loc, self.globals)
            elif isinstance(stmt, ast.Def):
                self._check_def(stmt)
            else:
                self._declare(stmt)
        vocab = _vocab(self._required(ast.Vocab))
        max_len = _max_len(self._required(ast.MaxLen))
        output = self._required(ast.Output)
        result = self.expr(output.value, self.globals)
        if not isinstance(result, ir.SOp):
            raise RaspTypeError(f"output must be an s-op, got {kind(result)}", output.value.loc)
        return ir.Program(
            output=result,
            vocab=vocab,
            max_len=max_len,
            causal=ast.Causal in self.declarations,
            source=source,
            filename=filename,
            output_name=output.value.name if isinstance(output.value, ast.Name) else "output",
            output_loc=output.value.loc,
        )

    def _define(self, d: ast.Def) -> None:
        _check_bindable(d.name, d.loc)
        if d.name in self.defs:
            raise RaspNameError(f"'{d.name}' is already defined (line {self.defs[d.name].loc.line})", d.loc)
        _check_distinct(d.params)
        self.defs[d.name] = d

    def _declare(self, stmt: ast.Statement) -> None:
        first = self.declarations.get(type(stmt))
        if first is not None:
            raise RaspNameError(f"'{_KEYWORDS[type(stmt)]}' is declared twice (first at line {first.loc.line})", stmt.loc)
        self.declarations[type(stmt)] = stmt

    def _required(self, cls: type) -> ast.Statement:
        if cls not in self.declarations:
            # At line 1, column 1: where declarations conventionally stand.
            raise RaspNameError(f"missing '{_KEYWORDS[cls]}' declaration (e.g. {_EXAMPLES[cls]})", Loc(1, 1))
        return self.declarations[cls]

    def _bind(self, name: str, value: Value, loc: Loc, scope: Scope) -> None:
        _check_bindable(name, loc)
        if name in scope.names:
            raise RaspNameError(f"'{name}' is already bound (line {scope.names[name].loc.line})", loc)
        if scope is self.globals and name in self.defs:
            raise RaspNameError(f"'{name}' is already a function (line {self.defs[name].loc.line})", loc)
        if scope is self.globals and isinstance(value, (ir.SOp, ir.Selector)) and value.label is None:
            value.label = name
        scope.names[name] = Binding(value, loc)

    # -- expressions ----------------------------------------------------------------------

    def expr(self, e: ast.Node, scope: Scope) -> Value:
        """Lower an expression to an s-op, a selector or a scalar."""
        if isinstance(e, ast.Literal):
            return e.value
        if isinstance(e, ast.Name):
            return self._lookup(e, scope)
        if isinstance(e, ast.Unary):
            return self._unary(e, self.expr(e.operand, scope))
        if isinstance(e, ast.Binary):
            return self._binary(e, self.expr(e.left, scope), self.expr(e.right, scope))
        if isinstance(e, ast.Ternary):
            return self._ternary(e, scope)
        if isinstance(e, ast.Call):
            return self._call(e, scope)
        raise TypeError(f"no lowering for {type(e).__name__}")  # the grammar lets nothing else through

    def _lookup(self, name: ast.Name, scope: Scope) -> Value:
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
        raise RaspNameError(f"unknown name '{name.name}'", name.loc)

    def _unary(self, e: ast.Unary, operand: Value) -> Value:
        if isinstance(operand, ir.Selector):
            if e.op == "not":
                return ir.SelectNot(operand, loc=e.loc)
            raise RaspTypeError(f"'{e.op}' applies to s-ops and constants, not to a selector", e.loc)
        if isinstance(operand, ir.SOp):
            fn = ir.Fn(lambda x: lambda_eval.unary(e.op, x), f"{e.op}{' ' if e.op == 'not' else ''}x", e.loc)
            return ir.Map(fn, operand, loc=e.loc)
        return _fold(e, lambda: lambda_eval.unary(e.op, operand))

    def _binary(self, e: ast.Binary, left: Value, right: Value) -> Value:
        selectors = isinstance(left, ir.Selector) + isinstance(right, ir.Selector)
        if selectors == 2 and e.op in ("and", "or"):
            return (ir.SelectAnd if e.op == "and" else ir.SelectOr)(left, right, loc=e.loc)
        if selectors:
            other = right if isinstance(left, ir.Selector) else left
            if e.op in ("and", "or"):
                raise RaspTypeError(f"'{e.op}' combines a selector with another selector, not with {kind(other)}", e.loc)
            raise RaspTypeError(f"'{e.op}' applies to s-ops and constants, not to a selector", e.loc)
        op = e.op
        if isinstance(left, ir.SOp) and isinstance(right, ir.SOp):
            fn = ir.Fn(lambda x, y: lambda_eval.binary(op, x, y), f"x {op} y", e.loc)
            return ir.SequenceMap(fn, left, right, loc=e.loc)
        if isinstance(left, ir.SOp):
            fn = ir.Fn(lambda x: lambda_eval.binary(op, x, right), f"x {op} {literal_text(right)}", e.loc)
            return ir.Map(fn, left, loc=e.loc)
        if isinstance(right, ir.SOp):
            fn = ir.Fn(lambda y: lambda_eval.binary(op, left, y), f"{literal_text(left)} {op} x", e.loc)
            return ir.Map(fn, right, loc=e.loc)
        return _fold(e, lambda: lambda_eval.binary(op, left, right))

    def _ternary(self, e: ast.Ternary, scope: Scope) -> Value:
        parts = [self.expr(part, scope) for part in (e.then, e.cond, e.orelse)]
        if any(isinstance(part, (ir.SOp, ir.Selector)) for part in parts):
            raise RaspTypeError(
                "'A if C else B' outside a lambda works on constants only; use it inside a map or sequence_map lambda",
                e.loc,
            )
        then, cond, orelse = parts
        return then if cond else orelse

    # -- calls ----------------------------------------------------------------------------

    def _call(self, call: ast.Call, scope: Scope) -> Value:
        if call.func in BUILTIN_FUNCTIONS:
            return self._builtin(call, scope)
        if call.func in self.defs:
            return self._expand(call, scope)
        self._not_a_function(call, scope)

    def _not_a_function(self, call: ast.Call, scope: Scope) -> NoReturn:
        """The error of a call of something that is neither a built-in nor a def."""
        if call.func in lambda_eval.FUNCTIONS:
            raise RaspTypeError(f"'{call.func}' can only be called inside a lambda", call.loc)
        if scope.find(call.func) is not None or call.func in BUILTIN_SOPS:
            raise RaspTypeError(f"'{call.func}' is not a function", call.loc)
        raise RaspNameError(f"unknown function '{call.func}'", call.loc)

    def _arguments(self, call: ast.Call, arity: int, keywords: tuple[str, ...]) -> tuple[list, dict]:
        """The positional arguments and keyword arguments of a call, their counts checked."""
        positional = [a for a in call.args if not isinstance(a, ast.Keyword)]
        named: dict[str, ast.Keyword] = {}
        for keyword in (a for a in call.args if isinstance(a, ast.Keyword)):
            if keyword.name not in keywords:
                allowed = f"; it takes only {', '.join(k + '=' for k in keywords)}" if keywords else ""
                raise RaspTypeError(f"{call.func} has no keyword argument '{keyword.name}'{allowed}", keyword.loc)
            if keyword.name in named:
                raise RaspTypeError(f"keyword argument '{keyword.name}' given twice", keyword.loc)
            named[keyword.name] = keyword
        if len(positional) != arity:
            where = positional[arity].loc if len(positional) > arity else call.loc
            plural = "s" if arity != 1 else ""
            raise RaspTypeError(f"{call.func} takes {arity} argument{plural}, got {len(positional)}", where)
        return positional, named

    def _expect(self, arg: ast.Node, scope: Scope, wanted: type | tuple, call: ast.Call, index: int) -> Value:
        """Lower argument `index` of `call`; a RaspTypeError unless it is of the `wanted` kind."""
        value = arg if isinstance(arg, (ast.Lambda, ast.CompareOp)) else self.expr(arg, scope)
        if isinstance(value, wanted):
            return value
        what = _KIND_NAMES[wanted]
        ordinal = ORDINALS[index] if index < len(ORDINALS) else f"{index + 1}th"
        raise RaspTypeError(f"{call.func} expects {what} as its {ordinal} argument, got {kind(value)}", arg.loc)

    def _fn(self, lam: ast.Lambda, call: ast.Call, index: int, scope: Scope) -> ir.Fn:
        """The function of the lambda that is argument `index` of `call`, checked."""
        arity = LAMBDA_PARAMS[call.func, index]
        if len(lam.params) != arity:
            plural = "s" if arity != 1 else ""
            raise RaspTypeError(
                f"{call.func} expects a lambda of {arity} parameter{plural}, got {len(lam.params)}", lam.loc
            )
        _check_distinct(lam.params)

        def resolve(name: ast.Name) -> ir.Value:
            value = self._lookup(name, scope)
            if isinstance(value, (ir.SOp, ir.Selector)):
                raise RaspTypeError(
                    f"'{name.name}' is {kind(value)}; a lambda can use only its parameters and constants", name.loc
                )
            return value

        return lambda_eval.make_fn(lam, resolve)

    def _builtin(self, call: ast.Call, scope: Scope) -> Value:
        arity, keywords = BUILTIN_FUNCTIONS[call.func]
        args, named = self._arguments(call, arity, keywords)

        def expect(index: int, wanted: type | tuple) -> Value:
            return self._expect(args[index], scope, wanted, call, index)

        loc = call.loc
        if call.func == "map":
            fn = self._fn(expect(0, ast.Lambda), call, 0, scope)
            return ir.Map(fn, expect(1, ir.SOp), loc=loc)
        if call.func == "sequence_map":
            fn = self._fn(expect(0, ast.Lambda), call, 0, scope)
            return ir.SequenceMap(fn, expect(1, ir.SOp), expect(2, ir.SOp), loc=loc)
        if call.func == "select":
            keys, queries = expect(0, ir.SOp), expect(1, ir.SOp)
            predicate = expect(2, (ast.CompareOp, ast.Lambda, bool))
            if isinstance(predicate, ast.Lambda):
                predicate = self._fn(predicate, call, 2, scope)
            elif isinstance(predicate, ast.CompareOp):
                predicate = predicate.op
            else:
                predicate = "true" if predicate else "false"
            return ir.Select(keys, queries, predicate, loc=loc)
        if call.func == "aggregate":
            selector, sop = expect(0, ir.Selector), expect(1, ir.SOp)
            default = None
            if "default" in named:
                default = self.expr(named["default"].value, scope)
                if not isinstance(default, SCALAR):
                    raise RaspTypeError(f"default= expects a constant, got {kind(default)}", named["default"].loc)
            return ir.Aggregate(selector, sop, default, loc=loc)
        if call.func == "selector_width":
            return ir.SelectorWidth(expect(0, ir.Selector), loc=loc)
        encode = ir.numerical if call.func == "numerical" else ir.categorical
        inner = expect(0, ir.SOp)
        node = encode(inner)
        node.label, node.loc = None, inner.loc or loc  # a new node: named when bound, like any other
        return node

    def _expand(self, call: ast.Call, scope: Scope) -> Value:
        d = self.defs[call.func]
        args, _ = self._arguments(call, len(d.params), ())
        self.expansions += 1
        if self.expansions > MAX_EXPANSIONS:
            raise RaspValueError(f"more than {MAX_EXPANSIONS:,} def calls to expand; the program is too large", call.loc)
        local = Scope(parent=self.globals)
        for index, (param, arg) in enumerate(zip(d.params, args)):
            value = self._expect(arg, scope, (ir.SOp, ir.Selector) + SCALAR, call, index)
            local.names[param.name] = Binding(value, param.loc)
        for stmt in d.body:
            self._bind(stmt.name, self.expr(stmt.value, local), stmt.loc, local)
        return self.expr(d.result, local)

    # -- defs, unexpanded -----------------------------------------------------------------

    def _check_def(self, d: ast.Def) -> None:
        """Check a def's body without expanding it (see the module docstring). The scopes bind
        every name the body may see to None, a value not known until a call."""
        visible = Scope({name: Binding(None, loc) for name, loc in self.bound_later.items()})
        local = Scope({p.name: Binding(None, p.loc) for p in d.params}, parent=visible)
        for stmt in d.body:
            self._check_unexpanded(stmt.value, local)
            self._bind(stmt.name, None, stmt.loc, local)
        self._check_unexpanded(d.result, local)

    def _check_unexpanded(self, e: ast.Node, scope: Scope) -> None:
        """Check the names and calls of an expression of an unexpanded def body."""
        if isinstance(e, ast.Name):
            self._lookup(e, scope)
        elif isinstance(e, ast.Call):
            self._check_call(e, scope)
        else:
            for child in ast.children(e):
                self._check_unexpanded(child, scope)

    def _check_call(self, call: ast.Call, scope: Scope) -> None:
        """A call's function and argument counts; lambdas where the built-in takes one; then the
        arguments themselves. A lambda elsewhere is a wrong kind, reported at expansion."""
        if call.func in BUILTIN_FUNCTIONS:
            args, named = self._arguments(call, *BUILTIN_FUNCTIONS[call.func])
        elif call.func in self.defs:
            args, named = self._arguments(call, len(self.defs[call.func].params), ())
        else:
            self._not_a_function(call, scope)
        for index, arg in enumerate(args):
            if isinstance(arg, ast.Lambda) and (call.func, index) in LAMBDA_PARAMS:
                self._fn(arg, call, index, scope)
            elif not isinstance(arg, ast.Lambda):
                self._check_unexpanded(arg, scope)
        for keyword in named.values():
            self._check_unexpanded(keyword.value, scope)


_KEYWORDS = {ast.Vocab: "vocab", ast.MaxLen: "max_len", ast.Causal: "causal", ast.Output: "output"}
_EXAMPLES = {ast.Vocab: "vocab {a, b}", ast.MaxLen: "max_len 5", ast.Output: "output name"}

_KIND_NAMES = {
    ir.SOp: "an s-op",
    ir.Selector: "a selector",
    ast.Lambda: "a lambda",
    (ast.CompareOp, ast.Lambda, bool): "a comparison (== != < <= > >=), true, false or a lambda",
    (ir.SOp, ir.Selector) + SCALAR: "an s-op, a selector or a constant",
}


def _fold(e: ast.Node, compute: Callable[[], ir.Value]) -> ir.Value:
    """The value of an operator on constants; a RaspValueError at the operator if it fails."""
    try:
        return compute()
    except Exception as failure:  # the evaluator's refusals and Python's own (1 / 0, "a" < 1)
        raise RaspValueError(f"cannot compute '{e.op}' on these constants: {failure}", e.loc) from None


def _check_bindable(name: str, loc: Loc) -> None:
    if name in BUILTIN_SOPS or name in BUILTIN_FUNCTIONS:
        raise RaspNameError(f"'{name}' is built in and cannot be rebound", loc)


def _check_distinct(params: list[ast.Name]) -> None:
    seen: set[str] = set()
    for param in params:
        _check_bindable(param.name, param.loc)
        if param.name in seen:
            raise RaspNameError(f"parameter '{param.name}' is listed twice", param.loc)
        seen.add(param.name)


def _vocab(decl: ast.Vocab) -> tuple[ir.Value, ...]:
    if not decl.items:
        raise RaspValueError("vocab must list at least one token", decl.loc)
    if len(decl.items) > MAX_VALUES:
        raise RaspValueError(f"vocab lists more than {MAX_VALUES:,} tokens", decl.items[MAX_VALUES].loc)
    seen: dict = {}  # token_key -> value; a list's `in` made a 40,000-token vocab take 10 s
    for item in decl.items:
        key = token_key(item.value)  # as the weights file tells tokens apart: numbers as floats
        if key in seen:
            same = "" if seen[key] == item.value else f" (as {literal_text(seen[key])}: one number as a float)"
            raise RaspValueError(f"vocab lists {literal_text(item.value)} twice{same}", item.loc)
        seen[key] = item.value
    return tuple(seen.values())


def _max_len(decl: ast.MaxLen) -> int:
    value = decl.value.value
    if not isinstance(value, int) or not 1 <= value <= MAX_LEN_LIMIT:
        raise RaspValueError(f"max_len must be a whole number from 1 to {MAX_LEN_LIMIT:,}, got {value}", decl.value.loc)
    return value


def _check_recursion(defs: dict[str, ast.Def]) -> None:
    """Refuse any cycle of def calls, at the call that closes it (`f -> g -> f`)."""
    done: set[str] = set()

    def visit(d: ast.Def, path: list[str]) -> None:
        path.append(d.name)
        calls = [n for part in (*d.body, d.result) for n in ast.walk(part) if isinstance(n, ast.Call)]
        for call in calls:
            if call.func in path:
                cycle = " -> ".join(path[path.index(call.func):] + [call.func])
                raise RaspNameError(f"recursive call of '{call.func}' ({cycle}); defs cannot recurse", call.loc)
            if call.func in defs and call.func not in done:
                visit(defs[call.func], path)
        path.pop()
        done.add(d.name)

    for d in defs.values():
        if d.name not in done:
            visit(d, [])
