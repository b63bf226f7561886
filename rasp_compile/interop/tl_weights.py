"""A compiled model's arrays as TransformerLens' weights (docs/interop.md).

TransformerLens has one head count, head width and MLP width for all layers: every layer is
padded to the widest (n_heads = max n_head, d_head = max d_head, d_mlp = max d_mlp) with zero heads
and zero units. A zero head attends uniformly to a zero value and writes nothing; a zero unit is
act(0) = 0 for relu and gelu. A block without attention or MLP is all zeros there.

Our forward divides a layer's scores by √(its d_head); TransformerLens by √d_head of the config for
all layers. The ratio √(d_head / its d_head) is folded into that layer's W_Q and b_Q.

`hooked_weights` names and shapes the arrays as HookedTransformer's parameters (TransformerLens 2.x
and 3.x, and the weight views of 4.x): W_Q, W_K, W_V [n_heads, d_model, d_head], b_Q, b_K, b_V
[n_heads, d_head], W_O [n_heads, d_head, d_model], W_in [d_model, d_mlp], W_out [d_mlp, d_model],
W_E [d_vocab, d_model], W_pos [n_ctx, d_model], W_U [d_model, d_vocab_out], and the biases.
`bridge_weights` lays the same arrays out as the parameters of TransformerLens 4.x's native
TransformerBridge: torch Linear layers ([out, in]), the heads side by side.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..runtime.model import Model


@dataclass(frozen=True)
class PaddedSizes:
    """The one set of sizes TransformerLens gives every layer: the model's widest (at least 1)."""

    n_heads: int
    d_head: int
    d_mlp: int


def padded_sizes(model: Model) -> PaddedSizes:
    layers = model.meta["layers"]
    return PaddedSizes(
        n_heads=max([layer["n_head"] for layer in layers] + [1]),
        d_head=max([layer["d_head"] for layer in layers if layer["n_head"]] + [1]),
        d_mlp=max([layer["d_mlp"] for layer in layers] + [1]),
    )


def _padded(array: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """`array` in the leading corner of zeros of `shape`."""
    out = np.zeros(shape, array.dtype)
    out[tuple(slice(0, n) for n in array.shape)] = array
    return out


def _attention(params: dict, i: int, layer: dict, sizes: PaddedSizes, d_model: int) -> dict:
    """Block i's W_Q, W_K, W_V, W_O and biases, padded to sizes.n_heads heads of sizes.d_head, the
    softmax scale folded into W_Q and b_Q."""
    h, d, H, D = layer["n_head"], layer["d_head"], sizes.n_heads, sizes.d_head
    w = params[f"blocks.{i}.attn.c_attn.w"].reshape(d_model, 3, h, d)  # [d_model, q|k|v, head, d_head]
    b = params[f"blocks.{i}.attn.c_attn.b"].reshape(3, h, d)
    scale = math.sqrt(D / d)  # q'·k / √D = q·k / √d
    state = {}
    for j, name in enumerate("QKV"):
        factor = scale if name == "Q" else 1.0
        state[f"blocks.{i}.attn.W_{name}"] = _padded(w[:, j].transpose(1, 0, 2) * factor, (H, d_model, D))
        state[f"blocks.{i}.attn.b_{name}"] = _padded(b[j] * factor, (H, D))
    c_proj = params[f"blocks.{i}.attn.c_proj.w"].reshape(h, d, d_model)
    state[f"blocks.{i}.attn.W_O"] = _padded(c_proj, (H, D, d_model))
    state[f"blocks.{i}.attn.b_O"] = params[f"blocks.{i}.attn.c_proj.b"]
    return state


def _mlp(params: dict, i: int, sizes: PaddedSizes, d_model: int) -> dict:
    """Block i's W_in, W_out and biases, padded to sizes.d_mlp units."""
    return {
        f"blocks.{i}.mlp.W_in": _padded(params[f"blocks.{i}.mlp.c_fc.w"], (d_model, sizes.d_mlp)),
        f"blocks.{i}.mlp.b_in": _padded(params[f"blocks.{i}.mlp.c_fc.b"], (sizes.d_mlp,)),
        f"blocks.{i}.mlp.W_out": _padded(params[f"blocks.{i}.mlp.c_proj.w"], (sizes.d_mlp, d_model)),
        f"blocks.{i}.mlp.b_out": params[f"blocks.{i}.mlp.c_proj.b"],
    }


def _zero_block(i: int, sizes: PaddedSizes, d_model: int, dtype) -> dict:
    """Block i's arrays, all zeros: what stays of a sub-layer the model's block lacks."""
    H, D, d_mlp = sizes.n_heads, sizes.d_head, sizes.d_mlp
    shapes = {"attn.W_Q": (H, d_model, D), "attn.W_K": (H, d_model, D), "attn.W_V": (H, d_model, D),
              "attn.b_Q": (H, D), "attn.b_K": (H, D), "attn.b_V": (H, D),
              "attn.W_O": (H, D, d_model), "attn.b_O": (d_model,),
              "mlp.W_in": (d_model, d_mlp), "mlp.b_in": (d_mlp,),
              "mlp.W_out": (d_mlp, d_model), "mlp.b_out": (d_model,)}
    return {f"blocks.{i}.{key}": np.zeros(shape, dtype) for key, shape in shapes.items()}


def hooked_weights(model: Model, sizes: PaddedSizes) -> dict[str, np.ndarray]:
    """Every array of the converted model by its HookedTransformer key, contiguous, in the model's
    dtype. Absent sub-layers and a missing read-out bias are zeros."""
    params, d_model, dtype = model.params, model.d_model, model.dtype
    state = {
        "embed.W_E": params["wte"], "pos_embed.W_pos": params["wpe"], "unembed.W_U": params["unembed"],
        "unembed.b_U": params.get("unembed_b", np.zeros(model.n_out, dtype)),
    }
    for i, layer in enumerate(model.meta["layers"]):
        state |= _zero_block(i, sizes, d_model, dtype)
        if layer["n_head"]:
            state |= _attention(params, i, layer, sizes, d_model)
        if layer["d_mlp"]:
            state |= _mlp(params, i, sizes, d_model)
    return {key: np.ascontiguousarray(array, dtype) for key, array in state.items()}


def _heads_in(w: np.ndarray) -> np.ndarray:  # [head, d_model, d_head] -> [head * d_head, d_model]
    return w.transpose(0, 2, 1).reshape(-1, w.shape[1])


def _heads_out(w: np.ndarray) -> np.ndarray:  # [head, d_head, d_model] -> [d_model, head * d_head]
    return w.reshape(-1, w.shape[2]).T


# HookedTransformer's parameter name -> TransformerBridge's, and the array in the bridge's layout
_BRIDGE: dict[str, tuple[str, Callable[[np.ndarray], np.ndarray]]] = {
    "W_E": ("weight", lambda a: a), "W_pos": ("weight", lambda a: a),
    "W_U": ("weight", np.transpose), "b_U": ("bias", lambda a: a),
    "W_Q": ("q.weight", _heads_in), "W_K": ("k.weight", _heads_in), "W_V": ("v.weight", _heads_in),
    "b_Q": ("q.bias", np.ravel), "b_K": ("k.bias", np.ravel), "b_V": ("v.bias", np.ravel),
    "W_O": ("o.weight", _heads_out), "b_O": ("o.bias", lambda a: a),
    "W_in": ("in.weight", np.transpose), "b_in": ("in.bias", lambda a: a),
    "W_out": ("out.weight", np.transpose), "b_out": ("out.bias", lambda a: a),
}


def bridge_weights(hooked: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """`hooked_weights`' arrays under TransformerBridge's keys (`blocks.0.attn.q.weight`, ...),
    contiguous."""
    state = {}
    for key, array in hooked.items():
        owner, _, name = key.rpartition(".")
        bridge_name, layout = _BRIDGE[name]
        state[f"{owner}.{bridge_name}"] = np.ascontiguousarray(layout(array))
    return state
