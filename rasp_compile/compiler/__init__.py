"""The compiler: a checked program -> a `Model` in the SPEC §2 format.

The passes, in order (one module each):

    infer.infer_value_sets   the values every s-op can take (rasp_compile/infer.py)
    graph.build_graph        s-ops -> residual variables and the operations writing them
    schedule.schedule        operations -> the earliest attention / MLP sub-layer
    layout.lay_out           a named residual dimension per categorical value / numerical s-op
    assemble.assemble        per-primitive weights -> arrays and meta
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .. import ir
from ..infer import infer_value_sets
from ..model import Model, validate
from .assemble import assemble
from .graph import build_graph
from .layout import lay_out
from .schedule import schedule


def compile_program(program: ir.Program, max_len: int | None = None, dtype=np.float32) -> Model:
    """Compile `program` (optionally at another max_len) into weights of the given float dtype."""
    if max_len is not None and max_len != program.max_len:
        program = dataclasses.replace(program, max_len=max_len)
    value_sets = infer_value_sets(program)
    graph = build_graph(program, value_sets)
    embeds, blocks = schedule(graph)
    layout = lay_out(graph)
    model = assemble(graph, embeds, blocks, layout, dtype)
    validate(model)
    return model
