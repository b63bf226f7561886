"""The weights one primitive contributes: a head, or a slice of an MLP, over the full residual.

Every matrix has d_model rows (or columns) indexed by the layout's labelled dimensions, so a
primitive writes only the dimensions it owns and the assembler just places pieces side by side.
Both are built with keyword arguments only, and check their shapes as they are made: a swapped
argument fails where it is passed, not as a wrong weight three modules later. Both are frozen and
hold read-only views of their arrays: a step that changes a piece builds a new one
(`dataclasses.replace`), so no piece changes under a module that holds it.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np


@dataclass(frozen=True, kw_only=True)
class Head:
    """One attention head. q = x w_q + b_q (likewise k, v); out = softmax(q kᵀ) v @ w_o.

    q/k: [d_model, d_qk], [d_qk]; v: [d_model, d_v], [d_v]; w_o: [d_v, d_model].
    `q_bos`, `k_bos`, `v_bos` are what q, k and v must be at the BOS position; the assembler
    sets the `bos` rows to make it so, whatever the other dimensions hold there.
    """

    w_q: np.ndarray
    b_q: np.ndarray
    w_k: np.ndarray
    b_k: np.ndarray
    w_v: np.ndarray
    b_v: np.ndarray
    w_o: np.ndarray
    q_bos: np.ndarray
    k_bos: np.ndarray
    v_bos: np.ndarray

    def __post_init__(self) -> None:
        _read_only(self)
        d_model, d_qk = self.w_q.shape
        d_v = self.w_v.shape[1]
        _check_shapes(self, {
            "w_q": (d_model, d_qk), "b_q": (d_qk,), "w_k": (d_model, d_qk), "b_k": (d_qk,),
            "w_v": (d_model, d_v), "b_v": (d_v,), "w_o": (d_v, d_model),
            "q_bos": (d_qk,), "k_bos": (d_qk,), "v_bos": (d_v,),
        })

    @property
    def d_qk(self) -> int:
        return self.w_q.shape[1]

    @property
    def d_v(self) -> int:
        return self.w_v.shape[1]


@dataclass(frozen=True, kw_only=True)
class MLP:
    """A slice of an MLP: hidden = relu(x w_in + b_in) [n, h]; out = hidden w_out + b_out."""

    w_in: np.ndarray  # [d_model, h]
    b_in: np.ndarray  # [h]
    w_out: np.ndarray  # [h, d_model]
    b_out: np.ndarray  # [d_model]

    def __post_init__(self) -> None:
        _read_only(self)
        d_model, hidden = self.w_in.shape
        _check_shapes(self, {"w_in": (d_model, hidden), "b_in": (hidden,), "w_out": (hidden, d_model), "b_out": (d_model,)})


def _read_only(piece: Head | MLP) -> None:
    """Put a read-only view of each array in place of the array (the caller's array is left as it was)."""
    for field in fields(piece):
        view = np.asarray(getattr(piece, field.name)).view()
        view.flags.writeable = False
        object.__setattr__(piece, field.name, view)


def _check_shapes(piece: Head | MLP, expected: dict[str, tuple[int, ...]]) -> None:
    """Raise ValueError naming the first array of `piece` whose shape is not the expected one."""
    for name, shape in expected.items():
        actual = np.shape(getattr(piece, name))
        if actual != shape:
            raise ValueError(f"{type(piece).__name__}.{name} has shape {actual}, expected {shape}")


def empty_mlp(d_model: int) -> MLP:
    """An MLP slice of no hidden unit and no output."""
    return MLP(w_in=np.zeros((d_model, 0)), b_in=np.zeros(0), w_out=np.zeros((0, d_model)), b_out=np.zeros(d_model))


def stack_mlps(mlps: list[MLP], d_model: int) -> MLP:
    """Independent MLP slices side by side: one MLP whose hidden layer is their union."""
    if not mlps:
        return empty_mlp(d_model)
    return MLP(
        w_in=np.concatenate([m.w_in for m in mlps], axis=1),
        b_in=np.concatenate([m.b_in for m in mlps]),
        w_out=np.concatenate([m.w_out for m in mlps], axis=0),
        b_out=np.sum([m.b_out for m in mlps], axis=0),
    )
