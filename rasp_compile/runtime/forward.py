"""The forward pass of docs/format.md, picoGPT-style: a dozen plain NumPy functions, batched over
[batch, n] id arrays, computing in the model's dtype (float32 or float64).

Parameters are named after the weight keys, so the nested params splat straight in:
`linear(x, **c_attn)`, `mha(x, **attn, ...)`, `transformer_block(x, **block, ...)`,
`gpt(ids, **model.nested(), ...)`. No LayerNorm. Weights are [in, out], applied as `x @ w + b`.

On top of it: `logits` (ids in, logits out), `encode` (tokens to ids), `predict` (tokens in, one
value per token out), `complete` (a decoder's continuation) and `trace` (every residual stream
and attention pattern, for reports).

Speed without changing the computation: `logits` runs `planned_gpt`, the same pass on the part of
each weight that is not zero (forward_plan.py: a layer reads and writes only the residual columns
its weights touch, a head only the dimensions it uses), over a large batch in chunks that stay in
the CPU's cache (`CHUNK_BYTES`); each linear layer is one matmul over all rows of a chunk, and the
attention scores are stored keys first, so that the softmax reduces over whole contiguous slices
(`attention_pattern`). Every number is the sum of the same nonzero terms as in docs/format.md, in
another memory order; results agree with `gpt` and with a plain transcription of the page to float
rounding (tests/test_forward_plan.py, tests/test_spec_forward.py).

`logits` and `trace` run under `np.errstate(all="ignore")` and then check what they return: weights
that are finite but huge (1e30 in float32) overflow to inf/NaN, and that is a `WeightsError`
(one line, no NumPy warnings), never garbage predictions.
"""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np

from ..errors import InputError, WeightsError
from ..ir import Value
from .forward_plan import AttentionPlan, Dense, MlpPlan, Plan, Tiled, cached_plan
from .model_like import ModelLike
from .token_keys import token_key

MAX_SCORE_BYTES = 2**30
"""The attention scores one forward pass may hold: `logits` and `trace` refuse one sequence that
alone needs more (a file declaring max_len 60,000 made a 30,000-token input allocate tens of
GB); `logits` runs a larger batch in chunks (`CHUNK_BYTES`)."""

SCORE_COPIES = 1
"""Arrays of the scores' size alive at once in `attention`: the scores, turned into the pattern
in place."""

CHUNK_BYTES = 2**19
MIN_ROWS = 16
"""`logits` runs a batch in chunks of sequences whose widest activation (the scores, the MLP's
hidden layer, ...) takes about CHUNK_BYTES: small enough to stay in the CPU's cache, large enough
that NumPy's per-call overhead is shared by many sequences; and at least MIN_ROWS sequences, so
that a wide model does not pay that overhead per sequence. On 1,000 sequences at max_len 20, about
twice as fast as one call on the whole batch (and 1.1 to 1.4 times as fast as chunks of 128 kB)."""


def relu(x):  # [...] -> [...]
    return np.maximum(x, 0)


def gelu(x):  # [...] -> [...], GPT-2's tanh approximation (Python-float constants keep the dtype)
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


ACTIVATION_FUNCTIONS = {"relu": relu, "gelu": gelu}


def softmax(x, axis=-1, out=None):  # [...] -> [...] along `axis`, stable: the max is subtracted first
    out = np.subtract(x, x.max(axis=axis, keepdims=True), out=out)  # out=x: in place
    np.exp(out, out=out)
    out /= out.sum(axis=axis, keepdims=True)
    return out


def linear(x, w, b=None):  # [..., n_in] -> [..., n_out]
    out = x.reshape(-1, w.shape[0]) @ w  # [rows, n_out]: one matmul for every row of the batch
    if b is not None:
        out += b
    return out.reshape(*x.shape[:-1], w.shape[1])


def ffn(x, c_fc, c_proj, act):  # [batch, n, d_model] -> [batch, n, d_model]
    return linear(act(linear(x, **c_fc)), **c_proj)  # through [batch, n, d_mlp]


def causal_mask(n, dtype):  # -> [n, n]: 0 on and below the diagonal, -inf above
    return np.triu(np.full((n, n), -np.inf, dtype=dtype), k=1)


def attention_pattern(q, k, mask=None, scale=None):  # [batch, head, n_q, D], [.., n_k, D] -> [batch, head, n_q, n_k]
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


def attention(q, k, v, mask=None):  # [batch, head, n_q, D], k and v [.., n_k, D] -> [batch, head, n_q, D]
    return attention_pattern(q, k, mask) @ v


def split_heads(x, n_head):  # [batch, n, H·D] -> [batch, head, n, D]; head h = columns h·D..(h+1)·D
    batch, n, width = x.shape
    return x.reshape(batch, n, n_head, width // n_head).transpose(0, 2, 1, 3)


def merge_heads(x):  # [batch, head, n, D] -> [batch, n, H·D]
    batch, n_head, n, d_head = x.shape
    return x.transpose(0, 2, 1, 3).reshape(batch, n, n_head * d_head)


def qkv_heads(x, c_attn, n_head):  # [batch, n, d_model] -> 3 x [batch, head, n, D]
    qkv = linear(x, **c_attn)  # [batch, n, 3·H·D]
    width = qkv.shape[-1] // 3
    return tuple(split_heads(qkv[..., i * width:(i + 1) * width], n_head) for i in range(3))  # q, k, v


def mha(x, c_attn, c_proj, n_head, causal):  # [batch, n, d_model] -> [batch, n, d_model]
    q, k, v = qkv_heads(x, c_attn, n_head)
    mask = causal_mask(x.shape[1], x.dtype) if causal else None
    return linear(merge_heads(attention(q, k, v, mask)), **c_proj)


def transformer_block(x, mlp=None, attn=None, *, n_head, causal, act):  # [batch, n, d_model] -> same
    if attn is not None:
        x = x + mha(x, **attn, n_head=n_head, causal=causal)
    if mlp is not None:
        x = x + ffn(x, **mlp, act=act)
    return x


def gpt(ids, wte, wpe, blocks, unembed, unembed_b=None, *, n_heads, causal, act):  # [batch, n] -> [.., n_out]
    x = np.take(wte, ids, axis=0) + wpe[: ids.shape[1]]  # [batch, n, d_model]; wte[ids], 3x faster
    for block, n_head in zip(blocks, n_heads):
        x = transformer_block(x, **block, n_head=n_head, causal=causal, act=act)
    return linear(x, unembed, unembed_b)


# ---------------------------------------------------------------------------------------------
# The same pass on a model cut to its nonzero weights (forward_plan.py): what `logits` runs.


def planned_linear(layer: Dense, x, tiled: Tiled):  # [rows, d_in] -> [rows, width of layer.writes]
    if layer.picks is not None:  # each output one input times its weight
        out = np.take(x, layer.picks, axis=1)
        out *= tiled.rows(id(layer.w), layer.w[0], len(out))
    else:  # np.take: a copy of the columns read, faster than x[:, index]
        out = (x[:, layer.reads] if isinstance(layer.reads, slice) else np.take(x, layer.reads, axis=1)) @ layer.w
    return tiled.bias(layer, out)


def planned_mha(attn: AttentionPlan, x, batch, mask, tiled: Tiled):  # [batch·n, d_model] -> [batch·n, ..]
    qkv = planned_linear(attn.qkv, x, tiled).reshape(batch, -1, attn.qkv.w.shape[1])  # [batch, n, ..]
    widths = attn.n_head * np.array([attn.d_qk, attn.d_qk, attn.d_v])
    q, k, v = (split_heads(part, attn.n_head) for part in np.split(qkv, np.cumsum(widths)[:2], axis=-1))
    heads = attention_pattern(q, k, mask, attn.scale) @ v  # [batch, head, n, d_v]
    return planned_linear(attn.proj, merge_heads(heads).reshape(len(x), -1), tiled)


def planned_ffn(mlp: MlpPlan, x, activation, tiled: Tiled):  # [batch·n, d_model] -> [batch·n, ..]
    hidden = planned_linear(mlp.fc, x, tiled)
    hidden = np.maximum(hidden, tiled.zeros(hidden), out=hidden) if activation == "relu" else gelu(hidden)
    return planned_linear(mlp.proj, hidden, tiled)


def planned_gpt(plan: Plan, ids):  # [batch, n] -> [batch, n, n_out], final residual [batch·n, d_model]
    batch, n = ids.shape
    x = np.take(plan.wte, ids, axis=0)  # [batch, n, d_model]
    if plan.wpe is not None:
        x += plan.wpe[:n]
    x = x.reshape(batch * n, -1)
    mask = causal_mask(n, x.dtype) if plan.causal else None
    for attn, mlp in plan.blocks:
        if attn is not None:
            x[:, attn.proj.writes] += planned_mha(attn, x, batch, mask, plan.tiled)
        if mlp is not None:
            x[:, mlp.proj.writes] += planned_ffn(mlp, x, plan.activation, plan.tiled)
    return planned_linear(plan.unembed, x, plan.tiled).reshape(batch, n, -1), x


def hparams(model: ModelLike) -> dict:
    """The non-array arguments of `gpt`, from meta."""
    return {
        "n_heads": [layer["n_head"] for layer in model.meta["layers"]],
        "causal": model.meta["causal"],
        "act": ACTIVATION_FUNCTIONS[model.meta["activation"]],
    }


def _check_ids(model: ModelLike, ids: np.ndarray) -> None:
    if ids.ndim != 2 or not np.issubdtype(ids.dtype, np.integer):
        raise InputError(f"ids must be a [batch, n] integer array, got {ids.dtype} {list(ids.shape)}")
    if not 1 <= ids.shape[1] <= model.n_ctx:
        raise InputError(f"ids must hold 1 to {model.n_ctx} positions (the model's n_ctx), got {ids.shape[1]}")
    if ids.size and not (0 <= ids.min() and ids.max() < len(model.meta["vocab"])):
        raise InputError(f"ids must lie in 0..{len(model.meta['vocab']) - 1}")
    needed = _score_bytes(model, ids.shape[1])
    if needed > MAX_SCORE_BYTES:
        raise InputError(f"an input of {ids.shape[1]} positions needs {needed / 1e9:.1f} GB for its attention "
                         f"scores, more than this forward pass takes ({MAX_SCORE_BYTES / 1e9:.1f} GB)")


def _score_bytes(model: ModelLike, n_ctx: int) -> int:
    """The memory one sequence of n_ctx positions takes in `attention`: the scores of the widest
    layer, and the softmax's copies of them."""
    heads = max((layer["n_head"] for layer in model.meta["layers"]), default=0)
    return SCORE_COPIES * max(heads, 1) * n_ctx * n_ctx * model.dtype.itemsize


def _check_finite(*arrays) -> None:
    """`WeightsError` unless every array is finite. (`np.asarray`: an instrumented ndarray
    subclass, as tests/instrumented_forward.py uses, does not count the check as model FLOPs.)"""
    if not all(np.isfinite(np.max(array, initial=0)) and np.isfinite(np.min(array, initial=0))
               for array in map(np.asarray, arrays)):  # a NaN is both max and min
        raise WeightsError("the model's activations overflow (inf/NaN) on this input")


def logits(model: ModelLike, ids: np.ndarray) -> np.ndarray:  # [batch, n] -> [batch, n, n_out]
    """The logits at every position; `ids` include BOS when the model has one (see `encode`).

    Runs `planned_gpt` (the pass on the nonzero part of each weight, forward_plan.py) over chunks
    of the batch. `WeightsError` when the logits or the final residual stream are not finite (the
    weights overflow the dtype): the stream only accumulates, so an inf/NaN anywhere in it is
    still there at the end, even in a column no logit reads, while an overflow that never reaches
    it (a -inf pre-activation relu zeroes) is harmless."""
    ids = np.asarray(ids)
    _check_ids(model, ids)
    cut, rows = cached_plan(model), _rows_per_chunk(model, ids.shape[1])
    with np.errstate(all="ignore"):
        if len(ids) <= rows:
            out, residual = planned_gpt(cut, ids)
            _check_finite(out, residual)
            return out
        out = np.empty((len(ids), ids.shape[1], model.n_out), model.dtype)
        for start in range(0, len(ids), rows):  # rows are independent: the chunks' logits are the batch's
            out[start:start + rows], residual = planned_gpt(cut, ids[start:start + rows])
            _check_finite(residual)
    _check_finite(out)
    return out


def trace(model: ModelLike, ids: np.ndarray) -> list[dict]:
    """Per block: "after_attn" and "after_mlp" [batch, n, d_model] (the residual stream after each
    sub-layer; equal when the sub-layer is absent) and "attn_patterns" [batch, head, n, n] (empty
    along `head` when the block has no attention). `WeightsError` when the embedding or any of
    these is not finite."""
    ids = np.asarray(ids)
    _check_ids(model, ids)
    settings = hparams(model)
    with np.errstate(all="ignore"):
        x = embedding = model.params["wte"][ids] + model.params["wpe"][: ids.shape[1]]  # [batch, n, d_model]
        mask = causal_mask(ids.shape[1], x.dtype) if settings["causal"] else None
        steps = []
        for block, n_head in zip(model.blocks(), settings["n_heads"]):
            kwargs = {"n_head": n_head, "causal": settings["causal"], "act": settings["act"]}
            if "attn" in block:
                q, k, _ = qkv_heads(x, block["attn"]["c_attn"], n_head)
                patterns = attention_pattern(q, k, mask)
            else:
                patterns = np.zeros((ids.shape[0], 0, ids.shape[1], ids.shape[1]), x.dtype)
            after_attn = transformer_block(x, attn=block.get("attn"), **kwargs)
            x = transformer_block(after_attn, mlp=block.get("mlp"), **kwargs)
            steps.append({"after_attn": after_attn, "after_mlp": x, "attn_patterns": patterns})
    _check_finite(embedding, *(array for step in steps for array in step.values()))
    return steps


def input_vocab(model: ModelLike) -> list[Value]:
    """The tokens an input may hold: the vocab without the BOS marker."""
    return [token for i, token in enumerate(model.meta["vocab"]) if i != model.meta["bos_id"]]


def encode(model: ModelLike, tokens: list[Value]) -> list[int]:
    """Token values to ids, BOS first when the model has one. Tokens match the vocab by value."""
    return encode_batch(model, [tokens])[0].tolist()


def encode_batch(model: ModelLike, inputs: list[list[Value]]) -> np.ndarray:  # n tokens each -> [batch, (1 +) n]
    """`encode` of inputs of one length, as one id array: each distinct token (by type and value)
    is matched to the vocab once, not once per position (a large --accuracy encodes millions)."""
    id_of = {token_key(token): i for i, token in enumerate(model.meta["vocab"])
             if i != model.meta["bos_id"]}
    matched: dict[tuple, int] = {}  # (type, token) -> id, for the tokens met so far

    def id_for(token: Value) -> int:
        try:
            return matched[type(token), token]
        except (KeyError, TypeError):  # not met yet, or unhashable (then never a vocab token)
            key = token_key(token)
            if key not in id_of:
                raise InputError(f"token {token!r} is not in the vocab {input_vocab(model)!r}") from None
            matched[type(token), token] = id_of[key]
            return id_of[key]

    bos = [] if model.meta["bos_id"] is None else [model.meta["bos_id"]]
    return np.array([bos + [id_for(token) for token in tokens] for tokens in inputs], dtype=np.int64)


def _token_logits(model: ModelLike, inputs: list[list[Value]]) -> np.ndarray:  # -> [batch, n, n_out]
    """The logits at every token (not BOS) of inputs that all have the same length n.

    A causal model reads an input longer than max_len through a sliding window: its output at
    position i depends on tokens up to i only, so it is the last output of the window of the
    max_len tokens ending at i (what `complete` feeds it too)."""
    n, max_len = len(inputs[0]), model.meta["max_len"]
    if n == 0:
        return np.zeros((len(inputs), 0, model.n_out), model.dtype)
    if n <= max_len:
        ids = encode_batch(model, inputs)
        return logits(model, ids)[:, ids.shape[1] - n:]
    if not model.meta["causal"]:
        raise InputError(f"input of {n} tokens is longer than max_len {max_len}")
    first = _token_logits(model, [tokens[:max_len] for tokens in inputs])  # [batch, max_len, n_out]
    windows = [tokens[end - max_len:end] for tokens in inputs for end in range(max_len + 1, n + 1)]
    later = _token_logits(model, windows)[:, -1].reshape(len(inputs), n - max_len, -1)
    return np.concatenate([first, later], axis=1)


def _rows_per_chunk(model: ModelLike, n_ctx: int) -> int:
    """How many sequences of n_ctx positions `logits` runs at once: their widest activation within
    CHUNK_BYTES, or MIN_ROWS; never more than MAX_SCORE_BYTES of scores, and at least one."""
    widths = [model.d_model, model.n_out] + [max(3 * layer["n_head"] * layer["d_head"], layer["d_mlp"],
                                                 layer["n_head"] * n_ctx) for layer in model.meta["layers"]]
    cached = max(MIN_ROWS, CHUNK_BYTES // (n_ctx * max(widths) * model.dtype.itemsize))
    return max(1, min(cached, MAX_SCORE_BYTES // _score_bytes(model, n_ctx)))


def decode(model: ModelLike, token_logits: np.ndarray) -> list[list[Value]]:  # [batch, n, n_out] -> n values each
    """Per input, the prediction at each position: the argmax column's `meta.output.values` entry
    (None for null; the first column on a tie) for a categorical output, the logit itself for a
    numerical one. One NumPy lookup for the whole batch (--accuracy decodes millions)."""
    output = model.meta["output"]
    if output["encoding"] == "numerical":
        return token_logits[..., 0].tolist()
    values = np.empty(len(output["values"]), dtype=object)  # filled one by one: a tuple stays one value
    for column, value in enumerate(output["values"]):
        values[column] = value
    return values[np.argmax(token_logits, axis=-1)].tolist()


def predict(model: ModelLike, inputs: list[list[Value]]) -> list[list[Value]]:
    """Per input, the model's output at each token: the argmax column's `meta.output.values` entry
    (None for null) for a categorical output, the logit itself for a numerical one. Inputs of the
    same length run as one batch."""
    outputs: list[list[Value]] = [[] for _ in inputs]
    by_length: dict[int, list[int]] = defaultdict(list)
    for i, tokens in enumerate(inputs):
        by_length[len(tokens)].append(i)
    for members in by_length.values():
        batch_outputs = decode(model, _token_logits(model, [list(inputs[i]) for i in members]))
        for i, output in zip(members, batch_outputs):
            outputs[i] = output
    return outputs


def can_complete(model: ModelLike) -> bool:
    """Whether the model continues sequences: causal, with categorical outputs that are all
    tokens of its own vocab (docs/cli.md, rasp-run)."""
    output = model.meta["output"]
    vocab = {token_key(token) for token in input_vocab(model)}
    return (model.meta["causal"] and output["encoding"] == "categorical"
            and all(value is not None and token_key(value) in vocab for value in output["values"]))


def complete(model: ModelLike, tokens: list[Value], steps: int = 10) -> list[Value]:
    """The continuation of `tokens` by `steps` predicted tokens, each predicted from the last
    position of at most the last max_len tokens."""
    if not can_complete(model):
        raise InputError("this model does not complete sequences "
                         "(not causal, or its outputs are not tokens of its vocab)")
    if not tokens:
        raise InputError("nothing to complete: the input is empty")
    sequence = list(tokens)
    for _ in range(steps):
        window = sequence[-model.meta["max_len"]:]
        sequence.append(predict(model, [window])[0][-1])
    return sequence[len(tokens):]
