"""The BERT encoder forward pass in numpy (float64), one small function per step.

    X_0 = LayerNorm(E + P),  E = word embeddings, P = position + token-type(0) embeddings
    for each layer:
        A_h = softmax(Q_h·K_hᵀ / √d_k),  Q_h = X·W_Q,h + b_Q,h  (likewise K_h, V_h)
        H   = LayerNorm(X + Concat(A_h·V_h)·W_O + b_O)
        X'  = LayerNorm(H + GELU(H·W_1 + b_1)·W_2 + b_2)

Shapes: n tokens, d model width, h heads of width d_k, d_ff feed-forward width.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass

import numpy as np
from attention_video.attncore import attention as att
from attention_video.attncore.pretrained.checkpoint import (
    Checkpoint,
    LayerNormWeights,
    LayerWeights,
)

_erf = np.vectorize(math.erf, otypes=[np.float64])  # exact erf; numpy has none (≈4 ms per 32×1536)


@dataclass(frozen=True, eq=False)
class Forward:
    """Every layer's input and attention for one sentence."""

    E: np.ndarray  # (n, d) word embeddings
    P: np.ndarray  # (n, d) position + token-type embeddings
    hidden: tuple[np.ndarray, ...]  # L+1 × (n, d): [0] = LayerNorm(E+P), [l+1] = layer l's output
    attention: np.ndarray  # (L, h, n, n) softmax weights of every head of every layer


def layer_norm(x: np.ndarray, ln: LayerNormWeights, eps: float) -> np.ndarray:
    """LayerNorm(x) = (x − mean) / √(var + ε) · γ + β, over each row (biased variance)."""
    mean = x.mean(axis=-1, keepdims=True)  # (n, 1)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)  # (n, 1)
    return (x - mean) / np.sqrt(var + eps) * ln.gamma + ln.beta  # (n, d)


def gelu(x: np.ndarray) -> np.ndarray:
    """GELU(x) = x · Φ(x) = ½ x (1 + erf(x / √2)), the exact form BERT uses."""
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def embed(ck: Checkpoint, ids: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """E = word_embeddings[ids];  P = position_embeddings[0…n−1] + token_type_embeddings[0]."""
    n = len(ids)
    E = ck.word_embeddings[np.asarray(ids)].astype(np.float64)  # (n, d)
    P = ck.position_embeddings[:n] + ck.token_type_embeddings[0]  # (n, d)
    return E, P


def split_heads(x: np.ndarray, heads: int) -> np.ndarray:
    """(n, h·d_k) → (h, n, d_k): head h owns columns h·d_k … (h+1)·d_k."""
    n, d = x.shape
    return x.reshape(n, heads, d // heads).transpose(1, 0, 2)  # (h, n, d_k)


def self_attention(x: np.ndarray, lw: LayerWeights, heads: int) -> tuple[np.ndarray, np.ndarray]:
    """All heads at once: A_h = softmax(Q_h·K_hᵀ/√d_k), Z_h = A_h·V_h; returns (Concat Z, A)."""
    Q = split_heads(x @ lw.W_Q + lw.b_Q, heads)  # (h, n, d_k)
    K = split_heads(x @ lw.W_K + lw.b_K, heads)  # (h, n, d_k)
    V = split_heads(x @ lw.W_V + lw.b_V, heads)  # (h, n, d_k)
    S = Q @ K.transpose(0, 2, 1) / math.sqrt(Q.shape[-1])  # (h, n, n)
    A = att.softmax(S)  # (h, n, n)
    Z = A @ V  # (h, n, d_k)
    n = x.shape[0]
    return Z.transpose(1, 0, 2).reshape(n, -1), A  # (n, d), (h, n, n)


def encoder_layer(x: np.ndarray, lw: LayerWeights, heads: int, eps: float
                  ) -> tuple[np.ndarray, np.ndarray]:
    """One layer: attention + residual + LayerNorm, feed-forward + residual + LayerNorm."""
    Z, A = self_attention(x, lw, heads)  # (n, d), (h, n, n)
    h = layer_norm(x + Z @ lw.W_O + lw.b_O, lw.ln_attn, eps)  # (n, d)
    f = gelu(h @ lw.W_1 + lw.b_1) @ lw.W_2 + lw.b_2  # (n, d)
    return layer_norm(h + f, lw.ln_ffn, eps), A  # (n, d), (h, n, n)


def one_blas_thread() -> contextlib.AbstractContextManager:
    """One BLAS thread while the encoder runs, when threadpoolctl is installed.

    A sentence is at most 64 rows: such products are fastest on one thread, and extra threads
    only wait for each other, badly when other processes hold the cores (measured on 2 cores:
    (32, 384)·(384, 1536) took 1.1 ms on one thread, 3.6 ms on two)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return contextlib.nullcontext()
    return threadpool_limits(1, user_api="blas")


def encode(ck: Checkpoint, ids: tuple[int, ...], layers: int | None = None) -> Forward:
    """Run the encoder over one sentence (attention mask all ones); `layers` stops early."""
    with one_blas_thread():
        return _encode(ck, ids, layers)


def _encode(ck: Checkpoint, ids: tuple[int, ...], layers: int | None) -> Forward:
    c = ck.config
    E, P = embed(ck, ids)  # (n, d) each
    x = layer_norm(E + P, ck.ln_embed, c.layer_norm_eps)  # (n, d)
    hidden, attention = [x], []
    for lw in ck.layers[: c.num_layers if layers is None else layers]:
        x, A = encoder_layer(x, lw, c.num_heads, c.layer_norm_eps)
        hidden.append(x)
        attention.append(A)
    return Forward(E, P, tuple(hidden), np.stack(attention) if attention else
                   np.zeros((0, c.num_heads, len(ids), len(ids))))
