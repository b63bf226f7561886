"""The compiler's driver: a checked program -> a `Model` in the docs/format.md format.

Reading this module top to bottom shows every step in the order it runs. `--no-opt NAME`
(`disabled=`) drops the lines of that name from the lists below, nothing else; a line with no
name always runs.

    infer_value_sets       the values every s-op can take (frontend/infer.py)
    lower                  s-ops -> variables and the ops writing them (lowering/lower.py), asking
                           LOWERING_REWRITES, with LOWERING_OPTIONS
    GRAPH_PASSES           Graph -> Graph, in order
    lay_out                a named residual dimension per categorical value / numerical s-op
    whole_answer           a split answer (split-keys) whose model would pass the budget is
                           lowered again without split-keys: one layer deeper, within the budget
    answer_by_steps        a numerical answer interpolated by the pass of that name goes back
                           to flat steps where the analysis proves the steps, not the polyline
                           (for a program with too many inputs for every_input)
    check_budget           a model too large to build is refused before any weight is
    check_precision        refuse numbers the float dtype cannot hold exactly enough; every
                           read-out's error bound and tolerance (meta.margins); where it refuses,
                           the graph with step MLPs' numbers rounded again (rerounded-steps) is
                           checked instead, and kept when it passes every check (a two-digit
                           read-out's high digit may be rounded again before the budget's check)
    schedule               operations -> the earliest attention / MLP sub-layer
    assemble               per-primitive weights (primitives/) -> arrays and meta
    MODEL_PASSES           Model -> Model, in order; then the arrays are cast to the dtype
    every_input            a numerical answer check_precision could not prove, run on every
                           input of a program that has few (every_input.py), or refused
    describe_model         meta.heads and meta.sops (head_meta.py); then readable_labels
                           names derived features after what they hold (naming.py)
    validate               the model is checked like any file read from disk
"""

from __future__ import annotations

import dataclasses
from typing import Any, NamedTuple
from collections.abc import Callable, Iterable

import numpy as np
from numpy.typing import DTypeLike

from .. import ir
from ..collector import collector_paused
from ..errors import ArgumentError, RaspError, RaspPrecisionError, placed_at, recursion_refused
from ..frontend.infer import ValueSets, infer_value_sets
from ..runtime.model import Model, validate
from .assemble import assemble, cast_to
from .budget import MAX_PARAMETERS, check_budget, check_unbuilt_scores, check_vocab_budget, parameter_estimate
from .budget import unbuilt_heads
from ..frontend.single_valued import conflicts_possible
from .head_meta import describe_model
from .layout import Layout, lay_out
from .lowering.lower import program_to_graph
from .lowering.rewrites import AggregateSite, LoweringOptions, MapSite, Rewrite, SequenceMapSite, TermSite, ViewSite
from .lowering.rewrites import WidthSite
from .naming import readable_labels
from .ops import Graph
from .passes import compose_views, fold_embeddings, fold_linear, gated_maps, position_selects
from .passes import affine_means, binary_products, position_widths, split_keys
from .passes.amplification import amplify
from .passes.dead_ops import drop_dead_ops
from .passes.head_features import fold_head_features
from .passes.interpolated_steps import answer_by_steps, interpolate_steps
from .passes.linear_readout import choose_linear_readout
from .passes.number_readout import choose_number_readout
from .passes.prune import prune
from .passes.rerounded_steps import reround_high_digit, reround_steps
from .every_input import checkable, verified_margin
from .precision import ImpreciseAnswer, check_precision, proven, refusal
from .schedule import schedule


class Step(NamedTuple):
    """One line of a list below: `run` under the optimisation `name` (None: always), also
    needing the optimisations in `needs`."""

    name: str | None
    run: Callable[..., Any]  # Graph -> Graph in GRAPH_PASSES, Model -> Model in MODEL_PASSES
    needs: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """The step's name in a dump (compiler/dump/): its optimisation's, else its function's."""
        return self.name or self.run.__name__


LOWERING_REWRITES = (
    # a map of an embedded variable is an embedding row (before fold-linear: nothing to fold then)
    Rewrite("fold-embeddings", MapSite, fold_embeddings.map_of_embedding),
    # an affine map of a mean is the mean of the mapped values (before fold-linear, which would fold it)
    Rewrite("affine-means", MapSite, affine_means.affine_mean),
    Rewrite("affine-means", SequenceMapSite, affine_means.affine_sequence_mean),
    # a map linear in its input's coordinates is written by the input's writer; a number read
    # from a view of x, when it is not linear, is a step MLP of x itself
    Rewrite("fold-linear", MapSite, fold_linear.linear_map),
    # a sequence_map linear in its inputs is written by their writers
    Rewrite("fold-linear", SequenceMapSite, fold_linear.linear_sequence_map),
    # a sequence_map of two variables the position decides is a position embedding row
    Rewrite("fold-embeddings", SequenceMapSite, fold_embeddings.sequence_map_of_positions),
    # a running mean times its count is the count's binary digits gating the mean
    Rewrite("binary-products", SequenceMapSite, binary_products.product_by_digits),
    # a sequence_map of a number and an exact one-hot is one small MLP of the number per value
    Rewrite("gated-maps", SequenceMapSite, gated_maps.gated_map),
    # a categorical view of a step MLP's number reads that MLP's input, a sub-layer sooner
    Rewrite("compose-views", ViewSite, compose_views.through_steps),
    # a width the positions decide is a position embedding, or the length (one head) plus one
    Rewrite("position-widths", WidthSite, position_widths.width_of_positions),
    # a select pairing an index with one target is scored from four numbers (asked first: at
    # max_len 1 a select may be both this and the next, and is scored from the numbers)
    Rewrite("position-selects", TermSite, position_selects.position_term),
    # a select the causal mask already decides is `true`
    Rewrite("position-selects", TermSite, position_selects.causal_term),
    # the answer's aggregate on a table of two s-ops is one head per value of one of them, summed
    Rewrite("split-keys", AggregateSite, split_keys.split_answer),
)
"""Rewrites the lowering asks as it builds each s-op (lowering/rewrites.py says why they cannot
wait for the whole graph): for each site, those matching it in this order, the first answer
wins; with none, the plain construction."""

LOWERING_OPTIONS = {
    # a categorical view of a number has a dimension per class of values its reader tells apart
    "value-classes": "reader_classes",
    # terms of one selector reading the same variable share its head dimensions
    "compact-heads": "shared_blocks",
}
"""Optimisations that are a choice within the lowering's plain constructions: name -> the
LoweringOptions field (lowering/rewrites.py) they turn on."""

GRAPH_PASSES = (
    Step("linear-readout", choose_linear_readout),  # a last table a linear read-out can answer is left to unembed
    Step("number-readout", choose_number_readout),  # a numeric-valued answer is written as one number
    Step(None, drop_dead_ops),  # ops nothing reads are dropped
    Step("interpolated-steps", interpolate_steps),  # decodes only select scores read use one unit per value
    Step(None, amplify),  # each aggregate learns how much its readers magnify its leak
    Step("head-features", fold_head_features, needs=("prune",)),  # a head's features replace what only it reads
)
"""Graph -> Graph passes, after the lowering, in order."""

MODEL_PASSES = (
    Step("prune", prune),  # residual dimensions no weight reads are dropped
)
"""Model -> Model passes, on the assembled float64 arrays, in order."""

PRECISION_PASSES = ("rerounded-steps",)
"""Optimisations that need the dtype, run where the graph's precision is checked
(graph_within_budget): a high digit rounded again first, every step MLP's number where the
check refuses (passes/rerounded_steps.py)."""

OPTIMIZATIONS = {
    "fold-embeddings": (
        "maps of tokens, indices (and causal length), and sequence_maps of two of the position's, become embedding rows"
    ),
    "affine-means": "an affine map of a mean is the mean of the mapped values, so no large constant enters its sum",
    "fold-linear": "linear s-ops are written by their inputs' writers, with no layer of their own",
    "value-classes": "a numerical s-op read categorically keeps only the values its reader tells apart",
    "compose-views": (
        "a numerical s-op that a step MLP writes is read categorically from that MLP's input, a sub-layer sooner"
    ),
    "gated-maps": "a sequence_map of a number and an exact one-hot is one small MLP of the number per value of the one-hot",
    "binary-products": "a running mean times its count is summed from the count's binary digits gating the mean",
    "compact-heads": "terms of a selector reading the same variable share its head dimensions",
    "position-widths": (
        "a selector_width the positions decide is counted from the position and the length, with no table of position pairs"
    ),
    "head-features": "a head's query or key features are written into the residual in place of what only it reads",
    "interpolated-steps": "a width or mean read only by categorical selects is decoded with one hidden unit per value",
    "position-selects": "selects pairing an index with one target are scored from four numbers",
    "split-keys": "the answer's aggregate on a table of two s-ops is one head per value of one of them, summed",
    "linear-readout": "a last table that a linear read-out can answer is left to unembed",
    "number-readout": "a numeric-valued output is written as one number, read as the nearest value",
    "prune": "residual dimensions that no weight reads are dropped",
    "rerounded-steps": (
        "where the dtype cannot hold a model, a step MLP's number is rounded again by a step MLP of its own values, a layer later"
    ),
}
"""Every optimisation by name (`--no-opt NAME`, `disabled=` below): with all of them off,
each s-op is compiled by its plain construction, one-hot and one sub-layer each."""


def compile_program(
    program: ir.Program,
    max_len: int | None = None,
    dtype: DTypeLike = np.float32,
    disabled: Iterable[str] = (),
    value_sets: ValueSets | None = None,
) -> Model:
    """Compile `program` (optionally at another max_len) into weights of the given float dtype,
    without the optimisations named in `disabled` (keys of OPTIMIZATIONS). `value_sets`: the
    program's value sets at that max_len (infer.infer_value_sets), when the caller has them."""
    unknown = set(disabled) - set(OPTIMIZATIONS)
    if unknown:
        raise ArgumentError(f"unknown optimisation {sorted(unknown)[0]!r}; known: {', '.join(OPTIMIZATIONS)}")
    enabled = frozenset(OPTIMIZATIONS) - set(disabled)
    if max_len is not None and max_len != program.max_len:
        program = dataclasses.replace(program, max_len=max_len)
    with recursion_refused(program.output.loc or program.output_loc), placed_at(program.output_loc), collector_paused():
        if value_sets is None:
            value_sets = infer_value_sets(program)
        model = _model(program, value_sets, enabled, dtype, advise=True)
    model = dataclasses.replace(model, meta={
        **model.meta, "optimizations_off": sorted(set(disabled)),  # an extension of the meta of docs/format.md
    })
    validate(model)
    return model


def _model(program: ir.Program, value_sets: ValueSets, enabled: frozenset[str], dtype: DTypeLike, advise: bool) -> Model:
    """compile_program's steps after the value inference; `advise`: a precision refusal names a
    smaller max_len that compiles (found by compiling there without advice, _compiles_at)."""
    check_vocab_budget(program, value_sets)
    compiles = (lambda max_len: _compiles_at(program, max_len, enabled, dtype)) if advise else None
    graph, layout, margins, unproven = graph_within_budget(program, value_sets, enabled, dtype, compiles)
    embeds, blocks = schedule(graph)
    model = assemble(graph, embeds, blocks, layout)
    for step in active_steps(MODEL_PASSES, enabled):
        model = step.run(model)
    model = cast_to(model, dtype)
    if unproven is not None:
        margins = _answer_on_every_input(model, program, graph, unproven, margins, dtype, compiles)
    model = dataclasses.replace(model, meta={
        **model.meta,
        **describe_model(graph, blocks, conflicts_possible(program, value_sets)),  # meta.heads and meta.sops (docs/inspect.md)
        "margins": margins,  # every read-out's proven error bound and tolerance (docs/format.md)
    })
    return dataclasses.replace(model, meta={
        **model.meta, **readable_labels(model.meta, program),  # derived features named after what they hold
    })


def build_graph(program: ir.Program, value_sets: ValueSets, enabled: frozenset[str],
                watch: Callable[[str, Graph], None] = lambda step, graph: None, unbuilt_large_scores: bool = False,
                ) -> Graph:
    """The lowered graph after every graph pass of `enabled` (keys of OPTIMIZATIONS); `watch` is
    shown the graph after each step ("lower", then each graph pass's label) that runs;
    `unbuilt_large_scores`: the lowering's option (lowering/rewrites.py)."""
    options = dataclasses.replace(lowering_options(enabled), unbuilt_large_scores=unbuilt_large_scores)
    graph = program_to_graph(program, value_sets, options)
    watch("lower", graph)
    for step in active_steps(GRAPH_PASSES, enabled):
        graph = step.run(graph)
        watch(step.label, graph)
    return graph


def lowering_options(enabled: frozenset[str]) -> LoweringOptions:
    """The lowering's rewrites and options under `enabled`: those of the names enabled."""
    rewrites = tuple(rewrite for rewrite in LOWERING_REWRITES if rewrite.name in enabled)
    return LoweringOptions(rewrites, **{field: name in enabled for name, field in LOWERING_OPTIONS.items()})


def active_steps(steps: tuple[Step, ...], enabled: frozenset[str]) -> list[Step]:
    """The steps that run: those with no name, or whose name and needs are all enabled."""
    return [s for s in steps if s.name is None or ({s.name, *s.needs} <= enabled)]


def graph_within_budget(program: ir.Program, value_sets: ValueSets, enabled: frozenset[str], dtype: DTypeLike,
                         compiles: Callable[[int], bool] | None,
                         ) -> tuple[Graph, Layout, list[dict[str, Any]], ImpreciseAnswer | None]:
    """The graph, its layout and its read-outs' margins, checked for size (after whole_answer),
    then precision. `compiles(max_len)`: whether the program compiles there (precision's advice).
    A score over joints too large for any model is first left unbuilt: where no pass drops its
    head, the budget refuses at once (check_unbuilt_scores) rather than after building a table of
    millions of pairs; where every such head is dropped, the graph is the one built with every
    score; else (a split answer, or a joint a pass found unread) it is lowered again, scores built."""
    graph = build_graph(program, value_sets, enabled, unbuilt_large_scores=True)
    if unbuilt_heads(graph):
        if not graph.split:  # whole_answer may lower the answer again, without the split heads
            check_unbuilt_scores(graph)
        graph = build_graph(program, value_sets, enabled)
    layout = lay_out(graph)
    graph, layout, enabled = whole_answer(graph, layout, value_sets, enabled)
    checked_elsewhere = checkable(program)
    if not checked_elsewhere:
        graph = _answer_by_steps_where_proven(graph, dtype)
    rounding_again = "rerounded-steps" in enabled
    if rounding_again and (digit := reround_high_digit(graph, dtype)) is not graph:
        graph, layout = digit, lay_out(digit)
    check_budget(graph, layout, pruned="prune" in enabled)
    try:
        return graph, layout, *check_precision(graph, dtype, compiles, answer_checked_elsewhere=checked_elsewhere,
                                               advise=not rounding_again)
    except RaspPrecisionError as refused:
        if not rounding_again:
            raise
        return rerounded(graph, dtype, enabled, refused, checked_elsewhere, compiles)


def rerounded(graph: Graph, dtype: DTypeLike, enabled: frozenset[str], refused: RaspPrecisionError,
              answer_checked_elsewhere: bool, compiles: Callable[[int], bool] | None,
              ) -> tuple[Graph, Layout, list[dict[str, Any]], ImpreciseAnswer | None]:
    """For a graph refused for precision (`refused`, without advice yet): the graph with step
    MLPs' numbers rounded again (passes/rerounded_steps.py), its layout and check_precision's
    findings, when it passes the size budget and the precision checks in `dtype`; else `refused`,
    with the advice that works for the graph as built (precision.refusal)."""
    again = reround_steps(graph, dtype)
    if again is not graph:
        layout = lay_out(again)
        try:
            check_budget(again, layout, pruned="prune" in enabled)
            return again, layout, *check_precision(again, dtype, answer_checked_elsewhere=answer_checked_elsewhere,
                                                   advise=False)
        except RaspError:
            pass
    raise refusal(graph, dtype, compiles, refused) from None


def _answer_by_steps_where_proven(graph: Graph, dtype: DTypeLike) -> Graph:
    """`graph`, or the graph with the numerical answer's polyline back on flat steps
    (interpolated_steps.answer_by_steps) where the analysis proves the steps in `dtype` and not
    the polyline: the polyline was chosen counting only its input's leak. A graph the analysis
    proves as it is stays as it is; so does that of a program with few enough inputs for the
    every-input check (the driver asks only for the others), which runs the polyline on each."""
    stepped = answer_by_steps(graph)
    if stepped is None or proven(graph, dtype) or not proven(stepped, dtype):
        return graph
    return stepped


def whole_answer(graph: Graph, layout: Layout, value_sets: ValueSets, enabled: frozenset[str],
                 ) -> tuple[Graph, Layout, frozenset[str]]:
    """(graph, layout, enabled) as they are, or, when split-keys split the answer and the model as
    assembled would pass MAX_PARAMETERS, lowered again without split-keys: every split head writes
    a one-hot of the answer into the assembled arrays until prune drops it, so the whole answer,
    one layer deeper, assembles smaller (check_budget then decides)."""
    if not graph.split or parameter_estimate(graph, layout, pruned=False) <= MAX_PARAMETERS:
        return graph, layout, enabled
    enabled = enabled - {"split-keys"}
    graph = build_graph(graph.program, value_sets, enabled)
    return graph, lay_out(graph), enabled


def _answer_on_every_input(model: Model, program: ir.Program, graph: Graph, unproven: ImpreciseAnswer,
                           margins: list[dict[str, Any]], dtype: DTypeLike, compiles: Callable[[int], bool] | None,
                           ) -> list[dict[str, Any]]:
    """meta.margins with the answer the analysis could not prove measured on every input instead
    (every_input.py); its refusal, with advice, where an input's answer strays too far."""
    try:
        answer = verified_margin(model, program, unproven, graph.readout.inputs[0].label)
    except ImpreciseAnswer:
        raise refusal(graph, dtype, compiles, unproven) from None
    return [answer, *margins]


def _compiles_at(program: ir.Program, max_len: int, enabled: frozenset[str], dtype: DTypeLike) -> bool:
    """Whether the program compiles at another max_len, every check included (the every-input
    check too): what precision.py's advice of a smaller max_len must be."""
    smaller = dataclasses.replace(program, max_len=max_len)
    try:
        _model(smaller, infer_value_sets(smaller), enabled, dtype, advise=False)
    except RaspError:
        return False
    return True
