"""Fingerprint of the weights the compiler writes, to show a change to the compiler moves none.

    python bench/fingerprint.py --out before.json            # on the revision before the change
    python bench/fingerprint.py --compare before.json        # after it: lists every weight that moved

Covered: every program in programs/ at each of MAX_LENS, with every optimisation on and with all
of them off (`--no-opt all`), and the first `--fuzz` generated programs of bench/fuzz.py (seed 0,
at the max_len each was generated with). Each compile is recorded as the SHA-256 of its arrays
(each array's name, dtype, shape and bytes, in name order) and, separately, of its meta; a compile
the compiler refuses is recorded as the kind of its error. `--compare` exits 1 when any array hash
or refusal differs, and reports meta-only differences (names, notes) apart, without failing.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from pathlib import Path

import numpy as np

from harness import ROOT

from rasp_compile.compiler import OPTIMIZATIONS, compile_program
from rasp_compile.errors import RaspError
from rasp_compile.frontend import load_program
from rasp_compile.frontend.infer import infer_value_sets
from rasp_compile.testing.random_programs import random_program

MAX_LENS = (2, 5, 16, 64, 256, 1024)
FUZZ_SEED_STRIDE = 1_000_003  # bench/fuzz.py's: program i of seed 0 uses random.Random(i)


def weights_hash(params: dict[str, np.ndarray]) -> str:
    """SHA-256 of every array's name, dtype, shape and bytes, in name order."""
    digest = hashlib.sha256()
    for key in sorted(params):
        array = np.ascontiguousarray(params[key])
        digest.update(f"{key}|{array.dtype.str}|{array.shape}|".encode())
        digest.update(array.tobytes())
    return digest.hexdigest()


def fingerprint(program, max_len=None, disabled=()) -> dict[str, str]:
    """{"weights": hash, "meta": hash} of one compile, or {"refused": error kind}."""
    try:
        model = compile_program(program, max_len=max_len, disabled=disabled)
    except RaspError as error:
        return {"refused": type(error).__name__}
    meta = json.dumps(model.meta, sort_keys=True, default=str).encode()
    return {"weights": weights_hash(model.params), "meta": hashlib.sha256(meta).hexdigest()}


def library_cases():
    """(case name, program, max_len, disabled) for every library program, length and setting."""
    for path in sorted((ROOT / "programs").glob("*.rasp")):
        program = load_program(path)
        for max_len in MAX_LENS:
            yield f"{path.stem}@{max_len}", program, max_len, ()
            yield f"{path.stem}@{max_len} --no-opt all", program, max_len, tuple(OPTIMIZATIONS)


def fuzz_cases(count: int):
    """(case name, program, None, ()) for the first `count` generated programs the checker accepts."""
    for index in range(count):
        program = random_program(random.Random(index))
        try:
            infer_value_sets(program)
        except RaspError:
            continue
        yield f"fuzz#{index}", program, None, ()


def measure(fuzz: int) -> dict[str, dict[str, str]]:
    cases = [*library_cases(), *fuzz_cases(fuzz)]
    result = {}
    for done, (name, program, max_len, disabled) in enumerate(cases, 1):
        result[name] = fingerprint(program, max_len, disabled)
        if done % 200 == 0:
            print(f"{done}/{len(cases)}", file=sys.stderr, flush=True)
    return result


def compare(before: dict, after: dict) -> int:
    """Print what moved; 1 when weights or refusals moved, else 0."""
    moved = [name for name in sorted(set(before) | set(after))
             if {k: v for k, v in before.get(name, {}).items() if k != "meta"}
             != {k: v for k, v in after.get(name, {}).items() if k != "meta"}]
    meta_only = [name for name in sorted(set(before) & set(after))
                 if name not in moved and before[name].get("meta") != after[name].get("meta")]
    for name in moved:
        print(f"weights moved: {name}: {before.get(name)} -> {after.get(name)}")
    print(f"{len(after)} compiles: {len(moved)} with other weights or refusals, "
          f"{len(meta_only)} with only another meta")
    return 1 if moved else 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="write the fingerprint (JSON) here")
    parser.add_argument("--compare", type=Path, help="compare with a fingerprint written before")
    parser.add_argument("--fuzz", type=int, default=4000, help="generated programs (default 4000)")
    args = parser.parse_args(argv)
    after = measure(args.fuzz)
    if args.out:
        args.out.write_text(json.dumps(after, indent=1, sort_keys=True))
    if args.compare:
        return compare(json.loads(args.compare.read_text()), after)
    return 0


if __name__ == "__main__":
    sys.exit(main())
