"""Choosing the head to follow, for any model that computes every layer's attention: the
rule of --head auto and the layer × head table, shared by the weight sources (each source
says which tokens are real words and which rows a positional pattern is judged on).

Some heads attend the same way whatever the words: every token looks at the token just
before (or after) it, or every word looks at one and the same word (a stripe: one bright
column), or at the sentence's end tokens. "The largest weight to another word" would often
pick such a head and present its link as meaningful, so these are detected from the numbers
and left out of --head auto unless every head is one (the reason says which kinds were left
out, or what kind of head is shown); the table still lists and labels them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from attention_video.attncore.tokenize import Token
from attention_video.attncore.trace import HeadChoice

POSITIONAL_SHARE = 0.5  # a head is positional when the tokens give it this much, on average,
#                         to their neighbour at one fixed side
NEIGHBOUR_TOP = 0.75  # … or when the neighbour is the token this share of them weigh most,
NEIGHBOUR_SHARE = 0.25  # with at least this much on average
OFFSET_NAMES = {-1: "previous token", 1: "next token"}
STRIPE_SHARE = 2 / 3  # a stripe: one other word is the word this share of the words weigh most
STRIPE_ROWS = 4  # … judged on at least this many words (fewer cannot tell a habit)
# The kinds of fixed pattern, as data (the scenes word them): a positional head (PREVIOUS,
# NEXT), a STRIPE, or a pattern of the source's own (ENDS: the encoders' end tokens).
PREVIOUS, NEXT, STRIPE, ENDS = "previous", "next", "stripe", "ends"


@dataclass(frozen=True, eq=False)
class Reading:
    """What head choice reads of one sentence run through a model."""

    tokens: tuple[Token, ...]
    word_of: tuple[int, ...]  # the word each token belongs to; -1 for special tokens
    words: tuple[str, ...]
    focus: int  # the followed token
    attention: np.ndarray  # (L, H, n, n) every layer's softmax weights
    inner: tuple[int, ...]  # the tokens whose neighbour a positional pattern is judged on
    pattern: Callable[[np.ndarray], str | None]  # a head's (n, n) weights → its tag, or None
    sink: int | None = None  # a token never counted as another word (a decoder's first token)


@dataclass(frozen=True)
class HeadSummary:
    """For the followed word, in one head: its strongest other word and strongest token."""

    layer: int
    head: int
    word_index: int | None  # token index of the other real word it attends to most (None: none)
    word: str | None  # that token's text
    word_weight: float  # its attention weight (0.0 when there is no other word)
    top_index: int  # the token it attends to most, any kind (special tokens and itself included)
    top: str
    top_weight: float
    offset: int | None = None  # -1 / +1: a positional head (previous / next token); None: not
    pattern: str | None = None  # "previous token", "next token", a source's own tag, or None
    stripe: int | None = None  # the word most words weigh most here, when it is one (a stripe)
    stripe_word: str | None = None  # its text

    @property
    def positional(self) -> bool:
        return self.offset is not None

    @property
    def kind(self) -> str | None:
        """Its fixed pattern (PREVIOUS, NEXT, STRIPE, ENDS), or None: its pattern depends on
        the words, so its strongest link means something."""
        if self.offset is not None:
            return PREVIOUS if self.offset < 0 else NEXT
        if self.stripe is not None:
            return STRIPE
        return ENDS if self.pattern is not None else None


def is_real_word(t: Token) -> bool:
    """A word or a piece of one: not a special token, not punctuation."""
    return t.kind in ("word", "subword")


def other_words(r: Reading) -> list[int]:
    """Tokens the followed word may be said to attend to: real words, not itself, not
    another piece of its own word."""
    i = r.focus
    return [j for j, t in enumerate(r.tokens)
            if is_real_word(t) and j != i and j != r.sink
            and (r.word_of[j] != r.word_of[i] or r.word_of[i] < 0)]


def sink_share(A: np.ndarray, sink: int = 0) -> float:
    """The mean weight every head of every layer gives the sink token, over the tokens after
    it: mean over l, h and i > sink of A[l, h, i, sink]."""
    rows = A[:, :, sink + 1:, sink]  # (L, H, n − sink − 1)
    return float(rows.mean()) if rows.size else 0.0


def positional_offset(A: np.ndarray, inner, share: float = POSITIONAL_SHARE) -> int | None:
    """-1 or +1 when the `inner` tokens give, on average, at least `share` of their attention
    to the neighbour on that side, or when that neighbour is the inner token that at least
    NEIGHBOUR_TOP of them weigh most (and gets NEIGHBOUR_SHARE on average); None otherwise
    (or with fewer than 2 such tokens).

    mean_i A[i, i+o] over the inner tokens i that have such a neighbour, o ∈ {−1, +1};
    top_i = argmax_j A[i, j] over the inner tokens j ≠ i."""
    n = A.shape[0]  # A: (n, n) one head's weights
    inner = list(inner)
    for o in (-1, 1):
        rows = np.array([i for i in inner if 0 <= i + o < n], dtype=int)  # (m,)
        if len(rows) < 2:
            continue
        mean = A[rows, rows + o].mean()
        cols = np.array(inner, dtype=int)  # (k,)
        sub = np.where(rows[:, None] == cols[None, :], -np.inf, A[np.ix_(rows, cols)])  # (m, k)
        tops = cols[np.argmax(sub, axis=1)]  # (m,)
        if mean >= share or (mean >= NEIGHBOUR_SHARE
                             and np.mean(tops == rows + o) >= NEIGHBOUR_TOP):
            return o
    return None


def stripe_column(A: np.ndarray, r: Reading) -> int | None:
    """The word j that at least STRIPE_SHARE of the other words weigh most (among the words
    each may see, itself left out), judged on at least STRIPE_ROWS words; None otherwise.

    top_i = argmax_j A[i, j] over the real words j ≠ i that row i can see (A[i, j] > 0)."""
    words = [j for j, t in enumerate(r.tokens) if is_real_word(t) and j != r.sink]
    tops = {}  # row → the word it weighs most
    for i in words:
        seen = [j for j in words if j != i and A[i, j] > 0.0]
        if seen:
            tops[i] = seen[int(np.argmax(A[i, seen]))]
    if len(tops) < STRIPE_ROWS:
        return None
    for c in sorted(set(tops.values())):
        rows = sum(1 for i in tops if i != c)  # the words other than c that weigh a word
        if sum(1 for top in tops.values() if top == c) >= STRIPE_SHARE * rows:
            return c
    return None


def summaries(r: Reading) -> list[HeadSummary]:
    """One HeadSummary per layer and head, in order (layer 0 head 0 first)."""
    att = r.attention  # (L, H, n, n)
    others = other_words(r)
    out = []
    for layer in range(att.shape[0]):
        for head in range(att.shape[1]):
            row = att[layer, head, r.focus]  # (n,) the followed word's weights
            top = int(np.argmax(row))
            stripe = stripe_column(att[layer, head], r)
            j = others[int(np.argmax(row[others]))] if others else None
            out.append(HeadSummary(
                layer, head, j, r.tokens[j].text if j is not None else None,
                float(row[j]) if j is not None else 0.0, top, r.tokens[top].text, float(row[top]),
                positional_offset(att[layer, head], r.inner), r.pattern(att[layer, head]),
                stripe, r.tokens[stripe].text if stripe is not None else None))
    return out


def describe(r: Reading, j: int) -> str:
    """'milk', or "'##ank' (part of 'drank')" for a piece of a longer word."""
    text = f"'{r.tokens[j].text}'"
    w = r.word_of[j]
    if w >= 0 and r.word_of.count(w) > 1:
        text += f" (part of '{r.words[w]}')"
    return text


def choose_head(r: Reading, fallback_layer: int = 0, skip_positional: bool = True) -> HeadChoice:
    """The head where the followed word gives the largest weight to one other real word,
    heads with a fixed pattern (HeadSummary.kind) left out unless every head has one (or
    skip_positional is False), and why, as data. Ties go to the lowest layer, then the
    lowest head."""
    rows = summaries(r)
    skipped = [h for h in rows if h.kind] if skip_positional else []
    pool = [h for h in rows if not h.kind] if skipped and len(skipped) < len(rows) else rows
    skipped = skipped if pool is not rows else []
    best = max(pool, key=lambda h: h.word_weight) if pool else None
    if best is None or best.word_index is None or best.word_weight <= 0.0:  # (0: all masked)
        return HeadChoice(HeadChoice.NO_OTHER_WORD, fallback_layer, 0, describe(r, r.focus))
    offset = best.word_index - r.focus
    sink = r.sink is not None and r.sink != r.focus and is_real_word(r.tokens[r.sink])
    return HeadChoice(
        HeadChoice.STRONGEST_LINK, best.layer, best.head, describe(r, r.focus),
        word=best.word_index, word_name=describe(r, best.word_index), weight=best.word_weight,
        offset=offset if offset in (-1, 1) else None,
        skipped=tuple((h.layer, h.head) for h in skipped),
        skipped_sides=tuple(sorted({h.offset for h in skipped if h.positional})),
        skipped_kinds=tuple(k for k in (PREVIOUS, NEXT, STRIPE, ENDS)
                            if any(h.kind == k for h in skipped)),
        kind=best.kind if skip_positional else None,
        sink_name=describe(r, r.sink) if sink else None,
        sink_share=sink_share(r.attention, r.sink) if sink else None)


def format_heads(rows: list[HeadSummary], focus: str, chosen: tuple[int, int] | None = None,
                 notes: tuple[str, ...] = ()) -> str:
    """A plain-text table of layer × head: the top other word, the top token overall, and
    whether the head is positional. `chosen` (layer, head) is marked with '*'; `notes` are
    the source's own lines under the table (what its tags mean)."""
    header = f"Attention of '{focus}' in every head (weights of its softmax row)"
    cols = (f"{'':1} {'layer':>5} {'head':>4}  {'top other word':<18} {'weight':>6}  "
            f"{'top token':<12} {'weight':>6}  pattern")  # weights at 3 decimals, as the video writes them
    lines = [header, cols, "-" * len(cols)]
    for h in rows:
        mark = "*" if chosen == (h.layer, h.head) else " "
        word = h.word if h.word is not None else "—"
        pattern = (f"one column ('{h.stripe_word}')" if h.kind == STRIPE else h.pattern) or ""
        lines.append(f"{mark:1} {h.layer:>5} {h.head:>4}  {word:<18} {h.word_weight:>6.3f}  "
                     f"{h.top:<12} {h.top_weight:>6.3f}  {pattern}".rstrip())
    if chosen is not None:
        lines.append("* the head --head auto chooses (heads with a fixed pattern are left out: "
                     "previous or next token, one column, end tokens; unless every head has one)")
    lines.extend(notes)
    return "\n".join(lines)
