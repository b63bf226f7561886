"""Small graphs for the per-pass tests: a program lowered plainly (no rewrite), or ops built by
hand, and ways to look at what a pass changed."""

from __future__ import annotations

from collections.abc import Callable

from rasp_compile.compiler.driver import LOWERING_REWRITES
from rasp_compile.compiler.lowering.lower import new_state, program_to_graph
from rasp_compile.compiler.lowering.rewrites import LoweringOptions
from rasp_compile.compiler.lowering.state import LoweringState
from rasp_compile.compiler.ops import Graph, Readout
from rasp_compile.frontend import parse_program
from rasp_compile.frontend.infer import infer_value_sets


def rewriting(*proposals: Callable) -> LoweringOptions:
    """Lowering options with the driver's rewrites that propose by one of `proposals`, in the
    driver's order."""
    return LoweringOptions(tuple(rewrite for rewrite in LOWERING_REWRITES if rewrite.propose in proposals))


PLAIN = LoweringOptions()
"""No rewrite, no option: the plain construction of every s-op."""


def plain_graph(text: str, options: LoweringOptions = PLAIN) -> Graph:
    """`text`'s program lowered with `options` (none: the plain construction of every s-op)."""
    program = parse_program(text)
    return program_to_graph(program, infer_value_sets(program), options)


def lowering_of(text: str, options: LoweringOptions = PLAIN) -> tuple[LoweringState, dict]:
    """A lowering of `text`'s program with every s-op lowered, and its s-ops by label."""
    program = parse_program(text)
    state = new_state(program, infer_value_sets(program), options)
    for node in program.nodes():
        if hasattr(node, "encoding"):
            state.var_for(node)
    by_label = {node.label: state.vars[node] for node in state.vars if node.label}
    return state, by_label


def by_label(graph: Graph) -> dict:
    """The ops of `graph` by their variable's label."""
    return {op.out.label: op for op in graph.ops}


def graph_of(ops: list, output, readout: Readout, text: str = "vocab {a, b}\nmax_len 4\noutput tokens\n") -> Graph:
    """A hand-built graph of `ops` (the program only carries vocab and max_len)."""
    return Graph(tuple(ops), output, parse_program(text), readout, labels=frozenset(op.out.label for op in ops))
