"""Text -> AST: the Lark parser (grammar.lark, LALR) and a Transformer building syntax_tree.py nodes.

Lark's errors are caught here and re-raised as `RaspSyntaxError` with a location inside the text
and an "expected one of ..." message in human words. No `lark.Tree` leaves this module.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Iterator

from lark import Lark, Token, Transformer_NonRecursive, Tree, UnexpectedInput, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedToken, VisitError
from lark.lexer import PatternStr

from . import syntax_tree
from ..errors import Loc, RaspSyntaxError
from .lambda_eval import MAX_INT

MAX_DEPTH = 100
"""The deepest nesting of expressions accepted; later stages recurse over the tree."""


class _PostLexer:
    """Drops newlines inside parentheses, square brackets and vocab braces (so calls may span
    lines), and refuses keywords where a name stands (the contextual lexer lexes them as names
    there)."""

    always_accept = ("_NL",)
    keywords: frozenset[str] = frozenset()  # set once the grammar is loaded

    def process(self, stream: Iterator[Token]) -> Iterator[Token]:
        open_brackets: list[bool] = []  # per open bracket: are newlines dropped inside it?
        previous = None
        for token in stream:
            if token.type == "NAME" and token.value in self.keywords:
                raise RaspSyntaxError(f"'{token.value}' is a keyword and cannot be used as a name", _loc(token))
            if token.type in ("LPAR", "LSQB", "LBRACE"):
                open_brackets.append(token.type != "LBRACE" or previous == "VOCAB")
            elif token.type in ("RPAR", "RSQB", "RBRACE") and open_brackets:
                open_brackets.pop()
            elif token.type == "_NL" and open_brackets and open_brackets[-1]:
                continue
            previous = token.type
            yield token


def _make_parser() -> Lark:
    grammar = (Path(__file__).parent / "grammar.lark").read_text(encoding="utf-8")
    postlex = _PostLexer()
    # cache=True: the LALR tables are built once per grammar and kept in the temp folder, so
    # a new process (every rasp-compile run) loads them instead of rebuilding them.
    parser = Lark(grammar, parser="lalr", lexer="contextual", postlex=postlex, propagate_positions=True, cache=True)
    name = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
    postlex.keywords = frozenset(
        t.pattern.value for t in parser.terminals if isinstance(t.pattern, PatternStr) and name.fullmatch(t.pattern.value)
    )
    return parser


_PARSER = _make_parser()

_TOKEN_NAMES = {
    "NAME": "a name",
    "NUMBER": "a number",
    "STRING": "a string",
    "COMP_OP": "a comparison operator",
    "_NL": "a newline",
    "$END": "the end of the program",
    "operator": "an operator",
}

_UNEXPECTED_NAMES = {"_NL": "end of line", "$END": "end of the program"}


# Characters that str.splitlines() (and so errors.format_error) takes for line breaks but Lark
# does not: refused, so that every line number means the same line to both.
_ODD_LINE_BREAK = re.compile(r"\r(?!\n)|[\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
# A lone surrogate (possible in a Python str, never in a decoded file) is no text: no file, page or
# terminal can hold it, so a value made of it could not be saved or shown.
_NO_TEXT = re.compile(r"[\ud800-\udfff]")


def _loc_of(text: str, index: int) -> Loc:
    """The line and column (1-based) of `text[index]`."""
    return Loc(text.count("\n", 0, index) + 1, index - text.rfind("\n", 0, index))


def parse(text: str) -> syntax_tree.Module:
    """The AST of a program's text; RaspSyntaxError (located inside `text`) if it is malformed."""
    odd = _ODD_LINE_BREAK.search(text)
    if odd:
        raise RaspSyntaxError(f"unexpected line-break character {odd.group()!r}; lines end with '\\n'",
                              _loc_of(text, odd.start()))
    lone = _NO_TEXT.search(text)
    if lone:
        raise RaspSyntaxError(f"unexpected {lone.group()!r}, a lone surrogate, which is no text",
                              _loc_of(text, lone.start()))
    text = text.replace("\r\n", "\n")  # a '\r' before '\n' would count as a column of its line
    try:
        tree = _PARSER.parse(text)
        module = _ToAst(text).transform(tree)
    except UnexpectedInput as error:
        raise _syntax_error(error, text) from None
    except VisitError as error:  # a RaspSyntaxError from _ToAst, or a bug: raised as it is
        raise error.orig_exc from None
    _check_depth(module)
    return module


def clamp(loc: Loc, text: str) -> Loc:
    """`loc` moved inside `text` (Lark places the end of input past a final newline)."""
    lines = text.split("\n")
    if len(lines) > 1 and not lines[-1]:
        lines.pop()
    if loc.line > len(lines):
        return Loc(len(lines), len(lines[-1]) + 1)
    line = max(loc.line, 1)
    return Loc(line, min(max(loc.col, 1), len(lines[line - 1]) + 1))


def _loc(token: Token) -> Loc:
    assert token.line is not None and token.column is not None  # the lexer places every token it makes
    return Loc(token.line, token.column)


def _describe_terminal(name: str) -> str:
    if name in _TOKEN_NAMES:
        return _TOKEN_NAMES[name]
    pattern = _PARSER.get_terminal(name).pattern
    return f"'{pattern.value}'" if isinstance(pattern, PatternStr) else name.lower()


def _describe_token(token: Token) -> str:
    if token.type in _UNEXPECTED_NAMES:
        return _UNEXPECTED_NAMES[token.type]
    if token.type == "NAME":
        return f"name '{token.value}'"
    if token.type in ("NUMBER", "STRING"):
        return f"{token.type.lower()} {token.value}"
    return f"'{token.value}'"


# Terminals that continue an expression: listed together as "an operator".
_OPERATORS = {"COMP_OP", "IN", "LSQB", "PLUS", "MINUS", "STAR", "SLASH", "DSLASH", "PERCENT", "AND", "OR", "IF"}


def _expected(names: set[str]) -> str:
    # `not` after an operand starts `not in`: an operator there (before an operand, a prefix)
    operators = _OPERATORS | {"NOT"} if "IN" in names else _OPERATORS
    if len(names & operators) > 1:
        names = (names - operators) | {"operator"}
    described = sorted({_describe_terminal(n) for n in names}, key=lambda d: (d.startswith("'"), d))
    if len(described) == 1:
        return f"expected {described[0]}"
    return "expected one of " + ", ".join(described)


def _syntax_error(error: UnexpectedInput, text: str) -> RaspSyntaxError:
    line, col = error.line, error.column
    if isinstance(error, UnexpectedCharacters):
        assert error.pos_in_stream is not None  # the lexer says where it stopped
        char = text[error.pos_in_stream]
        if char in "\"'":
            message = "unterminated string (a string ends with its opening quote, on the same line)"
        else:
            message = f"unexpected character {char!r}"
    elif isinstance(error, UnexpectedToken):
        unclosed = _unclosed_bracket(error)
        if unclosed is not None:
            return unclosed
        message = f"unexpected {_describe_token(error.token)}; {_expected(error.accepts or error.expected)}"
        if error.token.type == "$END":
            line, col = text.count("\n") + 2, 1  # past the end: clamp() moves it to the last character
    else:  # UnexpectedEOF (not raised by LALR, but part of UnexpectedInput)
        message = "unexpected end of the program"
    return RaspSyntaxError(message, clamp(Loc(line or 1, col or 1), text))


_CLOSERS = {"LPAR": ("RPAR", ")"), "LSQB": ("RSQB", "]"), "LBRACE": ("RBRACE", "}")}


def _unclosed_bracket(error: UnexpectedToken) -> RaspSyntaxError | None:
    """The error of a bracket left open at the end of a line, located there, or None.

    The post-lexer drops newlines inside parentheses (and a vocab's braces), so a missing ')'
    shows only at the first token of the next line that cannot continue the expression. When the
    innermost open bracket could have been closed just before that newline, the error is that
    bracket, reported right after the last token of its line rather than on the next line.
    """
    token = error.token
    stack = error.interactive_parser.parser_state.value_stack if error.interactive_parser else []
    end = _end(stack[-1]) if stack else None
    opening = _innermost_open(stack)
    if token.type in ("$END", "_NL") or end is None or opening is None or end.line >= token.line:
        return None
    closer, char = _CLOSERS[opening.type]
    if closer not in (error.accepts or error.expected):
        return None
    return RaspSyntaxError(
        f"missing '{char}' to close the '{opening.value}' at line {opening.line}, column {opening.column} "
        f"(the next line starts with {_describe_token(token)})",
        end,
    )


def _innermost_open(stack: list) -> Token | None:
    """The last bracket on the parser's value stack that no later bracket there closes, if
    newlines are dropped inside it (a parenthesis, a square bracket or a vocab's brace, not a
    def's brace)."""
    closed = 0
    for i in reversed(range(len(stack))):
        item = stack[i]
        if isinstance(item, Token) and item.type in ("RPAR", "RSQB", "RBRACE"):
            closed += 1
        elif isinstance(item, Token) and item.type in _CLOSERS:
            if not closed:
                vocab = i > 0 and isinstance(stack[i - 1], Token) and stack[i - 1].type == "VOCAB"
                return item if item.type != "LBRACE" or vocab else None
            closed -= 1
    return None


def _end(item: Token | Tree) -> Loc | None:
    """Just after the last character of a token or a (partly) parsed rule; None if it is empty."""
    if isinstance(item, Token):
        assert item.end_line is not None and item.end_column is not None  # the lexer places every token it makes
        return Loc(item.end_line, item.end_column)
    return None if item.meta.empty else Loc(item.meta.end_line, item.meta.end_column)


def _check_depth(module: syntax_tree.Module) -> None:
    stack: list[tuple[syntax_tree.Node, int]] = [(module, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            assert isinstance(node, syntax_tree.Argument | syntax_tree.Statement)  # the Module, at depth 0, has no loc
            raise RaspSyntaxError(f"expression nested too deeply (more than {MAX_DEPTH} levels)", node.loc)
        stack.extend((child, depth + 1) for child in syntax_tree.children(node))


@dataclass
class _Return:
    """`return EXPR` inside a def; folded into `syntax_tree.Def.result` (it is no statement of its own)."""

    value: syntax_tree.Expr
    loc: Loc


def _number(token: Token, negative: bool = False) -> syntax_tree.Literal:
    digits = token.value
    whole = digits.split(".")[0]
    if len(whole) > 19 or int(whole) > MAX_INT:  # the length first: int() refuses huge strings
        raise RaspSyntaxError("number too large (the limit is 10**18)", _loc(token))
    value = float(digits) if "." in digits else int(digits)
    if value == 0 and digits.strip("0.") != "":  # 0.000...1 underflows: it would silently be 0
        raise RaspSyntaxError("number too small: it would be 0 as a float", _loc(token))
    return syntax_tree.Literal(-value if negative else value, _loc(token))


@v_args(inline=True)
class _ToAst(Transformer_NonRecursive):
    """Lark tree -> syntax_tree.py nodes. One instance per parse (it keeps the text, for lambda texts)."""

    def __init__(self, text: str):
        super().__init__()
        self.text = text

    def __default__(self, data, children, meta):
        raise NotImplementedError(f"no AST rule for grammar rule {data!r}")

    def start(self, *statements):
        return syntax_tree.Module(list(statements))

    def assign(self, name, value):
        return syntax_tree.Assign(name.value, value, _loc(name))

    @v_args(meta=True, inline=False)
    def def_(self, meta, children):
        name, *rest = children
        params = [syntax_tree.Name(t.value, _loc(t)) for t in rest if isinstance(t, Token)]
        body = [s for s in rest if not isinstance(s, Token)]
        returns = [i for i, s in enumerate(body) if isinstance(s, _Return)]
        if not returns:
            closing = Loc(meta.end_line, meta.end_column - 1)
            raise RaspSyntaxError(f"the body of '{name}' must end with 'return EXPR'", closing)
        if returns[0] != len(body) - 1:
            raise RaspSyntaxError(f"'return' must be the last statement of '{name}'", body[returns[0] + 1].loc)
        return syntax_tree.Def(name.value, params, body[:-1], body[-1].value, _loc(name))

    def return_(self, keyword, value):
        return _Return(value, _loc(keyword))

    def vocab(self, keyword, *items):
        return syntax_tree.Vocab([self._vocab_item(item) for item in items], _loc(keyword))

    @staticmethod
    def _vocab_item(item):
        if isinstance(item, syntax_tree.Literal):
            return item
        return syntax_tree.Literal(item.value[1:-1] if item.type == "STRING" else item.value, _loc(item))

    def max_len(self, keyword, value):
        return syntax_tree.MaxLen(value, _loc(keyword))

    def causal(self, keyword):
        return syntax_tree.Causal(_loc(keyword))

    def output(self, keyword, value):
        return syntax_tree.Output(value, _loc(keyword))

    def signed_number(self, *tokens):
        return _number(tokens[-1], negative=len(tokens) == 2)

    def ternary(self, then, keyword, cond, orelse):
        return syntax_tree.Ternary(then, cond, orelse, _loc(keyword))

    def binary(self, left, op, right):
        return syntax_tree.Binary(op.value, left, right, _loc(op))

    def compare(self, left, op, right, *more):
        if more:
            raise RaspSyntaxError(
                f"chained comparisons are not supported; write 'a {op} b and b {more[0]} c'", _loc(more[0])
            )
        return syntax_tree.Binary(op.value, left, right, _loc(op))

    def comparator(self, *tokens):
        """`==`, ..., `in`, or `not in` (two tokens), as one token placed at its first."""
        return tokens[0] if len(tokens) == 1 else Token.new_borrow_pos("COMP_OP", "not in", tokens[0])

    def index(self, value, bracket, position):
        return syntax_tree.Index(value, position, _loc(bracket))

    def tuple(self, parenthesis, *items):
        return syntax_tree.Tuple(list(items), _loc(parenthesis))

    def unary(self, op, operand):
        return syntax_tree.Unary(op.value, operand, _loc(op))

    def name(self, token):
        return syntax_tree.Name(token.value, _loc(token))

    def number(self, token):
        return _number(token)

    def string(self, token):
        return syntax_tree.Literal(token.value[1:-1], _loc(token))

    def true(self, token):
        return syntax_tree.Literal(True, _loc(token))

    def false(self, token):
        return syntax_tree.Literal(False, _loc(token))

    def call(self, name, *args):
        first = next((i for i, arg in enumerate(args) if isinstance(arg, syntax_tree.Keyword)), len(args))
        late = next((arg for arg in args[first:] if not isinstance(arg, syntax_tree.Keyword)), None)
        if late is not None:  # Python's rule: f(a, k=1, b) is refused, not read as f(a, b, k=1)
            raise RaspSyntaxError(
                f"a positional argument cannot follow the keyword argument '{args[first].name}='", late.loc
            )
        return syntax_tree.Call(name.value, list(args), _loc(name))

    def keyword(self, name, value):
        return syntax_tree.Keyword(name.value, value, _loc(name))

    def compare_op(self, token):
        return syntax_tree.CompareOp(token.value, _loc(token))

    @v_args(meta=True, inline=False)
    def lambda_(self, meta, children):
        keyword, *params, body = children
        written = self.text[meta.start_pos : meta.end_pos]
        text = re.sub(r"\s*\n\s*", " ", written)  # a lambda spread over lines reads as one
        return syntax_tree.Lambda([syntax_tree.Name(t.value, _loc(t)) for t in params], body, text, _loc(keyword))
