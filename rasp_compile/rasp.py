"""tracr's `rasp` names over our IR: a tracr program runs here after changing its import line.

    from rasp_compile import rasp            # was: from tracr.rasp import rasp
    import rasp_compile as rc
    length = rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.TRUE))
    flip = rasp.Select(rasp.indices, length - rasp.indices - 1, rasp.Comparison.EQ)
    reverse = rasp.Aggregate(flip, rasp.tokens).named("reverse")
    rasp.evaluate(reverse, [1, 2, 3])                      # [3, 2, 1]
    model = rc.compile_rasp_to_model(reverse, vocab={1, 2, 3}, max_seq_len=5)

Every name builds the nodes of `rasp_compile.ir` (a subclass where tracr's constructor takes other
arguments), so the compiler, the interpreter and the value inference see one kind of program.
Where tracr's meaning differs from ours (none, defaults, causal programs, a categorical aggregate
of several values), ours holds: docs/from_tracr.md lists each difference.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from typing import cast

from . import ir
from .errors import ArgumentTypeError
from .tools.interpret import evaluate_many

Value = ir.Value
RASPExpr = ir.Expression
SOp = ir.SOp
Selector = ir.Selector
TokensType, IndicesType, LengthType = ir.Tokens, ir.Indices, ir.Length
tokens, indices, length = ir.tokens, ir.indices, ir.length
Aggregate = ir.Aggregate  # (selector, sop, default=None), as tracr's
SelectorWidth = ir.SelectorWidth
SelectorAnd, SelectorOr, SelectorNot = ir.SelectAnd, ir.SelectOr, ir.SelectNot
numerical, categorical = ir.numerical, ir.categorical


class Comparison(enum.Enum):
    """The predicates of `Select`, read as `key OP query`; each value is our comparison's name."""

    EQ = "=="
    LT = "<"
    LEQ = "<="
    GT = ">"
    GEQ = ">="
    NEQ = "!="
    TRUE = "true"
    FALSE = "false"

    def __call__(self, key: Value, query: Value) -> bool:
        return ir.compare(self.value, key, query)


class Encoding(enum.Enum):
    CATEGORICAL = ir.CATEGORICAL
    NUMERICAL = ir.NUMERICAL


class Map(ir.Map):
    """`f(inner[i])` at each position. With `simplify` (the default, as in tracr) a map of a
    categorical map becomes one map of the composed function. A numerical inner map is kept: it
    turns none into 0, which the composed map would not (docs/language.md, none and defaults)."""

    def __init__(self, f: Callable[[Value], Value], inner: ir.SOp, simplify: bool = True):
        if simplify and isinstance(inner, ir.Map) and inner.encoding == ir.CATEGORICAL:
            inner_fn, outer_fn = inner.fn, ir.as_fn(f)
            f, inner = ir.Fn(lambda x: outer_fn(inner_fn(x)), outer_fn.text), inner.inner
        super().__init__(ir.as_fn(f), inner)  # as ir.Map would make it


class SequenceMap(ir.SequenceMap):
    """`f(fst[i], snd[i])` at each position."""

    def __init__(self, f: Callable[[Value, Value], Value], fst: ir.SOp, snd: ir.SOp):
        super().__init__(ir.as_fn(f), fst, snd)  # as ir.SequenceMap would make it


class LinearSequenceMap(SequenceMap):
    """`fst_fac * fst[i] + snd_fac * snd[i]` at each position."""

    def __init__(self, fst: ir.SOp, snd: ir.SOp, fst_fac: float, snd_fac: float):
        text = f"x * {fst_fac!r} + y * {snd_fac!r}"
        super().__init__(ir.Fn(lambda x, y: fst_fac * x + snd_fac * y, text), fst, snd)
        self.fst_fac, self.snd_fac = fst_fac, snd_fac


class Full(ir.Map):
    """`fill` at every position (a map of `indices` that ignores the index)."""

    def __init__(self, fill: Value):
        super().__init__(ir.Fn(lambda _: fill, f"full {fill!r}"), ir.indices)
        self.fill = fill


class ConstantSOp(ir.Map):
    """`value[i]` at position i: `value` must hold max_seq_len values or more (an input shorter
    than `value` reads its first values; tracr's length check is not made)."""

    def __init__(self, value: Sequence[Value], check_length: bool = True):
        values = tuple(value)
        super().__init__(ir.Fn(values.__getitem__, f"constant {list(values)!r}"), ir.indices)
        self.value, self.check_length = values, check_length


class Select(ir.Select):
    """Query q selects key k when `predicate(keys[k], queries[q])`: a `Comparison` or a function
    of (key, query). As everywhere in our RASP, a none key or query is never selected."""

    def __init__(self, keys: ir.SOp, queries: ir.SOp, predicate: Comparison | Callable[[Value, Value], bool]):
        super().__init__(keys, queries, _predicate(predicate))


def _predicate(predicate: Comparison | Callable[[Value, Value], bool]) -> str | ir.Fn:
    """A Comparison's name, or the function as an Fn (as ir.Select would make it; a name given
    as a str is passed on, which ir.Select checks)."""
    if isinstance(predicate, Comparison):
        return predicate.value
    return predicate if isinstance(predicate, str) else ir.as_fn(predicate)


class ConstantSelector(ir.Select):
    """Query q selects key k when `value[q][k]`; `value` must cover max_seq_len positions."""

    def __init__(self, value: Sequence[Sequence[bool]], check_length: bool = True):
        rows = tuple(tuple(bool(s) for s in row) for row in value)
        super().__init__(ir.indices, ir.indices, ir.Fn(lambda k, q: rows[q][k], "constant selector"))
        self.value, self.check_length = rows, check_length


# `simplify` (tracr's merging of two selects on the same s-ops into one) is accepted and not needed:
# the compiler folds the terms of an and / or that read the same s-ops into one table itself.


def selector_and(fst: ir.Selector, snd: ir.Selector, simplify: bool = True) -> ir.Selector:
    return fst & snd


def selector_or(fst: ir.Selector, snd: ir.Selector, simplify: bool = True) -> ir.Selector:
    return fst | snd


def selector_not(inner: ir.Selector, simplify: bool = True) -> ir.Selector:
    return ~inner


def sop_not(sop: ir.SOp) -> ir.SOp:
    return ~sop


def annotate(expr: ir.Expression, **annotations) -> ir.Expression:
    """A copy of `expr` with a `name` and, for an s-op, an `encoding` (an `Encoding` or its
    value); these are the only annotations the compiler reads, so any other is refused, and so is
    an encoding of a selector, which nothing would read (tracr's compiler reads s-ops' alone)."""
    unknown = set(annotations) - {"name", "encoding"}
    if unknown:
        raise ArgumentTypeError(f"annotate takes name= and encoding=, not {', '.join(sorted(unknown))}=")
    if "encoding" in annotations and not isinstance(expr, ir.SOp):
        raise ArgumentTypeError("annotate's encoding= is for an s-op; a selector has no encoding (annotate the "
                                "s-ops it compares, or the aggregate that reads it)")
    new = expr.named(annotations["name"]) if "name" in annotations else expr
    if "encoding" in annotations:
        sop = cast(ir.SOp, new)
        new = numerical(sop) if Encoding(annotations["encoding"]) is Encoding.NUMERICAL else categorical(sop)
    return new


def get_encoding(sop: ir.SOp) -> Encoding:
    return Encoding(sop.encoding)


def is_numerical(sop: ir.SOp) -> bool:
    return sop.encoding == ir.NUMERICAL


def is_categorical(sop: ir.SOp) -> bool:
    return sop.encoding == ir.CATEGORICAL


def evaluate(expr: ir.Expression, xs: Sequence[Value]) -> list:
    """`expr` on the input `xs` by our reference interpreter (non-causal): one value per position
    (None for none) for an s-op, one row of booleans per query for a selector."""
    vocab = tuple(dict.fromkeys(xs))
    output = cast(ir.SOp, expr)  # the interpreter evaluates a selector too (one row per query)
    program = ir.Program(output=output, vocab=vocab, max_len=max(len(xs), 1))
    return evaluate_many(program, [list(xs)])[0]
