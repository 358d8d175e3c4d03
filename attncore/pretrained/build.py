"""The AttentionTrace of a pretrained model: the chosen layer's input and every one of its
heads, with the real learned weights and biases."""

from __future__ import annotations

import dataclasses

from attention_video.attncore import attention as att
from attention_video.attncore import encoder
from attention_video.attncore.encoder import one_blas_thread
from attention_video.attncore.encoder_heads import (
    HeadSummary,
    choose_head,
    head_pattern,
    summaries,
)
from attention_video.attncore.pretrained.run import Run, run
from attention_video.attncore.settings import Settings
from attention_video.attncore.sources import Kept
from attention_video.attncore.trace import AttentionTrace, HeadTrace


def x_label(layer: int) -> str:
    """How the chosen layer's input X was made, as a formula: the normalised sum, or the
    output H of the layer before (the scenes word it)."""
    return "LayerNorm(E + P)" if layer == 0 else f"H{layer - 1}"


def layer_heads(r: Run, layer: int, normalized: bool) -> tuple[HeadTrace, ...]:
    """Every head of `layer`, from that layer's input (attncore.encoder.layer_heads)."""
    return encoder.layer_heads(r.forward.hidden[layer], r.checkpoint.layers[layer],
                               r.checkpoint.config.num_heads, layer, normalized)


def build_pretrained_trace(s: Settings) -> AttentionTrace:
    """Settings (weights "pretrained") → the trace of one layer of the checkpoint.

    X is that layer's input; `output` is Concat(Z_h)·W_O without the output bias b_O (as the
    field's formula says), i.e. the attention block's output before bias, residual and LayerNorm.
    """
    auto = s.head == "auto"
    r = run(s)  # every layer: the model overview (chapter `heads`) shows them all
    choice = choose_head(r, s.layer) if auto else None
    layer, head = (choice.layer, choice.head) if choice else (s.layer, int(s.head))
    with one_blas_thread():
        heads = tuple(dataclasses.replace(h, pattern=head_pattern(h.weights))
                      for h in layer_heads(r, layer, s.softmax))
    W_O = r.checkpoint.layers[layer].W_O  # (heads·d_k, d_model)
    output = att.multi_head([h.Z for h in heads], W_O)  # (n, d_model)
    fw = r.forward
    return AttentionTrace(
        query_tokens=r.tokens, key_tokens=r.tokens,
        E=fw.E, P=fw.P, X=fw.hidden[layer], E_q=fw.E, P_q=fw.P, X_q=fw.hidden[layer],
        heads=heads, W_O=W_O, output=output, focus=r.focus, head_index=head,
        source="pretrained", model_name=r.ref.name, layer=layer, causal=False, cross=False,
        normalized=s.softmax, seed=s.seed, head_choice=choice, x_label=x_label(layer),
        x_from=AttentionTrace.HIDDEN if layer > 0 else AttentionTrace.EMBEDDING,
        model_weights=fw.attention,
    )


def build(s: Settings, kept: Kept) -> AttentionTrace:
    """The weight source's row (attncore.sources): the checkpoint is read each time."""
    return build_pretrained_trace(s)


def list_heads(s: Settings) -> list[HeadSummary]:
    """Every layer × head for the sentence and followed word (settings' layer/head ignored)."""
    return summaries(run(s.replace(head="auto", layer=0)))
