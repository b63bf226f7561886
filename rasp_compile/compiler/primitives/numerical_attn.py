"""numerical_attn: a numerical aggregate (the mean of any finite set of numbers) as one head.

Scores as in categorical_attn: the selected keys share the top score m S, so softmax gives each
exactly 1/w of the weight and the head reads their mean; BOS (m - 1/2) S wins when none is
selected and carries the default (tracr accepts only 0/1 values and no default).

Margin: the weight off the selected keys, at most (n + 1) exp(-S/2), moves the mean by at most
that times the spread of the values (default included). A step MLP downstream needs the mean
within `op.window` (STEP_WINDOW, less for an interpolating one) of the smallest gap between the
means it can take, and the mean must stay within CATEGORICAL_LEAK of exact whatever the values'
size, and within that divided by `op.amplification` when readers magnify it (amplification.py), so
S = 2 ln((n + 1) / leak) with leak = min(CATEGORICAL_LEAK / amplification, window * gap) / spread.
"""

from __future__ import annotations

import numpy as np

from ..ops import Attend
from ..layout import Layout
from ..tolerances import bos_self_score, CATEGORICAL_LEAK, needed_gap, smallest_gap, spread
from .pieces import Head
from .qk import score_weights


def numerical_sharpness(op: Attend, max_len: int) -> tuple[float, float]:
    """(S, the most the leak may move the mean: min(CATEGORICAL_LEAK / amplification, window * gap))."""
    assert op.value is not None  # an aggregate's head reads a value
    tolerated = min(CATEGORICAL_LEAK / op.amplification, op.window * smallest_gap(op.out.values))
    leak = tolerated / spread(op.value.values + (op.default,))
    return 2 * needed_gap(max_len + 1, leak), tolerated


def numerical_head(op: Attend, layout: Layout, max_len: int) -> Head:
    sharpness, _ = numerical_sharpness(op, max_len)
    m = op.score.terms
    qk = score_weights(op.score, layout, sharpness, (m - 0.5) * sharpness, bos_self_score(max_len))
    assert op.value is not None  # an aggregate's head reads a value
    w_v = np.zeros((layout.d_model, 1))
    w_v[layout.dims(op.value)[0], 0] = 1.0
    w_o = np.zeros((1, layout.d_model))
    w_o[0, layout.dims(op.out)[0]] = 1.0
    return Head(**qk.as_head_fields(), w_v=w_v, b_v=np.zeros(1), w_o=w_o, v_bos=np.array([float(op.default)]))
