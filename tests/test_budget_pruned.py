"""The size budget counts the model as built: the residual dimensions prune keeps, not those only
folded maps read. sort's widths are read by its range select through one Linear number per index,
so their one-hots (2 x max_len + 1 dimensions) never reach the model, and sort at max_len 1,024
(27 million parameters built) is not refused as 101 million."""

from __future__ import annotations

from pathlib import Path

import pytest

from rasp_compile.compiler import OPTIMIZATIONS, build_graph, compile_program
from rasp_compile.compiler.budget import MAX_PARAMETERS, check_budget, parameter_estimate, residual_width
from rasp_compile.compiler.layout import lay_out
from rasp_compile.frontend import load_checked

PROGRAMS = Path(__file__).parent.parent / "programs"
ALL = frozenset(OPTIMIZATIONS)


@pytest.mark.parametrize("path", sorted(PROGRAMS.glob("*.rasp")), ids=lambda p: p.stem)
def test_the_budget_never_counts_fewer_dimensions_than_the_model_keeps(path):
    program, value_sets = load_checked(path, 12)
    graph = build_graph(program, value_sets, ALL)
    layout = lay_out(graph)
    model = compile_program(program, value_sets=value_sets)
    built = len(model.meta["residual"])
    assert built <= residual_width(graph, layout) <= layout.d_model
    assert residual_width(graph, layout, pruned=False) == layout.d_model


def test_sort_keeps_the_index_and_one_number_per_index_of_its_range_select():
    """At max_len n: the index's one-hot and the range select's n key numbers, the token's three
    values and the answer's, BOS and the two widths' shares: 2 n + 9, where the layout has 4 n + 10
    (prune also drops index 0's row, which the range select never needs)."""
    n = 64
    program, value_sets = load_checked(PROGRAMS / "sort.rasp", n)
    graph = build_graph(program, value_sets, ALL)
    layout = lay_out(graph)
    assert residual_width(graph, layout) == 2 * n + 9 and layout.d_model == 4 * n + 10
    model = compile_program(program, value_sets=value_sets)
    assert len(model.meta["residual"]) == 2 * n + 8
    assert sum(a.size for a in model.params.values()) <= parameter_estimate(graph, layout)


@pytest.mark.slow
def test_sort_at_max_len_1024_is_within_the_budget_as_built():
    program, value_sets = load_checked(PROGRAMS / "sort.rasp", 1024)
    graph = build_graph(program, value_sets, ALL)
    layout = lay_out(graph)
    assert parameter_estimate(graph, layout) <= 50_000_000 < MAX_PARAMETERS < parameter_estimate(graph, layout, False)
    check_budget(graph, layout)
