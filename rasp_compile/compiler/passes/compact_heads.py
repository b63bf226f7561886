"""compact-heads: the terms of one selector that read the same variable share its block of head
dimensions.

The plain factoring (lowering/scores.py) covers the score's bilinear form by blocks of features,
one per term and variable, so every term pays for its own copy of a variable it reads. Naming
the blocks by variable alone lets the cover take a variable once for every term reading it:
sort's range select (two comparisons of two widths against the index) needs 20 + 1 dimensions at
max_len 20, not 2 x 21.

Needs: nothing from earlier passes; runs as the `score_blocks` rewrite of the lowering.
Guarantees: the same bilinear form (so the same scores), in at most as many head dimensions.
"""

from __future__ import annotations

from ..variables import CONSTANT


def shared_block(feature, term: int):
    """The block of `feature`: its variable's (or the constant's), whatever term it is in."""
    return "1" if feature is CONSTANT else feature[0]
