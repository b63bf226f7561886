"""Random well-formed programs, for differential tests (compiled model == interpreter).

One generator serves two sources of choices: hypothesis (`programs()` strategy, shrinkable) and
a seeded `random.Random` (`random_program(rng)`, for bench/fuzz.py). It covers maps,
sequence_maps (categorical, numerical, mixed), selects with every comparison, `true`/`false` and
lambda predicates, selector and/or/not (same and different keys/queries), categorical and
numerical aggregates with and without defaults, selector_width, numerical<->categorical
conversions, causal and non-causal programs, string and integer vocabs, max_len 1..6; one answer
in four aggregates over a select on a sequence_map (what split-keys splits).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from collections.abc import Callable

from rasp_compile import ir

INT_MAPS = [
    ("x + 1", lambda x: x + 1),
    ("x - 2", lambda x: x - 2),
    ("x % 3", lambda x: x % 3),
    ("min(x, 2)", lambda x: min(x, 2)),
    ("abs(x - 2)", lambda x: abs(x - 2)),
    ("int(x > 1)", lambda x: int(x > 1)),  # ints, not booleans: `default=0` may meet them
    ("-x", lambda x: -x),
    ("x // 2", lambda x: x // 2),
    ("0", lambda x: 0),
]
INT_PAIR_MAPS = [
    ("x + y", lambda x, y: x + y),
    ("x - y", lambda x, y: x - y),
    ("max(x, y)", lambda x, y: max(x, y)),
    ("int(x == y)", lambda x, y: int(x == y)),
    ("(x + y) % 3", lambda x, y: (x + y) % 3),
    ("x if y > 1 else 0", lambda x, y: x if y > 1 else 0),
]
NUM_MAPS = [
    ("x * 2", lambda x: x * 2),
    ("x + 1", lambda x: x + 1),
    ("1 if x > 0.5 else 0", lambda x: 1 if x > 0.5 else 0),
    ("x * x", lambda x: x * x),
    ("round(x * 3)", lambda x: round(x * 3)),
    ("-x", lambda x: -x),
]
NUM_PAIR_MAPS = [
    ("x + y", lambda x, y: x + y),
    ("x - 2 * y", lambda x, y: x - 2 * y),
    ("x * y", lambda x, y: x * y),
]
MIXED_PAIR_MAPS = [  # n a number, c a categorical int: affine in n for each c (gated-maps) or not
    ("n * c", lambda n, c: n * c),
    ("n * c - c", lambda n, c: n * c - c),
    ("n if c > 1 else 1 - n", lambda n, c: n if c > 1 else 1 - n),
    ("n * n + c", lambda n, c: n * n + c),
]
MIXED_PAIR_INTS = [  # the same inputs, a categorical int out (gated steps)
    ("round(n * c) % 3", lambda n, c: round(n * c) % 3),
    ("1 if n > 0.5 else c", lambda n, c: 1 if n > 0.5 else c),
]
INT_PREDICATES = [
    ("k == q - 1", lambda k, q: k == q - 1),
    ("(k + q) % 2 == 0", lambda k, q: (k + q) % 2 == 0),
    ("k < q or k == 0", lambda k, q: k < q or k == 0),
    ("abs(k - q) <= 1", lambda k, q: abs(k - q) <= 1),
]
COMPARISONS = ["==", "!=", "<", "<=", ">", ">=", "true", "false"]


class Chooser:
    """Where choices come from: `int(lo, hi)` inclusive, `pick(seq)`, `coin()`."""

    def __init__(self, next_int: Callable[[int, int], int]):
        self.int = next_int

    def pick(self, seq):
        return seq[self.int(0, len(seq) - 1)]

    def coin(self, heads_in: int = 2) -> bool:
        return self.int(1, heads_in) == 1


@dataclass
class _Pool:
    """S-ops built so far, by kind: categorical over ints, categorical over strings, numerical."""

    ints: list = field(default_factory=list)
    strs: list = field(default_factory=list)
    nums: list = field(default_factory=list)


def _renamed(text: str, number: str, category: str) -> str:
    """A MIXED_PAIR text with its parameters n and c named as the lambda names them."""
    return re.sub(r"\b[nc]\b", lambda m: number if m.group() == "n" else category, text)


def _fn(text: str, call: Callable) -> ir.Fn:
    return ir.Fn(call, f"lambda: {text}")


def _selector(c: Chooser, pool: _Pool, depth: int = 0) -> ir.Selector:
    if depth < 2 and c.coin(4):
        kind = c.pick(["and", "or", "not"])
        if kind == "not":
            return ir.SelectNot(_selector(c, pool, depth + 1))
        combine = ir.SelectAnd if kind == "and" else ir.SelectOr
        return combine(_selector(c, pool, depth + 1), _selector(c, pool, depth + 1))
    if pool.strs and c.coin(4):
        keys, queries = c.pick(pool.strs), c.pick(pool.strs)
        return ir.Select(keys, queries, c.pick(["==", "!=", "true", "false"]))
    keys, queries = c.pick(pool.ints + pool.nums), c.pick(pool.ints + pool.nums)
    if c.coin(3):
        text, call = c.pick(INT_PREDICATES)
        return ir.Select(keys, queries, _fn(text, call))
    return ir.Select(keys, queries, c.pick(COMPARISONS))


def _step(c: Chooser, pool: _Pool, causal: bool) -> None:
    kind = c.int(0, 8)
    if kind == 0 and pool.strs:  # string -> int map
        s = c.pick(pool.strs)
        token = c.pick(["a", "b", "c"])
        pool.ints.append(ir.Map(_fn(f"int(x == {token!r})", lambda x, t=token: int(x == t)), s))
    elif kind == 1:
        text, call = c.pick(INT_MAPS)
        pool.ints.append(ir.Map(_fn(text, call), c.pick(pool.ints)))
    elif kind == 2:
        text, call = c.pick(INT_PAIR_MAPS)
        pool.ints.append(ir.SequenceMap(_fn(text, call), c.pick(pool.ints), c.pick(pool.ints)))
    elif kind == 3:  # categorical aggregate of ints or strings
        source = pool.strs if pool.strs and c.coin() else pool.ints
        sop = c.pick(source)
        default = None if c.coin() else (c.pick(["a", "z"]) if source is pool.strs else c.int(-1, 3))
        target = pool.strs if source is pool.strs else pool.ints
        target.append(ir.Aggregate(_selector(c, pool), sop, default=default))
    elif kind == 4:
        sop = c.pick(pool.nums) if pool.nums and c.coin() else ir.numerical(ir.Map(_fn("x % 2", lambda x: x % 2), c.pick(pool.ints)))
        default = None if c.coin() else c.pick([0, 1, -1, 0.5])
        pool.nums.append(ir.numerical(ir.Aggregate(_selector(c, pool), sop, default=default)))
    elif kind == 5:
        width = ir.SelectorWidth(_selector(c, pool))
        if c.coin(3):
            pool.nums.append(ir.numerical(width))
        else:
            pool.ints.append(width)
    elif kind == 6 and pool.nums:
        text, call = c.pick(NUM_MAPS)
        x = c.pick(pool.nums)
        if c.coin():
            pool.nums.append(ir.numerical(ir.Map(_fn(text, call), x)))
        else:  # numerical -> categorical (steps)
            pool.ints.append(ir.Map(_fn(f"round({text})", lambda v, f=call: round(f(v))), x))
    elif kind == 7 and pool.nums and c.coin():
        text, call = c.pick(NUM_PAIR_MAPS)
        pool.nums.append(ir.numerical(ir.SequenceMap(_fn(text, call), c.pick(pool.nums), c.pick(pool.nums))))
    elif kind == 7 and pool.nums:  # a number and a categorical int, in either order
        numerical_out = c.coin()
        text, call = c.pick(MIXED_PAIR_MAPS if numerical_out else MIXED_PAIR_INTS)
        number, category = c.pick(pool.nums), c.pick(pool.ints)
        if c.coin():
            sop = ir.SequenceMap(_fn(_renamed(text, "x", "y"), call), number, category)
        else:
            swapped = lambda c, n, f=call: f(n, c)  # noqa: E731
            sop = ir.SequenceMap(_fn(_renamed(text, "y", "x"), swapped), category, number)
        if numerical_out:
            pool.nums.append(ir.numerical(sop))
        else:
            pool.ints.append(sop)
    else:  # numerical view of an int s-op
        pool.nums.append(ir.numerical(ir.Map(_fn("x", lambda x: x), c.pick(pool.ints))))


def build_program(c: Chooser) -> ir.Program:
    causal = c.coin()
    max_len = c.int(1, 6)
    if c.coin():
        vocab = tuple(["a", "b", "c"][: c.int(1, 3)])
        pool = _Pool(ints=[ir.indices, ir.length], strs=[ir.tokens])
    else:
        vocab = tuple(range(c.int(1, 4)))
        pool = _Pool(ints=[ir.tokens, ir.indices, ir.length])
    for _ in range(c.int(1, 5)):
        _step(c, pool, causal)
    if c.coin(4):
        output = _answer_on_a_table(c, pool)
    else:
        output = c.pick([p[-1] for p in (pool.ints, pool.strs, pool.nums) if p])
    return ir.Program(output=output, vocab=vocab, max_len=max_len, causal=causal)


def _answer_on_a_table(c: Chooser, pool: _Pool) -> ir.Aggregate:
    """A categorical aggregate whose select compares a sequence_map of two categorical ints (the
    shape split-keys splits; numerical one time in three), sometimes `and` another selector."""
    text, call = c.pick(INT_PAIR_MAPS)
    table = ir.SequenceMap(_fn(text, call), c.pick(pool.ints), c.pick(pool.ints))
    if c.coin(3):
        table = ir.numerical(table)
    queries = c.pick(pool.ints + pool.nums)
    if c.coin(3):
        text, predicate = c.pick(INT_PREDICATES)
        selector: ir.Selector = ir.Select(table, queries, _fn(text, predicate))
    else:
        selector = ir.Select(table, queries, c.pick(COMPARISONS))
    if c.coin(3):
        selector = ir.SelectAnd(selector, _selector(c, pool))
    source = pool.strs if pool.strs and c.coin() else pool.ints
    default = None if c.coin() else (c.pick(["a", "z"]) if source is pool.strs else c.int(-1, 3))
    return ir.Aggregate(selector, c.pick(source), default=default)


def random_program(rng: random.Random) -> ir.Program:
    return build_program(Chooser(rng.randint))


def programs():
    """A hypothesis strategy of programs, shrinking as hypothesis does (hypothesis is imported
    here: it is a test dependency, and `random_program` does without it)."""
    from hypothesis import strategies as st

    return st.composite(lambda draw: build_program(Chooser(lambda lo, hi: draw(st.integers(lo, hi)))))()
