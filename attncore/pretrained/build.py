"""The AttentionTrace of a pretrained model: the chosen layer's input and every one of its
heads, with the real learned weights and biases."""

from __future__ import annotations

import dataclasses

import numpy as np
from attention_video.attncore import attention as att
from attention_video.attncore.pretrained.forward import one_blas_thread
from attention_video.attncore.pretrained.heads import (
    HeadSummary,
    choose_head,
    head_pattern,
    summaries,
)
from attention_video.attncore.pretrained.run import Run, run
from attention_video.attncore.settings import Settings
from attention_video.attncore.trace import AttentionTrace, HeadTrace, compute_head


def x_label(layer: int) -> str:
    """How the chosen layer's input X was made, as a formula: the normalised sum, or the
    output H of the layer before (the scenes word it)."""
    return "LayerNorm(E + P)" if layer == 0 else f"H{layer - 1}"


def layer_heads(r: Run, layer: int, normalized: bool) -> tuple[HeadTrace, ...]:
    """Every head of `layer`: head h uses columns h·d_k … (h+1)·d_k of W_Q, W_K, W_V.

    Q_h = X·W_Q[:, h] + b_Q[h] (likewise K_h, V_h); weights = softmax(Q_h·K_hᵀ/√d_k)."""
    X = r.forward.hidden[layer]  # (n, d_model)
    lw = r.checkpoint.layers[layer]
    d_k = r.checkpoint.config.head_dim
    mask = np.ones((len(r.tokens), len(r.tokens)), dtype=bool)  # (n, n) one sentence, no padding
    heads = []
    for h in range(r.checkpoint.config.num_heads):
        c = slice(h * d_k, (h + 1) * d_k)
        heads.append(compute_head(layer, h, X, X, lw.W_Q[:, c], lw.W_K[:, c], lw.W_V[:, c],
                                  lw.b_Q[c], lw.b_K[c], lw.b_V[c], mask, normalized))
    return tuple(heads)


def build_pretrained_trace(s: Settings) -> AttentionTrace:
    """Settings (weights "pretrained") → the trace of one layer of the checkpoint.

    X is that layer's input; `output` is Concat(Z_h)·W_O without the output bias b_O (as the
    field's formula says), i.e. the attention block's output before bias, residual and LayerNorm.
    """
    auto = s.head == "auto"
    r = run(s)  # every layer: the model overview (chapter 10) shows them all
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
        model_weights=fw.attention,
    )


def list_heads(s: Settings) -> list[HeadSummary]:
    """Every layer × head for the sentence and followed word (settings' layer/head ignored)."""
    return summaries(run(s.replace(head="auto", layer=0)))
