"""Which words a chapter features, decided once for every chapter.

The followed word (the query) is chosen in the core (`trace.focus`). Its *partner* is the
key it scores highest other than itself: chapter 2 follows the partner's key and value
rows in cross-attention, chapter 3 outlines its column, chapter 4 opens its cell.
"""

from __future__ import annotations

import numpy as np

from attncore.trace import AttentionTrace


def partner(trace: AttentionTrace) -> int:
    """The key the followed word scores highest, other than itself (itself if there is none).

    Only allowed (unmasked) keys count. In cross-attention every key is an "other" word.
    """
    i = trace.focus
    row = trace.head.scores[i]  # (n_k,)
    allowed = trace.head.mask[i].copy()  # (n_k,)
    if not trace.cross and allowed.sum() > 1:
        allowed[i] = False
    if not allowed.any():
        return i if i < trace.n_k else 0
    return int(np.argmax(np.where(allowed, row, -np.inf)))


def is_self_pair(trace: AttentionTrace, j: int) -> bool:
    """True when the followed word is paired with itself (no other key to pair with)."""
    return not trace.cross and j == trace.focus
