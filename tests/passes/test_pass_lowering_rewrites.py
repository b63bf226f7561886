"""The lowering's rewrites, one by one, on tiny programs: what each builds instead of the plain
construction, and what it leaves to the plain one."""

from __future__ import annotations

from rasp_compile import ir
from rasp_compile.compiler.lowering.rewrites import MapSite, Rewrite, SequenceMapSite, ViewSite
from rasp_compile.compiler.lowering.rewrites import LoweringOptions
from rasp_compile.compiler.lowering.views import categorical_view
from rasp_compile.compiler.ops import Attend, Embed, EmbedSource, GatedMap, Linear, NumericMLP, TableMLP
from rasp_compile.compiler.passes import compose_views, fold_embeddings, fold_linear, gated_maps
from rasp_compile.compiler.variables import Var

from tiny import by_label, lowering_of, plain_graph

MAPS = """
vocab {a, b}
max_len 4
up = map(lambda t: "b" if t == "a" else "a", tokens)
width = selector_width(select(tokens, tokens, ==))
both = sequence_map(lambda u, w: w if u == "a" else 0, up, width)
output sequence_map(lambda b, i: b + i, both, indices)
"""


def test_the_plain_lowering_builds_one_mlp_per_map():
    ops = by_label(plain_graph(MAPS))
    assert isinstance(ops["up"], TableMLP) and ops["up"].inputs[0].label == "tokens"
    assert isinstance(ops["width"], NumericMLP) and isinstance(ops["width.bos_share"], Attend)


def test_a_rewrite_that_passes_leaves_nothing_behind():
    def builds_then_passes(draft, site):
        draft.emit(Embed(draft.new_var("litter", ir.NUMERICAL, (0,)), EmbedSource.INDICES))
        return None

    plain = plain_graph(MAPS)
    passed = plain_graph(MAPS, LoweringOptions((Rewrite("litter", MapSite, builds_then_passes),)))
    assert [op.out.label for op in passed.ops] == [op.out.label for op in plain.ops]
    assert passed.labels == plain.labels and "litter" not in passed.labels


def test_the_first_rewrite_matching_a_site_that_answers_wins_and_adds_its_draft():
    def table_with_a_feature(draft, site):
        feature = draft.new_var("feature", ir.NUMERICAL, (0,))
        draft.emit(Embed(feature, EmbedSource.INDICES))
        return TableMLP(site.out, (site.inner,), site.fn)

    rewrites = (
        Rewrite("sequence", SequenceMapSite, lambda draft, site: None),  # matches no map: never asked of one
        Rewrite("first", MapSite, table_with_a_feature),
        Rewrite("second", MapSite, lambda draft, site: NumericMLP(site.out, site.inner, site.fn)),
    )
    state, var = lowering_of(MAPS, LoweringOptions(rewrites))
    assert state.origin[var["up"]] == "first" and isinstance(state.writer[var["up"]], TableMLP)
    (feature,) = [v for v in state.writer if v.label == "feature"]
    assert state.origin[feature] == "first" and state.ops.index(state.writer[feature]) < state.ops.index(
        state.writer[var["up"]])  # what the rewrite built comes before the op it proposed


def test_fold_embeddings_makes_a_map_of_an_embedding_an_embedding():
    state, var = lowering_of(MAPS)
    folded = fold_embeddings.map_of_embedding(state, MapSite(var["up"], lambda t: "b" if t == "a" else "a", var["tokens"]))
    assert isinstance(folded, Embed) and folded.source is EmbedSource.TOKENS and folded.fn("a") == "b"
    assert fold_embeddings.map_of_embedding(state, MapSite(var["up"], str, var["width"])) is None  # an MLP writes width


def test_fold_embeddings_embeds_a_sequence_map_of_positions_with_the_values_reached():
    state, var = lowering_of(MAPS)
    shifted = Var("shifted", ir.CATEGORICAL, tuple(range(7)))
    embedded = fold_embeddings.sequence_map_of_positions(
        state, SequenceMapSite(shifted, lambda i, n: i + n, var["indices"], var["indices"]))
    assert isinstance(embedded, Embed) and embedded.source is EmbedSource.INDICES
    assert embedded.out.values == (0, 2, 4, 6)  # i + i only: not every pair of values meets
    assert fold_embeddings.sequence_map_of_positions(state, SequenceMapSite(shifted, max, var["indices"], var["tokens"])) is None


def test_fold_linear_writes_an_affine_map_of_a_number_with_no_mlp():
    state, var = lowering_of(MAPS)
    number = Var("i", ir.NUMERICAL, (0, 1, 2, 3))
    state.writer[number] = Embed(number, EmbedSource.INDICES)
    out = Var("twice", ir.NUMERICAL, (1, 3, 5, 7))
    folded = fold_linear.linear_map(state, MapSite(out, lambda i: 2 * i + 1, number))
    assert isinstance(folded, Linear)
    assert folded.weights == {(number, None): {"twice": 2.0}} and folded.bias == {"twice": 1.0}
    square = Var("square", ir.NUMERICAL, (0, 1, 4, 9))
    assert fold_linear.linear_map(state, MapSite(square, lambda i: i * i, number)) is None  # not a line: left to an MLP


def test_value_classes_gives_a_view_a_dimension_per_class_its_reader_tells_apart():
    # width takes 1..4 (a select of tokens against themselves with == selects each query's own key)
    for options, expected in ((LoweringOptions(), 4), (LoweringOptions(reader_classes=True), 2)):
        state, var = lowering_of(MAPS, options)
        share = state.writer[var["width"]].input  # BOS's share c/(c + w), a number, written by attention
        view = categorical_view(state, share, lambda s: s < 0.6)  # c = 4: w >= 3
        assert len(view.values) == expected and isinstance(state.writer[view], NumericMLP)


def test_compose_views_reads_a_step_mlps_input_a_sub_layer_sooner():
    state, var = lowering_of(MAPS)
    width, share = var["width"], state.writer[var["width"]].input
    view = Var("width.cat", ir.CATEGORICAL, width.values)
    steps = compose_views.through_steps(state, ViewSite(view, width, lambda w: w))
    c = state.writer[share].bos_weight
    assert steps.out is view and steps.input is share and steps.fn(c / (c + 2)) == 2  # the view's steps read c/(c + w) itself
    assert compose_views.through_steps(state, ViewSite(view, share, lambda s: s)) is None  # an attention writes the share


def test_gated_maps_gates_a_number_by_an_exact_one_hot_only():
    state, var = lowering_of(MAPS)
    share = state.writer[var["width"]].input  # a number
    out = Var("out", ir.NUMERICAL, ())
    gated = gated_maps.gated_map(state, SequenceMapSite(out, lambda s, t: s * (2 if t == "a" else 3), share, var["tokens"]))
    assert isinstance(gated, GatedMap) and gated.input is share and gated.gate is var["tokens"]
    assert {g: (round(a, 9), round(b, 9)) for g, (a, b) in gated.affine.items()} == {"a": (2, 0), "b": (3, 0)}
    up = state.writer[var["up"]].out  # a table of tokens: exact too
    assert gated_maps.exact_one_hot(up, state.writer.get)
    assert not gated_maps.exact_one_hot(var["width"], state.writer.get)  # a step MLP of attention: not exact
    assert gated_maps.gated_map(state, SequenceMapSite(out, lambda s, w: s * w, share, var["width"])) is None
