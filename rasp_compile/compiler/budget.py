"""budget: refuse, before building any weight, a model too large to build in reasonable memory.

Value sets can grow fast (a chain of `a = a + tokens` maps adds the vocab to every link), and a
categorical s-op with V values takes V residual dimensions. Every weight matrix of docs/format.md has
d_model rows or columns, so a model costs about d_model times the number of columns it needs:

    embeddings and read-out   vocab + max_len + 1 + output classes
    each attention            3 per head dimension (q, k, v) + d_model (c_proj, the residual's width)
    each MLP                  2 per hidden unit (c_fc in, c_proj out)

We count every one of those (hidden units at most: a table's combinations, two per step where a
number's map changes), with d_model the residual dimensions the model keeps once prune drops those
no weight reads (a variable only folded maps read: sort's widths at max_len 1,024 are 2,049 of
4,106 laid-out dimensions, none kept), and
stop at MAX_PARAMETERS, with the estimate in the message, instead of running for minutes into
gigabytes of memory. Before the graph is even built, `check_vocab_budget` refuses what no
layout can save: wte alone is vocab x d_model and the read-out classes x d_model, with d_model
at least either (a 40,000-token vocab took 23 s and a 13 GB identity read-out before). The arrays
assemble builds before prune, in float64, are held to ASSEMBLY_PARAMETERS the same way.

While the graph is built, a selector whose joints (one dimension and one hidden unit per
combination of their parts' values) alone pass ASSEMBLY_PARAMETERS, with the head reading them,
is not scored (a score over millions of pairs takes many seconds): `check_unbuilt_scores` refuses
the graph when such a head is still in it after the passes, with the bound in the message.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod
from typing import TypeGuard

from .. import ir
from ..errors import Loc, RaspSizeError
from ..frontend.infer import ValueSets
from .primitives.gated_map import hidden_units
from .layout import Layout
from .ops import Attend, GatedMap, Graph, Linear, NumericMLP, TableMLP, op_inputs
from .selector_terms import StandInScore
from .variables import Var

MAX_PARAMETERS = 100_000_000
"""About 400 MB of float32 per copy: far above any library program (the largest, most_freq at
max_len 64, has 0.6 million), far below what runs a machine out of memory."""

ASSEMBLY_PARAMETERS = 2 * MAX_PARAMETERS
"""The arrays assemble builds, in float64 and before prune drops the dimensions no weight reads:
at most 1.6 GB, as much as the largest weights file the runtime reads."""


def check_vocab_budget(program: ir.Program, value_sets: ValueSets) -> None:
    """Raise check_budget's error (at the output) when the vocab or a categorical output's values
    alone, squared, pass MAX_PARAMETERS."""
    classes = len(value_sets.get(program.output, ())) if program.output.encoding == ir.CATEGORICAL else 0
    widest = max(len(program.vocab), classes)
    if widest * widest > MAX_PARAMETERS:
        raise _too_large(program, widest * widest, widest, bound="at least")


def check_budget(graph: Graph, layout: Layout, pruned: bool = True) -> None:
    """Raise RaspSizeError when the model would exceed MAX_PARAMETERS (`pruned`: as prune leaves
    it), or its arrays as assembled, before prune, ASSEMBLY_PARAMETERS: at the variable that takes
    half the residual or more, named in the message (`_widest`), else at the output."""
    estimate = parameter_estimate(graph, layout, pruned)
    if estimate > MAX_PARAMETERS:
        raise _too_large(graph.program, estimate, residual_width(graph, layout, pruned),
                         widest=_widest(graph, layout, pruned))
    assembled = parameter_estimate(graph, layout, pruned=False)
    if assembled > ASSEMBLY_PARAMETERS:
        raise _too_large(graph.program, assembled, layout.d_model, widest=_widest(graph, layout, False),
                         limit=ASSEMBLY_PARAMETERS, stage=ASSEMBLED)


ASSEMBLED = "as assembled, before prune drops what only folded maps read, "
"""The refusal's stage when the arrays assemble builds pass ASSEMBLY_PARAMETERS."""


def kept_variables(graph: Graph, pruned: bool = True) -> list[Var]:
    """The variables whose dimensions the model built keeps: every one laid out, or (`pruned`)
    those prune keeps, which a head, an MLP or the read-out reads. A variable only folded Linear
    ops read is written by its writer into theirs and dropped: sort's widths, whose one-hots its
    range select reads through one Linear number per index, keep none of theirs."""
    if not pruned:
        return [op.out for op in graph.ops]
    read = [var for op in graph.ops if not isinstance(op, Linear) for var in op_inputs(op)]
    return list({var.label: var for var in [*read, *graph.readout.inputs]}.values())


def residual_width(graph: Graph, layout: Layout, pruned: bool = True) -> int:
    """d_model of the model built (`kept_variables`' dimensions and BOS's)."""
    if not pruned:
        return layout.d_model
    return 1 + sum(len(layout.dims(var)) for var in kept_variables(graph))


def parameter_estimate(graph: Graph, layout: Layout, pruned: bool = True) -> int:
    """About how many parameters the model of `graph` laid out as `layout` has (module docstring),
    after prune (`pruned`) or as assembled."""
    d_model = residual_width(graph, layout, pruned)
    columns = len(graph.program.vocab) + graph.program.max_len + 1 + len(graph.output.domain)
    for op in graph.ops:
        if isinstance(op, Attend):
            columns += 3 * (len(op.score.columns) + 1) + d_model
        elif isinstance(op, TableMLP):
            combinations = len(op.possible) if op.possible is not None else prod(len(x.domain) for x in op.inputs)
            columns += 2 * combinations
        elif isinstance(op, NumericMLP):
            columns += 2 * numeric_units(op)
        elif isinstance(op, GatedMap):
            columns += 2 * hidden_units(op)
    return d_model * columns


def _widest(graph: Graph, layout: Layout, pruned: bool = True) -> tuple[str, int, Loc | None] | None:
    """The kept variable (`kept_variables`) that takes most of the residual dimensions, if one
    takes half or more: its description, their number, its place. Every value set may be within
    the checker's limits while the model is not: a selector that combines selects of several s-ops
    reads one key made of all of them (a dimension per combination of their values)."""
    var = max(kept_variables(graph, pruned), key=lambda out: len(layout.dims(out)))
    writer = graph.writers().get(var)
    if 2 * len(layout.dims(var)) < residual_width(graph, layout, pruned):
        return None  # many parts, none the cause alone: the value sets are
    parts = _joint_parts(writer)
    what = (f"the combined key of {', '.join(map(_shown, parts))}, one dimension per combination of "
            f"their values," if len(parts) > 1 else _shown(var.label))
    return what, len(layout.dims(var)), var.loc


def _joint_parts(op: object) -> list[str]:
    """The labels of the variables a joint variable is the tuple of, when `op` writes one (is_joint);
    else none. (Read from the table, not from the joint's label: a label may hold commas itself, as
    an unnamed s-op's expression does.)"""
    return [part.label for part in op.inputs] if is_joint(op) else []


def is_joint(op: object) -> TypeGuard[TableMLP]:
    """Whether `op` writes a joint variable (lowering/features.joint): the one table over several
    variables, none included."""
    return isinstance(op, TableMLP) and op.covers_none and len(op.inputs) > 1


def joints_lower_bound(program: ir.Program, joints: Sequence[TableMLP]) -> int:
    """A lower bound of parameter_estimate(graph, layout, pruned=False) for any graph of `program`
    that holds the ops `joints` (is_joint) and a head: d_model counts at least their dimensions and
    BOS's, and the columns at least the embeddings' vocab + max_len + 1, each joint's 2 per hidden
    unit (one per combination of its inputs' values: a joint's table covers them all) and the
    head's 3 x (its columns + 1) + d_model >= 3 + d_model. Every other op only adds to either."""
    d_model = 1 + sum(len(op.out.dim_labels) for op in joints)
    units = sum(prod(len(part.domain) for part in op.inputs) for op in joints)
    return d_model * (len(program.vocab) + program.max_len + 1 + 2 * units + 3 + d_model)


def unbuilt_heads(graph: Graph) -> list[Attend]:
    """The heads of `graph` whose score was left unbuilt (selector_terms.StandInScore)."""
    return [op for op in graph.ops if isinstance(op, Attend) and isinstance(op.score, StandInScore)]


def check_unbuilt_scores(graph: Graph) -> None:
    """Raise check_budget's refusal of the model as assembled when a head of `graph` whose score
    was left unbuilt (selector_terms.StandInScore) reads joints that alone bound it past
    ASSEMBLY_PARAMETERS (joints_lower_bound): the graph with every score built holds the same
    joints and head (passes drop no op that something reads, and the unbuilt score reads what the
    built one would), so check_budget would refuse it, after building a score of millions of pairs.
    At the widest of those joints, as check_budget's refusal points at it."""
    writers = graph.writers()
    for op in unbuilt_heads(graph):
        joints = [writer for writer in map(writers.get, op.score.reads()) if is_joint(writer)]
        estimate = joints_lower_bound(graph.program, joints)
        if joints and estimate > ASSEMBLY_PARAMETERS:
            widest = max(joints, key=lambda joint: len(joint.out.dim_labels))
            what = (f"the combined key of {', '.join(map(_shown, _joint_parts(widest)))}, one dimension per "
                    f"combination of their values,")
            raise _too_large(graph.program, estimate, 1 + sum(len(j.out.dim_labels) for j in joints),
                             bound="at least", widest=(what, len(widest.out.dim_labels), widest.out.loc),
                             limit=ASSEMBLY_PARAMETERS, stage=ASSEMBLED)


def _shown(label: str) -> str:
    """A variable's label as the program names it: `'b'`, or `the one-hot of 'b'` for the
    categorical copy of a number b (lowering/views.py)."""
    return f"the one-hot of {label[:-len('.cat')]!r}" if label.endswith(".cat") else repr(label)


def numeric_units(op: NumericMLP) -> int:
    """The hidden units a NumericMLP takes (primitives/numeric_mlp.py): one per value for a
    polyline, else two per step where its answer changes, not two per value (a map `b < 0` of a
    running mean at max_len 1,024 has one step among 319,000 values)."""
    return len(op.input.values) if op.interpolated else 2 * op.steps


def _too_large(program: ir.Program, estimate: int, d_model: int, bound: str = "about",
               widest: tuple[str, int, Loc | None] | None = None, limit: int = MAX_PARAMETERS,
               stage: str = "") -> RaspSizeError:
    """The refusal; `widest` (see `_widest`) names the widest part of the residual and is where
    the error points, else the output; `stage` says when the model is that large, `limit` what
    the compiler builds then."""
    width = f"{d_model:,}" if bound == "about" else f"{bound} {d_model:,}"  # a layout's is exact
    why = "the s-ops' value sets are too large"
    if widest is not None:
        of = f"of the {d_model:,} " if bound == "about" else ""
        why = f"each value set is within the checker's limits, but {widest[0]} takes {widest[1]:,} {of}residual dimensions"
    return RaspSizeError(
        f"the model would need {bound} {estimate:,} parameters (d_model {width}), {stage}more "
        f"than this compiler builds ({limit:,}): {why}; "
        f"use fewer values (a smaller vocab or max_len, or maps that keep fewer values)",
        (widest[2] if widest is not None else None) or program.output.loc or program.output_loc,
    )
