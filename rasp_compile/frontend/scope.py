"""Names and kinds while lowering: scopes, what a value is called in a message, which names are
built in, and the interface the modules of the lowering share.

Every expression lowers to one of three kinds: an s-op (`ir.SOp`), a selector (`ir.Selector`)
or a constant (a Python str, int, float or bool, or a tuple of constants).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from . import syntax_tree
from .. import ir
from ..errors import Loc, RaspNameError
from .lambda_eval import literal

Value = ir.SOp | ir.Selector | ir.Value | tuple

SCALAR = (str, int, float)  # bool is an int
"""The types of a scalar constant (a tuple is a constant too, but no scalar)."""

BUILTIN_SOPS = {"tokens": ir.tokens, "indices": ir.indices, "length": ir.length}

BUILTIN_FUNCTIONS = {
    # name: (fewest positional arguments, most or None for any number, keyword arguments)
    "map": (2, 2, ()),
    "sequence_map": (3, None, ()),
    "select": (3, 3, ()),
    "aggregate": (2, 2, ("default",)),
    "selector_width": (1, 1, ()),
    "numerical": (1, 1, ()),
    "categorical": (1, 1, ()),
}


@dataclass
class Binding:
    value: Value | None  # None: in a def checked without a call, a value not known yet
    loc: Loc


@dataclass
class Scope:
    """Names bound in one scope (the top level, or one expansion of a def) over its parent."""

    names: dict[str, Binding] = field(default_factory=dict)
    parent: Scope | None = None

    def find(self, name: str) -> Binding | None:
        scope: Scope | None = self
        while scope is not None:
            if name in scope.names:
                return scope.names[name]
            scope = scope.parent
        return None


class Lowering(Protocol):
    """What the modules of the lowering ask of the one object that lowers a module
    (`expressions.ExpressionLowering`): its state and its expression lowering."""

    globals: Scope
    defs: dict[str, syntax_tree.Def]
    bound_later: dict[str, Loc]
    expansions: int

    def expr(self, e: syntax_tree.Node, scope: Scope) -> Value:
        """An expression lowered to an s-op, a selector or a constant."""

    def lookup(self, name: syntax_tree.Name, scope: Scope) -> Value | None:
        """The value a name has in `scope` (None in a def checked without a call: `Binding`); a
        located RaspError if it has none."""

    def bind(self, name: str, value: Value | None, loc: Loc, scope: Scope) -> None:
        """Bind `name` in `scope`; a located RaspNameError if it cannot be bound there."""

    def name_local(self, value: Value, name: str) -> None:
        """Label a def's local s-op or selector `def.local` when nothing named it yet."""

    def as_sop(self, value: Value, loc: Loc | None, encoding: str = ir.CATEGORICAL) -> Value:
        """A scalar as the constant s-op holding it at every position; anything else as it is."""

    def constant_of(self, sop: ir.SOp) -> ir.Value | None:
        """The scalar a constant s-op made by `as_sop` holds; None for any other s-op."""


def kind(value: Value | syntax_tree.Node) -> str:
    """How a value reads in a message: "an s-op", "a selector", "the number 3", ..."""
    if isinstance(value, ir.SOp):
        return "an s-op"
    if isinstance(value, ir.Selector):
        return "a selector"
    if isinstance(value, syntax_tree.Lambda):
        return "a lambda"
    if isinstance(value, syntax_tree.CompareOp):
        return f"the comparison operator '{value.op}'"
    if isinstance(value, bool):
        return f"the boolean {literal(value)}"
    if isinstance(value, str):
        return f"the string {literal(value)}"
    if isinstance(value, tuple):
        return f"the tuple {literal(value)}"
    return f"the number {literal(value)}"


def check_bindable(name: str, loc: Loc) -> None:
    if name in BUILTIN_SOPS or name in BUILTIN_FUNCTIONS:
        raise RaspNameError(f"'{name}' is built in and cannot be rebound", loc)


def check_distinct(params: list[syntax_tree.Name]) -> None:
    seen: set[str] = set()
    for param in params:
        check_bindable(param.name, param.loc)
        if param.name in seen:
            raise RaspNameError(f"parameter '{param.name}' is listed twice", param.loc)
        seen.add(param.name)
