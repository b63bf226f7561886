"""AST -> `ir.Program`: the checker's driver. Statements in order, declarations, the output.

The work is split by job: expressions.py lowers expressions (and holds the state), calls.py the
built-in calls, defs.py the defs, elementwise.py the maps and sequence_maps of any arity,
scope.py names and kinds. Scoping rules (docs/language.md, "Statements"):
- Top-level names must be bound before they are used, in textual order; rebinding is an error.
  `output EXPR` is resolved after all statements, so it may come first.
- Defs are hoisted: a def may be called before its text (defs.py).
- A missing declaration (vocab, max_len, output) is reported at line 1, column 1, where
  declarations conventionally stand.
"""

from __future__ import annotations

import re
from typing import TypeVar

from . import syntax_tree, defs
from .. import ir
from ..errors import Loc, RaspNameError, RaspTypeError, RaspValueError
from .expressions import ExpressionLowering
from .infer import MAX_VALUES
from .lambda_eval import literal
from .scope import kind
from ..runtime.token_keys import token_key

MAX_LEN_LIMIT = 4_096
"""The largest max_len accepted: inference tries every lambda on every pair of values, so a
select over indices costs max_len ** 2 calls."""


def check_module(module: syntax_tree.Module, source: str, filename: str = "<program>") -> ir.Program:
    """The checked `ir.Program` of a parsed module (value sets are not inferred here)."""
    lowering = ExpressionLowering(module)
    for stmt in module.statements:
        if isinstance(stmt, syntax_tree.Def):
            defs.define(stmt, lowering.defs)
    defs.check_recursion(lowering.defs)
    declarations: dict[type, syntax_tree.Statement] = {}
    for stmt in module.statements:
        if isinstance(stmt, syntax_tree.Assign):
            lowering.bind(stmt.name, lowering.expr(stmt.value, lowering.globals), stmt.loc, lowering.globals)
        elif isinstance(stmt, syntax_tree.Def):
            defs.check_def(stmt, lowering)
        else:
            _declare(stmt, declarations)
    vocab = _vocab(_required(syntax_tree.Vocab, declarations))
    max_len = _max_len(_required(syntax_tree.MaxLen, declarations))
    output = _required(syntax_tree.Output, declarations)
    result = lowering.as_sop(lowering.expr(output.value, lowering.globals), output.value.loc)
    if not isinstance(result, ir.SOp):
        raise RaspTypeError(f"output must be an s-op, got {kind(result)}", output.value.loc)
    return ir.Program(
        output=result,
        vocab=vocab,
        max_len=max_len,
        causal=syntax_tree.Causal in declarations,
        source=source,
        filename=filename,
        output_name=output.value.name if isinstance(output.value, syntax_tree.Name) else "output",
        output_loc=output.value.loc,
    )


def _declare(stmt: syntax_tree.Statement, declarations: dict[type, syntax_tree.Statement]) -> None:
    first = declarations.get(type(stmt))
    if first is not None:
        raise RaspNameError(f"'{_KEYWORDS[type(stmt)]}' is declared twice (first at line {first.loc.line})", stmt.loc)
    declarations[type(stmt)] = stmt


D = TypeVar("D", syntax_tree.Vocab, syntax_tree.MaxLen, syntax_tree.Output)


def _required(cls: type[D], declarations: dict[type, syntax_tree.Statement]) -> D:
    if cls not in declarations:
        # At line 1, column 1: where declarations conventionally stand.
        raise RaspNameError(f"missing '{_KEYWORDS[cls]}' declaration (e.g. {_EXAMPLES[cls]})", Loc(1, 1))
    declared = declarations[cls]
    assert isinstance(declared, cls)  # each declaration is filed under its own type (_declare)
    return declared


_KEYWORDS = {
    syntax_tree.Vocab: "vocab", syntax_tree.MaxLen: "max_len", syntax_tree.Causal: "causal", syntax_tree.Output: "output"
}
_EXAMPLES = {syntax_tree.Vocab: "vocab {a, b}", syntax_tree.MaxLen: "max_len 5", syntax_tree.Output: "output name"}

def _vocab(decl: syntax_tree.Vocab) -> tuple[ir.Value, ...]:
    """The vocab's tokens: at least one, none twice, each one the command line can type and
    tell from every other (docs/language.md, "Declarations")."""
    if not decl.items:
        raise RaspValueError("vocab must list at least one token", decl.loc)
    if len(decl.items) > MAX_VALUES:
        raise RaspValueError(f"vocab lists more than {MAX_VALUES:,} tokens", decl.items[MAX_VALUES].loc)
    seen: dict = {}  # token_key -> value; a list's `in` made a 40,000-token vocab take 10 s
    read_as: dict = {}  # the number a token is typed as (token_key) -> the first token typed so
    for item in decl.items:
        key = token_key(item.value)  # as the weights file tells tokens apart: numbers as floats
        if key in seen:
            same = "" if seen[key] == item.value else f" (as {literal(seen[key])}: one number as a float)"
            raise RaspValueError(f"vocab lists {literal(item.value)} twice{same}", item.loc)
        seen[key] = item.value
        number = _read_as_number(item.value)
        other = read_as.setdefault(number, item.value) if number is not None else item.value
        if isinstance(other, str) != isinstance(item.value, str):
            raise RaspValueError(
                f"vocab lists {literal(other)} and {literal(item.value)}, which an input cannot tell apart "
                "(the command line reads both from the same text); keep one",
                item.loc,
            )
    for item in decl.items:
        _check_typeable(item)
    return tuple(seen.values())


_NUMBER_TEXT = re.compile(r"-?([0-9]+(\.[0-9]*)?|\.[0-9]+)")
"""A word the command line reads as a number (`3`, `-1`, `0.5`)."""


def _read_as_number(token: ir.Value) -> tuple | None:
    """The number (as a token_key) a token is typed as: itself for a number, the number a
    string spells (`"1"`, `"0.5"`) for such a string, else None."""
    if isinstance(token, str):
        return token_key(float(token)) if _NUMBER_TEXT.fullmatch(token) else None
    return token_key(token)


def _check_typeable(item: syntax_tree.Literal) -> None:
    """A string token that no input could hold: the empty string, or one with a space (the
    command line splits input on whitespace) or a character a terminal does not print."""
    token = item.value
    if not isinstance(token, str):
        return
    if token == "":
        raise RaspValueError('the empty string "" cannot be a token: no input can hold it', item.loc)
    if any(c.isspace() for c in token):
        raise RaspValueError(
            f"the token {literal(token)} holds a space; inputs are split on whitespace, so it could never be typed",
            item.loc,
        )
    if not token.isprintable():
        raise RaspValueError(
            f"the token {literal(token)} holds a character a terminal does not print; it could never be typed",
            item.loc,
        )


def _max_len(decl: syntax_tree.MaxLen) -> int:
    value = decl.value.value
    if not isinstance(value, int) or not 1 <= value <= MAX_LEN_LIMIT:
        raise RaspValueError(f"max_len must be a whole number from 1 to {MAX_LEN_LIMIT:,}, got {value}", decl.value.loc)
    return value
