"""The AttentionTrace of the decoder: the chosen layer's normalised input, every query head
with the key/value head it shares, Q and K after rotation and before it (RotaryTrace)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from attention_video.attncore import attention as att
from attention_video.attncore import heads as common
from attention_video.attncore.decoder.forward import AttentionParts, layer_attention, rope_angles
from attention_video.attncore.decoder.gguf_file import MODEL_NAME
from attention_video.attncore.decoder.run import Run, pattern, reading, run
from attention_video.attncore.settings import Settings
from attention_video.attncore.sources import Kept
from attention_video.attncore.trace import AttentionTrace, HeadTrace, RotaryTrace


def x_label(layer: int) -> str:
    """How the chosen layer's input X was made, as a formula: the normalised embedding, or
    the normalised output H of the layer before (no P: positions enter by rotation)."""
    return "RMSNorm(E)" if layer == 0 else f"RMSNorm(H{layer - 1})"


def head_trace(r: Run, parts: AttentionParts, layer: int, h: int, normalized: bool) -> HeadTrace:
    """Query head h of `layer`: Q_h after rotation against the K and V of kv head h // group.

    W_Q is columns h·d_k … of the layer's W_Q; W_K, W_V those of the shared kv head."""
    c = r.model.config
    lw = r.model.layers[layer]
    d_k, g = c.head_dim, c.kv_head(h)
    q, kv = slice(h * d_k, (h + 1) * d_k), slice(g * d_k, (g + 1) * d_k)
    Q, K, V = parts.Q[h], parts.K[g], parts.V[g]  # (n, d_k) each
    n = Q.shape[0]
    mask = att.causal_mask(n, n)  # (n, n)
    S = att.scores(Q, K)  # (n, n)
    S_scaled = att.scale(S, d_k)  # (n, n)
    sp = att.softmax_parts(S_scaled, mask)
    A = sp.weights if normalized else np.where(mask, S, 0.0)  # (n, n)
    zeros = np.zeros(d_k)
    return HeadTrace(layer, h, lw.W_Q[:, q], lw.W_K[:, kv], lw.W_V[:, kv], zeros, zeros, zeros,
                     Q, K, V, S, S_scaled, mask, sp.row_max, sp.exp, sp.total, A,
                     att.weighted_sum(A, V), pattern=pattern(sp.weights))


def build_decoder_trace(s: Settings, cache: Path | None = None) -> AttentionTrace:
    """Settings (weights "decoder") → the trace of one layer of SmolLM2-135M-Instruct.
    `cache`: where the dequantised weights are kept between runs (None: read the file).

    `output` is Concat(Z_h)·W_O, the attention block's output before the residual sum."""
    r = run(s, cache=cache)  # every layer: the model overview shows them all
    choice = common.choose_head(reading(r), s.layer) if s.head == "auto" else None
    layer, head = (choice.layer, choice.head) if choice else (s.layer, int(s.head))
    c = r.model.config
    parts = layer_attention(r.model, r.forward, layer)
    heads = tuple(head_trace(r, parts, layer, h, s.softmax) for h in range(c.num_heads))
    W_O = r.model.layers[layer].W_O  # (heads·d_k, d_model)
    output = att.multi_head([h.Z for h in heads], W_O)  # (n, d_model)
    fw, n = r.forward, len(r.tokens)
    X = fw.normed[layer]  # (n, d_model)
    P = np.zeros_like(X)  # no position vector is added: RoPE turns q and k instead
    rope = RotaryTrace(c.rope_base, rope_angles(n, c.head_dim, c.rope_base),
                       parts.Q_before, parts.K_before)
    return AttentionTrace(
        query_tokens=r.tokens, key_tokens=r.tokens, E=fw.E, P=P, X=X, E_q=fw.E, P_q=P, X_q=X,
        heads=heads, W_O=W_O, output=output, focus=r.focus, head_index=head,
        source="decoder", model_name=MODEL_NAME, layer=layer, causal=True, cross=False,
        normalized=s.softmax, seed=0, head_choice=choice, x_label=x_label(layer),
        x_from=AttentionTrace.NORMED_HIDDEN if layer > 0 else AttentionTrace.EMBEDDING,
        positional=False, model_weights=fw.attention, rope=rope,
        kv_heads=tuple(c.kv_head(h) for h in range(c.num_heads)))


def list_heads(s: Settings, cache: Path | None = None) -> list[common.HeadSummary]:
    """Every layer × head for the sentence and followed word (settings' layer/head ignored)."""
    return common.summaries(reading(run(s.replace(head="auto", layer=0), cache=cache)))


def head_table(s: Settings, cache: Path | None = None) -> str:
    """The text table of every head for the settings' sentence and followed word."""
    r = run(s.replace(head="auto", layer=0), cache=cache)
    rd = reading(r)
    choice = common.choose_head(rd)
    notes = (f"the first token {common.describe(rd, 0)} is never counted as another word (an "
             f"attention sink): mean weight to it over all heads and later tokens "
             f"{common.sink_share(rd.attention):.2f}",) if r.focus != 0 else ()
    return common.format_heads(common.summaries(rd), r.tokens[r.focus].text,
                               (choice.layer, choice.head), notes)


def build(s: Settings, kept: Kept) -> AttentionTrace:
    """The weight source's row (attncore.sources): dequantised weights kept in
    kept.models_dir between runs."""
    return build_decoder_trace(s, kept.models_dir)


def kept_head_table(s: Settings, kept: Kept) -> str:
    """--list-heads (the row's head table), with the kept weights."""
    return head_table(s, kept.models_dir)
