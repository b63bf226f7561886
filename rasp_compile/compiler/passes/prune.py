"""prune: residual dimensions that no weight reads are dropped from the assembled model.

A variable only a folded Linear op needed, tokens once every map of them is folded into the
embedding, a head's inputs once head-features writes its features: written or not, a dimension
no attention, MLP or read-out weight reads cannot change any output, so its row of every reading
matrix and its column of every writing matrix go, and `meta.residual` loses its label.

Needs: the assembled arrays, before they are cast to the model's dtype (a weight below float32's
range still counts as a read). Runs last. Guarantees: the same outputs on every input.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ...runtime.model import Model

READERS = ("attn.c_attn.w", "mlp.c_fc.w")


def prune(model: Model) -> Model:
    """`model` without the residual dimensions no weight reads."""
    params, labels = model.params, model.meta["residual"]
    readers = [w for key, w in params.items() if key.endswith(READERS)] + [params["unembed"]]
    read = np.any(np.stack([np.any(w != 0, axis=1) for w in readers]), axis=0)
    keep = np.flatnonzero(read)
    pruned = {}
    for key, array in params.items():
        if key in ("wte", "wpe") or key.endswith(("c_proj.w", "c_proj.b")):
            pruned[key] = array[..., keep]
        elif key.endswith(READERS) or key == "unembed":
            pruned[key] = array[keep]
        else:
            pruned[key] = array
    return dataclasses.replace(model, meta={**model.meta, "residual": [labels[i] for i in keep]}, params=pruned)
