"""The program IR: s-ops and selectors as a graph of small dataclasses.

The same IR is what `.rasp` text lowers to and what research code builds directly from Python
(the embedded API, in the spirit of tracr's `rasp` module):

    from rasp_compile import ir
    prev = ir.Aggregate(ir.Select(ir.indices, ir.indices, lambda k, q: k == q - 1), ir.tokens, default="a")
    nxt = ir.SequenceMap(lambda p, t: "b" if p == "a" and t == "a" else "a", prev, ir.tokens)
    program = ir.Program(output=nxt, vocab=("a", "b"), max_len=5, causal=True)

Nodes compare by identity (`eq=False`): two separately built maps are two s-ops. Every node keeps
an optional `label` (the name it was bound to) and `loc` (where it was written) for messages.
Values are Python scalars: `str`, `int`, `float` or `bool`; `None` is RASP's "none" (no value).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Callable, Iterator, Union

from .errors import Loc

Value = Union[str, int, float, bool]

CATEGORICAL = "categorical"
NUMERICAL = "numerical"

COMPARISONS = ("==", "!=", "<", "<=", ">", ">=", "true", "false")


@dataclass(frozen=True, eq=False)
class Fn:
    """An element-wise scalar function of one or two values (a map's or a predicate's lambda).

    `call` must be pure and may raise; `text` is how it reads (for messages and summaries);
    `loc` is the lambda's place in the source, if it came from text.
    """

    call: Callable[..., Value]
    text: str = "<python function>"
    loc: Loc | None = None
    results: dict = field(default_factory=dict, repr=False)  # memo: arguments -> result

    def __call__(self, *args: Value) -> Value:
        """`call(*args)`, canonical (floats snapped), computed once per distinct arguments:
        inference, compilation and the interpreter all ask for the same combinations."""
        key = args + tuple(map(type, args))  # 1, 1.0 and True are equal, not the same
        if key not in self.results:
            self.results[key] = canonical(self.call(*args))
        return self.results[key]


SNAP_DENOMINATOR = 10**6
SNAP_TOLERANCE = 1e-12


def canonical(value: Value) -> Value:
    """A float within 1e-12 (relative) of a fraction p/q with q <= 10**6 becomes that fraction's
    float; every other value stays as it is.

    Float arithmetic makes one number many (`0.1 + 0.2`, a mean of means reached two ways):
    snapping every computed float to the simple fraction it stands for keeps one value per
    number, in the interpreter and in value sets alike. Two such fractions are at least 1e-12
    apart, so the snap is unambiguous.
    """
    if isinstance(value, float) and math.isfinite(value):
        numerator, denominator = value.as_integer_ratio()
        if denominator <= SNAP_DENOMINATOR:
            return numerator / denominator  # itself (-0.0 becomes 0.0)
        p, q = _closest_fraction(numerator, denominator, SNAP_DENOMINATOR)
        tolerance, scale = (SNAP_TOLERANCE * max(1.0, abs(value))).as_integer_ratio()
        if abs(p * denominator - numerator * q) * scale <= tolerance * q * denominator:
            return p / q
    return value


def _closest_fraction(numerator: int, denominator: int, largest: int) -> tuple[int, int]:
    """(p, q): the fraction closest to numerator / denominator with q <= largest, the smaller q
    on a tie: Fraction.limit_denominator's continued-fraction search, in integers (canonical runs
    on every float a lambda returns, and Fraction objects made it the compiler's slowest step)."""
    p0, q0, p1, q1 = 0, 1, 1, 0
    n, d = numerator, denominator
    while True:
        a = n // d
        q2 = q0 + a * q1
        if q2 > largest:
            break
        p0, q0, p1, q1 = p1, q1, p0 + a * p1, q2
        n, d = d, n - a * d
    k = (largest - q0) // q1
    p2, q2 = p0 + k * p1, q0 + k * q1
    if abs(p1 * denominator - numerator * q1) * q2 <= abs(p2 * denominator - numerator * q2) * q1:
        return p1, q1
    return p2, q2


def as_fn(f: Fn | Callable[..., Value]) -> Fn:
    """Wrap a plain Python callable as an `Fn` (the embedded API accepts either)."""
    return f if isinstance(f, Fn) else Fn(f, getattr(f, "__name__", "<python function>"))


def identity(value: Value) -> Value:
    return value


def compare(op: str, key: Value, query: Value) -> bool:
    """A comparison predicate, read as `key OP query` (docs/language.md, `select`)."""
    if op == "true":
        return True
    if op == "false":
        return False
    if op == "==":
        return key == query
    if op == "!=":
        return key != query
    if op == "<":
        return key < query
    if op == "<=":
        return key <= query
    if op == ">":
        return key > query
    if op == ">=":
        return key >= query
    raise ValueError(f"unknown comparison {op!r}")


# ---------------------------------------------------------------------------------------------
# S-ops: one value per position.


@dataclass(eq=False)
class SOp:
    """A sequence operation. `encoding` is CATEGORICAL (one-hot in the residual stream) or
    NUMERICAL (one dimension holding the number)."""

    encoding: str = field(default=CATEGORICAL, kw_only=True)
    label: str | None = field(default=None, kw_only=True)
    loc: Loc | None = field(default=None, kw_only=True)

    def children(self) -> tuple[SOp | Selector, ...]:
        return ()


@dataclass(eq=False)
class Tokens(SOp):
    """The input token at each position."""


@dataclass(eq=False)
class Indices(SOp):
    """The position 0..n-1."""


@dataclass(eq=False)
class Length(SOp):
    """The sequence length n (i + 1 at position i in a causal program)."""


@dataclass(eq=False)
class Map(SOp):
    """`fn(inner[i])` at each position."""

    fn: Fn
    inner: SOp

    def __post_init__(self):
        self.fn = as_fn(self.fn)

    def children(self):
        return (self.inner,)


@dataclass(eq=False)
class SequenceMap(SOp):
    """`fn(first[i], second[i])` at each position."""

    fn: Fn
    first: SOp
    second: SOp

    def __post_init__(self):
        self.fn = as_fn(self.fn)

    def children(self):
        return (self.first, self.second)


@dataclass(eq=False)
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


@dataclass(eq=False)
class SelectorWidth(SOp):
    """At each query, how many keys `selector` selects."""

    selector: Selector

    def children(self):
        return (self.selector,)


# ---------------------------------------------------------------------------------------------
# Selectors: a boolean matrix [query, key].


@dataclass(eq=False)
class Selector:
    label: str | None = field(default=None, kw_only=True)
    loc: Loc | None = field(default=None, kw_only=True)

    def children(self) -> tuple[SOp | Selector, ...]:
        return ()


@dataclass(eq=False)
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
            raise ValueError(f"unknown comparison {self.predicate!r}; expected one of {COMPARISONS}")

    def holds(self, key: Value, query: Value) -> bool:
        """The predicate on two (non-none) values."""
        if isinstance(self.predicate, str):
            return compare(self.predicate, key, query)
        return bool(self.predicate(key, query))

    def children(self):
        return (self.keys, self.queries)


@dataclass(eq=False)
class SelectAnd(Selector):
    first: Selector
    second: Selector

    def children(self):
        return (self.first, self.second)


@dataclass(eq=False)
class SelectOr(Selector):
    first: Selector
    second: Selector

    def children(self):
        return (self.first, self.second)


@dataclass(eq=False)
class SelectNot(Selector):
    inner: Selector

    def children(self):
        return (self.inner,)


Node = Union[SOp, Selector]


# ---------------------------------------------------------------------------------------------
# The built-ins and the encoding helpers of the embedded API.

tokens = Tokens(label="tokens")
indices = Indices(label="indices")
length = Length(label="length")


def numerical(sop: SOp) -> SOp:
    """The same s-op, numerically encoded (a new node; `sop` is left as it is)."""
    return dataclasses.replace(sop, encoding=NUMERICAL)


def categorical(sop: SOp) -> SOp:
    """The same s-op, categorically encoded (a new node; `sop` is left as it is)."""
    return dataclasses.replace(sop, encoding=CATEGORICAL)


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
