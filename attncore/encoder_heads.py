"""Which head shows the followed word attending to another word, for the encoder weight
sources (attncore.pretrained: all-MiniLM-L6-v2; attncore.multilingual: multilingual-e5-small):
the encoder's reading of attncore.heads, whose rule every model shares.

An encoder's sentence starts and ends with a special token ([CLS] … [SEP], or <s> … </s>):
positional heads are judged on the tokens between them, and a head that parks most of the
words' attention on the two ends is tagged. In all-MiniLM-L6-v2, layer 0 head 2 gives ~1.00 to
the previous token for every word of every sentence: such heads are left out of --head auto.
"""

from __future__ import annotations

import dataclasses
from typing import Protocol

import numpy as np
from attention_video.attncore import attention as att
from attention_video.attncore import heads as common
from attention_video.attncore.encoder import Encoding, Forward, layer_heads, one_blas_thread
from attention_video.attncore.heads import OFFSET_NAMES, POSITIONAL_SHARE, HeadSummary
from attention_video.attncore.settings import Settings
from attention_video.attncore.tokenize import Token
from attention_video.attncore.trace import AttentionTrace, HeadChoice

__all__ = ["OFFSET_NAMES", "POSITIONAL_SHARE", "SPECIAL", "SPECIAL_SHARE", "HeadSummary", "Run",
           "choose_head", "describe", "format_heads", "head_pattern", "other_words",
           "positional_offset", "reading", "special_share", "summaries"]

SPECIAL_SHARE = 0.75  # a head "looks at [CLS]/[SEP]" when the words give them this much, on
#                       average (many BERT heads park half their attention there: only the
#                       heads that do little else are tagged)
SPECIAL = "[CLS]/[SEP]"  # the tag; format_heads names the model's own end tokens


class Run(Protocol):
    """One sentence through an encoder: its encoding, every layer's attention, the
    followed token (attncore.pretrained.run.Run, attncore.multilingual.run.Run)."""

    encoding: Encoding
    forward: Forward
    focus: int

    @property
    def tokens(self) -> tuple[Token, ...]: ...


def inner(n: int) -> range:
    """The sentence's own tokens: not the first ([CLS]) and the last ([SEP])."""
    return range(1, n - 1)


def positional_offset(A: np.ndarray, share: float = POSITIONAL_SHARE) -> int | None:
    """-1 or +1 when the sentence's tokens (not the end tokens) give, on average, at least
    `share` of their attention to the neighbour on that side; None otherwise."""
    return common.positional_offset(A, inner(A.shape[0]), share)


def special_share(A: np.ndarray) -> float:
    """The mean weight the sentence's tokens give to the two end tokens together:
    mean_i (A[i, 0] + A[i, n−1]) over the inner tokens i."""
    n = A.shape[0]  # A: (n, n) one head's weights, [CLS] first, [SEP] last
    rows = np.arange(1, n - 1)  # (n−2,)
    if len(rows) == 0:
        return 0.0
    return float((A[rows, 0] + A[rows, n - 1]).mean())


def head_pattern(A: np.ndarray) -> str | None:
    """What a head does whatever the words: "previous token" / "next token" (positional,
    see positional_offset), SPECIAL (the words give the end tokens at least SPECIAL_SHARE),
    or None (the head's pattern depends on the words)."""
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


def format_heads(rows: list[HeadSummary], focus: str, chosen: tuple[int, int] | None = None,
                 ends: tuple[str, str] = ("[CLS]", "[SEP]")) -> str:
    """The layer × head table; the end-token tag written with the model's own end tokens
    (<s> and </s> for XLM-R's vocabulary), and what it means when a head has it."""
    tag = "/".join(ends)
    rows = [h if h.pattern != SPECIAL else dataclasses.replace(h, pattern=tag)
            for h in rows]
    notes = ((f"{tag}: the words give {ends[0]} and {ends[1]} at least {SPECIAL_SHARE:.2f} "
              "of their attention, on average",) if any(h.pattern == tag for h in rows) else ())
    return common.format_heads(rows, focus, chosen, notes)


def x_label(layer: int) -> str:
    """How an encoder layer's input X was made, as a formula: the normalised sum of the
    embeddings, or the output H of the layer below (the scenes word it)."""
    return "LayerNorm(E + P)" if layer == 0 else f"H{layer - 1}"


def encoder_trace(s: Settings, r: Run, layers, num_heads: int, source: str,
                  model_name: str) -> AttentionTrace:
    """The trace of one encoder layer (the chosen one, or the one --head auto picks): that
    layer's input and every one of its heads, with the real weights and biases. `layers`:
    each layer's weights (W_Q … W_O and their biases).

    `output` is Concat(Z_h)·W_O without the output bias b_O (as the field's formula says):
    the attention block's output before bias, residual and LayerNorm."""
    choice = choose_head(r, s.layer) if s.head == "auto" else None
    layer, head = (choice.layer, choice.head) if choice else (s.layer, int(s.head))
    fw = r.forward
    X = fw.hidden[layer]  # (n, d_model) the layer's input
    with one_blas_thread():
        heads = tuple(dataclasses.replace(h, pattern=head_pattern(h.weights)) for h in
                      layer_heads(X, layers[layer], num_heads, layer, s.softmax))
    W_O = layers[layer].W_O  # (heads·d_k, d_model)
    output = att.multi_head([h.Z for h in heads], W_O)  # (n, d_model)
    return AttentionTrace(
        query_tokens=r.tokens, key_tokens=r.tokens,
        E=fw.E, P=fw.P, X=X, E_q=fw.E, P_q=fw.P, X_q=X,
        heads=heads, W_O=W_O, output=output, focus=r.focus, head_index=head,
        source=source, model_name=model_name, layer=layer, causal=False, cross=False,
        normalized=s.softmax, seed=s.seed, head_choice=choice, x_label=x_label(layer),
        x_from=AttentionTrace.HIDDEN if layer > 0 else AttentionTrace.EMBEDDING,
        model_weights=fw.attention)
