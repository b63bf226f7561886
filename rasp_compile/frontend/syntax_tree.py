"""The syntax tree of a `.rasp` program: what parse.py builds and lower.py checks.

Small dataclasses, one per form of the language (docs/language.md). Every node keeps `loc`, the place of
the token that names it best in a message: a name, a literal, an operator, a call's function
name, a declaration's keyword, a lambda's `lambda`.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from collections.abc import Iterator

from ..errors import Loc

Scalar = str | int | float | bool


@dataclass
class Node:
    """The base of every AST class (marks what `children` descends into; a dataclass, as they all are)."""


# ---------------------------------------------------------------------------------------------
# Expressions.


@dataclass
class Name(Node):
    name: str
    loc: Loc


@dataclass
class Literal(Node):
    value: Scalar
    loc: Loc


@dataclass
class Unary(Node):
    """`-x` or `not x`."""

    op: str
    operand: Expr
    loc: Loc


@dataclass
class Binary(Node):
    """Arithmetic (`+ - * / // %`), a comparison (`== != < <= > >=`), `in`, `not in`, `and` or `or`."""

    op: str
    left: Expr
    right: Expr
    loc: Loc


@dataclass
class Ternary(Node):
    """`then if cond else orelse`; `loc` is the `if`."""

    then: Expr
    cond: Expr
    orelse: Expr
    loc: Loc


@dataclass
class Tuple(Node):
    """A tuple literal `(a, b)`, `(a,)` or `()`; `loc` is its `(`."""

    items: list[Expr]
    loc: Loc


@dataclass
class Index(Node):
    """`value[index]`: an item of a string or a tuple; `loc` is the `[`."""

    value: Expr
    index: Expr
    loc: Loc


@dataclass
class Lambda(Node):
    """`lambda p1, p2: body`; `text` is the lambda as written, on one line."""

    params: list[Name]
    body: Expr
    text: str
    loc: Loc


@dataclass
class Keyword(Node):
    """A keyword argument `name=value` (only `aggregate(..., default=V)` takes one)."""

    name: str
    value: Expr
    loc: Loc


@dataclass
class CompareOp(Node):
    """A bare comparison operator as an argument: the predicate of `select(k, q, ==)`."""

    op: str
    loc: Loc


@dataclass
class Call(Node):
    """`func(args...)`: a built-in or a def; `loc` is the function's name."""

    func: str
    args: list[Argument]
    loc: Loc


Expr = Name | Literal | Unary | Binary | Ternary | Tuple | Index | Call
Argument = Expr | Lambda | Keyword | CompareOp


# ---------------------------------------------------------------------------------------------
# Statements.


@dataclass
class Assign(Node):
    """`name = value`; `loc` is the name."""

    name: str
    value: Expr
    loc: Loc


@dataclass
class Def(Node):
    """`def name(params) { body; return result }`; `loc` is the def's name."""

    name: str
    params: list[Name]
    body: list[Assign]
    result: Expr
    loc: Loc


@dataclass
class Vocab(Node):
    items: list[Literal]
    loc: Loc


@dataclass
class MaxLen(Node):
    value: Literal
    loc: Loc


@dataclass
class Causal(Node):
    loc: Loc


@dataclass
class Output(Node):
    value: Expr
    loc: Loc


Statement = Assign | Def | Vocab | MaxLen | Causal | Output


@dataclass
class Module(Node):
    """A whole program, its statements in textual order."""

    statements: list[Statement]


# ---------------------------------------------------------------------------------------------


def children(node: Node) -> Iterator[Node]:
    """The AST nodes directly inside `node` (its fields that are nodes or lists of nodes)."""
    for f in fields(node):
        value = getattr(node, f.name)
        items = value if isinstance(value, list) else [value]
        yield from (item for item in items if isinstance(item, Node))


def walk(node: Node) -> Iterator[Node]:
    """`node` and every node inside it, parents first (iterative: deep trees are fine)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(list(children(current))))
