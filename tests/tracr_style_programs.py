"""The programs of tracr's library and README, written by us against `rasp_compile.rasp` (the
algorithms as tracr's `lib` describes them; the only import is ours), each with a plain-Python
reference written without RASP, and the vocab / max_len / input generator a test uses.

    CASES["sort_freq"].program()     # an s-op of rasp_compile.rasp
    CASES["sort_freq"].reference(xs) # what it must give, computed directly
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from collections.abc import Callable

from rasp_compile import rasp

# ---------------------------------------------------------------------------------------------
# The programs (tracr programmers' style: a tracr program is these lines with tracr's import).


def make_length():
    everything = rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.TRUE).named("everything")
    return rasp.SelectorWidth(everything).named("length")


def make_reverse(sop):
    mirror = (make_length() - rasp.indices - 1).named("mirror")
    return rasp.Aggregate(rasp.Select(rasp.indices, mirror, rasp.Comparison.EQ), sop).named("reverse")


def readme_reverse(r):
    """tracr's README example, reverse with `length - indices - 1`, built with the `rasp` module
    `r` (ours or tracr's: the same lines build both)."""
    length = r.SelectorWidth(r.Select(r.tokens, r.tokens, r.Comparison.TRUE))
    opposite = length - r.indices - 1
    flip = r.Select(r.indices, opposite, r.Comparison.EQ)
    return r.Aggregate(flip, r.tokens)


def make_hist():
    same = rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ)
    return rasp.SelectorWidth(same).named("hist")


def make_sort_unique(vals, keys):
    place = rasp.SelectorWidth(rasp.Select(keys, keys, rasp.Comparison.LT)).named("place")
    return rasp.Aggregate(rasp.Select(place, rasp.indices, rasp.Comparison.EQ), vals).named("sort")


def make_sort(vals, keys, *, max_seq_len, min_key):
    unique = rasp.SequenceMap(lambda key, i: key + min_key * i / max_seq_len, keys, rasp.indices)
    return make_sort_unique(vals, unique)


def make_sort_freq(max_seq_len):
    rarity = -1 * make_hist()
    return make_sort(rasp.tokens, rarity, max_seq_len=max_seq_len, min_key=1).named("sort_freq")


def make_frac_prevs(bools):
    upto = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ)
    return rasp.numerical(rasp.Aggregate(upto, rasp.numerical(bools), default=0)).named("frac_prevs")


def make_pair_balance(sop, open_token, close_token):
    opened = make_frac_prevs(sop == open_token)
    closed = make_frac_prevs(sop == close_token)
    return rasp.numerical(rasp.LinearSequenceMap(opened, closed, 1, -1)).named("pair_balance")


def make_shuffle_dyck(pairs):
    balances = [make_pair_balance(rasp.tokens, pair[0], pair[1]) for pair in pairs]
    went_negative = balances[0] < 0
    for balance in balances[1:]:
        went_negative = went_negative | (balance < 0)
    went_negative = rasp.numerical(rasp.Map(lambda x: x, went_negative))
    everywhere = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.TRUE)
    ever_negative = rasp.numerical(rasp.Aggregate(everywhere, went_negative, default=0))
    closed = balances[0] == 0
    for balance in balances[1:]:
        closed = closed & (balance == 0)
    last = rasp.Select(rasp.indices, make_length() - 1, rasp.Comparison.EQ)
    closed_at_end = rasp.Aggregate(last, closed)
    return (closed_at_end & ~ever_negative).named("shuffle_dyck")


def make_nary_sequencemap(f, *sops):
    packed, *rest = sops
    for sop in rest:
        packed = rasp.SequenceMap(lambda acc, y: (*acc, y) if isinstance(acc, tuple) else (acc, y), packed, sop)
    return rasp.Map(lambda args: f(*args), packed)


def make_count_less_freq(n):
    hist = make_hist()
    rare = rasp.Select(hist, hist, lambda key, query: key <= n)
    return rasp.SelectorWidth(rare).named("count_less_freq")


def make_count(sop, token):
    return rasp.SelectorWidth(rasp.Select(sop, sop, lambda key, query: key == token)).named(f"count_{token}")


def shift_by(offset, sop):
    earlier = rasp.Select(rasp.indices, rasp.indices, lambda key, query: query == key + offset)
    return rasp.Aggregate(earlier, sop, default=None).named(f"shift_by({offset})")


def detect_pattern(sop, pattern):
    found = None
    for back, element in enumerate(reversed(pattern)):
        here = sop == element
        here = shift_by(back, here) if back else here
        found = here if found is None else here & found
    return found.named(f"detect_pattern({pattern})")


# ---------------------------------------------------------------------------------------------
# Plain-Python references: the same answers, computed directly from the input list.


def _balanced(xs, pairs):
    for opener, closer in pairs:
        depth = 0
        for x in xs:
            depth += (x == opener) - (x == closer)
            if depth < 0:
                return False
        if depth:
            return False
    return True


def _detected(xs, pattern):
    m = len(pattern)
    return [None if j < m - 1 else xs[j - m + 1: j + 1] == list(pattern) for j in range(len(xs))]


def _fractions(flags):
    return [sum(flags[: i + 1]) / (i + 1) for i in range(len(flags))]


REFERENCES = {
    "length": lambda xs: [len(xs)] * len(xs),
    "reverse": lambda xs: xs[::-1],
    "hist": lambda xs: [xs.count(x) for x in xs],
    "sort_unique": sorted,
    "sort": sorted,
    "sort_freq": lambda xs: [xs[i] for i in sorted(range(len(xs)), key=lambda i: (-xs.count(xs[i]), i))],
    "frac_prevs": lambda xs: _fractions([x == "x" for x in xs]),
    "pair_balance": lambda xs: [o - c for o, c in zip(_fractions([x == "(" for x in xs]),
                                                       _fractions([x == ")" for x in xs]))],
    "shuffle_dyck1": lambda xs: [_balanced(xs, ["()"])] * len(xs),
    "shuffle_dyck2": lambda xs: [_balanced(xs, ["()", "{}"])] * len(xs),
    "nary": lambda xs: [x * 10 + i - x for i, x in enumerate(xs)],
    "count_less_freq": lambda xs: [sum(xs.count(x) <= 2 for x in xs)] * len(xs),
    "count": lambda xs: [xs.count("a")] * len(xs),
    "shift_by": lambda xs: ([None, None] + xs)[: len(xs)],
    "detect_pattern": lambda xs: _detected(xs, "abc"),
}


@dataclass(frozen=True)
class Case:
    """One library program: how to build it from a `rasp` module, its vocab, its max_len, and
    whether its inputs must hold distinct tokens (sort_unique needs unique keys)."""

    build: Callable  # (rasp-like module's program builders) -> s-op; see `PROGRAMS`
    vocab: tuple
    max_len: int
    distinct: bool = False

    def inputs(self, seed: int, count: int) -> list[list]:
        """`count` seeded random inputs of every length 1..max_len in turn."""
        rng = random.Random(seed)
        out = []
        for k in range(count):
            n = 1 + k % self.max_len
            out.append(rng.sample(self.vocab, n) if self.distinct else [rng.choice(self.vocab) for _ in range(n)])
        return out


CASES = {
    "readme": Case(lambda lib: readme_reverse(lib.rasp), (1, 2, 3), 5),
    "length": Case(lambda lib: lib.make_length(), ("a", "b", "c"), 6),
    "reverse": Case(lambda lib: lib.make_reverse(lib.rasp.tokens), ("a", "b", "c"), 6),
    "hist": Case(lambda lib: lib.make_hist(), ("a", "b", "c"), 6),
    "sort_unique": Case(lambda lib: lib.make_sort_unique(lib.rasp.tokens, lib.rasp.tokens), (1, 2, 3, 4, 5, 6), 5, True),
    "sort": Case(lambda lib: lib.make_sort(lib.rasp.tokens, lib.rasp.tokens, max_seq_len=5, min_key=1), (1, 2, 3, 4), 5),
    "sort_freq": Case(lambda lib: lib.make_sort_freq(max_seq_len=5), (1, 2, 3), 5),
    "frac_prevs": Case(lambda lib: lib.make_frac_prevs(lib.rasp.tokens == "x"), ("x", "y"), 6),
    "pair_balance": Case(lambda lib: lib.make_pair_balance(lib.rasp.tokens, "(", ")"), ("(", ")", "a"), 6),
    "shuffle_dyck1": Case(lambda lib: lib.make_shuffle_dyck(["()"]), ("(", ")"), 6),
    "shuffle_dyck2": Case(lambda lib: lib.make_shuffle_dyck(["()", "{}"]), ("(", ")", "{", "}"), 4),
    "nary": Case(lambda lib: lib.make_nary_sequencemap(lambda x, i, y: x * 10 + i - y, lib.rasp.tokens,
                                                       lib.rasp.indices, lib.rasp.tokens), (1, 2, 3), 5),
    "count_less_freq": Case(lambda lib: lib.make_count_less_freq(2), ("a", "b", "c", "d"), 6),
    "count": Case(lambda lib: lib.make_count(lib.rasp.tokens, "a"), ("a", "b", "c"), 6),
    "shift_by": Case(lambda lib: lib.shift_by(2, lib.rasp.tokens), ("a", "b", "c"), 6),
    "detect_pattern": Case(lambda lib: lib.detect_pattern(lib.rasp.tokens, "abc"), ("a", "b", "c"), 6),
}
"""Each case's `build` takes a module with tracr's `lib` functions and a `rasp` attribute: this
module (our ports) or `tracr.compiler.lib` (tracr's own)."""
