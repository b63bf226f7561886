"""head-features: a head's query or key features written straight into the residual.

A head reads each side as linear forms of residual coordinates (lowering/scores.py: column j's key side is
sum of a_f * x[f]). When nothing else reads the variables on that side (no other op, not the
head's other side or its value, not the read-out), the residual need not hold those variables at
all: each column's form becomes a numerical variable of its own, written by a Linear op (so by
the writers of the variables it combines, folds.py), the head reads it with weight 1, and
the pruning pass drops the variables' own dimensions, which no weight reads any more.

It pays when a side has fewer columns than it reads coordinates (a coordinate no column reads is
pruned anyway). Sort's range select compares two widths, each a 21-value one-hot, with the
index: 20 key columns instead of 40 one-hot coordinates, written by the MLPs that would have
written the one-hots. A side that reads each coordinate in a column of its own keeps them.

The form's constant stays the head's bias; a variable that is none (all zeros) still adds
nothing, exactly as it did before the fold.

Needs: prune (it pays only once pruning drops what it replaced: the driver runs it only with
prune on), every reader known (dead ops dropped) and amplification set (a fold's Linear reads
variables as features, which must not count as values). Guarantees: each head scores exactly
what it scored before; the variables it no longer reads are read by nothing.
"""

from __future__ import annotations

import dataclasses
from itertools import product
from typing import Any
from collections.abc import Callable

from ... import ir
from ..lowering.linear import substituted
from ..ops import Attend, Graph, Linear, Op, fresh_label, readers_of, replaced
from ..selector_terms import Column
from ..limits import MAX_FEATURE_VALUES
from ..variables import CONSTANT, Var, sort_key


def fold_head_features(graph: Graph) -> Graph:
    """`graph` with every foldable head side folded; the new Linear ops go just before their head."""
    readers = {var: len(ops_reading) for var, ops_reading in readers_of(graph.ops).items()}
    for var in graph.readout.inputs:
        readers[var] = readers.get(var, 0) + 1
    labels = set(graph.labels)

    def new_var(label: str, values: tuple[float, ...]) -> Var:
        label = fresh_label(label, labels)
        labels.add(label)
        return Var(label, ir.NUMERICAL, tuple(sorted(set(values), key=sort_key)))

    writer_of = graph.writers().get
    folded: list[Op] = []
    for op in graph.ops:
        if isinstance(op, Attend):
            for side in ("k", "q"):
                new_ops, op = _fold_side(op, side, readers, new_var, writer_of)
                folded.extend(new_ops)
        folded.append(op)
    return dataclasses.replace(graph, ops=tuple(folded), labels=frozenset(labels))


def _fold_side(op: Attend, side: str, readers: dict[Var, int], new_var: Callable[[str, tuple[float, ...]], Var],
               writer_of: Callable[[Var], Op | None]) -> tuple[list[Linear], Attend]:
    """The Linear ops writing one side's features, and the head reading them (or no ops and `op`)."""
    columns = op.score.columns
    forms = [getattr(c, side) for c in columns]
    other = "q" if side == "k" else "k"
    read_here = _vars(forms)
    read_elsewhere = set(_vars([getattr(c, other) for c in columns])) | {op.value}
    if not read_here or any(readers[v] != 1 or v in read_elsewhere for v in read_here):
        return [], op
    coordinates = {f for form in forms for f in form if f is not CONSTANT}  # the rest are pruned anyway
    linear_columns = [j for j, form in enumerate(forms) if any(f is not CONSTANT for f in form)]
    if len(linear_columns) >= len(coordinates):
        return [], op
    listed = [_values(forms[j]) for j in linear_columns]
    values = [v for v in listed if v is not None]
    if len(values) < len(listed):
        return [], op
    new_ops, new_columns = [], list(columns)
    for j, feature_values in zip(linear_columns, values):
        out = new_var(f"{op.out.label}.{side}{j}", feature_values)
        weights = {f: {out.label: a} for f, a in forms[j].items() if f is not CONSTANT}
        linear = substituted(Linear(out, weights, {}), writer_of)
        new_ops.append(linear)
        form: dict[Any, float] = {(out, None): 1.0}  # a Column's feature -> coefficient
        if CONSTANT in forms[j]:
            form[CONSTANT] = forms[j][CONSTANT]
        q, k = (columns[j].q, form) if side == "k" else (form, columns[j].k)
        new_columns[j] = Column(q, k)
    return new_ops, replaced(op, score=dataclasses.replace(op.score, columns=tuple(new_columns)))


def _vars(forms: list[dict[Any, float]]) -> list[Var]:
    return list(dict.fromkeys(f[0] for form in forms for f in form if f is not CONSTANT))


def _values(form: dict[Any, float]) -> tuple[float, ...] | None:
    """Every value sum of a * x[f] can take, or None when there are too many to list."""
    per_var: dict[Var, dict[Any, float]] = {}
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
