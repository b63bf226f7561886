"""`model.apply(["BOS", x1, ..., xn])`: a compiled model run the way tracr's compiled models are
(docs/from_tracr.md, "Running a model as tracr does").

    out = model.apply(["BOS", 1, 2, 3])
    out.decoded         # ["BOS", 3, 2, 1]: BOS, then the output at each token (None for none)
    out.residuals       # per sub-layer, the residual stream after it: [1, n + 1, d_model] each
    out.layer_outputs   # per sub-layer, what it added to the stream: [1, n + 1, d_model] each
    out.input_embeddings, out.transformer_output  # [1, n + 1, d_model]: the stream before and after

Residual dimensions are named in `model.meta["residual"]`; `rc.trace(model, xs)` reads them by
s-op. A field of tracr's output we do not keep (attention logits, `unembedded`) raises an
AttributeError naming what to use instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NoReturn

import numpy as np

from ..errors import InputError
from ..ir import Value
from .execute import logits, trace
from .model_like import ModelLike
from .prediction import decode, encode_batch

INSTEAD = {
    "attn_logits": "the attention patterns after softmax are `apply(...).attn_patterns` ([1, head, n + 1, n + 1] "
                   "per layer); `rc.trace(model, xs).attention(layer, head)` labels them",
    "unembedded": "`apply(...).logits` holds the output logits [1, n + 1, n_out]; `decoded` their reading",
}


@dataclass(frozen=True)
class AppliedOutput:
    """What `Model.apply` returns, with tracr's field names (module docstring). Arrays carry a
    batch axis of 1, as tracr's do; position 0 is BOS."""

    decoded: list[Value]
    logits: np.ndarray           # [1, n + 1, n_out]
    residuals: list[np.ndarray]  # 2 per layer, [1, n + 1, d_model] each: after attention, after the MLP
    layer_outputs: list[np.ndarray]  # the same sub-layers, each one's own addition to the stream
    attn_patterns: list[np.ndarray]  # per layer, [1, head, n + 1, n + 1]
    input_embeddings: np.ndarray  # [1, n + 1, d_model]
    transformer_output: np.ndarray  # [1, n + 1, d_model]: the last residual

    def __getattr__(self, name: str) -> NoReturn:
        if name in INSTEAD:
            raise AttributeError(f"{name} is tracr's; here {INSTEAD[name]}")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


def apply(model: ModelLike, tokens: list[Value]) -> AppliedOutput:
    """`model` on `tokens`, which start with the BOS token as tracr's `apply` takes them; an
    InputError (one line) when they do not, saying what to call."""
    vocab, bos_id = model.meta["vocab"], model.meta["bos_id"]
    tokens = list(tokens)
    if bos_id is None or not tokens or tokens[0] != vocab[bos_id] or type(tokens[0]) is not type(vocab[bos_id]):
        start = "a model without BOS" if bos_id is None else f"the BOS token {vocab[bos_id]!r} first"
        raise InputError(f"apply takes the input as tracr's does, with {start}; "
                         "rasp_compile.run(model, xs) takes the tokens alone")

    ids = encode_batch(model, [tokens[1:]])
    steps = trace(model, ids)
    embedded = model.params["wte"][ids] + model.params["wpe"][: ids.shape[1]]
    residuals = [step[key] for step in steps for key in ("after_attn", "after_mlp")]
    before = [embedded, *residuals[:-1]]
    out = logits(model, ids)
    decoded = decode(model, out)[0]
    return AppliedOutput(
        decoded=[vocab[bos_id], *decoded[1:]],
        logits=out,
        residuals=residuals,
        layer_outputs=[after - earlier for after, earlier in zip(residuals, before)],
        attn_patterns=[step["attn_patterns"] for step in steps],
        input_embeddings=embedded,
        transformer_output=residuals[-1] if residuals else embedded,
    )
