"""selector_width: an attention that writes 1/(w + 1), then an exact step MLP that reads w.

The head scores selected keys and BOS alike (m S), others at most (m - 1) S. With w keys
selected, softmax gives BOS 1/(w + 1) of the weight; BOS's value is 1 and every other key's 0,
so the head writes 1/(w + 1). The lowering then reads that number with a NumericMLP whose steps sit
between neighbouring values 1/(w + 1), exact for every w in 0..max_len by construction (tracr
reads it with a fixed-slope MLP that is off by one from w = 10 on).

Margin: the weight on unselected keys, at most (n + 1) exp(-S), is the error in 1/(w + 1); the
step MLP tolerates `op.window` of the smallest gap (STEP_WINDOW; less for an interpolating
reader, interpolated_steps.py), 1/(n (n + 1)), and a reader that is linear
(two widths only) passes the error on, so leak = min(CATEGORICAL_LEAK, window * gap) and
S = ln((n + 1) / leak): about 18 at n = 64. In a causal program the mask restricts the count to keys k <= q, which is
exactly the interpreter's causal selector_width.
"""

from __future__ import annotations

import numpy as np

from ..ops import Attend
from ..layout import Layout
from ..tolerances import bos_self_score, CATEGORICAL_LEAK, needed_gap, smallest_gap
from .pieces import Head
from .qk import score_weights


def width_head(op: Attend, layout: Layout, max_len: int) -> Head:
    leak = min(CATEGORICAL_LEAK, op.window * smallest_gap(op.out.values))
    sharpness = needed_gap(max_len + 1, leak)
    m = op.score.terms
    qk = score_weights(op.score, layout, sharpness, m * sharpness, bos_self_score(max_len))
    w_o = np.zeros((1, layout.d_model))
    w_o[0, layout.dims(op.out)[0]] = 1.0
    return Head(**qk.as_head_fields(), w_v=np.zeros((layout.d_model, 1)), b_v=np.zeros(1), w_o=w_o, v_bos=np.ones(1))
