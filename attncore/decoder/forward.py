"""The Llama-style decoder's forward pass in numpy (float64), one small function per step.

    h_0 = E = token_embd[ids]                       (no positions added: RoPE rotates q, k)
    for each layer:
        X     = RMSNorm(h) · g_attn                  the attention's input
        Q_h   = rotate(X·W_Q,h),  K_g = rotate(X·W_K,g),  V_g = X·W_V,g
        A_h   = softmax(Q_h·K_gᵀ / √d_k, causal),   g = h // (heads / kv_heads)
        h     = h + Concat(A_h·V_g)·W_O
        F     = RMSNorm(h) · g_ffn
        h     = h + (SiLU(F·W_gate) ⊙ (F·W_up))·W_down
    logits = RMSNorm(h) · g_out · Eᵀ                  (the embedding is the output matrix)

RoPE: pair m of a head row is entries (2m, 2m+1) (llama.cpp stores W_Q, W_K permuted so
that its "normal" rope turns adjacent pairs); at position p it turns by p · base^(−2m/d_k).

Shapes: n tokens, d model width, H query heads, G key/value heads, d_k head width.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass

import numpy as np
from attention_video.attncore import attention as att
from attention_video.attncore.decoder.gguf_file import Config, LayerWeights, Model


@dataclass(frozen=True, eq=False)
class Forward:
    """Every layer's input and attention for one sentence."""

    E: np.ndarray  # (n, d) token embeddings
    hidden: tuple[np.ndarray, ...]  # L+1 × (n, d): [0] = E, [l+1] = layer l's output
    normed: tuple[np.ndarray, ...]  # L × (n, d): RMSNorm(hidden[l])·g_attn, what W_Q multiplies
    attention: np.ndarray  # (L, H, n, n) softmax weights of every head of every layer


def rms_norm(x: np.ndarray, gain: np.ndarray, eps: float) -> np.ndarray:
    """RMSNorm(x) = x / √(mean(x²) + ε) · g, over each row (no mean subtracted, no bias)."""
    return x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + eps) * gain  # (n, d)


def silu(x: np.ndarray) -> np.ndarray:
    """SiLU(x) = x · σ(x) = x / (1 + e^(−x))."""
    return x / (1.0 + np.exp(-x))


def rope_angles(n: int, d_k: int, base: float) -> np.ndarray:
    """θ[p, m] = p · base^(−2m/d_k): the angle pair m of position p turns by."""
    freq = base ** (-np.arange(0, d_k, 2, dtype=np.float64) / d_k)  # (d_k/2,)
    return np.arange(n, dtype=np.float64)[:, None] * freq[None, :]  # (n, d_k/2)


def rotate(x: np.ndarray, angles: np.ndarray) -> np.ndarray:
    """Turn each pair (x[2m], x[2m+1]) of every row by its angle:
    (a, b) → (a·cos θ − b·sin θ, a·sin θ + b·cos θ)."""
    a, b = x[..., 0::2], x[..., 1::2]  # (…, n, d_k/2) each
    cos, sin = np.cos(angles), np.sin(angles)  # (n, d_k/2)
    out = np.empty_like(x)  # (…, n, d_k)
    out[..., 0::2] = a * cos - b * sin
    out[..., 1::2] = a * sin + b * cos
    return out


def split_heads(x: np.ndarray, heads: int) -> np.ndarray:
    """(n, h·d_k) → (h, n, d_k): head h owns columns h·d_k … (h+1)·d_k."""
    n, d = x.shape
    return x.reshape(n, heads, d // heads).transpose(1, 0, 2)  # (h, n, d_k)


@dataclass(frozen=True, eq=False)
class AttentionParts:
    """One layer's attention, every head: before and after rotation, weights, output."""

    Q_before: np.ndarray  # (H, n, d_k)
    K_before: np.ndarray  # (G, n, d_k)
    Q: np.ndarray  # (H, n, d_k) rotated
    K: np.ndarray  # (G, n, d_k) rotated
    V: np.ndarray  # (G, n, d_k)
    A: np.ndarray  # (H, n, n) softmax weights, 0 above the diagonal
    Z: np.ndarray  # (n, H·d_k) Concat(A_h·V_g)


def attention(X: np.ndarray, lw: LayerWeights, c: Config, angles: np.ndarray) -> AttentionParts:
    """Grouped-query causal self-attention of one layer, with RoPE on Q and K."""
    n = X.shape[0]
    Q0 = split_heads(X @ lw.W_Q, c.num_heads)  # (H, n, d_k)
    K0 = split_heads(X @ lw.W_K, c.num_kv_heads)  # (G, n, d_k)
    V = split_heads(X @ lw.W_V, c.num_kv_heads)  # (G, n, d_k)
    Q, K = rotate(Q0, angles), rotate(K0, angles)  # (H, n, d_k), (G, n, d_k)
    g = kv_index(c)  # (H,) the kv head each query head reads
    S = Q @ K[g].transpose(0, 2, 1) / math.sqrt(c.head_dim)  # (H, n, n)
    A = att.softmax(S, att.causal_mask(n, n))  # (H, n, n)
    Z = A @ V[g]  # (H, n, d_k)
    return AttentionParts(Q0, K0, Q, K, V, A, Z.transpose(1, 0, 2).reshape(n, -1))


def kv_index(c: Config) -> np.ndarray:
    """The key/value head each query head reads: g = h // (H/G), consecutive query heads
    sharing one (ggml broadcasts K and V that way; Hugging Face's repeat_kv agrees)."""
    return np.array([c.kv_head(h) for h in range(c.num_heads)])  # (H,)


def feed_forward(F: np.ndarray, lw: LayerWeights) -> np.ndarray:
    """SwiGLU: (SiLU(F·W_gate) ⊙ F·W_up)·W_down."""
    return (silu(F @ lw.W_gate) * (F @ lw.W_up)) @ lw.W_down  # (n, d)


def decoder_layer(h: np.ndarray, lw: LayerWeights, c: Config, angles: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, AttentionParts]:
    """One block: returns (its output, its normalised input X, its attention)."""
    X = rms_norm(h, lw.attn_norm, c.eps)  # (n, d)
    parts = attention(X, lw, c, angles)
    h = h + parts.Z @ lw.W_O  # (n, d)
    h = h + feed_forward(rms_norm(h, lw.ffn_norm, c.eps), lw)  # (n, d)
    return h, X, parts


def one_blas_thread() -> contextlib.AbstractContextManager:
    """One BLAS thread (when threadpoolctl is installed): products of a few rows are fastest
    on one thread, and the machine's cores are shared."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return contextlib.nullcontext()
    return threadpool_limits(1, user_api="blas")


def run_layers(model: Model, ids: tuple[int, ...], layers: int | None = None) -> Forward:
    """Every layer (or the first `layers`) over one sentence."""
    c = model.config
    with one_blas_thread():
        E = model.embed(ids)  # (n, d)
        angles = rope_angles(len(ids), c.head_dim, c.rope_base)  # (n, d_k/2)
        h, hidden, normed, A = E, [E], [], []
        for lw in model.layers[: c.num_layers if layers is None else layers]:
            h, X, parts = decoder_layer(h, lw, c, angles)
            hidden.append(h)
            normed.append(X)
            A.append(parts.A)
    n = len(ids)
    return Forward(E, tuple(hidden), tuple(normed),
                   np.stack(A) if A else np.zeros((0, c.num_heads, n, n)))


def layer_attention(model: Model, fw: Forward, layer: int) -> AttentionParts:
    """The full attention parts of one layer, recomputed from its stored input."""
    c = model.config
    angles = rope_angles(fw.E.shape[0], c.head_dim, c.rope_base)
    with one_blas_thread():
        return attention(fw.normed[layer], model.layers[layer], c, angles)


def logits(model: Model, h: np.ndarray, embedding: np.ndarray) -> np.ndarray:
    """Next-token scores of each row: RMSNorm(h)·g_out·Eᵀ (the tied output matrix)."""
    return rms_norm(h, model.output_norm, model.config.eps) @ embedding.T  # (n, vocab)
