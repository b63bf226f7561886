"""A program written in Python instead of .rasp text, compiled and run: the research-code path.

    python examples/embedded_api.py

Builds tracr's make_frac_prevs ("what fraction of the tokens so far are 'x'") with the IR
classes of rasp_compile.ir, checks it against the reference interpreter on a few inputs, and
prints the compiled model's size.
"""

from __future__ import annotations

import rasp_compile as rc
from rasp_compile import ir


def frac_prevs() -> ir.Program:
    is_x = ir.numerical(ir.Map(lambda t: 1 if t == "x" else 0, ir.tokens, label="is_x"))
    so_far = ir.Select(ir.indices, ir.indices, "<=", label="so_far")
    frac = ir.numerical(ir.Aggregate(so_far, is_x, default=0, label="frac"))
    return ir.Program(output=frac, vocab=("x", "y"), max_len=8, causal=True, output_name="frac")


def main() -> None:
    program = frac_prevs()
    model = rc.compile(program)
    for text in ("xyxx", "yyyx", "x"):
        tokens = list(text)
        print(f"{text:6s} model {[round(v, 4) for v in rc.run(model, tokens)]}  interpreter {rc.evaluate(program, tokens)}")
    layers = [(layer["n_head"], layer["d_mlp"]) for layer in model.meta["layers"]]
    print(f"layers (heads, d_mlp): {layers}; residual: {model.meta['residual']}")


if __name__ == "__main__":
    main()
