"""`python -m rasp_compile.compiler.dump PROGRAM.rasp [--after STEP]` and `rasp-compile PROGRAM.rasp
--dump-graph [STEP]`: print the compiler's graph after one step of the driver (compiler/dump/,
docs/cli.md). A program error is reported as FILE:LINE:COL (exit 1), a bad step or flag in one line
(exit 2)."""

from __future__ import annotations

import sys
from pathlib import Path

from ..compiler.dump import StepError, check_step, dump_text, graph_after, graph_steps, steps
from ..frontend import load_checked
from .common import CliError, Parser, add_compile_flags, compile_options, file_name, program_errors, run_edge


def build_parser() -> Parser:
    parser = Parser(prog="python -m rasp_compile.compiler.dump", usage="%(prog)s PROGRAM.rasp [--after STEP] [options]",
                    description="Print the compiler's graph after one step: each variable with its encoding, "
                                "values and writer.")
    parser.add_argument("program", metavar="PROGRAM.rasp", nargs="?", type=file_name, help="the program to dump")
    parser.add_argument("--after", metavar="STEP", help=f"the step after which to print the graph (default "
                        f"{graph_steps()[-1]}, the last graph pass): " + ", ".join(steps()))
    add_compile_flags(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    return run_edge(_dump, build_parser(), argv)


def _dump(args) -> int:
    if args.program is None:
        raise CliError(f"{build_parser().prog}: error: PROGRAM.rasp is required (see --help)")
    print_dump(args.program, args.after, args, f"{build_parser().prog}: error: --after")
    return 0


def print_dump(path: str, step: str | None, args, flag: str) -> None:
    """Print the graph of the program at `path` after `step`, with the compiler flags of `args`;
    a step the dump does not take is a CliError, before any work, its message begun by `flag`
    (`rasp-compile: error: --dump-graph`)."""
    if step is not None:
        try:
            check_step(step)
        except StepError as error:
            raise CliError(f"{flag}: {error}") from None
    options = compile_options(args)
    with program_errors(path):
        program, value_sets = load_checked(path, options["max_len"])
        dump = graph_after(program, step, options["disabled"], options["dtype"], value_sets)
    sys.stdout.write(dump_text(dump, Path(path).name, program, options["disabled"]))
