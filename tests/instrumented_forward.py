"""An instrumented run of `rasp_compile.runtime.forward`: the model's arrays are viewed as a counting ndarray
subclass, so every NumPy operation the real forward pass performs on them is tallied under the
conventions of `rasp_compile.tools.flops.CONVENTIONS`:

    matmul                          2 · (output elements) · (inner dimension)
    other ufunc calls               1 per output element (add, multiply, divide, exp, tanh, ...)
    reductions (max, sum)           1 per input element
    indexing, slicing, reshapes     free (not ufuncs)

Run on one sequence (batch 1), the tally is the FLOPs of that forward pass, to be compared with
the closed formula of `count_flops`.
"""

from __future__ import annotations

import numpy as np

from rasp_compile.runtime import execute, forward
from rasp_compile.runtime.model import Model


def counting_array_type(tally: list[int]) -> type:
    """An ndarray subclass whose ufunc calls append their FLOPs to `tally`."""

    class Counted(np.ndarray):
        def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
            plain = [x.view(np.ndarray) if isinstance(x, Counted) else x for x in inputs]
            if kwargs.get("out") is not None:
                kwargs["out"] = tuple(x.view(np.ndarray) for x in kwargs["out"])
            result = getattr(ufunc, method)(*plain, **kwargs)
            if ufunc is np.matmul:
                tally.append(2 * result.size * plain[0].shape[-1])
            elif method == "reduce":
                tally.append(np.size(plain[0]))
            elif method == "__call__":
                tally.append(np.size(result))
            else:
                raise NotImplementedError(f"uncounted ufunc method {ufunc.__name__}.{method}")
            return result.view(Counted) if isinstance(result, np.ndarray) else result

    return Counted


def _counted(model: Model, array_type: type) -> Model:
    return Model(model.meta, {key: array.view(array_type) for key, array in model.params.items()})


def _output_softmax(model: Model, logits):  # [batch, n, n_out] -> same; categorical outputs only
    return forward.softmax(logits) if model.meta["output"]["encoding"] == "categorical" else logits


def count_whole_sequence(model: Model, ids: np.ndarray) -> int:  # ids [1, n]
    """FLOPs performed by `forward.gpt` (plus the output softmax) over every position: the pass
    as docs/format.md writes it, every weight used. (`execute.logits` runs the same pass on the
    nonzero part of each weight, forward_plan.py, and so does less on most models.)"""
    tally: list[int] = []
    counted = _counted(model, counting_array_type(tally))
    with np.errstate(all="ignore"):
        out = forward.gpt(np.asarray(ids), **counted.nested(), **forward.hparams(model))
    _output_softmax(model, out)
    return sum(tally)


def count_last_position(model: Model, ids: np.ndarray) -> tuple[int, np.ndarray]:  # ids [1, n]
    """FLOPs of the last position alone, as a KV-cached decoder step computes it with the forward
    pass's own functions: the keys and values of earlier positions come from an uncounted run.
    Returns the count and the step's logits [1, 1, n_out] (to check the step is right)."""
    tally: list[int] = []
    counted = _counted(model, counting_array_type(tally))
    n = ids.shape[1]
    wte, wpe = model.params["wte"], model.params["wpe"]
    block_inputs = [wte[ids] + wpe[:n]] + [step["after_mlp"] for step in execute.trace(model, ids)]
    x = counted.params["wte"][ids[:, -1:]] + counted.params["wpe"][n - 1:n]  # [1, 1, d_model]
    hparams = zip(model.blocks(), counted.blocks(), model.meta["layers"], block_inputs)
    for plain_block, block, layer, block_input in hparams:
        if "attn" in block:
            cache = forward.linear(block_input[:, :-1], **plain_block["attn"]["c_attn"])  # uncounted
            row = forward.linear(x, **block["attn"]["c_attn"])  # [1, 1, 3·H·D]
            qkv = np.concatenate([cache, row.view(np.ndarray)], axis=1).view(type(row))
            q, k, v = (forward.split_heads(part, layer["n_head"]) for part in np.split(qkv, 3, axis=-1))
            mask = forward.causal_mask(n, x.dtype)[-1:] if model.meta["causal"] else None
            heads = forward.attention(q[:, :, -1:], k, v, mask)  # [1, head, 1, D]
            x = x + forward.linear(forward.merge_heads(heads), **block["attn"]["c_proj"])
        if "mlp" in block:
            act = forward.ACTIVATION_FUNCTIONS[model.meta["activation"]]
            x = x + forward.ffn(x, **block["mlp"], act=act)
    logits = forward.linear(x, counted.params["unembed"], counted.params.get("unembed_b"))
    _output_softmax(model, logits)
    return sum(tally), logits.view(np.ndarray)
