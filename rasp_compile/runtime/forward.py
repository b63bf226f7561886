"""The forward pass of docs/format.md, picoGPT-style: a dozen plain NumPy functions, batched over
[batch, n] id arrays, computing in the model's dtype (float32 or float64).

Parameters are named after the weight keys, so the nested params splat straight in:
`linear(x, **c_attn)`, `mha(x, **attn, ...)`, `transformer_block(x, **block, ...)`,
`gpt(ids, **model.nested(), **hparams(model))`. No LayerNorm. Weights are [in, out], applied as `x @ w + b`.

Running a model is execute.py (`logits`: ids in, logits out, on the model's nonzero weights;
`trace`: every residual stream and attention pattern); tokens and values are tokens.py's
(`encode`, `predict`, `complete`).
"""

from __future__ import annotations

import math
from typing import Any
from collections.abc import Callable

import numpy as np
from numpy.typing import DTypeLike

from .model_like import ModelLike

Array = np.ndarray
Params = dict[str, np.ndarray]  # one layer's arrays by name: {"w": [n_in, n_out], "b": [n_out]}
Activation = Callable[[np.ndarray], np.ndarray]


def relu(x: Array) -> Array:  # [...] -> [...]
    return np.maximum(x, 0)


def gelu(x: Array) -> Array:
    # [...] -> [...], GPT-2's tanh approximation (Python-float constants keep the dtype)
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


ACTIVATION_FUNCTIONS: dict[str, Activation] = {"relu": relu, "gelu": gelu}


def softmax(x: Array, axis: int = -1, out: Array | None = None) -> Array:
    # [...] -> [...] along `axis`, stable: the max is subtracted first
    out = np.subtract(x, x.max(axis=axis, keepdims=True), out=out)  # out=x: in place
    np.exp(out, out=out)
    out /= out.sum(axis=axis, keepdims=True)
    return out


def linear(x: Array, w: Array, b: Array | None = None) -> Array:  # [..., n_in] -> [..., n_out]
    out = x.reshape(-1, w.shape[0]) @ w  # [rows, n_out]: one matmul for every row of the batch
    if b is not None:
        out += b
    return out.reshape(*x.shape[:-1], w.shape[1])


def ffn(x: Array, c_fc: Params, c_proj: Params, act: Activation) -> Array:
    # [batch, n, d_model] -> [batch, n, d_model]
    return linear(act(linear(x, **c_fc)), **c_proj)  # through [batch, n, d_mlp]


def causal_mask(n: int, dtype: DTypeLike) -> Array:  # -> [n, n]: 0 on and below the diagonal, -inf above
    return np.triu(np.full((n, n), -np.inf, dtype=dtype), k=1)


def attention_pattern(q: Array, k: Array, mask: Array | None = None, scale: float | None = None) -> Array:
    # [batch, head, n_q, D], [.., n_k, D] -> [batch, head, n_q, n_k]
    # The scores are stored keys first, [n_k, batch, head, n_q], so that the softmax's max and sum
    # over the keys are n_k - 1 element-wise operations on whole contiguous slices (NumPy reduces a
    # short last axis row by row, many times slower); the pattern returned is a view of them.
    # The diagonal is never masked, so every row keeps a finite max and the softmax is defined.
    # `scale` divides the scores: sqrt(D) unless given (1 when the queries carry it already).
    batch, n_head, n_q, d_head = q.shape
    keys_first = np.empty((k.shape[-2], batch, n_head, n_q), q.dtype)
    scores = np.matmul(k, q.swapaxes(-1, -2), out=keys_first.transpose(1, 2, 0, 3))  # [b, h, n_k, n_q]
    scores = scores.transpose(2, 0, 1, 3)  # keys_first again, as the type matmul returned (a subclass stays one)
    scale = math.sqrt(d_head) if scale is None else scale
    if scale != 1:  # dividing by 1 changes nothing
        scores /= scale
    if mask is not None:
        scores += mask.T[:, None, None, :]
    return softmax(scores, axis=0, out=scores).transpose(1, 2, 3, 0)


def attention(q: Array, k: Array, v: Array, mask: Array | None = None) -> Array:
    # [batch, head, n_q, D], k and v [.., n_k, D] -> [batch, head, n_q, D]
    return attention_pattern(q, k, mask) @ v


def split_heads(x: Array, n_head: int) -> Array:
    # [batch, n, H·D] -> [batch, head, n, D]; head h = columns h·D..(h+1)·D
    batch, n, width = x.shape
    return x.reshape(batch, n, n_head, width // n_head).transpose(0, 2, 1, 3)


def merge_heads(x: Array) -> Array:  # [batch, head, n, D] -> [batch, n, H·D]
    batch, n_head, n, d_head = x.shape
    return x.transpose(0, 2, 1, 3).reshape(batch, n, n_head * d_head)


def qkv_heads(x: Array, c_attn: Params, n_head: int) -> tuple[Array, Array, Array]:
    # [batch, n, d_model] -> 3 x [batch, head, n, D]
    qkv = linear(x, **c_attn)  # [batch, n, 3·H·D]
    width = qkv.shape[-1] // 3
    q, k, v = (split_heads(qkv[..., i * width:(i + 1) * width], n_head) for i in range(3))
    return q, k, v


def mha(x: Array, c_attn: Params, c_proj: Params, n_head: int, causal: bool) -> Array:
    # [batch, n, d_model] -> [batch, n, d_model]
    q, k, v = qkv_heads(x, c_attn, n_head)
    mask = causal_mask(x.shape[1], x.dtype) if causal else None
    return linear(merge_heads(attention(q, k, v, mask)), **c_proj)


def transformer_block(x: Array, mlp: dict[str, Params] | None = None, attn: dict[str, Params] | None = None, *,
                      n_head: int, causal: bool, act: Activation) -> Array:
    # [batch, n, d_model] -> same
    if attn is not None:
        x = x + mha(x, **attn, n_head=n_head, causal=causal)
    if mlp is not None:
        x = x + ffn(x, **mlp, act=act)
    return x


def gpt(ids: Array, wte: Array, wpe: Array, blocks: list[dict[str, dict[str, Params]]], unembed: Array,
        unembed_b: Array | None = None, *, n_heads: list[int], causal: bool, act: Activation) -> Array:
    # [batch, n] -> [.., n_out]
    x = np.take(wte, ids, axis=0) + wpe[: ids.shape[1]]  # [batch, n, d_model]; wte[ids], 3x faster
    for block, n_head in zip(blocks, n_heads):
        x = transformer_block(x, **block, n_head=n_head, causal=causal, act=act)
    return linear(x, unembed, unembed_b)



def hparams(model: ModelLike) -> dict[str, Any]:
    """The non-array arguments of `gpt`, from meta."""
    return {
        "n_heads": [layer["n_head"] for layer in model.meta["layers"]],
        "causal": model.meta["causal"],
        "act": ACTIVATION_FUNCTIONS[model.meta["activation"]],
    }

