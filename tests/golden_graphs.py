"""The golden graph of every pass: tests/golden/graphs/PASS.rasp, a small program on which the pass
visibly does something, and the compiler's graph dump (rasp_compile/compiler/dump/) before and after
the pass, PASS.before.txt and PASS.after.txt, which tests/test_golden_graphs.py compares with what
the dump prints now. A reader sees what each pass does on one page; a change to a pass shows up as a
diff of its files.

    before / after           for
    the program / the graph  lower, with every optimisation off (the plain constructions)
    the dump after the step before it / after it
                             every other step of the driver that changes the graph, and prune
    the dump after check_precision without it / with it
                             an optimisation run where the precision is checked (rerounded-steps)
    the dump after `lower` without the rewrite / with it
                             each lowering rewrite (it has no step of its own: it acts inside lower)

Every other optimisation is on. After changing a pass, regenerate the files and read their diff:

    python tests/golden_graphs.py --update          # every pass
    python tests/golden_graphs.py --update fold-linear

(without --update it lists the passes whose files differ from what the dump prints now).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rasp_compile.compiler import OPTIMIZATIONS
from rasp_compile.compiler.driver import PRECISION_PASSES
from rasp_compile.compiler.dump import dump_text, graph_after, graph_steps, steps
from rasp_compile.frontend import load_checked

GOLDEN = Path(__file__).resolve().parent / "golden" / "graphs"
BUILT_BY = graph_steps()[0]  # lower: its "before" is the program itself


def passes() -> list[str]:
    """Every pass that needs a golden pair: each step of the driver that builds or changes the
    graph (lower and the graph passes), then each optimisation not among them."""
    return list(dict.fromkeys([*graph_steps(), *OPTIMIZATIONS]))


def dumped(path: Path, after: str, disabled=()) -> str:
    """What `python -m rasp_compile.compiler.dump PATH --after AFTER --no-opt ...` prints."""
    program, value_sets = load_checked(path)
    return dump_text(graph_after(program, after, disabled, value_sets=value_sets), path.name, program, disabled)


def before_and_after(name: str, path: Path) -> tuple[str, str]:
    """The texts of `name`'s golden pair for the program at `path`, as the dump prints them now."""
    if name == BUILT_BY:
        return path.read_text(encoding="utf-8"), dumped(path, BUILT_BY, tuple(OPTIMIZATIONS))
    order = steps()
    if name in PRECISION_PASSES:  # run where the precision is checked: the graph checked there, without it and with it
        return dumped(path, "check_precision", (name,)), dumped(path, "check_precision")
    if name in order:
        return dumped(path, order[order.index(name) - 1]), dumped(path, name)
    return dumped(path, BUILT_BY, (name,)), dumped(path, BUILT_BY)


def files(name: str) -> tuple[Path, Path, Path]:
    """The program, before and after files of `name`."""
    return GOLDEN / f"{name}.rasp", GOLDEN / f"{name}.before.txt", GOLDEN / f"{name}.after.txt"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Check or regenerate the golden graph of each pass.")
    parser.add_argument("--update", action="store_true", help="rewrite the before/after files")
    parser.add_argument("names", nargs="*", metavar="PASS", help="the passes (default: every pass)")
    args = parser.parse_args(argv)
    unknown = set(args.names) - set(passes())
    if unknown:
        parser.error(f"unknown pass {sorted(unknown)[0]!r}; passes: {', '.join(passes())}")
    stale = []
    for name in args.names or passes():
        program, *pair = files(name)
        texts = before_and_after(name, program)
        if [p.read_text(encoding="utf-8") if p.exists() else None for p in pair] != list(texts):
            stale.append(name)
            if args.update:
                for path, text in zip(pair, texts):
                    path.write_text(text, encoding="utf-8")
    print(("updated: " if args.update else "differ: ") + (", ".join(stale) or "none"))
    return 0 if args.update or not stale else 1


if __name__ == "__main__":
    sys.exit(main())
