"""`rasp-run WEIGHTS.npz INPUT`: run a model (docs/cli.md), or report on it.

Without a report flag, a causal model whose outputs are tokens of its own vocab completes INPUT
(`--steps N`) and prints `INPUT :: CONTINUATION`; any other model prints its output per position.
The reports: `--accuracy` (accuracy.py), `--score TEXT` (score.py), `--flops` (flops_report.py),
`--trace` (trace_report.py). WEIGHTS may also be a `.rasp` program, compiled on the fly.
"""

from __future__ import annotations

import sys

from rich.table import Table

from ..runtime.forward import can_complete, complete, predict
from ..runtime.model import Model
from . import accuracy, flops_report, score, trace_report
from .compile_cmd import file_name
from ..safe_text import markup_safe, terminal_safe
from .common import CliError, Parser, load_model, make_console, print_json, run_edge, whole_number
from .tokens import join_tokens, split_input, value_text

DEFAULT_STEPS = 10
MAX_STEPS = 10_000
"""The most tokens `--steps` completes: one forward pass each."""
USAGE = """%(prog)s WEIGHTS INPUT [--steps N] [--json]
       %(prog)s WEIGHTS --accuracy [--samples N] [--seed S] [--json]
       %(prog)s WEIGHTS --score TEXT [--skip K] [--json]
       %(prog)s WEIGHTS INPUT --flops [--json]
       %(prog)s WEIGHTS INPUT --trace [--json]"""


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
    parser.add_argument("--skip", type=int, default=0, metavar="K",
                        help="with --score: predictions not counted at the start (default 0)")
    parser.add_argument("--samples", type=whole_number(accuracy.EXHAUSTIVE_LIMIT), default=accuracy.DEFAULT_SAMPLES,
                        metavar="N", help=f"with --accuracy: random inputs when there are more than "
                                          f"{accuracy.EXHAUSTIVE_LIMIT:,} (default {accuracy.DEFAULT_SAMPLES:,})")
    parser.add_argument("--seed", type=int, default=0, metavar="S", help="with --accuracy: the sample's seed")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    return parser


def main(argv: list[str] | None = None) -> int:
    return run_edge(_run, build_parser(), argv)


def _run(args) -> int:
    if args.weights is None:
        raise CliError("rasp-run: error: WEIGHTS is required (see --help)")
    takes_input = not (args.accuracy or args.score is not None)
    if takes_input and args.input is None:
        raise CliError("rasp-run: error: INPUT is required (see --help)")
    if not takes_input and args.input is not None:
        raise CliError(f"rasp-run: error: {'--accuracy' if args.accuracy else '--score'} "
                       f"takes no INPUT, got {args.input!r} (see --help)")
    model = load_model(args.weights)
    if args.accuracy:
        report = accuracy.measure(model, args.weights, args.samples, args.seed,
                                  progress=not args.json and make_console().is_terminal)
        return _show(args, report, accuracy.render)
    if args.score is not None:
        _needs_completion(model, "--score")
        return _show(args, score.measure(model, split_input(model, args.score), args.skip), score.render)
    tokens = split_input(model, args.input)
    if args.flops:
        return _show(args, flops_report.measure(model, args.weights, tokens), flops_report.render)
    if args.trace:
        return _show(args, trace_report.measure(model, tokens), trace_report.render)
    if args.steps is not None:
        _needs_completion(model, "--steps")
    return _show(args, outputs(model, tokens, args.steps or DEFAULT_STEPS), render_outputs)


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
