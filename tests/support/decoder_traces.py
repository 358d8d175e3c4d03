"""Decoder-shaped traces for the scene tests, before (and besides) the real decoder source:
a seeded random causal trace whose q and k rows are really turned by RoPE, with 9 query
heads reading 3 key/value heads and a model overview of 30 layers.

Every array is consistent with the contract of attncore.trace: HeadTrace.Q/K are the
rows after the turn, RotaryTrace holds them before; query head h reads key/value head
h // (heads / kv_heads); the scores, softmax and Z are recomputed from the turned rows.
The turn is written out here with complex numbers, not with attncore.rotary.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from attention_video.attncore import attention as att
from attention_video.attncore import sources
from attention_video.attncore.build import build_random_trace
from attention_video.attncore.settings import Settings
from attention_video.attncore.trace import AttentionTrace, HeadTrace, RotaryTrace

SENTENCE = "The black cat drank the milk"
SINK_Q, SINK_K = 3.0, 8.0  # the last pair of every q, and of k at token 0, with sink=True


def turn(X: np.ndarray, angles: np.ndarray) -> np.ndarray:
    """Pair m = (x₂ₘ, x₂ₘ₊₁) as the complex number x₂ₘ + i·x₂ₘ₊₁, times e^{iθ}."""
    z = (X[..., 0::2] + 1j * X[..., 1::2]) * np.exp(1j * angles)  # (n, d_k/2)
    out = np.empty(X.shape)
    out[..., 0::2], out[..., 1::2] = z.real, z.imag
    return out


def settings(sentence: str = SENTENCE, **kw) -> Settings:
    base = dict(sentence=sentence, weights="random", causal=True, heads=9, d_model=18, d_k=8)
    return Settings(**(base | kw))


def decoder_trace(s: Settings | None = None, kv_heads: int = 3, base: float = 10000.0,
                  layers: int = 30, sink: bool = False) -> AttentionTrace:
    """A random causal trace of s (9 heads) made into a rotary, grouped-query decoder's.
    sink: every query's last pair and the first key's line up (that pair turns by about
    a thousandth of a radian per position), so every head weighs token 0 most."""
    s = s or settings()
    t = build_random_trace(s)
    n, d_k, n_heads = t.n_q, t.d_k, len(t.heads)
    group = n_heads // kv_heads
    Q_before = np.stack([h.Q for h in t.heads])  # (heads, n, d_k)
    K_before = np.stack([t.heads[g * group].K for g in range(kv_heads)])  # (kv_heads, n, d_k)
    if sink:
        Q_before[:, :, -2:] = (SINK_Q, 0.0)
        K_before[:, :, -2:] = 0.0
        K_before[:, 0, -2:] = (SINK_K, 0.0)
    pos = np.arange(n, dtype=np.float64)[:, None]  # (n, 1)
    angles = pos * base ** (-np.arange(0, d_k, 2) / d_k)[None, :]  # (n, d_k/2)
    mask = att.causal_mask(n, n)
    heads = []
    for h, old in enumerate(t.heads):
        shared = t.heads[(h // group) * group]
        Q = turn(Q_before[h], angles)  # (n, d_k)
        K = turn(K_before[h // group], angles)  # (n, d_k)
        S = Q @ K.T  # (n, n)
        scaled = S / np.sqrt(d_k)  # (n, n)
        parts = att.softmax_parts(scaled, mask)
        Z = parts.weights @ shared.V  # (n, d_k)
        heads.append(HeadTrace(0, h, old.W_Q, shared.W_K, shared.W_V, old.b_Q, shared.b_K,
                               shared.b_V, Q, K, shared.V, S, scaled, mask, parts.row_max,
                               parts.exp, parts.total, parts.weights, Z))
    rng = np.random.default_rng(s.seed)
    model = rng.normal(size=(layers, n_heads, n, n)) * 2  # (layers, heads, n, n) logits
    model = np.where(mask, model, -np.inf)
    model = np.exp(model - model.max(axis=-1, keepdims=True))
    model /= model.sum(axis=-1, keepdims=True)
    model[0] = np.stack([h.weights for h in heads])  # the layer shown is the heads' own
    return dataclasses.replace(
        t, heads=tuple(heads), source="decoder", can=sources.source("decoder").can,
        model_name="test decoder",
        output=att.multi_head([h.Z for h in heads], t.W_O), model_weights=model,
        rope=RotaryTrace(base, angles, Q_before, K_before),
        kv_heads=tuple(h // group for h in range(n_heads)), head_choice=None,
        x_label="E")
