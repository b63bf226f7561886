"""The weights one primitive contributes: a head, or a slice of an MLP, over the full residual.

Every matrix has d_model rows (or columns) indexed by the layout, so a primitive writes only
the dimensions it owns and the assembler just places pieces side by side.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
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

    @property
    def d_qk(self) -> int:
        return self.w_q.shape[1]

    @property
    def d_v(self) -> int:
        return self.w_v.shape[1]


@dataclass
class MLP:
    """A slice of an MLP: hidden = relu(x w_in + b_in) [n, h]; out = hidden w_out + b_out."""

    w_in: np.ndarray  # [d_model, h]
    b_in: np.ndarray  # [h]
    w_out: np.ndarray  # [h, d_model]
    b_out: np.ndarray  # [d_model]


def empty_mlp(d_model: int) -> MLP:
    return MLP(np.zeros((d_model, 0)), np.zeros(0), np.zeros((0, d_model)), np.zeros(d_model))


def stack_mlps(mlps: list[MLP], d_model: int) -> MLP:
    """Independent MLP slices side by side: one MLP whose hidden layer is their union."""
    if not mlps:
        return empty_mlp(d_model)
    return MLP(
        np.concatenate([m.w_in for m in mlps], axis=1),
        np.concatenate([m.b_in for m in mlps]),
        np.concatenate([m.w_out for m in mlps], axis=0),
        np.sum([m.b_out for m in mlps], axis=0),
    )
