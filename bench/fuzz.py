"""Differential fuzz: compile many generated programs and check compiled == interpreter.

    python bench/fuzz.py [--count 2000] [--seed 0] [--max-len N] [--numerical] [--out FILE]

Program i comes from `random_program(random.Random(seed * 1_000_003 + i))`
(rasp_compile/testing/random_programs.py), and the same generator then draws its 50 random inputs
(`random_inputs`, rasp_compile/testing/differential.py), so a program and its inputs are reproduced from (seed, i) alone. Each program is checked (value sets inferred) first:
a program the checker refuses with a RaspError is counted as "rejected", not as a failure. Every
other program is written as `.rasp` text (rasp_compile/testing/program_text.py) and read back through
the whole front end, so that what the compiler says about it is located in that text; it is compiled
to float32 weights and compared with the reference interpreter (`disagreements`, which skips inputs on which the program itself errs).

With --max-len every program is compiled (and its inputs drawn) at max_len N instead of the 1-6 it
was generated with: long inputs are where margins and float32 bite (max_len 32 found a leak that
1-6 never showed), at the price of slower checks.

With --numerical every program answers a number built to strain float precision: a numerical
s-op of the generated program, or a mean of a large constant plus its 0/1 tokens (the constant taken
away again, or kept), or a causal running sum (a mean times the length); at a max_len drawn from
NUMERICAL_MAX_LENS.

In either mode the compiler must either agree with the interpreter (a number within the tolerance)
or refuse the program with a located RaspPrecisionError (float32 cannot be proven to hold its
numbers, or no float dtype tells apart values that Python's floats distinguish by a rounding) or a
located RaspSizeError (each value set is within the checker's limits, but a part of the residual, a
combined key of several s-ops say, takes more than the budget allows; its message names that part):
counted as "refused", listed with the error's line, column and message. A refusal without a
location, or any other error, is a crash.

Outcomes: agreed, rejected, refused (for precision or size), disagreed (the first bad input is listed),
crashed (any other exception, anywhere from generation to forward pass: its type and message are listed).
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

from rasp_compile import ir
from rasp_compile.compiler import compile_program
from rasp_compile.errors import RaspError, RaspPrecisionError, RaspSizeError
from rasp_compile.frontend import parse_checked
from rasp_compile.frontend.infer import infer_value_sets
from rasp_compile.testing.differential import disagreements, random_inputs
from rasp_compile.testing.program_text import program_text
from rasp_compile.testing.random_programs import random_program

INPUTS_PER_PROGRAM = 50
PROGRESS_EVERY = 200
SEED_STRIDE = 1_000_003  # program i of seed s uses random.Random(s * SEED_STRIDE + i)
NUMERICAL_MAX_LENS = (4, 8, 8, 16, 16, 32, 64, 128, 256)
"""--numerical's max_lens, one drawn per program: long ones rarer (each input costs max_len)."""
LARGE_CONSTANTS = (0, 1, 1000, 100_000, -50_000, 2**20)
NUMERICAL_INPUTS = 20
"""--numerical's inputs per program: fewer, as they are longer."""


@dataclass
class Outcome:
    """What happened to one generated program: `text`, the program as compiled (`.rasp`, whose lines
    a refusal's location counts); `detail` says why for refused, disagreed and crashed."""

    index: int
    rng_seed: int
    status: str  # "agreed", "rejected", "refused", "disagreed" or "crashed"
    compared: int = 0
    program: ir.Program | None = None
    text: str = ""
    detail: str = ""


def check_program(seed: int, index: int, max_len: int | None = None, numerical: bool = False) -> Outcome:
    """Generate program `index` of `seed` (at `max_len` if given; a numerical answer, module
    docstring), check it, compile it from its text and compare it on its inputs."""
    rng_seed = seed * SEED_STRIDE + index
    rng = random.Random(rng_seed)
    program, text = None, ""
    try:
        program = numerical_program(rng) if numerical else random_program(rng)
        if max_len is not None:
            program = dataclasses.replace(program, max_len=max_len)
        text = program_text(program)
        if not accepted(program):
            return Outcome(index, rng_seed, "rejected", program=program, text=text)
        count = NUMERICAL_INPUTS if numerical else INPUTS_PER_PROGRAM
        inputs = random_inputs(program.vocab, program.max_len, count, rng)
        program, value_sets = parse_checked(text, f"seed{seed}-{index}.rasp")  # accepted: any error here is a crash
        try:
            model = compile_program(program, value_sets=value_sets)
        except (RaspPrecisionError, RaspSizeError) as refusal:
            if refusal.loc is None:
                raise
            detail = f"{type(refusal).__name__} at line {refusal.line}, column {refusal.col}: {refusal}"
            return Outcome(index, rng_seed, "refused", program=program, text=text, detail=detail)
        bad, compared = disagreements(model, program, inputs)
    except Exception as error:  # a crash anywhere is a finding, reported with its type
        return Outcome(index, rng_seed, "crashed", program=program, text=text, detail=f"{type(error).__name__}: {error}")
    if bad:
        tokens, expected, got = bad[0]
        detail = f"input {tokens!r}: interpreter {expected!r}, model {got!r} ({len(bad)} bad inputs)"
        return Outcome(index, rng_seed, "disagreed", compared, program, text, detail)
    return Outcome(index, rng_seed, "agreed", compared, program, text)


def numerical_program(rng: random.Random) -> ir.Program:
    """A generated program whose answer is a number that strains float precision (module docstring)."""
    program = random_program(rng)
    max_len, causal = rng.choice(NUMERICAL_MAX_LENS), program.causal
    numbers = [node for node in program.nodes() if isinstance(node, ir.SOp) and node.encoding == ir.NUMERICAL]
    kind = rng.randint(0, 3)
    if kind == 0 and numbers:
        output = rng.choice(numbers)
    else:
        c = rng.choice(LARGE_CONSTANTS)
        first = program.vocab[0]
        big = ir.numerical(ir.Map(_fn(f"{c} + (x == {first!r})", lambda x, c=c, f=first: c + int(x == f)), ir.tokens))
        select = ir.Select(ir.indices, ir.indices, rng.choice(["<=", "true", "==", ">="]))
        mean = ir.numerical(ir.Aggregate(select, big, default=c))
        if kind == 1:
            output = ir.numerical(ir.Map(_fn(f"x - {c}", lambda x, c=c: x - c), mean))
        elif kind == 2 and causal:
            running = ir.numerical(ir.Aggregate(ir.Select(ir.tokens, ir.tokens, "true"), big, default=c))
            output = ir.numerical(ir.SequenceMap(_fn("x * y", lambda x, y: x * y), running, ir.length))
        else:
            output = mean
    return dataclasses.replace(program, output=output, max_len=max_len)


def _fn(text: str, call) -> ir.Fn:
    return ir.Fn(call, f"lambda: {text}")


def accepted(program: ir.Program) -> bool:
    """Whether the checker (value-set inference, which tries every lambda) accepts the program."""
    try:
        infer_value_sets(program)
    except RaspError:
        return False
    return True


def progress_line(done: int, total: int, counts: Counter) -> str:
    return (f"{done:>6,}/{total:,}: {counts['agreed']:,} agreed, {counts['rejected']:,} rejected, "
            f"{counts['refused']:,} refused, {counts['disagreed']:,} disagreed, {counts['crashed']:,} crashed")


def summary_line(outcomes: list[Outcome]) -> str:
    """`agreed on X of Y programs (Z inputs compared)`, Y counting every program the checker
    accepted, then the rejected, disagreed and crashed counts."""
    counts = Counter(outcome.status for outcome in outcomes)
    compiled = len(outcomes) - counts["rejected"] - counts["refused"]
    compared = sum(outcome.compared for outcome in outcomes)
    return (f"agreed on {counts['agreed']:,} of {compiled:,} programs ({compared:,} inputs compared); "
            f"{counts['rejected']:,} rejected by the checker, {counts['refused']:,} refused for precision or size, "
            f"{counts['disagreed']:,} disagreed, "
            f"{counts['crashed']:,} crashed")


def report(outcome: Outcome) -> None:
    """The outcome, its program's text with numbered lines (which a refusal's line counts), and why."""
    print(f"\n{outcome.status}: program {outcome.index} (random.Random({outcome.rng_seed}))")
    lines = outcome.text.splitlines() or ["(no program generated)"]
    print("\n".join(f"{number:>4} | {line}" for number, line in enumerate(lines, 1)))
    print(f"  {outcome.detail}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Compiled == interpreter on generated programs.")
    parser.add_argument("--count", type=int, default=2_000, help="programs to generate (default 2000)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the program sequence (default 0)")
    parser.add_argument("--max-len", type=int, default=None, help="compile every program at this max_len")
    parser.add_argument("--numerical", action="store_true",
                        help="numerical answers, large constants and long max_lens (module docstring)")
    parser.add_argument("--out", type=Path, help="append the command and its summary to this Markdown file")
    args = parser.parse_args(argv)
    outcomes: list[Outcome] = []
    counts: Counter[str] = Counter()
    for index in range(args.count):
        outcome = check_program(args.seed, index, args.max_len, args.numerical)
        outcomes.append(outcome)
        counts[outcome.status] += 1
        if (index + 1) % PROGRESS_EVERY == 0:
            print(progress_line(index + 1, args.count, counts), flush=True)
    print(summary_line(outcomes))
    if args.out:
        with args.out.open("a") as out:  # one section per run: runs of several seeds share a file
            out.write(f"python bench/fuzz.py {' '.join(argv if argv is not None else sys.argv[1:])}\n"
                      f": {summary_line(outcomes)}\n\n")
    failures = [outcome for outcome in outcomes if outcome.status in ("disagreed", "crashed")]
    refused = [outcome for outcome in outcomes if outcome.status == "refused"]
    for outcome in failures + refused:  # the refusals with the compiler's reason, not failures
        report(outcome)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
