"""assemble: heads and MLP slices -> the arrays and `meta` of docs/format.md.

Heads of one block share d_head (the widest q/k or v among them; narrower heads are padded
with zero columns) and are laid side by side in c_attn as [q heads | k heads | v heads]. The
1/sqrt(d_head) of the forward pass is undone by scaling q by sqrt(d_head).

BOS. Every head makes the BOS query read only BOS (primitives/qk.py), so BOS's residual is the same for
every input and we track it here, block by block, as `x_bos`. A head states what its q, k and v
must be at BOS; we add to the `bos` row of each projection the difference between that and
what the rest of the weights give at x_bos. The `bos` dimension is 1 at BOS and 0 elsewhere,
so this changes nothing at any other position. QED.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import numpy as np
from numpy.typing import DTypeLike

from ..runtime.model import FORMAT, Model
from .folds import Folds, linear_folds
from .layout import BOS, Layout
from .ops import Attend, Embed, GatedMap, Graph, HeadKind, NumericMLP, Op, Readout, TableMLP
from .primitives.categorical_attn import categorical_head
from .primitives.embed import embeddings
from .primitives.gated_map import gated_map_mlp
from .primitives.numeric_mlp import interpolation_mlp, step_mlp
from .primitives.numerical_attn import numerical_head
from .primitives.pieces import MLP, Head, stack_mlps
from .primitives.selector_width import width_head
from .primitives.table_mlp import table_mlp
from .schedule import Block

BOS_TOKEN = "BOS"


def build_head(op: Attend, layout: Layout, max_len: int) -> Head:
    builders = {HeadKind.CATEGORICAL: categorical_head, HeadKind.NUMERICAL: numerical_head, HeadKind.WIDTH: width_head}
    return builders[op.kind](op, layout, max_len)


def build_mlp(op: Op, layout: Layout) -> MLP:
    if isinstance(op, TableMLP):
        return table_mlp(op, layout)
    if isinstance(op, NumericMLP):
        return interpolation_mlp(op, layout) if op.interpolated else step_mlp(op, layout)
    if isinstance(op, GatedMap):
        return gated_map_mlp(op, layout)
    raise TypeError(f"no MLP rule for {type(op).__name__}")


def _compensate(w: np.ndarray, b: np.ndarray, x_bos: np.ndarray, wanted: np.ndarray, bos_row: int) -> None:
    """Make x_bos @ w + b == wanted by adjusting w's bos row (in place)."""
    w[bos_row] += wanted - (x_bos @ w + b)


def _attention_arrays(heads: list[Head], layout: Layout, x_bos: np.ndarray) -> tuple[dict[str, Any], np.ndarray]:
    """c_attn / c_proj arrays for the heads, and what the block's attention adds at BOS."""
    d_head = max(max(h.d_qk, h.d_v) for h in heads)
    scale = np.sqrt(d_head)
    n = len(heads)
    w_attn = np.zeros((layout.d_model, 3 * n * d_head))
    b_attn = np.zeros(3 * n * d_head)
    w_proj = np.zeros((n * d_head, layout.d_model))
    bos_out = np.zeros(layout.d_model)
    bos_row = layout[BOS]
    for i, head in enumerate(heads):
        parts = [
            (head.w_q * scale, head.b_q * scale, head.q_bos * scale),
            (head.w_k, head.b_k, head.k_bos),
            (head.w_v, head.b_v, head.v_bos),
        ]
        for j, (w, b, wanted) in enumerate(parts):
            w = w.copy()
            _compensate(w, b, x_bos, wanted, bos_row)
            start = j * n * d_head + i * d_head
            w_attn[:, start : start + w.shape[1]] = w
            b_attn[start : start + w.shape[1]] = b
        w_proj[i * d_head : i * d_head + head.d_v] = head.w_o
        bos_out += head.v_bos @ head.w_o  # BOS reads only itself: its output is its value
    arrays = {"c_attn.w": w_attn, "c_attn.b": b_attn, "c_proj.w": w_proj, "c_proj.b": np.zeros(layout.d_model)}
    return {"n_head": n, "d_head": d_head, "arrays": arrays}, bos_out


def assemble(graph: Graph, embeds: list[Embed], blocks: list[Block], layout: Layout) -> Model:
    """The model of docs/format.md, its arrays in float64 (cast_to casts them; passes/prune.py
    may drop dimensions first)."""
    program = graph.program
    folds = linear_folds(graph, layout)
    wte, wpe = (folds.spread(m) for m in embeddings(embeds, layout, program.vocab, program.max_len))
    wpe = wpe + folds.constant
    params: dict[str, np.ndarray] = {"wte": wte, "wpe": wpe}
    x_bos = wte[len(program.vocab)] + wpe[0]
    layers = []
    for i, block in enumerate(blocks):
        layer, arrays, x_bos = _block(block, layout, folds, x_bos, program.max_len)
        layers.append(layer)
        params.update({f"blocks.{i}.{key}": array for key, array in arrays.items()})
    unembed, unembed_b, output_values = _readout(graph.readout, layout)
    params["unembed"] = unembed
    if unembed_b is not None:
        params["unembed_b"] = unembed_b
    return Model(_meta(graph, layers, output_values, layout), params)


def _block(block: Block, layout: Layout, folds: Folds, x_bos: np.ndarray,
           max_len: int) -> tuple[dict[str, int], dict[str, np.ndarray], np.ndarray]:
    """meta.layers' entry for one block, its arrays (keys after `blocks.i.`), and the BOS residual
    after it, given `x_bos` before it."""
    layer = {"n_head": 0, "d_head": 0, "d_mlp": 0}
    arrays: dict[str, np.ndarray] = {}
    if block.heads:
        heads = [build_head(op, layout, max_len) for op in block.heads]
        heads = [replace(head, w_o=folds.spread(head.w_o)) for head in heads]
        attention, bos_out = _attention_arrays(heads, layout, x_bos)
        layer.update(n_head=attention["n_head"], d_head=attention["d_head"])
        arrays.update({f"attn.{k}": v for k, v in attention["arrays"].items()})
        x_bos = x_bos + bos_out
    mlp = stack_mlps([build_mlp(op, layout) for op in block.mlps], layout.d_model)
    mlp = replace(mlp, w_out=folds.spread(mlp.w_out), b_out=folds.spread(mlp.b_out))
    if mlp.b_in.shape[0] or mlp.b_out.any():
        mlp = _at_least_one_unit(mlp)
        layer["d_mlp"] = mlp.b_in.shape[0]
        arrays.update({"mlp.c_fc.w": mlp.w_in, "mlp.c_fc.b": mlp.b_in,
                       "mlp.c_proj.w": mlp.w_out, "mlp.c_proj.b": mlp.b_out})
        x_bos = x_bos + np.maximum(x_bos @ mlp.w_in + mlp.b_in, 0) @ mlp.w_out + mlp.b_out
    return layer, arrays, x_bos


def _meta(graph: Graph, layers: list[dict[str, int]], output_values: list[object] | None,
          layout: Layout) -> dict[str, object]:
    """The JSON header of docs/format.md (the driver adds the inspection fields)."""
    program = graph.program
    return {
        "format": FORMAT,
        "vocab": [_json_value(v) for v in program.vocab] + [_bos_marker(program.vocab)],
        "bos_id": len(program.vocab),
        "max_len": program.max_len,
        "causal": program.causal,
        "activation": "relu",
        "layers": layers,
        "output": {"name": program.output_name, "encoding": graph.output.encoding, "values": output_values},
        "source": program.source or "",
        "residual": list(layout.labels),
    }


def cast_to(model: Model, dtype: DTypeLike) -> Model:
    """`model` with every array in `dtype`, contiguous."""
    return Model(model.meta, {k: np.ascontiguousarray(v, dtype=dtype) for k, v in model.params.items()})


def _at_least_one_unit(mlp: MLP) -> MLP:
    """docs/format.md has no MLP of width 0; one whose only effect is its output bias (a constant map)
    gets one idle hidden unit, relu(0) = 0."""
    if mlp.b_in.shape[0]:
        return mlp
    d_model = mlp.w_in.shape[0]
    return MLP(w_in=np.zeros((d_model, 1)), b_in=np.zeros(1), w_out=np.zeros((1, d_model)), b_out=mlp.b_out)


def _readout(readout: Readout, layout: Layout) -> tuple[np.ndarray, np.ndarray | None, list[object] | None]:
    """unembed [d_model, n_out], unembed_b or None, and what each column means."""
    rows = [dim for var in readout.inputs for dim in layout.dims(var)]
    unembed = np.zeros((layout.d_model, readout.weights.shape[1]))
    unembed[rows] = readout.weights
    unembed_b = readout.bias if readout.bias.any() else None
    values = None if readout.classes is None else [_json_value(v) for v in readout.classes]
    return unembed, unembed_b, values


def _json_value(value: object) -> object:
    """A value as JSON holds it (numpy scalars and the like become plain Python)."""
    return json.loads(json.dumps(value))


def _bos_marker(vocab: tuple[object, ...]) -> str:
    marker = BOS_TOKEN
    while marker in vocab:
        marker = f"<{marker}>"
    return marker
