"""dead ops: drop the ops whose variable nothing reads (tokens once every map of them is folded
into the embedding, the views a rewrite made unnecessary, a split that was not kept).

Needs: the read-out chosen (its inputs are read). Always runs, after the read-out passes.
Guarantees: every op left is read by a later op or by the read-out; their order is kept.
"""

from __future__ import annotations

import dataclasses

from ..ops import Graph, op_inputs


def drop_dead_ops(graph: Graph) -> Graph:
    """`graph` without the ops nothing needs."""
    needed = set(graph.readout.inputs)
    live = []
    for op in reversed(graph.ops):
        if op.out in needed:
            live.append(op)
            needed.update(op_inputs(op))
    return dataclasses.replace(graph, ops=tuple(live[::-1]))
