"""An s-op the optimisations folded away, for `Trace.sop` (tools/trace.py).

A map or sequence_map folded into the weights of what reads it (fold-linear, fold-embeddings,
affine-means, ...) has no dimensions of its own, but the model still computes it at each position
from values the residual holds: `folded_values` reads those back and applies the program's own
function to them, as the folded weights do. Anything else that has no dimensions is explained by
`folded_message`, which names the `--no-opt` flag that keeps it.
"""

from __future__ import annotations

from collections.abc import Callable

from .. import ir
from ..errors import RaspError
from ..frontend.lower import check_module
from ..frontend.parse import parse
from .interpret.reference import node_values

ELEMENTWISE = (ir.Map, ir.SequenceMap)
POSITIONAL = (ir.Tokens, ir.Indices, ir.Length)


def recorded_program(source) -> ir.Program | None:
    """The program a model's recorded source holds, or None when it has none that checks."""
    if not isinstance(source, str) or not source:
        return None
    try:
        return check_module(parse(source), source, "<source>")
    except (RaspError, RecursionError):
        return None


def named_node(program: ir.Program, name: str) -> ir.SOp | None:
    """The first s-op of `program` bound to `name`."""
    return next((n for n in program.nodes() if isinstance(n, ir.SOp) and n.label == name), None)


def folded_values(node: ir.SOp, read: Callable[[str], list | None], tokens: list, causal: bool) -> list | None:
    """`node`'s value at each token, computed from what the residual holds (`read(label)`: the
    decoded values of a variable, None when it has none): a named s-op it holds as read there,
    tokens, indices and length as the input gives them, a map or sequence_map from the values of
    its arguments; None when some argument is neither."""
    held = read(node.label) if node.label else None
    if held is not None:
        return held
    if isinstance(node, POSITIONAL):
        return node_values(node, {}, tokens, causal)
    if not isinstance(node, ELEMENTWISE):
        return None
    env = {}
    for child in node.children():
        env[child] = folded_values(child, read, tokens, causal)
        if env[child] is None:
            return None
    return node_values(node, env, tokens, causal)


def folded_message(name: str) -> str:
    """Why the residual does not hold `name`, and the flag that keeps it."""
    return (f"'{name}' is not in the residual stream: an optimisation folded it away (into an embedding, "
            "the weights of what reads it, or the read-out) or pruned it; compiled with `--no-opt all` "
            "(disabled=OPTIMIZATIONS in Python) the model holds every s-op the output reads, and "
            "rc.evaluate_all(program, tokens) gives its values")
