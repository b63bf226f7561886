"""FLOPs of one forward pass, by a closed formula from the shapes (nanoGPT's `estimate_mfu` habit),
per component, under the printed `CONVENTIONS`. tests/test_flops.py checks the formula against an
instrumented run of `rasp_compile.runtime.forward` that counts every operation it performs.
"""

from __future__ import annotations

from ..errors import ArgumentError
from ..runtime.model import Model

GELU_FLOPS = 8  # x**3, *0.044715, +x, *sqrt(2/pi), tanh, +1, 0.5*x, and the final product
ACTIVATION_FLOPS = {"relu": 1, "gelu": GELU_FLOPS}
SOFTMAX_FLOPS = 5  # per element: row max, subtract, exp, row sum, divide

CONVENTIONS = f"""\
FLOP conventions (one forward pass, one sequence):
  matmul [n,a] @ [a,b]           2·n·a·b
  element-wise add or multiply   1 per output element: embedding add, biases, the 1/sqrt(D) scale,
                                 the causal mask (added only when causal), residual adds
  softmax                        {SOFTMAX_FLOPS} per element (max, subtract, exp, sum, divide): attention
                                 rows, and the output softmax over the logits (categorical outputs
                                 only: a numerical output's logit is the value)
  activation                     relu 1, gelu {GELU_FLOPS} per element (GPT-2's tanh form)
  lookups, slicing, head split   free
Whole sequence: every one of the n positions. Last position alone: what a KV cache pays for it:
its embedding, its q/k/v row, one row of scores over the n keys (scaled, and masked when causal,
as the forward pass adds that mask row), one softmax row, one weighted sum, and its own
projections, MLP, residual adds and read-out. (For a non-causal model there is no such cache,
since earlier positions see later tokens: last-only is then just the last row's share.)"""

COMPONENTS = (
    "embedding", "qkv projection", "scores", "scale and mask", "softmax", "weighted sum",
    "attention out", "MLP in", "activation", "MLP out", "residual adds", "read-out", "output softmax",
)


def count_flops(model: Model, n_positions: int, last_only: bool = False) -> dict[str, int]:
    """FLOPs per component, then "total", for a forward over `n_positions` positions (BOS
    included when the model has one), or for its last position alone."""
    if not 1 <= n_positions <= model.n_ctx:
        raise ArgumentError(f"n_positions must lie in 1..{model.n_ctx}, got {n_positions}")
    meta, d_model, n_keys = model.meta, model.d_model, n_positions
    rows = 1 if last_only else n_positions  # positions whose row is computed
    flops = dict.fromkeys(COMPONENTS, 0)
    flops["embedding"] = rows * d_model
    for layer in meta["layers"]:
        n_head, d_head, d_mlp = layer["n_head"], layer["d_head"], layer["d_mlp"]
        width = n_head * d_head
        if n_head:
            score_cells = n_head * rows * n_keys  # one score per head, query row and key
            flops["qkv projection"] += rows * (2 * d_model * 3 * width + 3 * width)
            flops["scores"] += 2 * score_cells * d_head
            flops["scale and mask"] += score_cells * (1 + meta["causal"])
            flops["softmax"] += SOFTMAX_FLOPS * score_cells
            flops["weighted sum"] += 2 * score_cells * d_head
            flops["attention out"] += rows * (2 * width * d_model + d_model)
            flops["residual adds"] += rows * d_model
        if d_mlp:
            flops["MLP in"] += rows * (2 * d_model * d_mlp + d_mlp)
            flops["activation"] += rows * d_mlp * ACTIVATION_FLOPS[meta["activation"]]
            flops["MLP out"] += rows * (2 * d_mlp * d_model + d_model)
            flops["residual adds"] += rows * d_model
    n_out = model.n_out
    flops["read-out"] = rows * (2 * d_model * n_out + n_out * ("unembed_b" in model.params))
    if meta["output"]["encoding"] == "categorical":
        flops["output softmax"] = rows * SOFTMAX_FLOPS * n_out
    flops["total"] = sum(flops.values())
    return flops
