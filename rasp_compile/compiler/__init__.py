"""The compiler: a checked program -> a `Model` in the docs/format.md format.

The passes, in order (one module each):

    infer.infer_value_sets   the values every s-op can take (rasp_compile/infer.py)
    graph.build_graph        s-ops -> residual variables and the operations writing them
    precision.check_precision  refuse numbers the float dtype cannot hold exactly enough
    schedule.schedule        operations -> the earliest attention / MLP sub-layer
    layout.lay_out           a named residual dimension per categorical value / numerical s-op
    budget.check_budget      a model too large to build is refused before any weight is
    assemble.assemble        per-primitive weights -> arrays and meta
"""

from __future__ import annotations

import dataclasses
from typing import Iterable

import numpy as np

from .. import ir
from ..errors import RaspValueError, placed_at, recursion_refused
from ..frontend.infer import ValueSets, infer_value_sets
from ..runtime.model import Model, validate
from .assemble import assemble
from .budget import check_budget, check_vocab_budget
from .graph import build_graph
from .head_meta import describe_model
from .layout import lay_out
from .precision import check_precision
from .schedule import schedule


OPTIMIZATIONS = {
    "fold-embeddings": (
        "maps of tokens, indices (and causal length), and sequence_maps of two of the position's, become embedding rows"
    ),
    "fold-linear": "linear s-ops are written by their inputs' writers, with no layer of their own",
    "value-classes": "a numerical s-op read categorically keeps only the values its reader tells apart",
    "compose-views": (
        "a numerical s-op that a step MLP writes is read categorically from that MLP's input, a sub-layer sooner"
    ),
    "gated-maps": "a sequence_map of a number and an exact one-hot is one small MLP of the number per value of the one-hot",
    "compact-heads": "terms of a selector reading the same variable share its head dimensions",
    "head-features": "a head's query or key features are written into the residual in place of what only it reads",
    "interpolated-steps": "a width or mean read only by categorical selects is decoded with one hidden unit per value",
    "position-selects": "selects pairing an index with one target are scored from four numbers",
    "split-keys": "the answer's aggregate on a table of two s-ops is one head per value of one of them, summed",
    "linear-readout": "a last table that a linear read-out can answer is left to unembed",
    "number-readout": "a numeric-valued output is written as one number, read as the nearest value",
    "prune": "residual dimensions that no weight reads are dropped",
}
"""Every optimisation pass by name (`--no-opt NAME`, `disabled=` below): with all of them off,
each s-op is compiled by its plain construction, one-hot and one sub-layer each."""


def compile_program(
    program: ir.Program,
    max_len: int | None = None,
    dtype=np.float32,
    disabled: Iterable[str] = (),
    value_sets: ValueSets | None = None,
) -> Model:
    """Compile `program` (optionally at another max_len) into weights of the given float dtype,
    without the optimisations named in `disabled` (keys of OPTIMIZATIONS). `value_sets`: the
    program's value sets at that max_len (infer.infer_value_sets), when the caller has them."""
    unknown = set(disabled) - set(OPTIMIZATIONS)
    if unknown:
        raise ValueError(f"unknown optimisation {sorted(unknown)[0]!r}; known: {', '.join(OPTIMIZATIONS)}")
    enabled = frozenset(OPTIMIZATIONS) - set(disabled)
    if max_len is not None and max_len != program.max_len:
        program = dataclasses.replace(program, max_len=max_len)
    with recursion_refused(program.output.loc or program.output_loc), placed_at(program.output_loc):
        if value_sets is None:
            value_sets = infer_value_sets(program)
        check_vocab_budget(program, value_sets)
        graph, layout = _graph_within_budget(program, value_sets, enabled, dtype)
        embeds, blocks = schedule(graph)
        model = assemble(graph, embeds, blocks, layout, dtype, prune="prune" in enabled)
        model.meta.update(describe_model(graph, blocks))  # meta.heads and meta.sops (docs/inspect.md)
    model.meta["optimizations_off"] = sorted(set(disabled))  # an extension of the meta of docs/format.md
    validate(model)
    return model


def _graph_within_budget(program: ir.Program, value_sets: ValueSets, enabled: frozenset, dtype) -> tuple:
    """The graph and its layout, checked for precision and size; a split answer (split-keys) that
    makes the model too large is built again whole, one layer deeper but within the budget."""
    graph = build_graph(program, value_sets, enabled)
    check_precision(graph, dtype)
    layout = lay_out(graph)
    try:
        check_budget(graph, layout)
    except RaspValueError:
        if not graph.split:
            raise
        return _graph_within_budget(program, value_sets, enabled - {"split-keys"}, dtype)
    return graph, layout
