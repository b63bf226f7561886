"""Single-valued aggregates: which categorical aggregates can never select keys holding different
values (docs/language.md, "Semantics").

A categorical aggregate whose selected keys hold different values is an error of the program: the
reference interpreter refuses that input. The compiled model has no such refusal; where the
compiler cannot prove the case unreachable, the model's output there is not the program's
(docs/language.md says what a direct read-out gives). `conflicts_possible(program, sets)` tells
apart, per categorical aggregate, the aggregates proven single-valued from the others, by these
rules on the value sets (frontend/infer.py), each sound on every input up to max_len:

    one value   the aggregated s-op takes one value and is never none;
    one key     the select's keys are distinct at every position (`indices`, or a map of it that is
                one-to-one on its values) and for every query value q at most one key value k
                satisfies pred(k, q);
    by the key  the aggregated s-op is the select's keys, or maps of them (transitively), and for
                every query value q the composed function is constant on {k : pred(k, q)};
    and         `a and b` selects fewer keys than either part: proven when either part is;
    or, not     only through "one value".

The tables are the selects' own (ir.Select.table), which inference already bounded (infer.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import ir
from .infer import ValueSets, nullable_sops

IMPOSSIBLE = "impossible"
POSSIBLE = "possible"


def conflicts_possible(program: ir.Program, sets: ValueSets) -> dict:
    """Every categorical aggregate of `program` -> IMPOSSIBLE when proven single-valued, else
    POSSIBLE, in program order. `sets`: the program's value sets (infer.infer_value_sets)."""
    nullable = nullable_sops(program)
    found = {}
    for node in program.nodes():
        if isinstance(node, ir.Aggregate) and node.encoding == ir.CATEGORICAL:
            found[node] = IMPOSSIBLE if single_valued(node, sets, nullable) else POSSIBLE
    return found


def single_valued(node: ir.Aggregate, sets: ValueSets, nullable: set) -> bool:
    """Whether the keys `node` selects at one query can never hold different values."""
    if len(sets[node.sop]) == 1 and node.sop not in nullable:
        return True
    return _proven(node.selector, node.sop, sets)


def _proven(selector: ir.Selector, sop: ir.SOp, sets: ValueSets) -> bool:
    if isinstance(selector, ir.SelectAnd):
        return _proven(selector.first, sop, sets) or _proven(selector.second, sop, sets)
    if not isinstance(selector, ir.Select):
        return False  # or, not: only through one value (single_valued)
    keys, queries = _ordered(sets[selector.keys]), _ordered(sets[selector.queries])
    held = selector.table(keys, queries)  # [key value, query value]
    if _distinct(selector.keys, sets) and int(held.sum(axis=0).max(initial=0)) <= 1:
        return True
    image = _image(sop, selector.keys, keys)
    if image is None:
        return False
    codes: dict[Any, int] = {}  # each distinct image value -> a number (by equality, as a set tells values apart)
    coded = np.array([codes.setdefault(v, len(codes)) for v in image])[:, None]  # [key value, 1]
    lowest = np.where(held, coded, len(codes)).min(axis=0, initial=len(codes))  # [query value]
    highest = np.where(held, coded, -1).max(axis=0, initial=-1)
    return bool((highest <= lowest).all())  # one image value (or none) among each query's keys


def _distinct(sop: ir.SOp, sets: ValueSets) -> bool:
    """Whether `sop` holds a different value at every position: `indices`, or a map of a distinct
    s-op that never returns None and takes as many values as its input."""
    if isinstance(sop, ir.Indices):
        return True
    if isinstance(sop, ir.Map) and sop.encoding == sop.inner.encoding == ir.CATEGORICAL and _distinct(sop.inner, sets):
        outputs = [sop.fn(x) for x in sets[sop.inner]]
        return None not in outputs and len(set(outputs)) == len(outputs)
    return False


def _image(sop: ir.SOp, keys: ir.SOp, key_values: list) -> list | None:
    """What `sop` holds at a position whose key holds each of `key_values`, when `sop` is `keys`
    or categorical maps of it (a final None kept: it is a value the selected keys may differ
    by); None when `sop` is something else, or a map meets none before the last."""
    chain = []
    while sop is not keys:
        if not isinstance(sop, ir.Map) or sop.encoding != ir.CATEGORICAL:
            return None
        chain.append(sop)
        sop = sop.inner
    values = list(key_values)
    for depth, step in enumerate(reversed(chain)):
        values = [step.fn(v) for v in values]
        if depth < len(chain) - 1 and None in values:
            return None
    return values


def _ordered(values) -> list:
    """A value set as a list in a fixed order (the order does not change the answer)."""
    return sorted(values, key=lambda v: (type(v).__name__, repr(v)))
