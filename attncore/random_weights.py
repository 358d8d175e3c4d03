"""Untrained, seeded weights: small, deterministic, every number hand-checkable.

The numbers are put on a 0.1 grid (embeddings, positional encoding, weight
matrices), so X has one decimal and Q, K, V have exactly two: what the video
shows of them is exact, and a student can redo each product on paper.
"""

from __future__ import annotations

import hashlib

import numpy as np
from attention_video.attncore.attention import positional_encoding
from attention_video.attncore.tokenize import Token

GRID = 10.0  # values are multiples of 1/GRID


def on_grid(a: np.ndarray) -> np.ndarray:
    """Round to the 0.1 grid (and turn -0.0 into 0.0)."""
    return np.round(np.asarray(a) * GRID) / GRID + 0.0


def word_rng(seed: int, word: str) -> np.random.Generator:
    """A generator keyed on (seed, word) alone: the same word gets the same embedding
    in every sentence and every run, whatever else the sentence holds."""
    digest = hashlib.blake2b(f"{seed}\x00{word}".encode(), digest_size=8).digest()
    return np.random.default_rng(int.from_bytes(digest, "little"))


def embed(tokens: tuple[Token, ...], seed: int, d_model: int) -> np.ndarray:
    """E: one row per token, N(0, 1) on the 0.1 grid, keyed by the case-folded word."""
    rows = [word_rng(seed, t.key).standard_normal(d_model) for t in tokens]
    return on_grid(np.array(rows).reshape(len(tokens), d_model))  # (n, d_model)


def positions(n: int, d_model: int, enabled: bool = True) -> np.ndarray:
    """P: sinusoidal positional encoding on the 0.1 grid (all zeros when disabled)."""
    if not enabled:
        return np.zeros((n, d_model))
    return on_grid(positional_encoding(n, d_model))  # (n, d_model)


def head_weights(seed: int, heads: int, d_model: int, d_k: int) -> list[tuple[np.ndarray, ...]]:
    """W_Q, W_K, W_V per head: N(0, 1/d_model) (Xavier-like) on the 0.1 grid."""
    rng = np.random.default_rng([seed, 1])
    std = 1.0 / np.sqrt(d_model)
    return [
        tuple(on_grid(rng.normal(0.0, std, (d_model, d_k))) for _ in range(3))  # (d_model, d_k)
        for _ in range(heads)
    ]


def output_weights(seed: int, heads: int, d_model: int, d_k: int) -> np.ndarray:
    """W_O: (heads·d_k, d_model), N(0, 1/(heads·d_k)) on the 0.1 grid."""
    rng = np.random.default_rng([seed, 2])
    return on_grid(rng.normal(0.0, 1.0 / np.sqrt(heads * d_k), (heads * d_k, d_model)))
