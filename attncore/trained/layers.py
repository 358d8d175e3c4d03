"""The steps both trained models are made of, each with its gradient right below it.

Every `*_backward` function takes ∂L/∂(the step's output) and returns ∂L/∂(its inputs);
the forward steps of attncore.attention (scale, softmax, weighted_sum) have their backward
steps here. Shapes: B sentences, H heads, n tokens (padded), d model width, d_k head width,
m hidden units, V vocabulary size.
"""

from __future__ import annotations

import math

import numpy as np
from attention_video.attncore import attention as att
from attention_video.attncore.random_weights import on_grid


def positions(n: int, d_model: int) -> np.ndarray:
    """P: the sinusoidal positional encoding on the 0.1 grid, fixed (not learned)."""
    return on_grid(att.positional_encoding(n, d_model))  # (n, d)


def embed(E: np.ndarray, ids: np.ndarray, P: np.ndarray) -> np.ndarray:
    """X = E[tokens] + P: each word's learned row plus its position's fixed row."""
    return E[ids] + P  # (B, n, d)


def embed_backward(dX: np.ndarray, ids: np.ndarray, vocab_size: int) -> np.ndarray:
    """∂L/∂E[w] = Σ of ∂L/∂X over the positions that hold word w (P is fixed)."""
    dE = np.zeros((vocab_size, dX.shape[-1]))  # (V, d)
    np.add.at(dE, ids.ravel(), dX.reshape(-1, dX.shape[-1]))
    return dE


def project(X: np.ndarray, W: np.ndarray) -> np.ndarray:
    """Q_h = X·W_Q,h for every head at once (likewise K and V)."""
    return X[:, None] @ W  # (B, H, n, d_k)


def project_backward(dY: np.ndarray, X: np.ndarray, W: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray]:
    """∂L/∂X = Σ_h ∂L/∂Y_h·W_hᵀ,  ∂L/∂W_h = Σ_b X_bᵀ·∂L/∂Y_b,h."""
    dX = (dY @ W.transpose(0, 2, 1)).sum(axis=1)  # (B, n, d)
    dW = (X[:, None].transpose(0, 1, 3, 2) @ dY).sum(axis=0)  # (H, d, d_k)
    return dX, dW


def scores(Q: np.ndarray, K: np.ndarray) -> np.ndarray:
    """S = Q·Kᵀ: cell (i, j) is query i against key j."""
    return Q @ K.swapaxes(-1, -2)  # (B, H, n, n)


def scores_backward(dS: np.ndarray, Q: np.ndarray, K: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray]:
    """∂L/∂Q = ∂L/∂S·K,  ∂L/∂K = (∂L/∂S)ᵀ·Q."""
    return dS @ K, dS.swapaxes(-1, -2) @ Q  # (B, H, n, d_k) each


def scale_backward(dS_scaled: np.ndarray, d_k: int) -> np.ndarray:
    """S/√d_k (attncore.attention.scale): ∂L/∂S = ∂L/∂(S/√d_k) / √d_k."""
    return dS_scaled / math.sqrt(d_k)  # (B, H, n, n)


def softmax_backward(dA: np.ndarray, A: np.ndarray) -> np.ndarray:
    """A = softmax(S) row by row (attncore.attention.softmax):
    ∂L/∂s_j = a_j·(∂L/∂a_j − Σ_k a_k·∂L/∂a_k); masked cells (a = 0) get 0."""
    return A * (dA - (A * dA).sum(axis=-1, keepdims=True))  # (B, H, n, n)


def weighted_sum_backward(dZ: np.ndarray, A: np.ndarray, V: np.ndarray
                          ) -> tuple[np.ndarray, np.ndarray]:
    """Z = A·V (attncore.attention.weighted_sum): ∂L/∂A = ∂L/∂Z·Vᵀ,  ∂L/∂V = Aᵀ·∂L/∂Z."""
    return dZ @ V.swapaxes(-1, -2), A.swapaxes(-1, -2) @ dZ  # (B,H,n,n), (B,H,n,d_k)


def concat_heads(Z: np.ndarray) -> np.ndarray:
    """Concat(Z_1, …, Z_H): head h owns columns h·d_k … (h+1)·d_k − 1."""
    B, H, n, d_k = Z.shape
    return Z.transpose(0, 2, 1, 3).reshape(B, n, H * d_k)  # (B, n, H·d_k)


def concat_heads_backward(dC: np.ndarray, heads: int) -> np.ndarray:
    """The columns go back to their heads."""
    B, n, Hd = dC.shape
    return dC.reshape(B, n, heads, Hd // heads).transpose(0, 2, 1, 3)  # (B, H, n, d_k)


def linear(X: np.ndarray, W: np.ndarray, b: np.ndarray | None = None) -> np.ndarray:
    """Y = X·W (+ b): Concat(Z)·W_O, and the readout's hidden layer."""
    Y = X @ W  # (B, n, out)
    return Y if b is None else Y + b


def linear_backward(dY: np.ndarray, X: np.ndarray, W: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """∂L/∂X = ∂L/∂Y·Wᵀ,  ∂L/∂W = Σ Xᵀ·∂L/∂Y,  ∂L/∂b = Σ ∂L/∂Y."""
    dX = dY @ W.T  # (B, n, in)
    dW = X.reshape(-1, X.shape[-1]).T @ dY.reshape(-1, dY.shape[-1])  # (in, out)
    db = dY.reshape(-1, dY.shape[-1]).sum(axis=0)  # (out,)
    return dX, dW, db


def relu(U: np.ndarray) -> np.ndarray:
    """ReLU(u) = max(u, 0)."""
    return np.maximum(U, 0.0)  # (B, n, m)


def relu_backward(dH: np.ndarray, U: np.ndarray) -> np.ndarray:
    """The gradient passes where u > 0."""
    return dH * (U > 0)  # (B, n, m)
