"""The (aab)* predictor weighted by hand, as in the picoGPT blog post, saved in the docs/format.md format.

The rule: after "aa" comes "b"; after anything else comes "a" (a lone "a" at position 0 counts as
"aa"). It is the `programs/aab.rasp` program, whose text goes into meta.source so that
`rasp-run handmade_aab.npz --accuracy` checks these weights against the reference interpreter.

Residual stream (d_model 8), every dimension labelled:
    pos:0 .. pos:4   one-hot position (no BOS: n_ctx = max_len = 5)
    tokens:a, tokens:b   one-hot token
    scratch          the attention head's result, copied back for `--trace`

One block, one causal head of width D = 8 whose q, k and v dimensions mirror the residual labels:
    q·k    query p has QUERY_GAIN on pos:p-1 and pos:p, keys are the identity: key j scores
           QUERY_GAIN / sqrt(8) = 362 when j is p-1 or p, and 0 otherwise. A gap of 362 leaves the
           other keys a weight below e^-362 (0 in float32): the head averages exactly tokens p-1
           and p (token p alone at p = 0, the causal mask hiding later keys).
    v      tokens:a -> +1, tokens:b -> -1 in scratch; so scratch = +1 for "aa" (or a lone "a"),
           0 for "ab"/"ba", -1 for "bb".
    c_proj scratch -> tokens:a with -PROJ_GAIN and tokens:b with +PROJ_GAIN, bias +PROJ_GAIN on
           tokens:a: the logits become a = PROJ_GAIN·(1 - scratch) and b = PROJ_GAIN·scratch, plus
           the current token's one-hot (at most 1, far inside the margin of PROJ_GAIN = 1024).
No MLP. Read-out: unembed = wte.T (n_out 2, values a, b).

Run: `python examples/handmade_aab.py [OUT.npz]` writes the file (default handmade_aab.npz) and
prints the completions of the post.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from rasp_compile.runtime.prediction import complete
from rasp_compile.runtime.model import FORMAT, Model, validate
from rasp_compile.runtime.weights_file import save

VOCAB = ["a", "b"]
MAX_LEN = 5
RESIDUAL = [f"pos:{p}" for p in range(MAX_LEN)] + [f"tokens:{t}" for t in VOCAB] + ["scratch"]
DIM = {label: i for i, label in enumerate(RESIDUAL)}
QUERY_GAIN = 1024.0  # score gap 1024 / sqrt(8) = 362 between attended and ignored keys
PROJ_GAIN = 1024.0  # logit margin of the scratch decision over the token one-hot (1)

SOURCE = (Path(__file__).resolve().parent.parent / "programs" / "aab.rasp").read_text()

COMPLETIONS = {  # the post's examples: input -> 10 predicted tokens
    "aabaa": "baabaabaab",
    "a": "baabaabaab",
    "ba": "abaabaabaa",
    "abaab": "aabaabaaba",
    "ababa": "abaabaabaa",
    "bbbbb": "aabaabaaba",
}


def matrix(entries: dict[tuple[str, str], float], rows=RESIDUAL, cols=RESIDUAL) -> np.ndarray:
    """A [len(rows), len(cols)] matrix from {(row label, column label): weight}."""
    m = np.zeros((len(rows), len(cols)))
    for (row, col), weight in entries.items():
        m[rows.index(row), cols.index(col)] = weight
    return m


def build() -> Model:
    """The hand-weighted model, float32, validated."""
    wte = matrix({(t, f"tokens:{t}"): 1 for t in VOCAB}, rows=VOCAB)  # [2, 8]
    wpe = matrix({(f"pos:{p}", f"pos:{p}"): 1 for p in range(MAX_LEN)},
                 rows=RESIDUAL[:MAX_LEN])  # [5, 8]
    q = matrix({(f"pos:{p}", f"pos:{j}"): QUERY_GAIN
                for p in range(MAX_LEN) for j in (p - 1, p) if j >= 0})  # query p -> keys p-1, p
    k = np.eye(len(RESIDUAL))  # each key shows its own labels
    v = matrix({("tokens:a", "scratch"): 1, ("tokens:b", "scratch"): -1})
    c_proj_w = matrix({("scratch", "tokens:a"): -PROJ_GAIN, ("scratch", "tokens:b"): PROJ_GAIN,
                       ("scratch", "scratch"): 1})
    c_proj_b = PROJ_GAIN * np.eye(len(RESIDUAL))[DIM["tokens:a"]]
    params = {
        "wte": wte,
        "wpe": wpe,
        "blocks.0.attn.c_attn.w": np.concatenate([q, k, v], axis=1),  # [8, 3·1·8]
        "blocks.0.attn.c_attn.b": np.zeros(3 * len(RESIDUAL)),
        "blocks.0.attn.c_proj.w": c_proj_w,  # [8, 8]
        "blocks.0.attn.c_proj.b": c_proj_b,
        "unembed": wte.T,  # [8, 2]: the logit of a token is its one-hot dimension
    }
    meta = {
        "format": FORMAT,
        "vocab": VOCAB,
        "bos_id": None,
        "max_len": MAX_LEN,
        "causal": True,
        "activation": "relu",
        "layers": [{"n_head": 1, "d_head": len(RESIDUAL), "d_mlp": 0}],
        "output": {"name": "next", "encoding": "categorical", "values": VOCAB},
        "source": SOURCE,
        "residual": RESIDUAL,
    }
    model = Model(meta, {key: array.astype(np.float32) for key, array in params.items()})
    validate(model)
    return model


def main(argv: list[str]) -> None:
    path = argv[1] if len(argv) > 1 else "handmade_aab.npz"
    model = build()
    save(model, path)
    print(f"wrote {path}")
    for text in COMPLETIONS:
        print(f"{text} :: {''.join(complete(model, list(text), steps=10))}")


if __name__ == "__main__":
    main(sys.argv)
