"""categorical_attn: a categorical aggregate as one head.

Scores (qk.py): selected keys m S, BOS (m - 1/2) S, others at most (m - 1) S. Values: the
one-hot of the aggregated variable, copied through w_o into the output's own one-hot; BOS's
value is the default's one-hot (all zeros when the default is none, tracr's only option).

Why it is exact: when some key is selected, all selected keys hold the same value (else the
program is in error), so any mix of their one-hots is that one-hot; the weight left on BOS and
unselected keys is at most (n + 1) exp(-S/2). When none is selected, BOS outscores every other
key by S/2 and the output is the default. S = 2 ln((n + 1) / leak) puts the leak below
CATEGORICAL_LEAK (tolerances.py), divided by `op.amplification` when a reader turns the one-hot into
a number that magnifies it (amplification.py): with n = 64 and no such reader, S ≈ 36.
"""

from __future__ import annotations

import numpy as np

from ..ops import Attend
from ..layout import Layout
from ..tolerances import bos_self_score, CATEGORICAL_LEAK, needed_gap
from .pieces import Head
from .qk import score_weights


def categorical_head(op: Attend, layout: Layout, max_len: int) -> Head:
    sharpness = 2 * needed_gap(max_len + 1, CATEGORICAL_LEAK / op.amplification)
    m = op.score.terms
    qk = score_weights(op.score, layout, sharpness, (m - 0.5) * sharpness, bos_self_score(max_len))
    assert op.value is not None  # an aggregate's head reads a value
    out_values, out_dims = op.out.values, layout.dims(op.out)
    value_dims = layout.dims(op.value)
    w_v = np.zeros((layout.d_model, len(out_values)))
    w_o = np.zeros((len(out_values), layout.d_model))
    for j, value in enumerate(out_values):
        if value in op.value.position:
            w_v[value_dims[op.value.position[value]], j] = 1.0
        w_o[j, out_dims[j]] = 1.0
    v_bos = np.zeros(len(out_values))
    if op.default is not None:
        v_bos[op.out.position[op.default]] = 1.0
    return Head(**qk.as_head_fields(), w_v=w_v, b_v=np.zeros(len(out_values)), w_o=w_o, v_bos=v_bos)
