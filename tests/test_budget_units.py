"""budget.py charges a step MLP the hidden units numeric_mlp builds: two per step where its
answer changes (one per value for a polyline), not two per value of its input. A map `b < 0` of
a running mean over hundreds of thousands of values is one step."""

from __future__ import annotations

from rasp_compile.compiler import OPTIMIZATIONS, build_graph
from rasp_compile.compiler.budget import _widest, numeric_units
from rasp_compile.compiler.layout import lay_out
from rasp_compile.compiler.ops import NumericMLP
from rasp_compile.compiler.primitives.numeric_mlp import interpolation_mlp, step_mlp
from rasp_compile.frontend import parse_program
from rasp_compile.frontend.infer import infer_value_sets

SHUFFLE = """
vocab {"(", ")"}
max_len 24
step = numerical(map(lambda t: 1 if t == "(" else -1, tokens))
balance = numerical(aggregate(select(indices, indices, <=), step))
total = numerical(aggregate(select(indices, indices, true), step))
negative = numerical(map(lambda b: 1 if b < 0 else 0, balance))
closed = numerical(map(lambda t: 1 if t == 0 else 0, total))
output numerical(sequence_map(lambda n, c: n + 3 * c * c, negative, closed))
"""


def test_the_budget_counts_the_units_each_step_mlp_builds():
    program = parse_program(SHUFFLE)
    graph = build_graph(program, infer_value_sets(program), frozenset(OPTIMIZATIONS))
    layout = lay_out(graph)
    steps = [op for op in graph.ops if isinstance(op, NumericMLP)]
    assert steps and all(len(op.input.values) > 100 for op in steps)
    for op in steps:
        built = (interpolation_mlp if op.interpolated else step_mlp)(op, layout).b_in.shape[0]
        assert numeric_units(op) == built <= 4  # one or two steps among the means, not two units per mean


def test_the_widest_part_names_each_part_of_a_combined_key_whole():
    """The parts of a combined key are named from the table that writes it, not by splitting its
    label at commas: unnamed s-ops are labelled by their expressions, which hold commas (a fuzz
    program refused by the budget named `'selector_width(select(length'` and `' length'`)."""
    width = "numerical(selector_width(select(length, length, lambda k, q: (k + q) % 2 == 0)))"
    gap = "sequence_map(lambda x, y: x - y, length, indices)"
    program = parse_program(f"""vocab {{0, 1, 2}}
max_len 4
output numerical(aggregate(select({width}, indices, >) or (select({gap}, {width}, >) and select(indices, indices, <=)),
                           numerical(map(lambda x: x, indices))))
""")
    graph = build_graph(program, infer_value_sets(program), frozenset(OPTIMIZATIONS))
    widest = _widest(graph, lay_out(graph), pruned=False)  # the key is read through folded Linears only: prune drops it
    assert widest is not None
    assert widest[0].startswith("the combined key of the one-hot of 'selector_width(select(length, length, λ))', "
                                "'sequence_map(length, indices)', 'indices', one dimension per combination")
