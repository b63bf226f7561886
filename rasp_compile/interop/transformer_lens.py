"""A compiled model as a TransformerLens model (TransformerLens 4.x, docs/interop.md).

`to_transformer_lens(model)` builds TransformerLens' own native transformer
(`TransformerBridge.boot_native`, no download, no tokenizer) from a config made here, and loads a
state dict made here from the model's arrays, so that its logits are our forward pass's:

- No LayerNorm (`normalization_type=None`); relu stays "relu", our gelu (GPT-2's tanh form) is
  "gelu_new"; a causal model has `attention_dir="causal"`, any other "bidirectional".
- TransformerLens has one head count, head width and MLP width for all layers: every layer is
  padded to the widest (n_heads = max n_head, d_head = max d_head, d_mlp = max d_mlp) with zero
  heads and zero units. A zero head attends uniformly to a zero value and writes nothing; a
  zero unit is act(0) = 0 for relu and gelu. A block without attention or MLP is all zeros there.
- Our forward divides a layer's scores by √(its d_head); TransformerLens by √d_head of the config
  for all layers. The ratio √(d_head / its d_head) is folded into that layer's W_Q and b_Q.
- Weights keep the model's dtype (float32 or float64); the read-out bias is `unembed.bias` (b_U).
- Input ids are ours, BOS first when the model has one: `tl_tokens` encodes token sequences.

The converted model carries `rasp_labels` (labels.Labels): what each residual dimension, head,
input id and logit column means.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..runtime.prediction import encode
from ..runtime.model import Model, validate
from .labels import labels_of

EXTRA = "pip install 'rasp-compile[interop]' (from a checkout: pip install -e '.[interop]')"
ACT_FNS = {"relu": "relu", "gelu": "gelu_new"}  # TransformerLens' name of each activation of ours


class MissingExtraError(ImportError):
    """An optional dependency is not installed; the message names the extra that brings it."""


def _import_transformer_lens():
    """(torch, TransformerBridge, TransformerBridgeConfig), or MissingExtraError in one line."""
    try:
        import torch
        from transformer_lens import TransformerBridge
        from transformer_lens.config import TransformerBridgeConfig
    except ImportError as error:
        raise MissingExtraError(f"TransformerLens needs the interop extra ({error.name or 'a module'} "
                                f"is missing): {EXTRA}") from None
    return torch, TransformerBridge, TransformerBridgeConfig


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


def config(model: Model, sizes: PaddedSizes) -> dict:
    """The TransformerBridgeConfig fields of the converted model."""
    return {
        "d_model": model.d_model, "n_layers": model.n_layers, "n_ctx": model.n_ctx,
        "n_heads": sizes.n_heads, "d_head": sizes.d_head, "d_mlp": sizes.d_mlp,
        "d_vocab": len(model.meta["vocab"]), "d_vocab_out": model.n_out,
        "act_fn": ACT_FNS[model.meta["activation"]], "normalization_type": None,
        "attention_dir": "causal" if model.meta["causal"] else "bidirectional",
        "init_weights": False,  # every weight is loaded from the model
        "tokenizer_prepends_bos": False,  # no tokenizer: `tl_tokens` puts BOS first
        "model_name": f"rasp-compile:{model.meta['output'].get('name') or 'output'}",
    }


def _padded(array: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """`array` in the leading corner of zeros of `shape`."""
    out = np.zeros(shape, array.dtype)
    out[tuple(slice(0, n) for n in array.shape)] = array
    return out


def _attention(params: dict, i: int, layer: dict, sizes: PaddedSizes, d_model: int) -> dict:
    """Block i's q, k, v, o weights ([out, in], as torch's Linear) and biases, padded to
    sizes.n_heads heads of sizes.d_head, the softmax scale folded into q."""
    h, d, H, D = layer["n_head"], layer["d_head"], sizes.n_heads, sizes.d_head
    w = params[f"blocks.{i}.attn.c_attn.w"].reshape(d_model, 3, h, d)  # [d_model, q|k|v, head, d_head]
    b = params[f"blocks.{i}.attn.c_attn.b"].reshape(3, h, d)
    scale = math.sqrt(D / d)  # q'·k / √D = q·k / √d
    state = {}
    for j, name in enumerate("qkv"):
        factor = scale if name == "q" else 1.0
        state[f"blocks.{i}.attn.{name}.weight"] = _padded(w[:, j] * factor, (d_model, H, D)).reshape(d_model, H * D).T
        state[f"blocks.{i}.attn.{name}.bias"] = _padded(b[j] * factor, (H, D)).reshape(H * D)
    c_proj = params[f"blocks.{i}.attn.c_proj.w"].reshape(h, d, d_model)
    state[f"blocks.{i}.attn.o.weight"] = _padded(c_proj, (H, D, d_model)).reshape(H * D, d_model).T
    state[f"blocks.{i}.attn.o.bias"] = params[f"blocks.{i}.attn.c_proj.b"]
    return state


def _mlp(params: dict, i: int, sizes: PaddedSizes, d_model: int) -> dict:
    """Block i's MLP in and out weights ([out, in]) and biases, padded to sizes.d_mlp units."""
    return {
        f"blocks.{i}.mlp.in.weight": _padded(params[f"blocks.{i}.mlp.c_fc.w"], (d_model, sizes.d_mlp)).T,
        f"blocks.{i}.mlp.in.bias": _padded(params[f"blocks.{i}.mlp.c_fc.b"], (sizes.d_mlp,)),
        f"blocks.{i}.mlp.out.weight": _padded(params[f"blocks.{i}.mlp.c_proj.w"], (sizes.d_mlp, d_model)).T,
        f"blocks.{i}.mlp.out.bias": params[f"blocks.{i}.mlp.c_proj.b"],
    }


def _zero_block(i: int, sizes: PaddedSizes, d_model: int, dtype) -> dict:
    """Block i's arrays, all zeros: what stays of a sub-layer the model's block lacks."""
    width, d_mlp = sizes.n_heads * sizes.d_head, sizes.d_mlp
    shapes = {"attn.q.weight": (width, d_model), "attn.k.weight": (width, d_model),
              "attn.v.weight": (width, d_model), "attn.q.bias": (width,), "attn.k.bias": (width,),
              "attn.v.bias": (width,), "attn.o.weight": (d_model, width), "attn.o.bias": (d_model,),
              "mlp.in.weight": (d_mlp, d_model), "mlp.in.bias": (d_mlp,),
              "mlp.out.weight": (d_model, d_mlp), "mlp.out.bias": (d_model,)}
    return {f"blocks.{i}.{key}": np.zeros(shape, dtype) for key, shape in shapes.items()}


def state_dict(model: Model, sizes: PaddedSizes) -> dict[str, np.ndarray]:
    """Every array of the converted model by its TransformerLens key, contiguous, in the model's
    dtype. Absent sub-layers and a missing read-out bias are zeros."""
    params, d_model, dtype = model.params, model.d_model, model.dtype
    state = {
        "embed.weight": params["wte"], "pos_embed.weight": params["wpe"],
        "unembed.weight": params["unembed"].T,
        "unembed.bias": params.get("unembed_b", np.zeros(model.n_out, dtype)),
    }
    for i, layer in enumerate(model.meta["layers"]):
        state |= _zero_block(i, sizes, d_model, dtype)
        if layer["n_head"]:
            state |= _attention(params, i, layer, sizes, d_model)
        if layer["d_mlp"]:
            state |= _mlp(params, i, sizes, d_model)
    return {key: np.ascontiguousarray(array, dtype) for key, array in state.items()}


def to_transformer_lens(model: Model):
    """The model as a TransformerLens `TransformerBridge` whose logits are our forward pass's
    (`tl_model(tl_tokens(model, inputs))`), with `tl_model.rasp_labels` saying what its residual
    dimensions, heads, input ids and logit columns mean. Needs the interop extra."""
    torch, TransformerBridge, TransformerBridgeConfig = _import_transformer_lens()
    validate(model)
    sizes = padded_sizes(model)
    cfg = TransformerBridgeConfig(**config(model, sizes))
    dtype = torch.float64 if model.dtype == np.float64 else torch.float32
    tl_model = TransformerBridge.boot_native(cfg, dtype=dtype, model_name=cfg.model_name)
    state = {key: torch.from_numpy(array) for key, array in state_dict(model, sizes).items()}
    tl_model.load_state_dict(state, strict=True)
    tl_model.eval()
    tl_model.rasp_labels = labels_of(model, sizes.n_heads)
    return tl_model


def tl_tokens(model: Model, inputs: list[list]):  # -> torch int64 [batch, n_ctx used]
    """Token sequences (all of one length, 1..max_len) as the converted model's input ids: each
    token's index in meta.vocab, BOS first when the model has one. Needs the interop extra."""
    torch, _, _ = _import_transformer_lens()
    lengths = {len(tokens) for tokens in inputs}
    if len(lengths) != 1:
        raise InputError("tl_tokens takes one or more inputs of one length "
                         f"(got lengths {sorted(lengths)}); pad or group them by length")
    (length,) = lengths
    if not 1 <= length <= model.meta["max_len"]:
        raise InputError(f"an input of {length} tokens; this model takes 1 to {model.meta['max_len']}")
    return torch.tensor([encode(model, list(tokens)) for tokens in inputs], dtype=torch.long)
