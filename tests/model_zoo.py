"""Models for the forward, weights-file and FLOP tests: random weights of valid docs/format.md shapes, and
the hand-weighted (aab)* model of examples/handmade_aab.py."""

from __future__ import annotations

import importlib.util
import itertools
from pathlib import Path

import numpy as np

from rasp_compile.runtime.model import FORMAT, Model, validate

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

# (n_head, d_head, d_mlp) per block: two heads with an MLP, an MLP alone, one head alone.
MIXED_LAYERS = ((2, 3, 5), (0, 0, 4), (1, 4, 0))


def handmade_module():
    """examples/handmade_aab.py, imported from its path (examples/ is not a package)."""
    spec = importlib.util.spec_from_file_location("handmade_aab", EXAMPLES / "handmade_aab.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def random_model(seed: int = 0, *, bos: bool = True, causal: bool = True, activation: str = "relu",
                 layers=MIXED_LAYERS, n_tokens: int = 3, max_len: int = 5, d_model: int = 6,
                 numerical: bool = False, unembed_b: bool = True, dtype=np.float64) -> Model:
    """A valid model with standard-normal weights. Tokens are "t0".."t{n-1}", then "BOS"."""
    rng = np.random.default_rng(seed)
    vocab = [f"t{i}" for i in range(n_tokens)] + (["BOS"] if bos else [])
    values = None if numerical else [f"t{i}" for i in range(n_tokens - 1)] + [None]
    n_out = 1 if values is None else len(values)
    shapes: dict[str, tuple[int, ...]] = {"wte": (len(vocab), d_model), "wpe": (max_len + bos, d_model), "unembed": (d_model, n_out)}
    if unembed_b:
        shapes["unembed_b"] = (n_out,)
    for i, (n_head, d_head, d_mlp) in enumerate(layers):
        if n_head:
            width = n_head * d_head
            shapes |= {f"blocks.{i}.attn.c_attn.w": (d_model, 3 * width),
                       f"blocks.{i}.attn.c_attn.b": (3 * width,),
                       f"blocks.{i}.attn.c_proj.w": (width, d_model),
                       f"blocks.{i}.attn.c_proj.b": (d_model,)}
        if d_mlp:
            shapes |= {f"blocks.{i}.mlp.c_fc.w": (d_model, d_mlp), f"blocks.{i}.mlp.c_fc.b": (d_mlp,),
                       f"blocks.{i}.mlp.c_proj.w": (d_mlp, d_model),
                       f"blocks.{i}.mlp.c_proj.b": (d_model,)}
    meta = {
        "format": FORMAT, "vocab": vocab, "bos_id": n_tokens if bos else None, "max_len": max_len,
        "causal": causal, "activation": activation,
        "layers": [{"n_head": h, "d_head": d, "d_mlp": m} for h, d, m in layers],
        "output": ({"name": "out", "encoding": "numerical"} if numerical
                   else {"name": "out", "encoding": "categorical", "values": values}),
        "source": "# random weights",
    }
    model = Model(meta, {key: rng.standard_normal(shape).astype(dtype) for key, shape in shapes.items()})
    validate(model)
    return model


def model_variants() -> list[tuple[str, dict]]:
    """(id, random_model kwargs) over BOS or not, causal or not, relu or gelu, and numerical output
    with no read-out bias."""
    variants = [(f"{'bos' if bos else 'nobos'}-{'causal' if causal else 'full'}-{act}",
                 {"bos": bos, "causal": causal, "activation": act})
                for bos, causal, act in itertools.product((True, False), (True, False), ("relu", "gelu"))]
    variants.append(("numerical-nobias", {"numerical": True, "unembed_b": False, "causal": False}))
    variants.append(("no-blocks", {"layers": ()}))
    return variants


def random_token_ids(model: Model, n_tokens: int, batch: int, seed: int = 0) -> np.ndarray:  # -> [batch, n]
    """Random ids of input tokens, BOS first when the model has one."""
    rng = np.random.default_rng(seed)
    bos_id = model.meta["bos_id"]
    choices = [i for i in range(len(model.meta["vocab"])) if i != bos_id]
    ids = rng.choice(choices, size=(batch, n_tokens))
    if bos_id is None:
        return ids
    return np.concatenate([np.full((batch, 1), bos_id), ids], axis=1)
