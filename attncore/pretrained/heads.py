"""Which head shows the followed word attending to another word: --head auto and the table
of every layer × head, for the pretrained encoder (the rule itself: attncore.heads).

In all-MiniLM-L6-v2, layer 0 head 2 gives ~1.00 to the previous token for every word of
every sentence: such positional heads are judged on the sentence's own tokens (not [CLS] and
[SEP]) and left out of --head auto. Heads that park most attention on [CLS]/[SEP] are tagged.
"""

from __future__ import annotations

import numpy as np
from attention_video.attncore import heads as common
from attention_video.attncore.heads import OFFSET_NAMES, POSITIONAL_SHARE, HeadSummary
from attention_video.attncore.pretrained.run import Run
from attention_video.attncore.trace import HeadChoice

__all__ = ["OFFSET_NAMES", "POSITIONAL_SHARE", "SPECIAL", "SPECIAL_SHARE", "HeadSummary",
           "choose_head", "describe", "format_heads", "head_pattern", "other_words",
           "positional_offset", "reading", "special_share", "summaries"]

SPECIAL_SHARE = 0.75  # a head "looks at [CLS]/[SEP]" when the words give them this much, on
#                       average (many BERT heads park half their attention there: only the
#                       heads that do little else are tagged)
SPECIAL = "[CLS]/[SEP]"


def inner(n: int) -> range:
    """The sentence's own tokens: not [CLS] (first) and [SEP] (last)."""
    return range(1, n - 1)


def positional_offset(A: np.ndarray, share: float = POSITIONAL_SHARE) -> int | None:
    """-1 or +1 when the sentence's tokens (not [CLS]/[SEP]) give, on average, at least
    `share` of their attention to the neighbour on that side; None otherwise."""
    return common.positional_offset(A, inner(A.shape[0]), share)


def special_share(A: np.ndarray) -> float:
    """The mean weight the sentence's tokens (not [CLS]/[SEP]) give to [CLS] and [SEP]
    together: mean_i (A[i, 0] + A[i, n−1]) over the inner tokens i."""
    n = A.shape[0]  # A: (n, n) one head's weights, [CLS] first, [SEP] last
    rows = np.arange(1, n - 1)  # (n−2,)
    if len(rows) == 0:
        return 0.0
    return float((A[rows, 0] + A[rows, n - 1]).mean())


def head_pattern(A: np.ndarray) -> str | None:
    """What a head does whatever the words: "previous token" / "next token" (positional,
    see positional_offset), "[CLS]/[SEP]" (the words give the special tokens at least
    SPECIAL_SHARE), or None (the head's pattern depends on the words)."""
    offset = positional_offset(A)
    if offset is not None:
        return OFFSET_NAMES[offset]
    n = A.shape[0]
    if n - 2 >= 2 and special_share(A) >= SPECIAL_SHARE:
        return SPECIAL
    return None


def reading(r: Run) -> common.Reading:
    enc = r.encoding
    return common.Reading(enc.tokens, enc.word_of, enc.words, r.focus, r.forward.attention,
                          tuple(inner(len(enc.tokens))), head_pattern)


def other_words(r: Run) -> list[int]:
    return common.other_words(reading(r))


def summaries(r: Run) -> list[HeadSummary]:
    """One HeadSummary per layer and head, in order (layer 0 head 0 first)."""
    return common.summaries(reading(r))


def describe(r: Run, j: int) -> str:
    """'milk', or "'##ank' (part of 'drank')" for a piece of a longer word."""
    return common.describe(reading(r), j)


def choose_head(r: Run, fallback_layer: int = 0, skip_positional: bool = True) -> HeadChoice:
    """The head where the followed word gives the largest weight to one other real word,
    positional heads left out (attncore.heads.choose_head)."""
    return common.choose_head(reading(r), fallback_layer, skip_positional)


def format_heads(rows: list[HeadSummary], focus: str, chosen: tuple[int, int] | None = None) -> str:
    """The layer × head table, with what the [CLS]/[SEP] tag means when a head has it."""
    notes = ((f"{SPECIAL}: the words give [CLS] and [SEP] at least {SPECIAL_SHARE:.2f} "
              "of their attention, on average",) if any(h.pattern == SPECIAL for h in rows) else ())
    return common.format_heads(rows, focus, chosen, notes)
