"""`rasp-compile PROGRAM.rasp [--emit OUT.npz]`: parse, check, compile, summarise (docs/cli.md);
with `--dump-graph [STEP]`, print the compiler's graph after a step instead (cli/dump_cmd.py).

The summary: the program (vocab, max_len, causal), each s-op with its kind, encoding and number of
values (and, for a categorical aggregate, whether its selected keys may hold different values:
frontend/single_valued.py), then the model: per layer heads, d_head and d_mlp; d_model; parameters (total and non-zero);
FLOPs per forward at max_len (max_len tokens, plus BOS).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from .. import ir
from ..errors import OutputError
from ..tools.flops import count_flops
from ..frontend.infer import ValueSets
from ..frontend.single_valued import POSSIBLE, conflicts_possible
from ..runtime.model import Model, n_nonzero, n_params
from ..runtime.weights_file import save
from ..compiler.dump import steps
from .dump_cmd import print_dump
from .outputs import WEIGHTS, add_force, check_force, check_output_file
from .common import (CliError, Parser, add_compile_flags, add_version, compile_file, compile_options, file_name,
                     make_console, output_path, print_json, run_edge)
from ..safe_text import markup_safe, shortened, terminal_safe
from ..runtime.token_text import value_text

SHOWN_VALUES = 6  # values listed per s-op before "…"
SHOWN_TOKENS = 20  # vocab tokens listed in the summary's first line before "…"
SHOWN_NAME = 60  # characters of a name or value shown (shortened in the middle beyond)


WEIGHTS_EXTENSIONS = (".npz", ".safetensors")
"""The names --emit writes: the extension (in any case) chooses the format (docs/cli.md)."""


def check_emit(emit: str, program: str, force: bool = False) -> None:
    """OutputError when `--emit` names a `.rasp` file, which rasp-run would read as a program, a
    file of another format (`out.pt` would get an .npz archive under a name that says otherwise),
    or a file it may not replace (cli/outputs.py: the program under any name; another program
    without `force`)."""
    if emit.lower().endswith(".rasp"):
        raise OutputError(f"--emit {emit}: a name ending in .rasp is read as a program by rasp-run; "
                          "give the weights file another name (OUT.npz)")
    if not emit.lower().endswith(WEIGHTS_EXTENSIONS):
        raise OutputError(f"--emit {emit}: the name must end in .npz or .safetensors, the formats "
                          "rasp-compile writes (the extension chooses which)")
    check_output_file("--emit", emit, [program], WEIGHTS, force)


def build_parser() -> Parser:
    parser = Parser(prog="rasp-compile", usage="%(prog)s PROGRAM.rasp [--emit OUT.npz] [options]",
                    description="Compile a .rasp program into transformer weights.")
    # PROGRAM.rasp is optional to argparse and required by _compile: argparse reports a missing
    # positional before an unknown flag, so `rasp-compile --bogus` would not name --bogus.
    parser.add_argument("program", metavar="PROGRAM.rasp", nargs="?", type=file_name, help="the program to compile")
    parser.add_argument("--emit", type=output_path("weights"), metavar="OUT.npz", help="write the weights (docs/format.md) to this file, whole or not at all; "
                        "never over the program; a name ending in .safetensors gets that format (docs/interop.md)")
    add_force(parser, "--emit")
    add_compile_flags(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    parser.add_argument("--dump-graph", nargs="?", const="", metavar="STEP",
                        help="print the compiler's graph after STEP (default: after the last graph pass) instead "
                             "of compiling: " + ", ".join(steps()))
    add_version(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    return run_edge(_compile, build_parser(), argv)


def _compile(args) -> int:
    if args.dump_graph is not None:
        return _dump_graph(args)
    if args.program is None:
        raise CliError("rasp-compile: error: PROGRAM.rasp is required (see --help)")
    check_force(args.force, args.emit is not None, "--emit")
    if args.emit is not None:  # before compiling: a refusal should not wait for the compiler
        check_emit(args.emit, args.program, args.force)
    program, model, value_sets = compile_file(args.program, **compile_options(args), progress=not args.json)
    if args.emit is not None:
        try:
            save(model, args.emit, inputs=[args.program])
        except OSError as error:
            raise CliError(f"error: cannot write {args.emit}: {error.strerror or error}") from None
    report = summary(args.program, program, value_sets, model, args.emit)
    if args.json:
        print_json(report)
    else:
        render(report, make_console())
    note = conflicts_note(args.program, program, value_sets)
    if note:  # on stderr: --json's stdout stays one JSON object
        print(note, file=sys.stderr)
    return 0


def _dump_graph(args) -> int:
    """--dump-graph: the graph after a step (cli/dump_cmd.py), in place of compiling. `rasp-compile
    --dump-graph PROGRAM.rasp` reads the file as the program, not as a step."""
    if args.program is None and args.dump_graph.endswith(".rasp"):
        args.program, args.dump_graph = file_name(args.dump_graph), ""
    if args.program is None:
        raise CliError("rasp-compile: error: PROGRAM.rasp is required (see --help)")
    given = [flag for flag, on in (("--emit", args.emit is not None), ("--json", args.json), ("--force", args.force)) if on]
    if given:
        raise CliError(f"rasp-compile: error: --dump-graph prints the graph instead of compiling: "
                       f"give {given[0]} without it")
    print_dump(args.program, args.dump_graph or None, args, "rasp-compile: error: --dump-graph")
    return 0


def summary(path: str, program: ir.Program, value_sets: ValueSets, model: Model, emitted: str | None) -> dict:
    """The program (with its value sets) and model figures, JSON-ready; a categorical aggregate's
    entry has `conflicts` ("impossible" / "possible")."""
    conflicts = conflicts_possible(program, value_sets)
    sorted_sets: dict[frozenset, list[str]] = {}  # equal value sets are sorted once (sorted_texts)
    sops = [
        {"name": node.label, "output": node is program.output, "kind": node.kind, "encoding": node.encoding,
         "n_values": len(value_sets[node]),
         "values": sorted_texts(value_sets[node], sorted_sets),
         **({"conflicts": conflicts[node]} if node in conflicts else {})}
        for node in program.nodes() if isinstance(node, ir.SOp)
    ]
    return {
        "program": {"file": path, "name": Path(path).stem, "output": program.output_name,
                    "vocab": [value_text(v) for v in program.vocab], "max_len": program.max_len,
                    "causal": program.causal, "sops": sops},
        "model": {"layers": model.meta["layers"], "d_model": model.d_model,
                  "params": n_params(model), "nonzero": n_nonzero(model), "dtype": str(model.dtype),
                  "flops_positions": model.n_ctx, "flops": count_flops(model, model.n_ctx)},
        "emitted": emitted,
    }


def conflicts_note(path: str, program: ir.Program, value_sets: ValueSets) -> str | None:
    """`FILE:LINE:COL: note: ...` naming the categorical aggregates not proven single-valued (at
    the first of them), or None when there are none (docs/language.md, "Semantics")."""
    possible = [node for node, answer in conflicts_possible(program, value_sets).items() if answer == POSSIBLE]
    if not possible:
        return None
    names = ", ".join(_aggregate_name(node, program) for node in possible)
    first = possible[0].loc or program.output_loc
    place = f"{terminal_safe(path)}:{first.line}:{first.col}" if first else terminal_safe(path)
    return (f"{place}: note: the compiler cannot prove that the keys selected by {names} "
            "never hold different values; on inputs "
            "where they do, the program is in error and the model's output there is not the program's "
            "(rasp-run --accuracy reports those inputs as program errors)")


def _aggregate_name(node: ir.Aggregate, program: ir.Program) -> str:
    name = program.output_name if node is program.output else node.label
    text = f"`{shortened(name, SHOWN_NAME)}`" if name else "the aggregate"
    return terminal_safe(f"{text} ({node.loc.line}:{node.loc.col})" if node.loc else text)


def sorted_texts(values: frozenset, done: dict[frozenset, list[str]]) -> list[str]:
    """Each value's text (value_text), numbers by value and before words (`_natural`), in the
    order a stable sort gives. A set of numbers alone (no bool: its texts are words) is sorted
    on an array by the very same keys, float(text): a running mean's 638,000 values at max_len
    1,024 in half a second, where comparing `_natural`'s tuples takes two.

    `done` holds the sets of numbers sorted so far whose order is their values' alone: each key
    has one text, so no tie is left to the set's iteration order (999999.7 and 1,000,000 print
    as `1e+06` and `1000000`, keyed alike). An equal set (the means of two maps of the tokens
    onto the same numbers) then has the same texts: equal ints and floats print alike."""
    if not set(map(type, values)) <= {int, float}:
        return sorted(map(value_text, values), key=_natural)
    if values in done:
        return done[values]
    texts = list(map(value_text, values))
    keys = np.array(list(map(float, texts)))  # finite values: never NaN, so a total order
    ordered = [texts[i] for i in np.argsort(keys, kind="stable").tolist()]
    if len(set(texts)) == len(np.unique(keys)):
        done[values] = ordered
    return ordered


def _natural(text: str):
    """Sort numbers by value and before words."""
    try:
        return (0, float(text), "")
    except ValueError:
        return (1, 0.0, text)


def render(report: dict, console) -> None:
    """The summary as tables; every name and value from the program through `_shown`."""
    from rich.table import Table  # only the table output needs rich (common.make_console)

    program, model = report["program"], report["model"]
    vocab = ", ".join(map(_shown, program["vocab"][:SHOWN_TOKENS]))
    more = len(program["vocab"]) - SHOWN_TOKENS
    vocab += f", … ({len(program['vocab']):,} tokens)" if more > 0 else ""
    console.print(f"[bold]{_shown(program['name'])}[/]  vocab {{{vocab}}}  "
                  f"max_len {program['max_len']}  {'causal' if program['causal'] else 'not causal'}  "
                  f"output {_shown(program['output'])}")
    flagged = any(sop.get("conflicts") == POSSIBLE for sop in program["sops"])  # the column only then
    sops = Table("s-op", "kind", "encoding", *(["conflicts"] if flagged else []), "values", "",
                 title="s-ops", title_justify="left")
    for sop in program["sops"]:
        shown = ", ".join(map(_shown, sop["values"][:SHOWN_VALUES])) + (", …" if sop["n_values"] > SHOWN_VALUES else "")
        name = _shown(sop["name"] or "-") + (" (output)" if sop["output"] else "")
        conflicts = [sop.get("conflicts", "")] if flagged else []
        sops.add_row(name, sop["kind"], sop["encoding"], *conflicts, str(sop["n_values"]), shown)
    console.print(sops)
    layers = Table("layer", "heads", "d_head", "d_mlp", title="model", title_justify="left")
    for i, layer in enumerate(model["layers"]):
        layers.add_row(str(i), str(layer["n_head"]), str(layer["d_head"] or "-"), str(layer["d_mlp"] or "-"))
    console.print(layers)
    console.print(f"d_model {model['d_model']}   parameters {model['params']:,} "
                  f"({model['nonzero']:,} non-zero, {model['dtype']})")
    console.print(f"FLOPs per forward at max_len ({model['flops_positions']} positions): "
                  f"{model['flops']['total']:,}")
    if report["emitted"]:
        console.print(f"wrote {markup_safe(report['emitted'])}")


def _shown(text: str) -> str:
    """A name or value of the program as the summary shows it: terminal-safe, markup escaped, at
    most about SHOWN_NAME characters (a 100,000-character name would fill the screen)."""
    return markup_safe(shortened(text, SHOWN_NAME))


if __name__ == "__main__":  # python -m rasp_compile.cli.compile_cmd
    sys.exit(main())
