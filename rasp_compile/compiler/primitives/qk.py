"""qk: query and key weights from a factored score (scores.py), plus BOS.

Column j of the score has a query side and a key side, each a linear form of residual
coordinates and the constant 1: q[:, j] = S * (its query form), k[:, j] = its key form, so
q·k = S * score, which is S on selected keys and at most 0 on the others (scores.py).

BOS: one more column. Its key feature is 1 at BOS only; its query feature is the constant
`bos_score`, so BOS scores (m - 1/2) S against every query for an aggregate (it wins only when no
key is selected: the default) or m S + ln c for selector_width (it weighs as much as c selected
keys: selector_width.py); both are lowered by the (m - 1) S the ordinary keys are lowered by in
scores.py, so BOS scores S/2 or S + ln c. At the BOS query itself the score of BOS is `bos_self` and
every other key's is 0, so the BOS position reads only itself and its residual stays input-
independent (assemble.py relies on it). A score that surely selects a key (a sure position
match, passes/position_selects.number_match) scores BOS at -S instead, below every selected key by more
than S: it is never the default. A sure digit match (passes/digit_matches.py) scores BOS also
as a key whose every feature is 0, so that the query's own term (1 - h^2 - l^2, a polyline of
float32 error up to about 17 at max_len 4,096) shifts BOS with every key of the query: BOS scores
(m - 1) S, at least S below the match whatever that error. The highest score a head can produce stays near S (a width
head's at most S + ln 1,024, S + 7), so exponentiating scores without subtracting the row maximum
cannot overflow float32 (but for sure digit matches, which float32's error shifts by up to that
polyline's error times S: the softmax subtracts the row maximum).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from typing import Any

import numpy as np

from ..layout import Layout
from ..variables import coordinate
from ..selector_terms import Score
from ..variables import CONSTANT


@dataclass(kw_only=True)
class QK:
    """q = x w_q + b_q, k = x w_k + b_k ([d_model, d] and [d]); q_bos, k_bos: their values at BOS."""

    w_q: np.ndarray
    b_q: np.ndarray
    w_k: np.ndarray
    b_k: np.ndarray
    q_bos: np.ndarray
    k_bos: np.ndarray

    def as_head_fields(self) -> dict[str, np.ndarray]:
        """The Head fields these are (pieces.Head), by name."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


def score_weights(score: Score, layout: Layout, sharpness: float, bos_score: float, bos_self: float) -> QK:
    """q and k for `score` at this sharpness, and the BOS column: BOS scores `bos_score` minus
    the (m - 1) * sharpness shift of scores.py, and `bos_self` at the BOS query.

    `bos_score` and `bos_self` are in units of absolute score (already multiplied by sharpness)."""
    d = len(score.columns) + 1
    qk = QK(w_q=np.zeros((layout.d_model, d)), b_q=np.zeros(d), w_k=np.zeros((layout.d_model, d)), b_k=np.zeros(d),
            q_bos=np.zeros(d), k_bos=np.zeros(d))
    for j, column in enumerate(score.columns):
        _place(column.q, qk.w_q[:, j], qk.b_q, j, layout, sharpness)
        _place(column.k, qk.w_k[:, j], qk.b_k, j, layout, 1.0)
    # The BOS column: key feature 1 at BOS only, query feature the constant bos_score; under
    # every key (-S) when the score surely selects a key (a sure position match).
    qk.b_q[-1] = -sharpness if score.always_selects else bos_score - (score.terms - 1) * sharpness
    if score.bos_as_key:  # BOS also gets what a key with every feature 0 gets: the query's own terms
        qk.k_bos[:-1] = [column.k.get(CONSTANT, 0.0) for column in score.columns]
    qk.k_bos[-1] = 1.0
    qk.q_bos[-1] = bos_self
    return qk


def _place(form: dict[Any, float], w: np.ndarray, b: np.ndarray, j: int, layout: Layout, scale: float) -> None:
    """Write the linear form {feature: coefficient} into column w (a view) and b[j]."""
    for feature, coefficient in form.items():
        if feature is CONSTANT:
            b[j] += scale * coefficient
        else:
            w[layout[coordinate(*feature)]] += scale * coefficient
