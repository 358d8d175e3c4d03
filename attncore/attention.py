"""Scaled dot-product attention, one small function per term of the formula.

    Attention(Q, K, V) = softmax(Q·Kᵀ / √d_k) · V

Shapes: n_q query tokens, n_k key tokens, d_model embedding width, d_k head width.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def positional_encoding(n: int, d_model: int) -> np.ndarray:
    """Sinusoidal positional encoding (Vaswani et al. 2017).

    PE[pos, 2i] = sin(pos / 10000^(2i/d_model)),  PE[pos, 2i+1] = cos(pos / 10000^(2i/d_model))
    """
    pos = np.arange(n, dtype=np.float64)[:, None]  # (n, 1)
    i2 = np.arange(0, d_model, 2, dtype=np.float64)  # (ceil(d/2),)
    angle = pos / np.power(10000.0, i2 / d_model)  # (n, ceil(d/2))
    pe = np.zeros((n, d_model))  # (n, d_model)
    pe[:, 0::2] = np.sin(angle)
    pe[:, 1::2] = np.cos(angle[:, : d_model // 2])
    return pe


def project_qkv(
    X_q: np.ndarray, X_kv: np.ndarray,
    W_Q: np.ndarray, W_K: np.ndarray, W_V: np.ndarray,
    b_Q: np.ndarray, b_K: np.ndarray, b_V: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Q = X_q·W_Q + b_Q,  K = X_kv·W_K + b_K,  V = X_kv·W_V + b_V  (one row per word)."""
    Q = X_q @ W_Q + b_Q  # (n_q, d_k)
    K = X_kv @ W_K + b_K  # (n_k, d_k)
    V = X_kv @ W_V + b_V  # (n_k, d_k)
    return Q, K, V


def scores(Q: np.ndarray, K: np.ndarray) -> np.ndarray:
    """The factor matrix Q·Kᵀ: cell (i, j) is query i against key j."""
    return Q @ K.T  # (n_q, n_k)


def scale(S: np.ndarray, d_k: int) -> np.ndarray:
    """S / √d_k keeps the scores' spread independent of the head width."""
    return S / np.sqrt(d_k)  # (n_q, n_k)


def causal_mask(n_q: int, n_k: int) -> np.ndarray:
    """True where query i may attend to key j: j ≤ i (no word sees a later one)."""
    return np.tril(np.ones((n_q, n_k), dtype=bool))  # (n_q, n_k)


@dataclass(frozen=True, eq=False)
class SoftmaxParts:
    """softmax(s)_j = exp(s_j − max s) / Σ_k exp(s_k − max s), with every term kept so it
    can be shown: the row maximum, the shifted exponentials, their sum and the weights."""

    row_max: np.ndarray  # (..., n_q)  max over the allowed keys (0 for a fully masked row)
    exp: np.ndarray  # (..., n_q, n_k)  exp(s − max), exactly 0 where masked
    total: np.ndarray  # (..., n_q)  Σ_k exp
    weights: np.ndarray  # (..., n_q, n_k)  exp / Σ; each allowed row sums to 1


def softmax_parts(S: np.ndarray, mask: np.ndarray | None = None) -> SoftmaxParts:
    """Row-wise softmax over the last axis, with its parts; masked cells get exactly 0.

    Subtracting the row maximum keeps exp() from overflowing for large scores.
    """
    S = np.asarray(S, dtype=np.float64)
    if mask is None:
        mask = np.ones(S.shape, dtype=bool)
    masked = np.where(mask, S, -np.inf)  # (..., n_q, n_k)
    row_max = masked.max(axis=-1, keepdims=True)  # (..., n_q, 1)
    row_max = np.where(row_max == -np.inf, 0.0, row_max)  # a fully masked row
    shifted = masked - row_max  # (..., n_q, n_k)
    shifted = np.where(np.isnan(shifted), 0.0, shifted)  # inf − inf: an infinite score takes all
    e = np.where(mask, np.exp(shifted), 0.0)  # (..., n_q, n_k)
    total = e.sum(axis=-1, keepdims=True)  # (..., n_q, 1)
    weights = np.divide(e, total, out=np.zeros_like(e), where=total > 0)  # (..., n_q, n_k)
    return SoftmaxParts(row_max[..., 0], e, total[..., 0], weights)


def softmax(S: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    """Row-wise softmax(s)_j = exp(s_j − max s) / Σ_k exp(s_k − max s); masked cells are exactly 0."""
    return softmax_parts(S, mask).weights


def pair_products(q: np.ndarray, k: np.ndarray) -> np.ndarray:
    """The pairs of a dot product before their sum: q·k = Σ_m q_m·k_m."""
    return q * k  # (d_k,)


def agreement(products: np.ndarray) -> np.ndarray:
    """Whether each pair's signs agree: +1 where q_m·k_m > 0 (the pair adds to the dot
    product), −1 where it is < 0 (it subtracts), 0 where one of the two is 0 (neither).
    The one definition of "the signs agree" every caption and colour uses."""
    return np.sign(products).astype(np.int8)  # same shape as products


def weighted_rows(weights: np.ndarray, V: np.ndarray) -> np.ndarray:
    """One query's weighted V rows before their sum: row j = weights_j·V_j, and Σ_j of
    them is Z for that query."""
    return weights[:, None] * V  # (n_k, d_k)


def ranking(row: np.ndarray, allowed: np.ndarray, by_size: bool = False) -> tuple[int, ...]:
    """The allowed keys of one row, largest first (by |value| when by_size: the raw factors
    can be negative), equal values in sentence order."""
    size = np.abs(row) if by_size else row  # (n_k,)
    keys = [j for j in range(len(row)) if allowed[j]]
    return tuple(sorted(keys, key=lambda j: (-size[j], j)))


def weighted_sum(weights: np.ndarray, V: np.ndarray) -> np.ndarray:
    """Z = weights·V: row i mixes the V rows, each scaled by how much word i attends to it."""
    return weights @ V  # (n_q, d_k)


def multi_head(Z_heads: list[np.ndarray], W_O: np.ndarray) -> np.ndarray:
    """MultiHead = Concat(Z_1, …, Z_h)·W_O."""
    return np.concatenate(Z_heads, axis=-1) @ W_O  # (n_q, d_model)
