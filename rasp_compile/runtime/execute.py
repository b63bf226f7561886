"""Running the forward pass on id arrays: `logits` (ids in, logits out) and `trace` (every residual
stream and attention pattern, for reports), each checking its input and what it returns.

Speed without changing the computation: `logits` runs `planned_gpt`, the same pass as forward.py's
`gpt` on the part of each weight that is not zero (forward_plan.py: a layer reads and writes only
the residual columns its weights touch, a head only the dimensions it uses), over a large batch in
chunks that stay in the CPU's cache (`CHUNK_BYTES`); each linear layer is one matmul over all rows
of a chunk, and the attention scores are stored keys first, so that the softmax reduces over whole
contiguous slices (forward.attention_pattern); a few columns of the stream are read and updated
one column at a time (`COLUMN_BY_COLUMN`). Every number is the sum of the same nonzero terms as
in docs/format.md, in another memory order; results agree with `gpt` and with a plain
transcription of the page to float rounding (tests/test_forward_plan.py, tests/test_spec_forward.py).

`logits` and `trace` run under `np.errstate(all="ignore")` and then check what they return: weights
that are finite but huge (1e30 in float32) overflow to inf/NaN, and that is a `WeightsError`
(one line, no NumPy warnings), never garbage predictions.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError, WeightsError
from .forward import attention_pattern, causal_mask, gelu, hparams, merge_heads, qkv_heads, split_heads, transformer_block
from .forward_plan import AttentionPlan, Dense, MlpPlan, Plan, Tiled, cached_plan
from .model_like import ModelLike

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



COLUMN_BY_COLUMN = 8
"""Up to this many columns of the residual stream, narrower than a row, are read or updated one
column at a time (`add_columns`, a gather layer of `planned_linear`): NumPy runs an operation on a
few columns of a wider row one row at a time (an inner loop of a few elements per row, about 7 ns
each), and on one column as a single strided loop over every row; 3 to 4 times faster at 2 to 5
columns of 16. Each element is the same operation on the same numbers either way."""


# The same pass as forward.gpt on a model cut to its nonzero weights (forward_plan.py): what `logits` runs.

def planned_linear(layer: Dense, x: np.ndarray, tiled: Tiled, out: np.ndarray | None = None) -> np.ndarray:
    # [rows, d_in] -> [rows, width of layer.writes], into `out` when given
    if layer.picks is not None and len(layer.picks) <= COLUMN_BY_COLUMN:  # each output one input times its weight
        product = np.empty((len(x), len(layer.picks)), x.dtype) if out is None else out
        for j, (column, weight) in enumerate(zip(layer.picks, layer.w[0])):  # see COLUMN_BY_COLUMN
            np.multiply(x[:, column], weight, out=product[:, j])
    elif layer.picks is not None:
        product = np.take(x, layer.picks, axis=1, out=out)
        product *= tiled.rows(id(layer.w), layer.w[0], len(product))
    else:  # np.take: a copy of the columns read, faster than x[:, index]
        read = x[:, layer.reads] if isinstance(layer.reads, slice) else np.take(x, layer.reads, axis=1)
        product = np.matmul(read, layer.w, out=out)
    return tiled.bias(layer, product)


def planned_mha(attn: AttentionPlan, x: np.ndarray, batch: int, mask: np.ndarray | None,
                tiled: Tiled) -> np.ndarray:  # [batch·n, d_model] -> [batch·n, ..]
    qkv = planned_linear(attn.qkv, x, tiled).reshape(batch, -1, attn.qkv.w.shape[1])  # [batch, n, ..]
    width = attn.n_head * attn.d_qk
    q, k, v = (split_heads(qkv[..., start:stop], attn.n_head)
               for start, stop in ((0, width), (width, 2 * width), (2 * width, None)))
    heads = attention_pattern(q, k, mask, attn.scale) @ v  # [batch, head, n, d_v]
    return planned_linear(attn.proj, merge_heads(heads).reshape(len(x), -1), tiled)


def planned_ffn(mlp: MlpPlan, x: np.ndarray, activation: str, tiled: Tiled) -> np.ndarray:
    # [batch·n, d_model] -> [batch·n, ..]
    hidden = planned_linear(mlp.fc, x, tiled)
    hidden = np.maximum(hidden, tiled.zeros(hidden), out=hidden) if activation == "relu" else gelu(hidden)
    return planned_linear(mlp.proj, hidden, tiled)


def planned_embedding(plan: Plan, ids: np.ndarray) -> np.ndarray:  # [batch, n] -> [batch·n, d_model]
    batch, n = ids.shape
    if plan.embed is not None:  # wte[t] + wpe[p], added beforehand: one gather
        return np.take(plan.embed, (ids + np.arange(n) * len(plan.wte)).ravel(), axis=0)
    x = np.take(plan.wte, ids, axis=0)  # [batch, n, d_model]; wte[ids], 3x faster
    if plan.wpe is not None:
        x += plan.wpe[:n]
    return x.reshape(batch * n, -1)


def add_columns(x: np.ndarray, columns: slice | np.ndarray, update: np.ndarray) -> None:
    # x [rows, d_model] += update [rows, width] at `columns`, in place; column by column when few (COLUMN_BY_COLUMN)
    indices = range(x.shape[1])[columns] if isinstance(columns, slice) else columns
    if len(indices) > COLUMN_BY_COLUMN or len(indices) == x.shape[1]:
        x[:, columns] += update
        return
    for j, column in enumerate(indices):
        np.add(x[:, column], update[:, j], out=x[:, column])


def planned_gpt(plan: Plan, ids: np.ndarray, out: np.ndarray) -> np.ndarray:
    # [batch, n] -> the logits written to out [batch, n, n_out]; returns the final residual [batch·n, d_model]
    batch, n = ids.shape
    x = planned_embedding(plan, ids)
    mask = causal_mask(n, x.dtype) if plan.causal else None
    for attn, mlp in plan.blocks:
        if attn is not None:
            add_columns(x, attn.proj.writes, planned_mha(attn, x, batch, mask, plan.tiled))
        if mlp is not None:
            add_columns(x, mlp.proj.writes, planned_ffn(mlp, x, plan.activation, plan.tiled))
    planned_linear(plan.unembed, x, plan.tiled, out.reshape(batch * n, -1))
    return x



def _check_ids(model: ModelLike, ids: np.ndarray) -> None:
    if ids.ndim != 2 or not np.issubdtype(ids.dtype, np.integer):
        raise InputError(f"ids must be a [batch, n] integer array, got {ids.dtype} {list(ids.shape)}")
    if not 1 <= ids.shape[1] <= model.n_ctx:
        raise InputError(f"ids must hold 1 to {model.n_ctx} positions (the model's n_ctx), got {ids.shape[1]}")
    if ids.size and not (ids.min() >= 0 and ids.max() < len(model.meta["vocab"])):
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


def _check_finite(*arrays: np.ndarray) -> None:
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
    out = np.empty((len(ids), ids.shape[1], model.n_out), model.dtype)
    with np.errstate(all="ignore"):
        for start in range(0, len(ids), rows):  # rows are independent: the chunks' logits are the batch's
            chunk = out[start:start + rows]
            _check_finite(planned_gpt(cut, ids[start:start + rows], chunk), chunk)  # the logits while in cache
    return out


def trace(model: ModelLike, ids: np.ndarray) -> list[dict[str, np.ndarray]]:
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



def _rows_per_chunk(model: ModelLike, n_ctx: int) -> int:
    """How many sequences of n_ctx positions `logits` runs at once: their widest activation within
    CHUNK_BYTES, or MIN_ROWS; never more than MAX_SCORE_BYTES of scores, and at least one."""
    widths = [model.d_model, model.n_out] + [max(3 * layer["n_head"] * layer["d_head"], layer["d_mlp"],
                                                 layer["n_head"] * n_ctx) for layer in model.meta["layers"]]
    cached = max(MIN_ROWS, CHUNK_BYTES // (n_ctx * max(widths) * model.dtype.itemsize))
    return max(1, min(cached, MAX_SCORE_BYTES // _score_bytes(model, n_ctx)))

