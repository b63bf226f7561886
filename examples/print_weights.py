"""Print every weight matrix of a model with its rows and columns labelled (rasp_compile.tools.inspect_weights).

Run: `python examples/print_weights.py PROGRAM.rasp` (compiled first) or
`python examples/print_weights.py WEIGHTS.npz` (a docs/format.md weights file).
All-zero rows and columns are left out; numbers have at most 4 significant digits.
"""

from __future__ import annotations

import sys

from rasp_compile.compiler import compile_program
from rasp_compile.errors import InputError, RaspError, WeightsError
from rasp_compile.frontend import load_program
from rasp_compile.tools.inspect_weights import format_model
from rasp_compile.runtime.weights_file import load


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    path = argv[0]
    try:
        model = compile_program(load_program(path)) if path.endswith(".rasp") else load(path)
    except (InputError, RaspError, WeightsError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(format_model(model))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
