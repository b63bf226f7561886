"""A second forward pass, written from docs/format.md alone (one sequence, loops over heads, float64, no
code shared with rasp_compile), against `rasp_compile.runtime.forward` on every model we have.

To check more models (compiled programs, say), add them to `spec_models()`.
"""

from __future__ import annotations

import numpy as np
import pytest

from model_zoo import handmade_module, model_variants, random_model, random_token_ids
from rasp_compile.runtime import execute
from rasp_compile.runtime.weights_file import load, save


def spec_forward(meta: dict, arrays: dict, ids: list[int]) -> np.ndarray:  # ids (BOS included) -> [n, n_out]
    """docs/format.md, line by line."""
    p = {key: np.asarray(value, dtype=np.float64) for key, value in arrays.items()}
    n = len(ids)
    x = p["wte"][ids] + p["wpe"][:n]
    for i, layer in enumerate(meta["layers"]):
        block = f"blocks.{i}."
        if block + "attn.c_attn.w" in p:
            q, k, v = np.split(x @ p[block + "attn.c_attn.w"] + p[block + "attn.c_attn.b"], 3, axis=1)
            d_head, heads = layer["d_head"], []
            mask = np.triu(np.full((n, n), -np.inf), 1) if meta["causal"] else np.zeros((n, n))
            for h in range(layer["n_head"]):
                cols = slice(h * d_head, (h + 1) * d_head)
                scores = q[:, cols] @ k[:, cols].T / np.sqrt(d_head) + mask
                weights = np.exp(scores - scores.max(axis=1, keepdims=True))
                heads.append(weights / weights.sum(axis=1, keepdims=True) @ v[:, cols])
            x = x + np.concatenate(heads, axis=1) @ p[block + "attn.c_proj.w"] + p[block + "attn.c_proj.b"]
        if block + "mlp.c_fc.w" in p:
            hidden = x @ p[block + "mlp.c_fc.w"] + p[block + "mlp.c_fc.b"]
            if meta["activation"] == "relu":
                hidden = np.maximum(hidden, 0)
            else:
                hidden = 0.5 * hidden * (1 + np.tanh(np.sqrt(2 / np.pi) * (hidden + 0.044715 * hidden**3)))
            x = x + hidden @ p[block + "mlp.c_proj.w"] + p[block + "mlp.c_proj.b"]
    return x @ p["unembed"] + p.get("unembed_b", 0)


def spec_models():
    yield "handmade", handmade_module().build()
    for seed, (name, kwargs) in enumerate(model_variants()):
        yield name, random_model(seed, **kwargs)
        yield name + "-float32", random_model(seed, dtype=np.float32, **kwargs)
    yield "wide-heads", random_model(9, layers=((3, 2, 7), (4, 1, 0), (0, 0, 3)), d_model=5)


FORMAT_MODELS = dict(spec_models())


@pytest.mark.parametrize("name", FORMAT_MODELS)
def test_forward_matches_the_spec(tmp_path, name):
    save(FORMAT_MODELS[name], tmp_path / "model.npz")
    model = load(tmp_path / "model.npz")
    for n_tokens in range(1, model.meta["max_len"] + 1):
        ids = random_token_ids(model, n_tokens, batch=3, seed=n_tokens)
        got = execute.logits(model, ids)
        assert got.dtype == model.dtype
        want = np.stack([spec_forward(model.meta, model.params, row.tolist()) for row in ids])
        scale = np.abs(want).max()  # tolerances relative to the logits' scale
        tolerance = (1e-5 if model.dtype == np.float32 else 1e-12) * scale
        np.testing.assert_allclose(got, want, rtol=0, atol=tolerance)
