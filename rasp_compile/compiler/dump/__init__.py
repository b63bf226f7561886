"""The compiler's graph as text after any step of the driver (text.py prints it; the command
line is cli/dump_cmd.py's, run by __main__.py):

    python -m rasp_compile.compiler.dump PROGRAM.rasp [--after STEP] [--max-len N] [--no-opt NAME]...
    rasp-compile PROGRAM.rasp --dump-graph [STEP]

The steps, in the driver's order (docs/compiler.md lists them with what each does):

    lower            the graph is built: each s-op's construction, asking the lowering rewrites
    GRAPH_PASSES     each changes the graph (driver.py); by default the dump is after the last
    lay_out ... assemble      read the graph: the graph after the last graph pass (whole_answer's
                              and answer_by_steps' fallbacks aside, below)
    MODEL_PASSES ... validate the same graph, each variable marked with the residual dimensions
                              prune dropped from the compiled model (so these compile it)

A lowering rewrite (fold-linear, ...) has no graph of its own: it acts inside `lower`, so its work
is the difference between `--after lower` with and without `--no-opt NAME`. A step that did not run
(`--no-opt` it, or a step it needs) shows the graph as the steps before it left it. The graph is
the one build_graph makes, before check_budget: a model that check_budget or check_precision
refuses can still be dumped after any graph step, and a split answer too large for the budget
(which the driver compiles again without split-keys) is shown split; `--no-opt split-keys` shows
the graph the driver falls back to. A numerical answer the driver puts back on flat steps
(answer_by_steps) is shown as interpolated-steps left it. From check_precision on, the graph is
the one the driver checked and builds, its fallbacks included (whole_answer, answer_by_steps, and
the numbers rerounded-steps rounds again), where the model passes the budget and precision checks.
"""

from __future__ import annotations

from typing import NamedTuple
from collections.abc import Iterable

import numpy as np

from ... import ir
from ...errors import RaspError, placed_at, recursion_refused
from ...frontend.infer import ValueSets, infer_value_sets
from ...suggest import did_you_mean
from ..driver import (GRAPH_PASSES, LOWERING_OPTIONS, LOWERING_REWRITES, MODEL_PASSES, OPTIMIZATIONS, active_steps, build_graph,
                     compile_program, graph_within_budget)
from ..layout import lay_out
from ..ops import Graph
from .text import graph_lines

BUILT_BY = "lower"
GRAPH_READERS = ("lay_out", "whole_answer", "answer_by_steps", "check_budget", "check_precision", "schedule", "assemble")
"""The driver's steps between the graph passes and the model passes, which read the graph."""
LAST = ("every_input", "describe_model", "validate")
"""The driver's steps after the model passes (they measure and check, they change no weight)."""
BEFORE_GRAPH = ("infer_value_sets",)
"""The driver's step before the graph exists."""


def graph_steps() -> list[str]:
    """The steps that build or change the graph, in order: `lower`, then each graph pass."""
    return [BUILT_BY, *(step.label for step in GRAPH_PASSES)]


def model_steps() -> list[str]:
    """The steps after which the model is built: the model passes, then LAST."""
    return [*(step.label for step in MODEL_PASSES), *LAST]


def steps() -> list[str]:
    """Every step `--after` takes, in the driver's order."""
    return [*graph_steps(), *GRAPH_READERS, *model_steps()]


def driver_steps() -> list[str]:
    """Every step the driver runs, in order, the lowering's options and rewrites listed after
    `lower` (as driver.py's docstring and docs/compiler.md list them; a rewrite may appear twice)."""
    rewrites = [step.name for step in LOWERING_REWRITES]
    return [*BEFORE_GRAPH, BUILT_BY, *LOWERING_OPTIONS, *rewrites, *steps()[1:]]


class StepError(ValueError):
    """A name `--after` does not take: the message is one line that says why and what it takes."""


def check_step(step: str) -> None:
    """StepError unless `step` is one of `steps()`."""
    if step in steps():
        return
    known = ", ".join(steps())
    if step in LOWERING_OPTIONS or any(rewrite.name == step for rewrite in LOWERING_REWRITES):
        what = "an option of the lowering" if step in LOWERING_OPTIONS else "a lowering rewrite"
        raise StepError(f"{step!r} is {what}, which acts inside 'lower': compare the graph "
                        f"after 'lower' with and without --no-opt {step} (steps: {known})")
    if step in BEFORE_GRAPH:
        raise StepError(f"{step!r} runs before 'lower' builds the graph, so there is no graph after it "
                        f"(steps: {known})")
    raise StepError(f"unknown step {step!r}{did_you_mean(step, steps())} (steps: {known})")


class Dump(NamedTuple):
    """The graph after `step`; `instead`: where `step` did not run, the last step before it that
    did, whose graph this is ("" when it ran); `pruned`: the residual dimensions the model
    dropped, None before the model is built."""

    step: str
    instead: str
    graph: Graph
    pruned: frozenset[str] | None


def graph_after(program: ir.Program, step: str | None = None, disabled: Iterable[str] = (), dtype: type = np.float32,
                value_sets: ValueSets | None = None) -> Dump:
    """The graph of `program` after `step` (default: the last graph pass), compiled without the
    optimisations in `disabled`; a step from MODEL_PASSES on compiles the model (in `dtype`)."""
    step = step or graph_steps()[-1]
    check_step(step)
    disabled = tuple(disabled)
    enabled = frozenset(OPTIMIZATIONS) - set(disabled)
    seen: dict[str, Graph] = {}
    with recursion_refused(program.output.loc or program.output_loc), placed_at(program.output_loc):
        if value_sets is None:
            value_sets = infer_value_sets(program)
        build_graph(program, value_sets, enabled, watch=seen.__setitem__)
        graph = seen[_last_run(seen, step)]
        if steps().index(step) >= steps().index("check_precision"):
            graph = _checked(program, value_sets, enabled, dtype, graph)
        pruned = None
        if step in model_steps():
            model = compile_program(program, dtype=dtype, disabled=disabled, value_sets=value_sets)
            pruned = frozenset(lay_out(graph).labels) - set(model.meta["residual"])
    ran = [*seen, *GRAPH_READERS, *(s.label for s in active_steps(MODEL_PASSES, enabled)), *LAST]
    return Dump(step, "" if step in ran else _last_run(seen, step), graph, pruned)


def _checked(program: ir.Program, value_sets: ValueSets, enabled: frozenset[str], dtype: type, built: Graph) -> Graph:
    """The graph the driver checks and builds (driver.graph_within_budget), or `built` where the
    budget or the precision check refuses the model."""
    try:
        return graph_within_budget(program, value_sets, enabled, dtype, None)[0]
    except RaspError:
        return built


def _last_run(seen: dict[str, Graph], step: str) -> str:
    """The last graph step at or before `step` in the driver's order that ran (`lower` always does)."""
    order = graph_steps()
    until = order.index(step) + 1 if step in order else len(order)
    return [name for name in order[:until] if name in seen][-1]


def dump_text(dump: Dump, name: str, program: ir.Program, disabled: Iterable[str] = ()) -> str:
    """The dump as printed: a header line naming the program (`name`), max_len, step and the
    optimisations off, then text.py's lines."""
    off = sorted(set(disabled))
    header = f"# {name}, max_len {program.max_len}, after {dump.step}"
    if dump.instead:
        header += f" (which did not run: the graph as after {dump.instead})"
    if off:
        header += "; off: " + ("all" if set(off) == set(OPTIMIZATIONS) else ", ".join(off))
    return "\n".join([header, *graph_lines(dump.graph, dump.pruned)]) + "\n"
