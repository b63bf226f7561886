"""embed: token and position embeddings.

`wte` row t holds the encoding of tokens (and of every map of tokens folded into it: a map of a
token is a table lookup, free in an embedding); the BOS row holds only `bos`. `wpe` row p + 1
holds position p's indices and, in a causal program, length = p + 1 (and folded maps of them);
row 0 is the BOS position and holds none of them. (assemble.py adds the constants of folded
linear s-ops to every row, BOS's too; it tracks what BOS's residual holds.)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ops import Embed, EmbedSource
from ..layout import BOS, Layout


def embeddings(embeds: list[Embed], layout: Layout, vocab: tuple[Any, ...], max_len: int) -> tuple[np.ndarray, np.ndarray]:
    """wte [len(vocab) + 1, d_model] (BOS last), wpe [max_len + 1, d_model]."""
    wte = np.zeros((len(vocab) + 1, layout.d_model))
    wpe = np.zeros((max_len + 1, layout.d_model))
    wte[len(vocab), layout[BOS]] = 1.0
    for op in embeds:
        if op.source is EmbedSource.TOKENS:
            for row, token in enumerate(vocab):
                wte[row] += layout.vector(op.out.encode(op.fn(token)))
        else:
            for position in range(max_len):
                value = position if op.source is EmbedSource.INDICES else position + 1
                wpe[position + 1] += layout.vector(op.out.encode(op.fn(value)))
    return wte, wpe
