"""Which head shows the followed word attending to another word: --head auto and the table
of every layer × head that helps a lecturer choose. Shared by the encoder weight sources
(attncore.pretrained, attncore.multilingual): a run of either has the same parts.

Some heads attend by position, not by word: every token looks at the token just before
(or after) it. In all-MiniLM-L6-v2, layer 0 head 2 gives ~1.00 to the previous token for
every word of every sentence, so "the largest weight to another word" would always pick it.
Such positional heads are detected from the numbers and left out of --head auto (the reason
says so); the table still lists and labels them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np
from attention_video.attncore.encoder import Encoding, Forward, is_real_word
from attention_video.attncore.tokenize import Token
from attention_video.attncore.trace import HeadChoice


class Run(Protocol):
    """One sentence through an encoder: its encoding, every layer's attention, the
    followed token (attncore.pretrained.run.Run, attncore.multilingual.run.Run)."""

    encoding: Encoding
    forward: Forward
    focus: int

    @property
    def tokens(self) -> tuple[Token, ...]: ...

POSITIONAL_SHARE = 0.5  # a head is positional when the tokens give it this much, on average,
#                         to their neighbour at one fixed side
SPECIAL_SHARE = 0.75  # a head "looks at [CLS]/[SEP]" when the words give them this much, on
#                       average (many BERT heads park half their attention there: only the
#                       heads that do little else are tagged)
OFFSET_NAMES = {-1: "previous token", 1: "next token"}
SPECIAL = "[CLS]/[SEP]"


@dataclass(frozen=True)
class HeadSummary:
    """For the followed word, in one head: its strongest other word and strongest token."""

    layer: int
    head: int
    word_index: int | None  # token index of the other real word it attends to most (None: none)
    word: str | None  # that token's text
    word_weight: float  # its attention weight (0.0 when there is no other word)
    top_index: int  # the token it attends to most, any kind ([CLS], [SEP], itself included)
    top: str
    top_weight: float
    offset: int | None = None  # -1 / +1: a positional head (previous / next token); None: not
    pattern: str | None = None  # "previous token", "next token", "[CLS]/[SEP]" or None

    @property
    def positional(self) -> bool:
        return self.offset is not None


def other_words(r: Run) -> list[int]:
    """Tokens the followed word may be said to attend to: real words, not itself, not
    another piece of its own word."""
    enc, i = r.encoding, r.focus
    return [j for j, t in enumerate(enc.tokens)
            if is_real_word(t) and j != i and enc.word_of[j] != enc.word_of[i]]


def positional_offset(A: np.ndarray, share: float = POSITIONAL_SHARE) -> int | None:
    """-1 or +1 when the sentence's tokens (not [CLS]/[SEP]) give, on average, at least
    `share` of their attention to the neighbour on that side; None otherwise.

    mean_i A[i, i+o] over the inner tokens i that have such a neighbour, o ∈ {−1, +1}."""
    n = A.shape[0]  # A: (n, n) one head's weights, [CLS] first, [SEP] last
    inner = np.arange(1, n - 1)  # (n−2,)
    if len(inner) < 2:
        return None
    for o in (-1, 1):
        mean = A[inner, inner + o].mean()  # inner ± 1 stays within 0 … n−1
        if mean >= share:
            return o
    return None


def special_share(A: np.ndarray) -> float:
    """The mean weight the sentence's tokens (not [CLS]/[SEP]) give to [CLS] and [SEP]
    together: mean_i (A[i, 0] + A[i, n−1]) over the inner tokens i."""
    n = A.shape[0]  # A: (n, n) one head's weights, [CLS] first, [SEP] last
    inner = np.arange(1, n - 1)  # (n−2,)
    if len(inner) == 0:
        return 0.0
    return float((A[inner, 0] + A[inner, n - 1]).mean())


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


def summaries(r: Run) -> list[HeadSummary]:
    """One HeadSummary per layer and head, in order (layer 0 head 0 first)."""
    att = r.forward.attention  # (L, H, n, n)
    others = other_words(r)
    out = []
    for layer in range(att.shape[0]):
        for head in range(att.shape[1]):
            row = att[layer, head, r.focus]  # (n,) the followed word's weights
            top = int(np.argmax(row))
            j = others[int(np.argmax(row[others]))] if others else None
            out.append(HeadSummary(
                layer, head, j, r.tokens[j].text if j is not None else None,
                float(row[j]) if j is not None else 0.0, top, r.tokens[top].text, float(row[top]),
                positional_offset(att[layer, head]), head_pattern(att[layer, head])))
    return out


def describe(r: Run, j: int) -> str:
    """'milk', or "'##ank' (part of 'drank')" for a piece of a longer word."""
    enc = r.encoding
    text = f"'{enc.tokens[j].text}'"
    w = enc.word_of[j]
    if w >= 0 and enc.word_of.count(w) > 1:
        text += f" (part of '{enc.words[w]}')"
    return text


def choose_head(r: Run, fallback_layer: int = 0, skip_positional: bool = True) -> HeadChoice:
    """The head where the followed word gives the largest weight to one other real word,
    positional heads left out (unless every head is one, or skip_positional is False), and
    why, as data. Ties go to the lowest layer, then the lowest head."""
    rows = summaries(r)
    skipped = [h for h in rows if h.positional] if skip_positional else []
    pool = [h for h in rows if not h.positional] if skipped and len(skipped) < len(rows) else rows
    skipped = skipped if pool is not rows else []
    best = max(pool, key=lambda h: h.word_weight) if pool else None
    if best is None or best.word_index is None:
        return HeadChoice(HeadChoice.NO_OTHER_WORD, fallback_layer, 0, describe(r, r.focus))
    offset = best.word_index - r.focus
    return HeadChoice(
        HeadChoice.STRONGEST_LINK, best.layer, best.head, describe(r, r.focus),
        word=best.word_index, word_name=describe(r, best.word_index), weight=best.word_weight,
        offset=offset if offset in (-1, 1) else None,
        skipped=tuple((h.layer, h.head) for h in skipped),
        skipped_sides=tuple(sorted({h.offset for h in skipped})))


def format_heads(rows: list[HeadSummary], focus: str, chosen: tuple[int, int] | None = None,
                 ends: tuple[str, str] = ("[CLS]", "[SEP]")) -> str:
    """A plain-text table of layer × head: the top other word, the top token overall, and
    whether the head is positional. `chosen` (layer, head) is marked with '*'; `ends` are the
    model's own first and last special tokens (<s> and </s> for XLM-R's vocabulary)."""
    header = f"Attention of '{focus}' in every head (weights of its softmax row)"
    cols = (f"{'':1} {'layer':>5} {'head':>4}  {'top other word':<18} {'weight':>6}  "
            f"{'top token':<12} {'weight':>6}  pattern")
    lines = [header, cols, "-" * len(cols)]
    for h in rows:
        mark = "*" if chosen == (h.layer, h.head) else " "
        word = h.word if h.word is not None else "—"
        pattern = "/".join(ends) if h.pattern == SPECIAL else h.pattern or ""
        lines.append(f"{mark:1} {h.layer:>5} {h.head:>4}  {word:<18} {h.word_weight:>6.2f}  "
                     f"{h.top:<12} {h.top_weight:>6.2f}  {pattern}".rstrip())
    if chosen is not None:
        lines.append("* the head --head auto chooses (positional heads are left out)")
    if any(h.pattern == SPECIAL for h in rows):
        lines.append(f"{'/'.join(ends)}: the words give {ends[0]} and {ends[1]} at least "
                     f"{SPECIAL_SHARE:.2f} of their attention, on average")
    return "\n".join(lines)
