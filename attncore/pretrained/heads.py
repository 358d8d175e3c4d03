"""Which head shows the followed word attending to another word: --head auto and the table
of every layer × head that helps a lecturer choose."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attncore.pretrained.run import Run, is_real_word


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


def other_words(r: Run) -> list[int]:
    """Tokens the followed word may be said to attend to: real words, not itself, not
    another piece of its own word."""
    enc, i = r.encoding, r.focus
    return [j for j, t in enumerate(enc.tokens)
            if is_real_word(t) and j != i and enc.word_of[j] != enc.word_of[i]]


def summaries(r: Run) -> list[HeadSummary]:
    """One HeadSummary per layer and head, in order (layer 0 head 0 first)."""
    rows = r.forward.attention[:, :, r.focus, :]  # (L, H, n) the followed word's attention rows
    others = other_words(r)
    out = []
    for layer in range(rows.shape[0]):
        for head in range(rows.shape[1]):
            row = rows[layer, head]  # (n,)
            top = int(np.argmax(row))
            j = others[int(np.argmax(row[others]))] if others else None
            out.append(HeadSummary(
                layer, head, j, r.tokens[j].text if j is not None else None,
                float(row[j]) if j is not None else 0.0, top, r.tokens[top].text, float(row[top])))
    return out


def describe(r: Run, j: int) -> str:
    """'milk', or "'##ank' (part of 'drank')" for a piece of a longer word."""
    enc = r.encoding
    text = f"'{enc.tokens[j].text}'"
    w = enc.word_of[j]
    if w >= 0 and enc.word_of.count(w) > 1:
        text += f" (part of '{enc.words[w]}')"
    return text


def choose_head(r: Run, fallback_layer: int = 0) -> tuple[int, int, str]:
    """(layer, head, reason): the head where the followed word gives the largest weight to one
    other real word. Ties go to the lowest layer, then the lowest head."""
    rows = summaries(r)
    best = max(rows, key=lambda h: h.word_weight) if rows else None
    if best is None or best.word_index is None:
        reason = (f"layer {fallback_layer}, head 0: the sentence has no other word for "
                  f"{describe(r, r.focus)} to attend to")
        return fallback_layer, 0, reason
    reason = (f"layer {best.layer}, head {best.head}: {describe(r, r.focus)} gives "
              f"{best.word_weight:.2f} of its attention to {describe(r, best.word_index)}, "
              "the highest to another word of any head")
    return best.layer, best.head, reason


def format_heads(rows: list[HeadSummary], focus: str, chosen: tuple[int, int] | None = None) -> str:
    """A plain-text table of layer × head: the top other word and the top token overall.

    `chosen` (layer, head) is marked with '*'."""
    header = f"Attention of '{focus}' in every head (weights of its softmax row)"
    cols = (f"{'':1} {'layer':>5} {'head':>4}  {'top other word':<18} {'weight':>6}  "
            f"{'top token':<12} {'weight':>6}")
    lines = [header, cols, "-" * len(cols)]
    for h in rows:
        mark = "*" if chosen == (h.layer, h.head) else " "
        word = h.word if h.word is not None else "—"
        lines.append(f"{mark:1} {h.layer:>5} {h.head:>4}  {word:<18} {h.word_weight:>6.2f}  "
                     f"{h.top:<12} {h.top_weight:>6.2f}")
    if chosen is not None:
        lines.append("* the head --head auto chooses")
    return "\n".join(lines)
