"""Plain-Python references for the library in programs/: one function per `NAME.rasp`, named NAME.

Each takes the token list and returns one value per position (None for none). They are written
from what each program is meant to compute, not from its RASP text, so that the interpreter agreeing
with them checks both. `None` marks none; "-" is the padding / filler value the programs choose.
"""

from __future__ import annotations

from collections import Counter

PAD = "-"


def aab(tokens):
    """After "aa" comes "b", after anything else "a"; before the input counts as an "a"."""
    before = ["a"] + list(tokens[:-1])
    return ["b" if p == "a" and t == "a" else "a" for p, t in zip(before, tokens)]


def length(tokens):
    return [len(tokens)] * len(tokens)


def reverse(tokens):
    return list(reversed(tokens))


def hist(tokens):
    counts = Counter(tokens)
    return [counts[t] for t in tokens]


def double_hist(tokens):
    counts = Counter(tokens)
    return [sum(1 for c in counts.values() if c == counts[t]) for t in tokens]


def sort_unique(tokens):
    """Position p holds the token that has exactly p smaller tokens, or none if no token has."""
    out = [None] * len(tokens)
    for t in tokens:
        out[sum(1 for u in tokens if u < t)] = t
    return out


def sort(tokens):
    return sorted(tokens)


def sort_freq(tokens):
    counts = Counter(tokens)
    return sorted(tokens, key=lambda t: -counts[t])  # sorted() is stable: ties keep input order


def most_freq(tokens):
    counts = Counter(tokens)
    distinct = sorted(dict.fromkeys(tokens), key=lambda t: -counts[t])  # first appearance breaks ties
    return distinct + [PAD] * (len(tokens) - len(distinct))


def frac_prevs(tokens):
    return [tokens[: i + 1].count("x") / (i + 1) for i in range(len(tokens))]


def paren_depth(tokens):
    depth, out = 0, []
    for t in tokens:
        depth += 1 if t == "(" else -1
        out.append(depth)
    return out


def pair_balance(tokens):
    return [(tokens[: i + 1].count("(") - tokens[: i + 1].count(")")) / (i + 1) for i in range(len(tokens))]


def _dyck_states(tokens, pairs):
    """Per prefix: "T" balanced, "P" still completable, "F" failed, for brackets `pairs` (close -> open)."""
    states, stack, failed = [], [], False
    for t in tokens:
        if t in pairs.values():
            stack.append(t)
        elif not stack or stack.pop() != pairs[t]:
            failed = True
        states.append("F" if failed else "P" if stack else "T")
    return states


def dyck1(tokens):
    return _dyck_states(tokens, {")": "("})


def dyck2(tokens):
    return _dyck_states(tokens, {")": "(", "}": "{"})


def _shuffle_balanced(tokens, pairs):
    """1 at every position if each bracket pair (open, close) is balanced on its own, else 0."""
    def balanced(open_, close):
        depth = 0
        for t in tokens:
            depth += (t == open_) - (t == close)
            if depth < 0:
                return False
        return depth == 0

    return [int(all(balanced(o, c) for o, c in pairs))] * len(tokens)


def shuffle_dyck(tokens):
    return _shuffle_balanced(tokens, [("(", ")")])


def shuffle_dyck2(tokens):
    return _shuffle_balanced(tokens, [("(", ")"), ("{", "}")])


def count(tokens):
    return [tokens.count("a")] * len(tokens)


def shift_by(tokens):
    return ([PAD, PAD] + list(tokens))[: len(tokens)]


def detect_pattern(tokens):
    return [int(i >= 2 and list(tokens[i - 2 : i + 1]) == ["a", "b", "c"]) for i in range(len(tokens))]
