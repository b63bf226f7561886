"""Differential fuzz: compile many generated programs and check compiled == interpreter.

    python bench/fuzz.py [--count 2000] [--seed 0] [--max-len N]

Program i comes from `tests/random_programs.random_program(random.Random(seed * 1_000_003 + i))`,
and the same generator then draws its 50 random inputs (`random_inputs`), so a program and its
inputs are reproduced from (seed, i) alone. Each program is checked (value sets inferred) first:
a program the checker refuses with a RaspError is counted as "rejected", not as a failure. Every
other program is compiled to float32 weights and compared with the reference interpreter
(`tests/differential.disagreements`, which skips inputs on which the program itself errs).

With --max-len every program is compiled (and its inputs drawn) at max_len N instead of the 1-6 it
was generated with: long inputs are where margins and float32 bite (max_len 32 found a leak that
1-6 never showed), at the price of slower checks.

Outcomes: agreed, rejected, disagreed (the first bad input is listed), crashed (any other
exception, anywhere from generation to forward pass: its type and message are listed).
Exit status 1 when any program disagreed or crashed, else 0.
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from differential import disagreements  # noqa: E402  (tests/ has no __init__)
from random_programs import random_inputs, random_program  # noqa: E402

from rasp_compile import ir  # noqa: E402
from rasp_compile.compiler import compile_program  # noqa: E402
from rasp_compile.errors import RaspError  # noqa: E402
from rasp_compile.frontend.infer import infer_value_sets  # noqa: E402

INPUTS_PER_PROGRAM = 50
PROGRESS_EVERY = 200
SEED_STRIDE = 1_000_003  # program i of seed s uses random.Random(s * SEED_STRIDE + i)


@dataclass
class Outcome:
    """What happened to one generated program. `detail` says why for disagreed and crashed."""

    index: int
    rng_seed: int
    status: str  # "agreed", "rejected", "disagreed" or "crashed"
    compared: int = 0
    program: ir.Program | None = None
    detail: str = ""


def check_program(seed: int, index: int, max_len: int | None = None) -> Outcome:
    """Generate program `index` of `seed` (at `max_len` if given), check it, compile it and
    compare it on its inputs."""
    rng_seed = seed * SEED_STRIDE + index
    rng = random.Random(rng_seed)
    program = None
    try:
        program = random_program(rng)
        if max_len is not None:
            program = dataclasses.replace(program, max_len=max_len)
        if not accepted(program):
            return Outcome(index, rng_seed, "rejected", program=program)
        inputs = random_inputs(program, rng, INPUTS_PER_PROGRAM)
        bad, compared = disagreements(compile_program(program), program, inputs)
    except Exception as error:  # a crash anywhere is a finding, reported with its type
        return Outcome(index, rng_seed, "crashed", program=program, detail=f"{type(error).__name__}: {error}")
    if bad:
        tokens, expected, got = bad[0]
        detail = f"input {tokens!r}: interpreter {expected!r}, model {got!r} ({len(bad)} bad inputs)"
        return Outcome(index, rng_seed, "disagreed", compared, program, detail)
    return Outcome(index, rng_seed, "agreed", compared, program)


def accepted(program: ir.Program) -> bool:
    """Whether the checker (value-set inference, which tries every lambda) accepts the program."""
    try:
        infer_value_sets(program)
    except RaspError:
        return False
    return True


def describe_program(program: ir.Program) -> str:
    """The program as numbered s-op definitions, one per line, in evaluation order."""
    names = {id(ir.tokens): "tokens", id(ir.indices): "indices", id(ir.length): "length"}
    lines = [f"vocab {list(program.vocab)}, max_len {program.max_len}, "
             f"{'causal' if program.causal else 'not causal'}"]
    for node in program.nodes():
        if isinstance(node, ir.SOp) and id(node) not in names:
            names[id(node)] = f"s{len(names) - 2}"
            lines.append(f"  {names[id(node)]} = {_sop_text(node, names)}")
    lines.append(f"  output {names[id(program.output)]}")
    return "\n".join(lines)


def _sop_text(node: ir.SOp, names: dict) -> str:
    """One s-op's definition, its arguments by name, prefixed with `numerical` when it is."""
    prefix = "numerical " if node.encoding == ir.NUMERICAL else ""
    if isinstance(node, ir.Map):
        return f"{prefix}map({node.fn.text}, {names[id(node.inner)]})"
    if isinstance(node, ir.SequenceMap):
        return f"{prefix}sequence_map({node.fn.text}, {names[id(node.first)]}, {names[id(node.second)]})"
    if isinstance(node, ir.Aggregate):
        return (f"{prefix}aggregate({_selector_text(node.selector, names)}, {names[id(node.sop)]}, "
                f"default={node.default!r})")
    if isinstance(node, ir.SelectorWidth):
        return f"{prefix}selector_width({_selector_text(node.selector, names)})"
    raise TypeError(f"unknown s-op {type(node).__name__}")


def _selector_text(selector: ir.Selector, names: dict) -> str:
    if isinstance(selector, ir.Select):
        predicate = selector.predicate if isinstance(selector.predicate, str) else selector.predicate.text
        return f"select({names[id(selector.keys)]}, {names[id(selector.queries)]}, {predicate})"
    if isinstance(selector, ir.SelectNot):
        return f"not {_selector_text(selector.inner, names)}"
    operator = "and" if isinstance(selector, ir.SelectAnd) else "or"
    return f"({_selector_text(selector.first, names)} {operator} {_selector_text(selector.second, names)})"


def progress_line(done: int, total: int, counts: Counter) -> str:
    return (f"{done:>6,}/{total:,}: {counts['agreed']:,} agreed, {counts['rejected']:,} rejected, "
            f"{counts['disagreed']:,} disagreed, {counts['crashed']:,} crashed")


def summary_line(outcomes: list[Outcome]) -> str:
    """`agreed on X of Y programs (Z inputs compared)`, Y counting every program the checker
    accepted, then the rejected, disagreed and crashed counts."""
    counts = Counter(outcome.status for outcome in outcomes)
    compiled = len(outcomes) - counts["rejected"]
    compared = sum(outcome.compared for outcome in outcomes)
    return (f"agreed on {counts['agreed']:,} of {compiled:,} programs ({compared:,} inputs compared); "
            f"{counts['rejected']:,} rejected by the checker, {counts['disagreed']:,} disagreed, "
            f"{counts['crashed']:,} crashed")


def report_failure(outcome: Outcome) -> None:
    print(f"\n{outcome.status}: program {outcome.index} (random.Random({outcome.rng_seed}))")
    print(describe_program(outcome.program) if outcome.program else "  (no program generated)")
    print(f"  {outcome.detail}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Compiled == interpreter on generated programs.")
    parser.add_argument("--count", type=int, default=2_000, help="programs to generate (default 2000)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the program sequence (default 0)")
    parser.add_argument("--max-len", type=int, default=None, help="compile every program at this max_len")
    args = parser.parse_args(argv)
    outcomes, counts = [], Counter()
    for index in range(args.count):
        outcome = check_program(args.seed, index, args.max_len)
        outcomes.append(outcome)
        counts[outcome.status] += 1
        if (index + 1) % PROGRESS_EVERY == 0:
            print(progress_line(index + 1, args.count, counts), flush=True)
    print(summary_line(outcomes))
    failures = [outcome for outcome in outcomes if outcome.status in ("disagreed", "crashed")]
    for outcome in failures:
        report_failure(outcome)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
