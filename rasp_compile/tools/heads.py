"""The heads of a model: what each computes (from meta.heads, docs/inspect.md) and its weights.

`head_descriptions(meta)` reads meta.heads defensively (a weights file is outside input): a head
the file does not describe, or describes in a shape this version does not know, is "unknown".

`head_weights(model, layer, head)` slices one head out of c_attn / c_proj (c_attn is
[q heads | k heads | v heads], head h = columns h·D..(h+1)·D of each) and adds the forms a
reader wants, over the residual augmented by a constant direction `1` that carries the biases:

    QK [d_model + 1, d_model + 1] = [W_Q; b_q] @ [W_K; b_k]ᵀ / sqrt(d_head)
        so that x_aug[q] @ QK @ x_aug[k] is exactly the score the softmax sees for query q and
        key k (before the causal mask), x_aug = [x, 1]
    OV [d_model + 1, d_model]     = [W_V; b_v] @ W_O
        what a key's residual adds to the query's, per unit of attention (c_proj.b is the
        layer's, not the head's: it is left out)
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass

import numpy as np

from ..errors import NotInModel
from ..safe_text import shown
from .decode import residual_labels
from .labelled import LabelledArray
from .svg import nonzero_heatmap

CONSTANT_LABEL = "1"  # the constant direction that carries a bias in QK and OV
KINDS = {"categorical": "aggregate", "numerical": "numerical aggregate", "width": "selector_width"}


@dataclass(frozen=True)
class SelectDescription:
    keys: str
    queries: str
    predicate: str
    line: int | None = None
    col: int | None = None
    name: str | None = None

    def __str__(self) -> str:
        return f"select({self.keys}, {self.queries}, {self.predicate})"


@dataclass(frozen=True)
class HeadDescription:
    """What one head computes. `known` is False for a head the file does not describe; then
    every other field is empty."""

    layer: int
    head: int
    known: bool = False
    sop: str = ""  # the s-op it computes (the program's name for it)
    kind: str = ""  # "categorical", "numerical" (aggregates) or "width" (selector_width)
    select: str = ""  # the selector it scores, as the program writes it
    selects: tuple[SelectDescription, ...] = ()
    line: int | None = None
    col: int | None = None
    value: str | None = None  # the residual variable it averages (aggregates)
    writes: str = ""  # the residual variable it writes
    q_reads: tuple[str, ...] = ()
    k_reads: tuple[str, ...] = ()
    part: tuple[int, int] | None = None  # (k, n): the k-th of n heads one aggregate is split into

    @property
    def title(self) -> str:
        """`layer 0 head 1: repeated = numerical aggregate(same and earlier, one)`."""
        where = f"layer {self.layer} head {self.head}"
        if not self.known:
            return f"{where}: unknown (the file does not say what it computes)"
        if self.kind == "width":
            text = f"{self.sop} = selector_width({self.select})"
        else:
            text = f"{self.sop} = {KINDS.get(self.kind, self.kind)}({self.select}, {self.value})"
        if self.part:
            text += f" [part {self.part[0] + 1} of {self.part[1]}]"
        return f"{where}: {text}"

    @property
    def definitions(self) -> str:
        """The named selects the title refers to by name, written out: `same = select(tokens, tokens, ==)`."""
        return "; ".join(f"{s.name} = {s}" for s in self.selects if s.name and s.name in self.select)

    @property
    def place(self) -> str:
        """`line 11:9` where the program writes the s-op, or '' when it has no place."""
        return f"line {self.line}:{self.col}" if self.line is not None else ""

    def __str__(self) -> str:
        place = f" ({self.place})" if self.place else ""
        return self.title + place + (f"; {self.definitions}" if self.definitions else "")


def head_descriptions(meta: dict) -> list[list[HeadDescription]]:
    """Per layer, per head, what it computes; "unknown" where meta.heads does not say."""
    recorded = meta["heads"] if isinstance(meta.get("heads"), list) else []
    out = []
    for i, layer in enumerate(meta["layers"]):
        entries = recorded[i] if i < len(recorded) and isinstance(recorded[i], list) else []
        out.append([_description(i, h, entries[h] if h < len(entries) else None) for h in range(layer["n_head"])])
    return out


def _text(value) -> str:
    return value if isinstance(value, str) else ""


def _whole(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _texts(value) -> tuple[str, ...]:
    return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list) else ()


def _select(entry: dict) -> SelectDescription:
    return SelectDescription(_text(entry.get("keys")), _text(entry.get("queries")), _text(entry.get("predicate")),
                             _whole(entry.get("line")), _whole(entry.get("col")), _text(entry.get("name")) or None)


def _part(value) -> tuple[int, int] | None:
    if isinstance(value, list) and len(value) == 2 and all(_whole(v) is not None for v in value):
        return value[0], value[1]
    return None


def _description(layer: int, head: int, entry) -> HeadDescription:
    """One head of meta.heads, or an unknown head when the entry is not what the compiler writes."""
    if not isinstance(entry, dict) or _text(entry.get("kind")) not in KINDS or not _text(entry.get("select")):
        return HeadDescription(layer, head)
    selects = entry["selects"] if isinstance(entry.get("selects"), list) else []
    return HeadDescription(
        layer, head, True, _text(entry.get("sop")), entry["kind"], entry["select"],
        tuple(_select(s) for s in selects if isinstance(s, dict)), _whole(entry.get("line")), _whole(entry.get("col")),
        _text(entry.get("value")) or None, _text(entry.get("writes")), _texts(entry.get("q_reads")),
        _texts(entry.get("k_reads")), _part(entry.get("part")),
    )


@dataclass(frozen=True)
class HeadWeights:
    """One head's weights, labelled: W_Q, W_K, W_V [d_model + 1, d_head] (the last row, `1`, is
    the bias), W_O [d_head, d_model], and the QK and OV forms of the module docstring."""

    description: HeadDescription
    W_Q: LabelledArray
    W_K: LabelledArray
    W_V: LabelledArray
    W_O: LabelledArray
    QK: LabelledArray
    OV: LabelledArray
    d_head: int

    def scores(self, x: np.ndarray) -> np.ndarray:
        """[n, d_model] residual -> [n_query, n_key] scores, as the forward pass computes them
        (before the causal mask)."""
        x_aug = np.concatenate([x, np.ones((x.shape[0], 1), x.dtype)], axis=1)
        return x_aug @ self.QK.array @ x_aug.T

    def __repr__(self) -> str:
        return f"<HeadWeights {shown(self.description.title)}, d_head {self.d_head}>"

    def _repr_html_(self) -> str:
        figures = [nonzero_heatmap(a.array, a.rows, a.columns, a.title) for a in (self.QK, self.OV)]
        return f"<div><b>{html.escape(self.description.title)}</b>{''.join(figures)}</div>"


def head_weights(model, layer: int, head: int) -> HeadWeights:
    """The labelled weights of head `head` of layer `layer` of a `runtime.model.Model` (NotInModel,
    an IndexError, when there is none)."""
    if not 0 <= layer < model.n_layers:
        raise NotInModel(f"layer {layer} out of range: the model has {model.n_layers} layers")
    n_head, d_head = model.meta["layers"][layer]["n_head"], model.meta["layers"][layer]["d_head"]
    if not 0 <= head < n_head:
        raise NotInModel(f"head {head} out of range: layer {layer} has {n_head} heads")
    w = model.params[f"blocks.{layer}.attn.c_attn.w"].astype(np.float64)
    b = model.params[f"blocks.{layer}.attn.c_attn.b"].astype(np.float64)
    w_o = model.params[f"blocks.{layer}.attn.c_proj.w"].astype(np.float64)[head * d_head:(head + 1) * d_head]
    residual = tuple(residual_labels(model.meta, model.d_model))
    augmented = residual + (CONSTANT_LABEL,)
    sides = []
    for j, kind in enumerate("qkv"):
        start = j * n_head * d_head + head * d_head
        matrix = np.vstack([w[:, start:start + d_head], b[start:start + d_head]])  # [d_model + 1, d_head]
        columns = tuple(f"{kind}{i}" for i in range(d_head))
        sides.append(LabelledArray(matrix, augmented, columns, f"W_{kind.upper()} (last row: bias)"))
    w_q, w_k, w_v = sides
    qk = w_q.array @ w_k.array.T / math.sqrt(d_head)
    ov = w_v.array @ w_o
    description = head_descriptions(model.meta)[layer][head]
    return HeadWeights(
        description, w_q, w_k, w_v,
        LabelledArray(w_o, w_v.columns, residual, "W_O"),
        LabelledArray(qk, augmented, augmented, "QK (rows: query, columns: key; scores = x_aug QK x_augᵀ)"),
        LabelledArray(ov, augmented, residual, "OV (rows: key, columns: what the query gets)"),
        d_head,
    )
