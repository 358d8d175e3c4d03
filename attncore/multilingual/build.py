"""The AttentionTrace of multilingual-e5-small: the chosen layer's input and every one of its
heads, with the real (dequantised) weights and biases, as attncore.pretrained builds it."""

from __future__ import annotations

import dataclasses

from attention_video.attncore import attention as att
from attention_video.attncore.encoder import layer_heads, one_blas_thread
from attention_video.attncore.encoder_heads import HeadSummary, choose_head, head_pattern, summaries
from attention_video.attncore.multilingual.run import run
from attention_video.attncore.settings import Settings
from attention_video.attncore.sources import Kept
from attention_video.attncore.trace import AttentionTrace


def x_label(layer: int) -> str:
    """How the chosen layer's input X was made, as a formula (the scenes word it)."""
    return "LayerNorm(E + P)" if layer == 0 else f"H{layer - 1}"


def build_multilingual_trace(s: Settings) -> AttentionTrace:
    """Settings (weights "multilingual") → the trace of one layer of multilingual-e5-small.

    A real encoder trained elsewhere, shown exactly as the English one: its row of
    attncore.sources has the same capabilities, which is what the scenes read."""
    auto = s.head == "auto"
    r = run(s)
    choice = choose_head(r, s.layer) if auto else None
    layer, head = (choice.layer, choice.head) if choice else (s.layer, int(s.head))
    lw = r.model.layers[layer]
    fw = r.forward
    with one_blas_thread():
        heads = tuple(dataclasses.replace(h, pattern=head_pattern(h.weights)) for h in
                      layer_heads(fw.hidden[layer], lw, r.model.config.num_heads, layer,
                                  s.softmax))
    output = att.multi_head([h.Z for h in heads], lw.W_O)  # (n, d_model)
    return AttentionTrace(
        query_tokens=r.tokens, key_tokens=r.tokens,
        E=fw.E, P=fw.P, X=fw.hidden[layer], E_q=fw.E, P_q=fw.P, X_q=fw.hidden[layer],
        heads=heads, W_O=lw.W_O, output=output, focus=r.focus, head_index=head,
        source="multilingual", model_name=r.ref.name, layer=layer, causal=False, cross=False,
        normalized=s.softmax, seed=s.seed, head_choice=choice, x_label=x_label(layer),
        x_from=AttentionTrace.HIDDEN if layer > 0 else AttentionTrace.EMBEDDING,
        model_weights=fw.attention,
    )


def build(s: Settings, kept: Kept) -> AttentionTrace:
    """The weight source's row (attncore.sources): the model file is read each time."""
    return build_multilingual_trace(s)


def list_heads(s: Settings) -> list[HeadSummary]:
    """Every layer × head for the sentence and followed word (settings' layer/head ignored)."""
    return summaries(run(s.replace(head="auto", layer=0)))
