"""`rasp-run WEIGHTS.npz INPUT`: run a model (docs/cli.md), or report on it.

Without a report flag, a causal model whose outputs are tokens of its own vocab completes INPUT
(`--steps N`) and prints `INPUT :: CONTINUATION`; any other model prints its output per position.
The reports: `--accuracy` (accuracy.py), `--score TEXT` (score.py), `--flops` (flops_report.py),
`--trace` (trace_report.py), `--html` (html_cmd.py), `--margins` (margins_report.py). WEIGHTS may also be a `.rasp` program, compiled on the fly.
"""

from __future__ import annotations

import sys

from rich.table import Table

from ..runtime.prediction import can_complete, complete, predict
from ..runtime.model import Model
from . import accuracy, flops_report, html_cmd, margins_report, score, trace_report, verify
from ..safe_text import markup_safe, terminal_safe
from .progress import status
from .outputs import add_force, check_force
from .reference import Reference, first_program_error
from .common import (CliError, Parser, add_compile_flags, add_version, compile_options, file_name,
                     load_model, make_console, output_path, print_json, run_edge, whole_number)
from ..runtime.token_text import split_input, value_text
from .tokens import join_tokens

DEFAULT_STEPS = 10
MAX_STEPS = 10_000
"""The most tokens `--steps` completes: one forward pass each."""
USAGE = """%(prog)s WEIGHTS INPUT [--steps N] [--json]
       %(prog)s WEIGHTS --accuracy [--samples N] [--seed S] [--json]
       %(prog)s WEIGHTS --accuracy --all [--workers N | --dask ADDRESS] [--json]
       %(prog)s WEIGHTS --score TEXT [--skip K] [--json]
       %(prog)s WEIGHTS INPUT --flops [--json]
       %(prog)s WEIGHTS INPUT --trace [--json]
       %(prog)s WEIGHTS INPUT --html REPORT.html [--force]
       %(prog)s WEIGHTS --margins [--json]
       %(prog)s PROGRAM.rasp ... [--max-len N] [--dtype D] [--no-opt NAME]..."""


class IntermixedParser(Parser):
    """Options may stand before, between or after WEIGHTS and INPUT (`rasp-run aab.npz --steps 3 aa`):
    plain parse_args matches every positional in the first run of them, and leaves `aa` over."""

    def parse_args(self, args=None, namespace=None):
        return self.parse_intermixed_args(args, namespace)


def build_parser() -> Parser:
    parser = IntermixedParser(prog="rasp-run", usage=USAGE, description="Run a compiled model, or report on it.")
    # Both positionals are optional to argparse and checked by _run: argparse reports a missing
    # positional before an unknown flag, so `rasp-run --bogus` would not name --bogus.
    parser.add_argument("weights", metavar="WEIGHTS", nargs="?", type=file_name, help="a .npz weights file, or a .rasp program")
    parser.add_argument("input", metavar="INPUT", nargs="?",
                        help="the input: characters, or whitespace-separated tokens")
    parser.add_argument("--steps", type=whole_number(MAX_STEPS), metavar="N",
                        help=f"tokens to complete, for a model that completes (default {DEFAULT_STEPS}, "
                             f"at most {MAX_STEPS:,})")
    reports = parser.add_mutually_exclusive_group()
    reports.add_argument("--accuracy", action="store_true",
                         help="compare the model with the reference interpreter (no INPUT)")
    reports.add_argument("--score", metavar="TEXT", help="next-token accuracy along TEXT (no INPUT)")
    reports.add_argument("--flops", action="store_true",
                         help="FLOPs of this prediction, beside the direct rule's operations")
    reports.add_argument("--trace", action="store_true",
                         help="the residual stream decoded per layer, and attention heatmaps")
    reports.add_argument("--html", type=output_path("a report"), metavar="REPORT.html",
                         help="write a self-contained page: source, decoded residual stream, attention, weights")
    reports.add_argument("--margins", action="store_true",
                         help="each read-out's proven error bound and its tolerance, worst first (no INPUT)")
    parser.add_argument("--skip", type=int, metavar="K",
                        help="with --score: predictions not counted at the start (default 0)")
    parser.add_argument("--samples", type=whole_number(accuracy.EXHAUSTIVE_LIMIT), metavar="N",
                        help=f"with --accuracy: random inputs when there are more than "
                             f"{accuracy.EXHAUSTIVE_LIMIT:,} (default {accuracy.DEFAULT_SAMPLES:,})")
    parser.add_argument("--seed", type=int, metavar="S", help="with --accuracy: the sample's seed (default 0)")
    verify.add_flags(parser)
    add_force(parser, "--html")
    add_compile_flags(parser, applies="when WEIGHTS is a .rasp program: ")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    add_version(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    return run_edge(_run, build_parser(), argv)


def _run(args) -> int:
    if args.weights is None:
        raise CliError("rasp-run: error: WEIGHTS is required (see --help)")
    spread = verify.spread_of(args)
    takes_input = not (args.accuracy or args.margins or args.score is not None)
    if takes_input and args.input is None:
        raise CliError("rasp-run: error: INPUT is required (see --help)")
    if not takes_input and args.input is not None:
        flag = "--accuracy" if args.accuracy else "--margins" if args.margins else "--score"
        raise CliError(f"rasp-run: error: {flag} "
                       f"takes no INPUT, got {args.input!r} (see --help)")
    refuse_unused_flags(args)
    check_force(args.force, args.html is not None, "--html")
    if args.html is not None:  # before loading or compiling: a refusal should not wait for the work
        html_cmd.check(args.html, args.weights, args.force)
    model, compiled = load_model(args.weights, **compile_options(args), progress=not args.json)
    if args.margins:
        return _show(args, margins_report.measure(model), margins_report.render)
    reference = Reference(model, args.weights, compiled)
    if args.accuracy:
        report = accuracy.measure(model, reference, args.samples or accuracy.DEFAULT_SAMPLES, args.seed or 0,
                                  progress=not args.json, spread=spread)
        _notes(args, report)
        return _show(args, report, accuracy.render)
    if args.score is not None:
        _needs_completion(model, "--score")
        text = split_input(model, args.score)
        with status(f"scoring {len(text):,} tokens", not args.json):
            report = score.measure(model, text, args.skip or 0)
        return _show_checked(args, reference, report, score.render, score.windows(model, text))
    tokens = split_input(model, args.input)
    if args.flops:
        return _show(args, flops_report.measure(model, reference, tokens), flops_report.render)
    if args.trace:
        return _show_checked(args, reference, trace_report.measure(model, tokens), trace_report.render, [tokens])
    if args.html is not None:
        return _show_checked(args, reference, html_cmd.write(model, args.weights, tokens, args.html),
                             html_cmd.render, [tokens])
    if args.steps is not None:
        _needs_completion(model, "--steps")
    with status("running the model", not args.json):
        report = outputs(model, tokens, args.steps or DEFAULT_STEPS)
    _window_note(model, report)
    return _show_checked(args, reference, report, render_outputs, _windows(model, report))


REPORT_FLAGS = ("--accuracy", "--score", "--flops", "--trace", "--html", "--margins")
FLAG_APPLIES = {"--steps": None, "--skip": "--score", "--samples": "--accuracy", "--seed": "--accuracy"}
"""Which report each flag belongs to (None: running the model on INPUT, no report flag)."""


def refuse_unused_flags(args) -> None:
    """CliError naming a flag given where it does nothing: every flag is honoured or refused."""
    report = next((flag for flag in REPORT_FLAGS if getattr(args, flag[2:]) not in (None, False)), None)
    for flag, applies in FLAG_APPLIES.items():
        if getattr(args, flag[2:]) is not None and applies != report:
            where = f"with {applies}" if applies else "when running the model on INPUT"
            raise CliError(f"rasp-run: error: {flag} applies only {where}, not with "
                           f"{report or 'INPUT alone'} (see --help)")
    compiler_flags = [flag for flag, given in (("--max-len", args.max_len is not None),
                                               ("--dtype", args.dtype is not None),
                                               ("--no-opt", bool(args.no_opt))) if given]
    if compiler_flags and not args.weights.endswith(".rasp"):
        raise CliError(f"rasp-run: error: {compiler_flags[0]} applies only when WEIGHTS is a .rasp program, "
                       "compiled on the fly; a weights file is compiled already (rasp-compile "
                       f"{compiler_flags[0]} ... --emit OUT.npz makes another)")


def _notes(args, report: dict) -> None:
    """Say on stderr what the --accuracy figures do not show: --samples / --seed that did not apply
    (every input was compared), or weights that are not what their meta.source compiles to."""
    if report["recompiles_to_other_weights"]:
        print(f"note: {terminal_safe(args.weights)} holds other weights than its meta.source compiles to now "
              "(edited weights, or another version of the compiler): the figures compare these weights "
              "with that source", file=sys.stderr)
    given = [flag for flag in ("--samples", "--seed") if getattr(args, flag[2:]) is not None]
    if given and report["mode"] == "exhaustive":
        print(f"note: {' and '.join(given)} did not apply: every one of the {report['total']['sequences']:,} "
              f"inputs up to max_len was compared (a sample is drawn only beyond "
              f"{accuracy.EXHAUSTIVE_LIMIT:,})", file=sys.stderr)


def _windows(model: Model, report: dict) -> list[list]:
    """The inputs the model read to give `report` (outputs): each completion step's window, or
    the input itself (a causal model reads a longer one through windows of max_len)."""
    max_len = model.meta["max_len"]
    tokens = report["input"]
    if "continuation" in report:
        sequence = tokens + report["continuation"]
        return [sequence[:n][-max_len:] for n in range(len(tokens), len(sequence))]
    if len(tokens) <= max_len:
        return [tokens]
    return [tokens[n - max_len:n] for n in range(max_len, len(tokens) + 1)]


def _show_checked(args, reference: Reference, report: dict, render, windows: list[list]) -> int:
    """Show `report`, then, when the program (meta.source) is itself in error on one of the inputs
    the model read, that error on stderr and exit status 1: the model's outputs there mean nothing."""
    error, checked = first_program_error(reference, windows)
    if args.json:
        report = {**report, "program_error": None if error is None else error.message}
    _show(args, report, render)
    if error is None:
        if checked < len(windows):
            print(f"note: the program was checked on the first {checked:,} of the {len(windows):,} inputs "
                  "the model read (the interpreter is slow at this length)", file=sys.stderr)
        return 0
    raise CliError(f"{error.shown}\nthe program itself is in error on this input: the model's outputs "
                   "above follow no program", status=1)


def _window_note(model: Model, report: dict) -> None:
    """Say on stderr when a causal model's outputs were read through a sliding window (an INPUT
    longer than max_len): each is the output on the max_len tokens ending there, not on the whole."""
    n, max_len = len(report["input"]), model.meta["max_len"]
    if "output" in report and n > max_len:
        print(f"note: the input has {n:,} tokens, more than the model's max_len {max_len:,}: the output at "
              f"each position is the model's on the last {max_len:,} tokens up to it (a sliding window)",
              file=sys.stderr)


def _needs_completion(model: Model, flag: str) -> None:
    """CliError saying why, unless the model predicts its own next token (forward.can_complete)."""
    if can_complete(model):
        return
    if not model.meta["causal"]:
        why = "is not causal"
    elif model.meta["output"]["encoding"] != "categorical":
        why = "has a numerical output"
    else:
        why = "outputs values outside its vocab"
    raise CliError(f"error: {flag} needs a model that completes sequences (causal, its outputs "
                   f"tokens of its own vocab); this one {why}")


def _show(args, report: dict, render) -> int:
    if args.json:
        print_json(report)
    else:
        render(report, make_console())
    return 0


def outputs(model: Model, tokens: list, steps: int = DEFAULT_STEPS) -> dict:
    """The completion (a completing model) or the output at each position (any other)."""
    if can_complete(model):
        continuation = complete(model, tokens, steps=steps)
        return {"input": tokens, "continuation": continuation,
                "text": f"{join_tokens(model, tokens)} :: {join_tokens(model, continuation)}"}
    return {"input": tokens, "output": predict(model, [tokens])[0]}


def render_outputs(report: dict, console) -> None:
    if "text" in report:
        print(terminal_safe(report["text"]))
        return
    table = Table("position", "input", "output")
    for i, (token, value) in enumerate(zip(report["input"], report["output"])):
        table.add_row(str(i), markup_safe(value_text(token)), markup_safe(value_text(value)))
    console.print(table)


if __name__ == "__main__":  # python -m rasp_compile.cli.run_cmd
    sys.exit(main())
