"""The forward pass of docs/format.md on the part of each weight that is not zero: what
`execute.logits` runs.

A compiled model is sparse: a layer reads a few columns of the residual stream and writes a few
others, a head uses few of its query, key and value dimensions, and many layers copy one input to
each output. `plan` cuts every weight matrix to the rows and columns that hold its nonzero
entries; `cached_plan` keeps the plans of the last few models run (building one costs about as
much as a forward pass of a hundred short sequences), by the model object itself:

- a linear layer reads the residual columns where its weights have a nonzero row, and writes those
  where they (or the bias) have a nonzero column: a span of columns (a view) when at least half of
  it is used, else the scattered columns themselves (a copy of just those);
- a layer whose every output reads one input is a gather and a scaling instead of a matmul
  (PICKS_FROM);
- a head keeps the query/key dimensions where both its query and its key weights (bias included)
  are nonzero, and the value dimensions its output projection reads; every head of a layer keeps
  the same number (the largest), filled up with dimensions of its own that add zero;
- a sub-layer that writes nothing, a bias or a position embedding that is all zero is left out;
- the embedding of a small model is one table of `wte[token] + wpe[position]` for every position
  and token (`embedding_table`): one gather per forward pass instead of a gather and an addition,
  each row the very sum the pass adds.

Every term left out is a product with an exact zero, so each number computed is the sum of the
same nonzero terms as in the full computation: results agree with `forward.gpt` to float rounding
(the BLAS may add the terms in another order), and predictions are the same.

Three more ways to the same numbers, cheaper in NumPy (`Tiled`): a bias is added from a copy tiled
to the chunk's rows (adding a short vector to every row runs one short inner loop per row, about 7
times slower); relu takes its maximum with an array of zeros (NumPy's maximum against a scalar is
not vectorised, about 6 times slower); and a softmax scale 1/sqrt(D) that is a power of two (D = 1,
4, 16, 64, ...) is multiplied into the query weights, which scales every score exactly as dividing
them does.

Activations that overflow: `execute.logits` checks the logits and the final residual stream, so an
inf or NaN anywhere in the stream is found, as in the full computation; only one that the full
computation would multiply by zero weights alone (0 · inf is NaN there) goes unseen.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Hashable
from dataclasses import dataclass

import numpy as np

from .model_like import ModelLike


@dataclass(frozen=True)
class Dense:
    """`x[:, reads] @ w + b`, to be written to columns `writes` of the layer's full output; each a
    slice (a span of columns) or an index array (scattered columns, `used_columns`).

    w: [reads' width, writes' width]; b: [writes' width], or None where the bias is zero there."""

    reads: slice | np.ndarray
    writes: slice | np.ndarray
    w: np.ndarray
    b: np.ndarray | None
    picks: np.ndarray | None = None  # when each output reads one input: its column; w is then [1, width]


class Tiled:
    """Vectors repeated over rows, for element-wise operations between whole arrays of one shape
    (a bias added to every row, zeros for relu): one per plan, each grown to the largest chunk met
    and sliced to the chunk at hand. Read only once made, so calls on one plan may share it."""

    def __init__(self) -> None:
        self.by_key: dict[Hashable, np.ndarray] = {}

    def rows(self, key: Hashable, vector: np.ndarray, n_rows: int) -> np.ndarray:  # [width] -> [n_rows, width]
        tiled = self.by_key.get(key)
        if tiled is None or len(tiled) < n_rows:
            tiled = self.by_key[key] = np.tile(vector, (n_rows, 1))
        return tiled[:n_rows]

    def bias(self, layer: Dense, out: np.ndarray) -> np.ndarray:  # out [rows, width] += b, in place
        if layer.b is not None:
            out += self.rows(id(layer.b), layer.b, len(out))
        return out

    def zeros(self, like: np.ndarray) -> np.ndarray:  # [rows, width] zeros of like's shape and dtype
        return self.rows(("zeros", like.shape[1], like.dtype), np.zeros(like.shape[1], like.dtype), len(like))


@dataclass(frozen=True)
class AttentionPlan:
    """One attention sub-layer on its kept dimensions: `qkv` gives [positions, H·Dqk + H·Dqk + H·Dv]
    (queries, keys and values, head by head), `proj` the residual update from [positions, H·Dv].
    `scale` divides the scores (1 when the query weights carry it)."""

    qkv: Dense
    proj: Dense
    n_head: int
    d_qk: int
    d_v: int
    scale: float


@dataclass(frozen=True)
class MlpPlan:
    """`proj(act(fc(x)))`, the residual update of one MLP sub-layer."""

    fc: Dense
    proj: Dense


@dataclass(frozen=True)
class Plan:
    """A model cut to its nonzero weights. blocks: per block, (AttentionPlan or None, MlpPlan or
    None); a sub-layer that writes nothing is None. wpe is None when it is all zero; embed, when
    not None, is `embedding_table`'s [n_ctx · n_vocab, d_model] (row p · n_vocab + t: token t at
    position p), to be used instead of wte and wpe."""

    wte: np.ndarray
    wpe: np.ndarray | None
    embed: np.ndarray | None
    blocks: list[tuple[AttentionPlan | None, MlpPlan | None]]
    unembed: Dense
    causal: bool
    activation: str
    tiled: Tiled


def nonzero_span(flags: np.ndarray, at_least: int = 0) -> slice:
    """The smallest slice holding every True of a 1-d boolean array (empty when none is), widened
    to `at_least` entries where the array is that long."""
    where = np.flatnonzero(flags)
    start, stop = (int(where[0]), int(where[-1]) + 1) if where.size else (0, 0)
    stop = min(len(flags), max(stop, start + at_least))
    return slice(min(start, stop - at_least) if stop >= at_least else 0, stop)


PICKS_FROM = 4
"""A layer whose every output reads one input (a one-hot copied or scaled, as compiled selects
and aggregates do) is run as a gather and a scaling when it reads at least PICKS_FROM columns:
each output is then that one product, exactly what the matmul sums with zeros; about 2.5 times
faster than the matmul at 65 columns."""


def used_columns(flags: np.ndarray, at_least: int = 0) -> slice | np.ndarray:
    """Where a 1-d boolean array holds: as `nonzero_span` when at least half of the span is used
    (a view of the residual stream, no copy), else as indices (a copy of those columns only: a
    layer that reads or writes a few columns scattered over the stream)."""
    span, where = nonzero_span(flags, at_least), np.flatnonzero(flags)
    return where if at_least <= where.size and 2 * where.size < span.stop - span.start else span


def dense(w: np.ndarray, b: np.ndarray | None, writes: slice | np.ndarray | None = None) -> Dense:
    """`x @ w + b` cut to its nonzero rows and to `writes` (default: its nonzero columns)."""
    nonzero = w != 0
    if writes is None:
        writes = used_columns(nonzero.any(axis=0) | (b != 0 if b is not None else False))
    reads = used_columns(nonzero[:, writes].any(axis=1), at_least=2)  # NumPy's matmul is slow on one
    kept_b = None if b is None or not b[writes].any() else b[writes].copy()
    kept = np.ascontiguousarray(w[reads][:, writes])
    if kept.shape[0] >= PICKS_FROM and ((kept != 0).sum(axis=0) <= 1).all():
        rows = np.argmax(kept != 0, axis=0)  # each output's one nonzero input (any, when it has none)
        scales = kept[rows, np.arange(kept.shape[1])][None, :]
        return Dense(reads, writes, scales, kept_b, np.arange(w.shape[0])[reads][rows])
    return Dense(reads, writes, kept, kept_b)


def kept_dims(used: np.ndarray) -> np.ndarray:
    """Per head, the dimensions kept: [H, D] booleans -> [H, width] dimension indices, the used
    ones first, filled up with unused ones to the largest count of used dimensions (at least 1)."""
    width = max(1, int(used.sum(axis=1).max(initial=0)))
    return np.argsort(~used, axis=1, kind="stable")[:, :width]


def attention_plan(c_attn: dict[str, np.ndarray], c_proj: dict[str, np.ndarray], n_head: int,
                   d_head: int) -> AttentionPlan | None:
    """The attention sub-layer on its kept dimensions; None when it writes nothing."""
    w, b = c_attn["w"], c_attn["b"]
    width = n_head * d_head
    nonzero = ((w != 0).any(axis=0) | (b != 0)).reshape(3, n_head, d_head)  # q, k, v
    used_qk = nonzero[0] & nonzero[1]
    used_v = (c_proj["w"] != 0).any(axis=1).reshape(n_head, d_head)
    offsets = (np.arange(n_head) * d_head)[:, None]
    qk_columns, v_columns = (kept_dims(used_qk) + offsets).ravel(), (kept_dims(used_v) + offsets).ravel()
    columns = np.concatenate([qk_columns, width + qk_columns, 2 * width + v_columns])
    w, b = w[:, columns], b[columns]
    scale = math.sqrt(d_head)
    if math.frexp(scale)[0] == 0.5:  # a power of two: multiplying the queries by 1/scale is exact
        queries = slice(0, qk_columns.size)
        w[:, queries], b[queries], scale = w[:, queries] / scale, b[queries] / scale, 1.0
    proj = dense(c_proj["w"][v_columns], c_proj["b"])
    if proj.w.shape[1] == 0:
        return None
    return AttentionPlan(dense(w, b, slice(0, columns.size)), proj, n_head,
                         qk_columns.size // n_head, v_columns.size // n_head, scale)


def mlp_plan(c_fc: dict[str, np.ndarray], c_proj: dict[str, np.ndarray]) -> MlpPlan | None:
    """The MLP sub-layer cut to what it reads and writes; None when it writes nothing."""
    proj = dense(c_proj["w"], c_proj["b"])
    if proj.w.shape[1] == 0:
        return None
    return MlpPlan(dense(c_fc["w"], c_fc["b"], slice(0, c_fc["w"].shape[1])), proj)


EMBED_TABLE_BYTES = 2**22
"""`embedding_table` is built when it takes at most this many bytes (4 MB: a model of a few
dozen positions, tokens and dimensions, the kind whose forward pass NumPy's per-operation cost
weighs on); a larger model pays the extra addition, a small share of its pass."""


def embedding_table(wte: np.ndarray, wpe: np.ndarray) -> np.ndarray | None:
    """[n_vocab, d_model], [n_ctx, d_model] -> [n_ctx · n_vocab, d_model]: row p · n_vocab + t is
    wte[t] + wpe[p], the sum the forward pass adds at token t, position p; None when larger
    than EMBED_TABLE_BYTES."""
    if wte.itemsize * len(wpe) * wte.size > EMBED_TABLE_BYTES:
        return None
    with np.errstate(all="ignore"):  # an overflow is an inf in the table, and `logits` finds it in the stream
        return (wpe[:, None, :] + wte[None, :, :]).reshape(len(wpe) * len(wte), wte.shape[1])


def plan(model: ModelLike) -> Plan:
    """The model cut to its nonzero weights (see the module's docstring)."""
    blocks = []
    for block, layer in zip(model.blocks(), model.meta["layers"]):
        attn = attention_plan(**block["attn"], n_head=layer["n_head"], d_head=layer["d_head"]) \
            if "attn" in block else None
        blocks.append((attn, mlp_plan(**block["mlp"]) if "mlp" in block else None))
    wte, wpe, unembed = model.params["wte"], model.params["wpe"], model.params["unembed"]
    nonzero_wpe = wpe if wpe.any() else None
    return Plan(wte, nonzero_wpe, None if nonzero_wpe is None else embedding_table(wte, wpe), blocks,
                dense(unembed, model.params.get("unembed_b"), slice(0, unembed.shape[1])),
                model.meta["causal"], model.meta["activation"], Tiled())


PLANS_KEPT = 8
"""`cached_plan` keeps the plans of the last PLANS_KEPT models it was asked for (and drops a
model's plan as soon as the model itself is gone)."""
Identity = tuple[str, tuple[tuple[str, np.ndarray], ...]]  # _identity's: meta fields read, (key, array) pairs
_plans: dict[int, tuple[weakref.ref[ModelLike], Identity, Plan]] = {}  # id(model) -> (the model, identity, plan)


def cached_plan(model: ModelLike) -> Plan:
    """`plan(model)`, kept for the model object: building a small model's plan takes about as long
    as its forward pass on a few hundred sequences, and a model is usually run many times.

    No weight is read to find it (hashing a 50M-parameter model's weights took 0.2 s): the first
    time, the model's arrays are made read-only, and while the model holds the same array
    objects, still read-only, and the same meta fields the pass reads (`_identity`), its plan
    stands. Weights edited afterwards go through NumPy's `array.flags.writeable = True` or a new
    array in `model.params`; either is seen here, and the plan is built again."""
    kept = _plans.get(id(model))
    if kept is not None and kept[0]() is model and _unchanged(kept[1], _identity(model)):
        return kept[2]
    for array in model.params.values():
        array.flags.writeable = False
    built = plan(model)
    _plans.pop(id(model), None)
    if len(_plans) >= PLANS_KEPT:
        del _plans[next(iter(_plans))]  # the oldest
    key = id(model)
    _plans[key] = (weakref.ref(model, lambda ref: _forget(key, ref)), _identity(model), built)
    return built


def _forget(key: int, ref: weakref.ref[ModelLike]) -> None:
    """Drop the plan of a model that is gone (`ref`, now dead, is the one its entry holds)."""
    if key in _plans and _plans[key][0] is ref:
        del _plans[key]


def _identity(model: ModelLike) -> Identity:
    """What tells, without reading any weight, that the model may have changed: the meta fields
    the pass reads, and each array's object and whether it can be written."""
    meta = model.meta
    return repr([meta["layers"], meta["causal"], meta["activation"]]), tuple(model.params.items())


def _unchanged(before: Identity, now: Identity) -> bool:
    """Whether `now` (an `_identity`) has the meta and the very arrays of `before`, none writable."""
    (meta_before, arrays_before), (meta_now, arrays_now) = before, now
    return meta_before == meta_now and len(arrays_before) == len(arrays_now) and all(
        key == key_now and array is array_now and not array_now.flags.writeable
        for (key, array), (key_now, array_now) in zip(arrays_before, arrays_now))
