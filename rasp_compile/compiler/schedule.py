"""schedule: place every operation in the earliest sub-layer its inputs allow.

Sub-layers are numbered 0, 1, 2, ...: even ones are attention, odd ones MLP, and block i holds
sub-layers 2i (attention) and 2i + 1 (MLP). Embeddings are ready before sub-layer 0. An
operation goes to the first sub-layer of its kind after every sub-layer writing its inputs, so
independent aggregates share one multi-head attention and independent MLPs sit side by side.
The schedule is as short as the longest chain of dependencies allows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from .ops import Attend, Embed, Graph, Linear, Op, op_inputs
from .variables import Var


@dataclass
class Block:
    heads: list[Attend] = field(default_factory=list)
    mlps: list[Op] = field(default_factory=list)


def sublayer_of(graph: Graph) -> dict[Op, int]:
    """The sub-layer index of every op (-1 for embeddings; for a Linear op, the sub-layer after
    which all its inputs, and so the op itself, are written)."""
    return _slots(graph.ops)


def sublayers_after(ops: Sequence[Op], candidates: Sequence[Op]) -> list[int]:
    """The sub-layer each of `candidates` would take if it came after `ops` (in dependency order,
    as a graph's)."""
    ready = {o.out: s for o, s in _slots(ops).items()}
    return [_slot(op, ready) for op in candidates]


def _slots(ops: Sequence[Op]) -> dict[Op, int]:
    ready: dict[Var, int] = {}  # Var -> sub-layer after which it is in the residual stream
    slot: dict[Op, int] = {}
    for op in ops:
        slot[op] = _slot(op, ready)
        ready[op.out] = slot[op]
    return slot


def _slot(op: Op, ready: dict[Var, int]) -> int:
    if isinstance(op, Embed):
        return -1
    if isinstance(op, Linear):  # written by its inputs' writers: complete after the last
        return max((ready[v] for v in op_inputs(op)), default=-1)
    earliest = max((ready[v] for v in op_inputs(op)), default=-1) + 1
    wanted_parity = 0 if isinstance(op, Attend) else 1
    return earliest if earliest % 2 == wanted_parity else earliest + 1


def schedule(graph: Graph) -> tuple[list[Embed], list[Block]]:
    """The embedding ops, and the blocks with their heads and MLPs in graph order (Linear ops
    have no place of their own: assemble.py folds them into their inputs' writers)."""
    slots = sublayer_of(graph)
    n_blocks = (max(slots.values(), default=-1) + 2) // 2
    blocks = [Block() for _ in range(n_blocks)]
    embeds: list[Embed] = []
    for op in graph.ops:
        s = slots[op]
        if isinstance(op, Linear):
            continue
        if isinstance(op, Embed):  # sub-layer -1 (_slot)
            embeds.append(op)
        elif isinstance(op, Attend):  # an even sub-layer: attention (_slot)
            blocks[s // 2].heads.append(op)
        else:
            blocks[s // 2].mlps.append(op)
    return embeds, blocks
