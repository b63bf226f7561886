"""selector_width: an attention that writes BOS's share c/(c + w), then an exact step MLP that reads w.

The head scores selected keys m S, others at most (m - 1) S, and BOS m S + ln(c): with w keys
selected, softmax gives BOS c/(c + w) of the weight; BOS's value is 1 and every other key's 0, so
the head writes c/(c + w). The lowering then reads that number with a NumericMLP whose steps sit
between neighbouring values, exact for every w in 0..max_len by construction (tracr reads
1/(w + 1) with a fixed-slope MLP that is off by one from w = 10 on).

The BOS weight c (`bos_weight`). Neighbouring widths w and w + 1 write values
c/((c + w)(c + w + 1)) apart, smallest at the largest width W: with c = 1 (BOS tying with the
selected keys) that is 1/(W (W + 1)), 9.5e-7 at W = 1,024, below what float32 tells apart near 1.
c = W makes it 1/(2 (2W - 1)), about 1/(4W) (2.4e-4 at 1,024), from W = 2 on within a factor
1 + 1/(8 W^2) of the best any c gives (c = sqrt(W (W - 1))), and never less than c = 1's; it
also makes the smallest value 1/2. The step MLP reading it has slopes 2/gap, about 8W instead
of 2W^2.

Margin: the unselected keys' weight, relative to one selected key's, is at most
e = n exp(-S) (n keys, each S below); it moves BOS's share by c e/((c + w)(c + w + e)) <= e/c.
The step MLP tolerates `op.window` of the smallest gap (STEP_WINDOW; less for an interpolating
reader, interpolated_steps.py), and a reader that is linear (two widths only) passes the error
on, so leak = min(CATEGORICAL_LEAK, window * gap) and S = ln((n + 1) / (c leak)). In a causal
program the mask restricts the count to keys k <= q, which is exactly the interpreter's causal
selector_width.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

import numpy as np

from ..ops import Attend
from ..layout import Layout
from ..tolerances import bos_self_score, CATEGORICAL_LEAK, needed_gap, smallest_gap
from .pieces import Head
from .qk import score_weights


def bos_weight(widths: Iterable[int]) -> int:
    """c: BOS's weight relative to one selected key's, the largest width (at least 1)."""
    return max([1, *widths])


def bos_shares(widths: Iterable[int], weight: int) -> list[float]:
    """The value the head writes for each width: BOS's share c/(c + w)."""
    return [weight / (weight + w) for w in widths]


def width_from_share(weight: int) -> Callable[[float], int]:
    """The width w whose BOS share c/(c + w) is `share` (the step MLP's function)."""
    return lambda share: round(weight / share) - weight


def width_sharpness(op: Attend, max_len: int) -> tuple[float, float]:
    """(S, the most the leak may move BOS's share: min(CATEGORICAL_LEAK, window * gap))."""
    leak = min(CATEGORICAL_LEAK, op.window * smallest_gap(op.out.values))
    return needed_gap(max_len + 1, op.bos_weight * leak), leak


def width_head(op: Attend, layout: Layout, max_len: int) -> Head:
    """The head writing BOS's share c/(c + w) (c = op.bos_weight) into op.out's coordinate."""
    sharpness, _ = width_sharpness(op, max_len)
    m = op.score.terms
    bos_score = m * sharpness + math.log(op.bos_weight)
    qk = score_weights(op.score, layout, sharpness, bos_score, bos_self_score(max_len))
    w_o = np.zeros((1, layout.d_model))
    w_o[0, layout.dims(op.out)[0]] = 1.0
    return Head(**qk.as_head_fields(), w_v=np.zeros((layout.d_model, 1)), b_v=np.zeros(1), w_o=w_o, v_bos=np.ones(1))
