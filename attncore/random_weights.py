"""Untrained, seeded weights: small, deterministic, every number hand-checkable.

The numbers are put on a 0.1 grid (embeddings, positional encoding, weight
matrices), so X has one decimal and Q, K, V have exactly two: what the video
shows of them is exact, and a student can redo each product on paper.
"""

from __future__ import annotations

import hashlib

import numpy as np
from attention_video.attncore import attention as att
from attention_video.attncore.attention import positional_encoding
from attention_video.attncore.focus import resolve_focus, tokens_of
from attention_video.attncore.settings import Settings
from attention_video.attncore.sources import Kept
from attention_video.attncore.tokenize import Token
from attention_video.attncore.trace import AttentionTrace, HeadChoice, compute_head

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


def build_random_trace(s: Settings) -> AttentionTrace:
    """The untrained model: seeded embeddings, sinusoidal positions, seeded W_Q, W_K, W_V."""
    key_tokens = tokens_of(s.sentence, s, "sentence")
    query_tokens = tokens_of(s.target, s, "target") if s.target else key_tokens
    focus = resolve_focus(query_tokens, s)
    d_k = s.dk

    E = embed(key_tokens, s.seed, s.d_model)  # (n_k, d_model)
    P = positions(len(key_tokens), s.d_model, s.positional)  # (n_k, d_model)
    X = E + P  # (n_k, d_model)
    if s.target:
        E_q = embed(query_tokens, s.seed, s.d_model)  # (n_q, d_model)
        P_q = positions(len(query_tokens), s.d_model, s.positional)
        X_q = E_q + P_q  # (n_q, d_model)
    else:
        E_q, P_q, X_q = E, P, X

    n_q, n_k = len(query_tokens), len(key_tokens)
    mask = att.causal_mask(n_q, n_k) if s.causal else np.ones((n_q, n_k), dtype=bool)
    zeros = np.zeros(d_k)
    heads = tuple(
        compute_head(0, h, X_q, X, W_Q, W_K, W_V, zeros, zeros, zeros, mask, s.softmax)
        for h, (W_Q, W_K, W_V) in enumerate(head_weights(s.seed, s.heads, s.d_model, d_k))
    )
    W_O = output_weights(s.seed, s.heads, s.d_model, d_k)  # (heads·d_k, d_model)
    output = att.multi_head([h.Z for h in heads], W_O)  # (n_q, d_model)
    head_index = 0 if s.head == "auto" else int(s.head)
    return AttentionTrace(
        query_tokens=query_tokens, key_tokens=key_tokens,
        E=E, P=P, X=X, E_q=E_q, P_q=P_q, X_q=X_q,
        heads=heads, W_O=W_O, output=output, focus=focus, head_index=head_index,
        source="random", model_name=None, layer=0, causal=s.causal, cross=bool(s.target),
        normalized=s.softmax, seed=s.seed,
        head_choice=HeadChoice(HeadChoice.UNTRAINED, 0, 0) if s.head == "auto" else None,
        x_label="E + P" if s.positional else "E",
        positional=s.positional,
    )


def build(s: Settings, kept: Kept) -> AttentionTrace:
    """The weight source's row (attncore.sources): nothing is kept for random weights."""
    return build_random_trace(s)
