"""A compiled program in TransformerLens: cache its activations, read a head's attention pattern,
ablate the head with a hook, and check the change against what the program says.

Run: `python examples/transformer_lens_demo.py` (needs `pip install 'rasp-compile[interop]'`).

programs/reverse.rasp computes `opposite` (how many positions come after i) in layer 0, and in
layer 1 one head moves the token at position `opposite` to position i:
`aggregate(select(indices, opposite, ==), tokens)`. Zeroing that head's attention pattern is the
program with the select matching nothing, `select(indices, opposite, false)`: the aggregate of an
empty selection is none at every position, which the interpreter confirms.
"""

from __future__ import annotations

import sys
from pathlib import Path

import rasp_compile as rc

PROGRAM = Path(__file__).resolve().parent.parent / "programs" / "reverse.rasp"
MOVING_SELECT = "select(indices, opposite, ==)"
TOKENS = [1, 2, 3, 3, 2]
LAYER, HEAD = 1, 0  # the head that moves the tokens


def show_pattern(pattern, labels: list[str]) -> None:
    """One row per query position, one column per key position (BOS first)."""
    print("      " + " ".join(f"{label:>5}" for label in labels))
    for label, row in zip(labels, pattern):
        print(f"{label:>5} " + " ".join(f"{weight:5.2f}" for weight in row))


def main() -> int:
    source = PROGRAM.read_text()
    model = rc.compile(source)
    try:
        tl_model = rc.to_transformer_lens(model)
    except rc.MissingExtraError as error:  # one line: which extra to install
        print(f"error: {error}", file=sys.stderr)
        return 1
    import torch  # present: the extra brought it

    labels = tl_model.rasp_labels
    ids = rc.tl_tokens(model, [TOKENS])  # [1, n + 1]: BOS first, as our forward takes
    positions = ["BOS"] + [f"{i}:{token}" for i, token in enumerate(TOKENS)]

    with torch.no_grad():
        logits, cache = tl_model.run_with_cache(ids)
    clean = [labels.output[column] for column in logits[0, 1:].argmax(-1).tolist()]
    print(f"input {TOKENS} -> converted model {clean}, interpreter {rc.evaluate(rc.parse_program(source), TOKENS)}")
    print(f"\nblocks.{LAYER}.attn.hook_pattern, head {HEAD} ({labels.describe_head(LAYER, HEAD)}):")
    show_pattern(cache[f"blocks.{LAYER}.attn.hook_pattern"][0, HEAD].tolist(), positions)
    moved = [label for label in labels.residual if label.startswith("output:")]  # the answer's one-hot
    print(f"\nwhat the head writes, read at blocks.{LAYER}.hook_resid_post, dims {moved}:")
    resid = cache[f"blocks.{LAYER}.hook_resid_post"][0]
    for position, row in zip(positions[1:], resid[1:]):
        print(f"  {position}: " + " ".join(f"{row[labels.residual.index(label)]:.2f}" for label in moved))

    def ablate(pattern, hook):  # [batch, head, query, key]: this head attends nowhere
        pattern[:, HEAD] = 0
        return pattern

    with torch.no_grad():
        ablated_logits = tl_model.run_with_hooks(ids, fwd_hooks=[(f"blocks.{LAYER}.attn.hook_pattern", ablate)])
    ablated = [labels.output[column] for column in ablated_logits[0, 1:].argmax(-1).tolist()]
    assert MOVING_SELECT in source
    no_select = rc.parse_program(source.replace(MOVING_SELECT, MOVING_SELECT.replace("==", "false")))
    expected = rc.evaluate(no_select, TOKENS)
    print(f"\nhead L{LAYER}H{HEAD} ablated -> {ablated}")
    print(f"the program with {MOVING_SELECT} matching nothing -> {expected}")
    print("no token reaches its opposite position: the output dims stay 0, and the read-out says none.")
    if ablated != expected or ablated == clean:
        print("error: the ablated model does not do what the program says", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
