"""amplification: how much the readers of an aggregate magnify what its softmax leaks.

A head leaves a little weight (its leak) on keys it does not mean to read. A categorical one-hot
off by that much is still the same one-hot to every categorical reader, and a step MLP reading a
number absorbs it (its steps are flat). But a number computed from it without a step in between
(a linear map, a table with a numerical output, a mean of it) is off by the leak times the
spread of its values: a categorical aggregate of lengths 1..32 read as a number is off by up to
32 times the leak, and the fuzz at max_len 32 found one reading -0.999989 for -1.

So each aggregate learns the largest spread among the numbers that depend on it that way and
that something uses as a value (the read-out, an MLP, a head's value; not a select's features,
whose error only tilts scores): `Attend.amplification`, by which its head divides the leak it
tolerates (primitives/categorical_attn.py, numerical_attn.py), up to tolerances.MAX_AMPLIFICATION.

Needs: every reader final (after interpolated-steps, whose polylines pass errors on; before
head-features, whose folds read variables as features, not values). Always runs.
Guarantees: each aggregate's `amplification` covers every reader that magnifies its leak.
"""

from __future__ import annotations

import dataclasses

from ... import ir
from ..ops import Attend, GatedMap, Graph, HeadKind, Linear, NumericMLP, Op, TableMLP, op_inputs, readers_of, replaced
from ..variables import Var
from ..tolerances import MAX_AMPLIFICATION, spread


def amplify(graph: Graph) -> Graph:
    """`graph` with every aggregate's `amplification` set (module docstring)."""
    readers = readers_of(graph.ops)
    as_value = {var for op in graph.ops for var in _values_read(op)} | set(graph.readout.inputs)
    memo: dict[Var, float] = {}

    def widest(var: Var) -> float:
        """The largest spread of a number used as a value that `var`'s error reaches unabsorbed."""
        if var not in memo:
            own = spread(var.values) if var.encoding == ir.NUMERICAL and var in as_value else 0.0
            memo[var] = max([own] + [widest(r.out) for r in readers.get(var, []) if _carries(r, var)])
        return memo[var]

    def amplified(op: Op) -> Op:
        if not isinstance(op, Attend) or op.kind is HeadKind.WIDTH:
            return op
        gain = widest(op.out) / (spread(op.out.values) if op.kind is HeadKind.NUMERICAL else 1.0)
        return replaced(op, amplification=min(max(1.0, gain), MAX_AMPLIFICATION))

    return dataclasses.replace(graph, ops=tuple(amplified(op) for op in graph.ops))


def _carries(reader: Op, var: Var) -> bool:
    """Whether an error in `var` passes into what `reader` writes, in proportion."""
    if isinstance(reader, Linear | TableMLP):
        return True
    if isinstance(reader, GatedMap):  # steps absorb it, lines and polylines pass it on
        return reader.input is var and (reader.affine is not None or bool(reader.interpolated))
    if isinstance(reader, NumericMLP):
        return reader.interpolated  # flat steps absorb it
    return isinstance(reader, Attend) and reader.value is var  # a select's features only tilt scores


def _values_read(op: Op) -> tuple[Var, ...]:
    """What `op` uses as a value rather than as a select's features."""
    if isinstance(op, Attend):
        return (op.value,) if op.value is not None else ()
    return op_inputs(op)
