"""A compiled model as a TransformerLens model (TransformerLens 2.x, 3.x or 4.x; docs/interop.md).

`to_transformer_lens(model)` builds TransformerLens' own transformer from a config made here (no
download, no tokenizer) and loads weights made here from the model's arrays (tl_weights.py), so that
its logits are our forward pass's. Which model it builds follows the installed TransformerLens:

- 2.x and 3.x: a `HookedTransformer` made from a `HookedTransformerConfig`;
- 4.x, which has no HookedTransformer: the native `TransformerBridge` (`TransformerBridge.boot_native`).

Both get the same config: no LayerNorm (`normalization_type=None`); relu stays "relu", our gelu
(GPT-2's tanh form) is "gelu_new"; a causal model has `attention_dir="causal"`, any other
"bidirectional"; weights keep the model's dtype (float32 or float64); the model is on the CPU.
Input ids are ours, BOS first when the model has one: `tl_tokens` encodes token sequences.

The converted model carries `rasp_labels` (labels.Labels): what each residual dimension, head,
input id and logit column means.
"""

from __future__ import annotations

from importlib import metadata

import numpy as np

from ..errors import InputError, MissingExtraError
from ..runtime.prediction import encode
from ..runtime.model import Model, validate
from .labels import labels_of
from .tl_weights import PaddedSizes, bridge_weights, hooked_weights, padded_sizes

EXTRA = "pip install 'rasp-compile[interop]' (from a checkout: pip install -e '.[interop]')"
ACT_FNS = {"relu": "relu", "gelu": "gelu_new"}  # TransformerLens' name of each activation of ours


def _import(name: str):
    """The module `name`, or MissingExtraError in one line."""
    try:
        return __import__(name)
    except ImportError as error:
        raise MissingExtraError(f"TransformerLens needs the interop extra: TransformerLens 2.x, 3.x or 4.x "
                                f"and torch ({error.name or 'a module'} is missing): {EXTRA}") from None


def uses_bridge(version: str, has_bridge: bool) -> bool:
    """Whether TransformerLens `version` makes TransformerBridges (4.x on) or HookedTransformers
    (2.x, 3.x). A checkout of TransformerLens' source reports 0.0.0: there, whether it has a
    `TransformerBridge` (`has_bridge`) decides. 1.x and older are refused (MissingExtraError)."""
    major = int(version.split(".")[0]) if version.split(".")[0].isdigit() else 0
    if major == 0:
        return has_bridge
    if major == 1:
        raise MissingExtraError(f"TransformerLens {version} is installed; to_transformer_lens needs 2.x, "
                                f"3.x or 4.x: {EXTRA}")
    return major >= 4


def installed_version() -> str:
    """The installed TransformerLens' version ("0.0.0" when it has no package metadata)."""
    try:
        return metadata.version("transformer-lens")
    except metadata.PackageNotFoundError:
        return "0.0.0"


def config(model: Model, sizes: PaddedSizes) -> dict:
    """The config fields of the converted model (HookedTransformerConfig's and TransformerBridgeConfig's)."""
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


def _tensors(torch, arrays: dict[str, np.ndarray]) -> dict:
    """The arrays as torch tensors of their dtype, copied (a loaded model's arrays are read-only)."""
    return {key: torch.tensor(array) for key, array in arrays.items()}


def _hooked_transformer(torch, transformer_lens, fields: dict, weights: dict[str, np.ndarray]):
    """A HookedTransformer (TransformerLens 2.x, 3.x) with `weights` (its parameters by key)."""
    dtype = torch.float64 if weights["embed.W_E"].dtype == np.float64 else torch.float32
    tl_model = transformer_lens.HookedTransformer(
        transformer_lens.HookedTransformerConfig(**fields, dtype=dtype, device="cpu"))
    # its attention masks are buffers it makes itself; every parameter comes from `weights`
    tl_model.load_state_dict(dict(tl_model.named_buffers()) | _tensors(torch, weights), strict=True)
    return tl_model


def _transformer_bridge(torch, transformer_lens, fields: dict, weights: dict[str, np.ndarray]):
    """TransformerLens 4.x's native TransformerBridge with `weights` (HookedTransformer's keys)."""
    from transformer_lens.config import TransformerBridgeConfig

    dtype = torch.float64 if weights["embed.W_E"].dtype == np.float64 else torch.float32
    cfg = TransformerBridgeConfig(**fields)
    tl_model = transformer_lens.TransformerBridge.boot_native(cfg, dtype=dtype, model_name=cfg.model_name)
    tl_model.load_state_dict(_tensors(torch, bridge_weights(weights)), strict=True)
    return tl_model


def to_transformer_lens(model: Model):
    """The model as a TransformerLens model whose logits are our forward pass's
    (`tl_model(tl_tokens(model, inputs))`): a `HookedTransformer` under TransformerLens 2.x and 3.x,
    a `TransformerBridge` under 4.x. `tl_model.rasp_labels` says what its residual dimensions,
    heads, input ids and logit columns mean. Needs the interop extra."""
    torch = _import("torch")
    transformer_lens = _import("transformer_lens")
    bridge = uses_bridge(installed_version(), hasattr(transformer_lens, "TransformerBridge"))
    validate(model)
    sizes = padded_sizes(model)
    build = _transformer_bridge if bridge else _hooked_transformer
    tl_model = build(torch, transformer_lens, config(model, sizes), hooked_weights(model, sizes))
    tl_model.eval()
    tl_model.rasp_labels = labels_of(model, sizes.n_heads)
    return tl_model


def tl_tokens(model: Model, inputs: list[list]):  # -> torch int64 [batch, n_ctx used]
    """Token sequences (all of one length, 1..max_len) as the converted model's input ids: each
    token's index in meta.vocab, BOS first when the model has one. Needs the interop extra."""
    torch = _import("torch")
    lengths = {len(tokens) for tokens in inputs}
    if len(lengths) != 1:
        raise InputError("tl_tokens takes one or more inputs of one length "
                         f"(got lengths {sorted(lengths)}); pad or group them by length")
    (length,) = lengths
    if not 1 <= length <= model.meta["max_len"]:
        raise InputError(f"an input of {length} tokens; this model takes 1 to {model.meta['max_len']}")
    return torch.tensor([encode(model, list(tokens)) for tokens in inputs], dtype=torch.long)
