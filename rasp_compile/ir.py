"""The program IR: s-ops and selectors as a graph of small dataclasses.

The same IR is what `.rasp` text lowers to and what research code builds directly from Python
(the embedded API; `rasp_compile.rasp` gives it tracr's names):

    from rasp_compile import ir
    prev = ir.Aggregate(ir.Select(ir.indices, ir.indices, lambda k, q: k == q - 1), ir.tokens, default="a")
    nxt = ((prev == "a") & (ir.tokens == "a")).named("both_a")    # operators build maps
    program = ir.Program(output=nxt, vocab=("a", "b"), max_len=5, causal=True)

Operators on s-ops build new s-ops, as in tracr and RASPy: `sop == "a"`, `sop < 3`, `sop + 1`
are maps, `length - indices` a sequence_map, `a & b`, `a | b`, `~a` the logical and, or, not of
values; on selectors `&`, `|`, `~` combine them. Since `==` builds an s-op, nodes are told apart by
identity only: they hash by identity (`eq=False`), two separately built maps are two s-ops, and an
s-op has no truth value, so an accidental `sop in some_list` or `if a == b` raises TypeError
instead of silently comparing. `.named(name)`, `numerical(sop)` and `categorical(sop)` return
relabelled copies (new nodes), leaving their argument as it was.

Every node keeps an optional `label` (the name it was bound to) and `loc` (where it was written)
for messages. Values are Python scalars: `str`, `int`, `float` or `bool`, or tuples of them as the
intermediate values of a sequence_map; `None` is RASP's "none" (no value).
"""

from __future__ import annotations

import copy
import operator
import re
from dataclasses import dataclass, field
from typing import Any, TypeVar
from collections.abc import Callable, Iterator, Sequence

import numpy as np

from .element_fn import (  # noqa: F401 (re-exported: ir.Fn, ir.as_fn, ir.compare, ...)
    COMPARISONS, VALUE_TEXT, VALUE_TYPES, Fn, Value, as_fn, compare, identity, predicate_table, swapped, unpacked,
)
from .errors import ArgumentError, ArgumentTypeError, Loc
from .safe_text import shown

CATEGORICAL = "categorical"
NUMERICAL = "numerical"


# ---------------------------------------------------------------------------------------------
# S-ops: one value per position.


@dataclass(eq=False, repr=False)
class Expression:
    """What s-ops and selectors share: an optional `label` (the name it was bound to or given by
    `.named`) and `loc` (where it was written), for messages and residual dimension names."""

    label: str | None = field(default=None, kw_only=True)
    loc: Loc | None = field(default=None, kw_only=True)

    def children(self) -> tuple[SOp | Selector, ...]:
        return ()

    @property
    def kind(self) -> str:
        """The kind of node: `map`, `sequence_map`, `selector_width`, ..."""
        return re.sub(r"(?<!^)(?=[A-Z])", "_", type(self).__name__).lower()

    @property
    def name(self) -> str:
        """The label, or the kind of node when it has none."""
        return self.label or self.kind

    def named(self, name: str):
        """A copy of this node labelled `name`; the node itself is left as it is (as in tracr)."""
        return _copy_with(self, label=name)

    def __call__(self, xs):
        """tracr's `program(xs)` is `rasp.evaluate(program, xs)` here: the IR does not run itself
        (the interpreter reads the IR, tools/interpret/), so the call says what to write instead."""
        raise ArgumentTypeError(f"an s-op is not called: run it with rasp.evaluate({self.name}, xs) "
                        "(rasp_compile.rasp, as in tracr) or rc.evaluate(program, xs)")

    def __repr__(self) -> str:
        """One short line, never the whole graph: `<Map 'opp_idx' at 0x7f..>`, `<Map x == 'a' at ..>`."""
        fn = getattr(self, "fn", None)
        text = shown(repr(self.label)) if self.label else shown(fn.text) if fn else ""
        return f"<{type(self).__name__} {text + ' ' if text else ''}at {id(self):#x}>"


E = TypeVar("E", bound="Expression")


def _copy_with(node: E, **changes: Any) -> E:
    """A new node (a new identity) like `node`, with some fields changed."""
    new = copy.copy(node)
    for name, value in changes.items():
        setattr(new, name, value)
    return new


@dataclass(eq=False, repr=False)
class SOp(Expression):
    """A sequence operation. `encoding` is CATEGORICAL (one-hot in the residual stream) or
    NUMERICAL (one dimension holding the number).

    Python operators build new s-ops (see `_operator` below): `sop == "a"`, `sop < 3`, `sop + 1`,
    `length - indices`, `a & b`, `~a`. Because `==` builds a map, s-ops are hashed and told apart
    by identity only (`is`, sets, dicts), and an s-op has no truth value (`if sop`, or `sop in`
    a list of other s-ops, raise TypeError rather than silently comparing).
    """

    encoding: str = field(default=CATEGORICAL, kw_only=True)

    __hash__ = object.__hash__

    def __bool__(self):
        raise ArgumentTypeError(
            "an s-op has no truth value: `==` and `<` on s-ops build new s-ops; "
            "tell nodes apart with `is`, or keep them in a set or dict"
        )

    def __neg__(self) -> SOp:
        return Map(Fn(operator.neg, "-x"), self)

    def __invert__(self) -> SOp:
        """`~` is logical not, as in tracr."""
        return Map(Fn(operator.not_, "not x"), self)


@dataclass(eq=False, repr=False)
class Tokens(SOp):
    """The input token at each position."""


@dataclass(eq=False, repr=False)
class Indices(SOp):
    """The position 0..n-1."""


@dataclass(eq=False, repr=False)
class Length(SOp):
    """The sequence length n (i + 1 at position i in a causal program)."""


@dataclass(eq=False, repr=False)
class Map(SOp):
    """`fn(inner[i])` at each position."""

    fn: Fn
    inner: SOp

    def __post_init__(self):
        self.fn = as_fn(self.fn)

    def children(self):
        return (self.inner,)


@dataclass(eq=False, repr=False)
class SequenceMap(SOp):
    """`fn(first[i], second[i])` at each position."""

    fn: Fn
    first: SOp
    second: SOp

    def __post_init__(self):
        self.fn = as_fn(self.fn)

    def children(self):
        return (self.first, self.second)


@dataclass(eq=False, repr=False)
class Aggregate(SOp):
    """At each query, what `sop` holds at the keys `selector` selects.

    Categorical: the common value of the selected keys (`default` when none is selected; several
    different values is a program error). Numerical: their mean (`default`, or 0 when None).
    """

    selector: Selector
    sop: SOp
    default: Value | None = None

    def children(self):
        return (self.selector, self.sop)


@dataclass(eq=False, repr=False)
class SelectorWidth(SOp):
    """At each query, how many keys `selector` selects."""

    selector: Selector

    def children(self):
        return (self.selector,)


# ---------------------------------------------------------------------------------------------
# Selectors: a boolean matrix [query, key].


@dataclass(eq=False, repr=False)
class Selector(Expression):
    """`a & b`, `a | b` and `~a` combine selectors (SelectAnd, SelectOr, SelectNot)."""

    def __and__(self, other: Selector) -> Selector:
        return SelectAnd(self, other) if isinstance(other, Selector) else NotImplemented

    def __or__(self, other: Selector) -> Selector:
        return SelectOr(self, other) if isinstance(other, Selector) else NotImplemented

    def __invert__(self) -> Selector:
        return SelectNot(self)


@dataclass(eq=False, repr=False)
class Select(Selector):
    """Query q selects key k when `predicate(keys[k], queries[q])` holds; `predicate` is one of
    COMPARISONS (read as `key OP query`) or an `Fn` of (key, query). Never selects where the key
    or the query is none."""

    keys: SOp
    queries: SOp
    predicate: str | Fn

    def __post_init__(self):
        if not isinstance(self.predicate, str):
            self.predicate = as_fn(self.predicate)
        elif self.predicate not in COMPARISONS:
            raise ArgumentError(f"unknown comparison {self.predicate!r}; expected one of {COMPARISONS}")

    def holds(self, key: Value, query: Value) -> bool:
        """The predicate on two (non-none) values."""
        if isinstance(self.predicate, str):
            return compare(self.predicate, key, query)
        return bool(self.predicate(key, query))

    def table(self, keys: Sequence[Value], queries: Sequence[Value]) -> np.ndarray:
        """[len(keys), len(queries)] booleans: `holds` on every pair of (non-none) values, on
        arrays where that gives the same answers (element_fn.predicate_table), else pair by pair."""
        held = predicate_table(self.predicate, keys, queries)
        if held is None:
            held = np.array([[self.holds(k, q) for q in queries] for k in keys], dtype=bool)
        return held.reshape(len(keys), len(queries))

    def children(self):
        return (self.keys, self.queries)


@dataclass(eq=False, repr=False)
class SelectAnd(Selector):
    first: Selector
    second: Selector

    def children(self):
        return (self.first, self.second)


@dataclass(eq=False, repr=False)
class SelectOr(Selector):
    first: Selector
    second: Selector

    def children(self):
        return (self.first, self.second)


@dataclass(eq=False, repr=False)
class SelectNot(Selector):
    inner: Selector

    def children(self):
        return (self.inner,)


Node = SOp | Selector


# ---------------------------------------------------------------------------------------------
# Operators on s-ops: a map of the s-op and a constant, or a sequence_map of two s-ops.

def _operator(symbol: str, op: Callable[[Value, Value], Value], reflected: bool = False):
    """The method behind `sop SYMBOL other` (`other SYMBOL sop` when `reflected`)."""

    def method(self: SOp, other: SOp | Value) -> SOp:
        if isinstance(other, SOp):
            pair = (other, self) if reflected else (self, other)
            return SequenceMap(Fn(op, f"x {symbol} y"), *pair)
        if not isinstance(other, VALUE_TYPES):
            kind = type(other).__name__
            raise ArgumentTypeError(f"`{symbol}` combines an s-op with a value ({VALUE_TEXT}) or an s-op, not {kind}")
        if reflected:
            return Map(Fn(lambda x: op(other, x), f"{other!r} {symbol} x"), self)
        return Map(Fn(lambda x: op(x, other), f"x {symbol} {other!r}"), self)

    return method


_BINARY = {
    "eq": ("==", operator.eq), "ne": ("!=", operator.ne), "lt": ("<", operator.lt), "le": ("<=", operator.le),
    "gt": (">", operator.gt), "ge": (">=", operator.ge), "add": ("+", operator.add), "sub": ("-", operator.sub),
    "mul": ("*", operator.mul), "truediv": ("/", operator.truediv), "floordiv": ("//", operator.floordiv),
    "mod": ("%", operator.mod), "and": ("&", lambda x, y: x and y), "or": ("|", lambda x, y: x or y),
}
_REFLECTED = ("add", "sub", "mul", "truediv", "floordiv", "mod", "and", "or")  # 1 < s is s > 1
for _name, (_symbol, _op) in _BINARY.items():
    setattr(SOp, f"__{_name}__", _operator(_symbol, _op))
    if _name in _REFLECTED:
        setattr(SOp, f"__r{_name}__", _operator(_symbol, _op, reflected=True))


# ---------------------------------------------------------------------------------------------
# The built-ins and the encoding helpers of the embedded API.

tokens = Tokens(label="tokens")
indices = Indices(label="indices")
length = Length(label="length")


def numerical(sop: SOp) -> SOp:
    """The same s-op, numerically encoded (a new node; `sop` is left as it is)."""
    return _encoded(sop, NUMERICAL)


def categorical(sop: SOp) -> SOp:
    """The same s-op, categorically encoded (a new node; `sop` is left as it is)."""
    return _encoded(sop, CATEGORICAL)


def _encoded(sop: SOp, encoding: str) -> SOp:
    """A copy of `sop` with `encoding`; anything but an s-op is refused: a selector has no
    encoding (nothing would read one), nor has a constant."""
    if not isinstance(sop, SOp):
        what = "a selector" if isinstance(sop, Selector) else f"{type(sop).__name__} {sop!r}"
        raise ArgumentTypeError(f"{encoding} expects an s-op, got {what}: only s-ops have an encoding")
    return _copy_with(sop, encoding=encoding)


@dataclass(eq=False)
class Program:
    """A whole program: what it outputs, over which vocab, up to which length, causal or not.

    `source` is the `.rasp` text it came from (None for programs built in Python); `filename`
    names it in messages, and `output_loc` is where the output's expression is written (errors
    about the whole model point there when the output s-op itself has no place, as `tokens`).
    """

    output: SOp
    vocab: tuple[Value, ...]
    max_len: int
    causal: bool = False
    source: str | None = None
    filename: str = "<program>"
    output_name: str = "output"
    output_loc: Loc | None = None

    def __post_init__(self):
        self.vocab = tuple(self.vocab)

    def nodes(self) -> list[Node]:
        """Every node the output depends on, each once, children before parents."""
        return topological_order(self.output)

    def __repr__(self) -> str:
        from .tools.program_view import program_repr  # the view lives with the other inspection tools

        return program_repr(self)

    def _repr_html_(self) -> str:
        from .tools.program_view import program_html

        return program_html(self)


def topological_order(root: Node) -> list[Node]:
    """The nodes reachable from `root`, each once, every node after its children."""
    order: list[Node] = []
    seen: set[int] = set()

    def visit(node: Node) -> Iterator[Node]:
        # Iterative post-order: deep programs must not hit Python's recursion limit.
        stack: list[tuple[Node, bool]] = [(node, False)]
        while stack:
            current, expanded = stack.pop()
            if expanded:
                yield current
                continue
            if id(current) in seen:
                continue
            seen.add(id(current))
            stack.append((current, True))
            for child in reversed(current.children()):
                if id(child) not in seen:
                    stack.append((child, False))

    order.extend(visit(root))
    return order
