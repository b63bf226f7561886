"""head_features: a head's query or key features written straight into the residual.

A head reads each side as linear forms of residual coordinates (scores.py: column j's key side is
sum of a_f * x[f]). When nothing else reads the variables on that side (no other op, not the
head's other side or its value, not the read-out), the residual need not hold those variables at
all: each column's form becomes a numerical variable of its own, written by a Linear op (so by
the writers of the variables it combines, assemble.Folds), the head reads it with weight 1, and
the pruning pass drops the variables' own dimensions, which no weight reads any more.

It pays when a side has fewer columns than it reads coordinates (a coordinate no column reads is
pruned anyway). Sort's range select compares two widths, each a 21-value one-hot, with the
index: 20 key columns instead of 40 one-hot coordinates, written by the MLPs that would have
written the one-hots. A side that reads each coordinate in a column of its own keeps them.

The form's constant stays the head's bias; a variable that is none (all zeros) still adds
nothing, exactly as it did before the fold.
"""

from __future__ import annotations

from itertools import product
from typing import Callable

from .. import ir
from .linear import substituted
from .ops import Attend, Linear, Op, Var, readers_of
from .scores import CONSTANT, Column, Score

MAX_FEATURE_VALUES = 100_000
"""A folded feature's value set is enumerated (every combination of its variables' values); a
side whose features would have more is left unfolded."""


def fold_head_features(ops: list[Op], read_out: tuple[Var, ...], new_var: Callable, writer_of: Callable) -> list[Op]:
    """`ops` with every foldable head side folded; the new Linear ops go just before their head.
    `new_var(label, values)` makes a fresh numerical variable."""
    readers = {var: len(ops_reading) for var, ops_reading in readers_of(ops).items()}
    for var in read_out:
        readers[var] = readers.get(var, 0) + 1
    folded: list[Op] = []
    for op in ops:
        if isinstance(op, Attend):
            for side in ("k", "q"):
                folded.extend(_fold_side(op, side, readers, new_var, writer_of))
        folded.append(op)
    return folded


def _fold_side(op: Attend, side: str, readers: dict, new_var: Callable, writer_of: Callable) -> list[Linear]:
    columns = op.score.columns
    forms = [getattr(c, side) for c in columns]
    other = "q" if side == "k" else "k"
    read_here = _vars(forms)
    read_elsewhere = set(_vars([getattr(c, other) for c in columns])) | {op.value}
    if not read_here or any(readers[v] != 1 or v in read_elsewhere for v in read_here):
        return []
    coordinates = {f for form in forms for f in form if f is not CONSTANT}  # the rest are pruned anyway
    linear_columns = [j for j, form in enumerate(forms) if any(f is not CONSTANT for f in form)]
    if len(linear_columns) >= len(coordinates):
        return []
    values = [_values(forms[j]) for j in linear_columns]
    if any(v is None for v in values):
        return []
    new_ops, new_columns = [], list(columns)
    for j, feature_values in zip(linear_columns, values):
        out = new_var(f"{op.out.label}.{side}{j}", feature_values)
        weights = {f: {out.label: a} for f, a in forms[j].items() if f is not CONSTANT}
        linear = substituted(Linear(out, weights, {}), writer_of)
        new_ops.append(linear)
        form = {(out, None): 1.0}
        if CONSTANT in forms[j]:
            form[CONSTANT] = forms[j][CONSTANT]
        q, k = (columns[j].q, form) if side == "k" else (form, columns[j].k)
        new_columns[j] = Column(q, k)
    op.score = Score(op.score.terms, tuple(new_columns))
    return new_ops


def _vars(forms: list[dict]) -> list[Var]:
    return list(dict.fromkeys(f[0] for form in forms for f in form if f is not CONSTANT))


def _values(form: dict) -> tuple | None:
    """Every value sum of a * x[f] can take, or None when there are too many to list."""
    per_var: dict[Var, dict] = {}
    for f, a in form.items():
        if f is not CONSTANT:
            per_var.setdefault(f[0], {})[f[1]] = a
    choices = []
    for var, weights in per_var.items():
        if var.encoding == ir.NUMERICAL:
            choices.append({a * float(x) for a in weights.values() for x in var.values})
        else:
            choices.append({weights.get(v, 0.0) for v in var.values} | ({0.0} if var.may_be_none else set()))
    count = 1
    for c in choices:
        count *= len(c)
    if count > MAX_FEATURE_VALUES:
        return None
    return tuple(sorted({sum(combination) for combination in product(*choices)}))
