"""A post-LayerNorm BERT encoder in numpy (float64), shared by the encoder weight sources
(attncore.pretrained: all-MiniLM-L6-v2; attncore.multilingual: multilingual-e5-small).
Each source reads its own file and tokenizes in its own way; what a layer computes, which
token is followed and the heads a trace shows are the same, and live here.

    X_0 = LayerNorm(E + P)
    for each layer:
        A_h = softmax(Q_h·K_hᵀ / √d_k),  Q_h = X·W_Q,h + b_Q,h  (likewise K_h, V_h)
        H   = LayerNorm(X + Concat(A_h·V_h)·W_O + b_O)
        X'  = LayerNorm(H + GELU(H·W_1 + b_1)·W_2 + b_2)

Shapes: n tokens, d model width, h heads of width d_k, d_ff feed-forward width.
"""

from __future__ import annotations

import contextlib
import math
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from attention_video.attncore import attention as att
from attention_video.attncore.focus import not_at, not_found, same_word
from attention_video.attncore.settings import MAX_TOKENS_LIMIT, Settings, SettingsError
from attention_video.attncore.tokenize import Token
from attention_video.attncore.trace import HeadTrace, compute_head

_erf = np.vectorize(math.erf, otypes=[np.float64])  # exact erf; numpy has none (≈4 ms per 32×1536)


@dataclass(frozen=True)
class Encoding:
    """One sentence as the model sees it."""

    tokens: tuple[Token, ...]  # display tokens, [CLS]/<s> … [SEP]/</s>
    ids: tuple[int, ...]  # vocabulary ids, one per token
    word_of: tuple[int, ...]  # index of the word each token came from; -1 for the specials
    words: tuple[str, ...]  # the words (normalised spelling)


@dataclass(frozen=True, eq=False)
class LayerNormWeights:
    gamma: np.ndarray  # (d_model,)
    beta: np.ndarray  # (d_model,)


@dataclass(frozen=True, eq=False)
class LayerWeights:
    """One encoder layer: self-attention, its output, the feed-forward; y = x·W + b."""

    W_Q: np.ndarray  # (d_model, d_model) all heads side by side; head h: columns h·d_k…(h+1)·d_k
    b_Q: np.ndarray  # (d_model,)
    W_K: np.ndarray  # (d_model, d_model)
    b_K: np.ndarray  # (d_model,)
    W_V: np.ndarray  # (d_model, d_model)
    b_V: np.ndarray  # (d_model,)
    W_O: np.ndarray  # (d_model, d_model) attention output dense
    b_O: np.ndarray  # (d_model,)
    ln_attn: LayerNormWeights
    W_1: np.ndarray  # (d_model, d_ff) intermediate dense
    b_1: np.ndarray  # (d_ff,)
    W_2: np.ndarray  # (d_ff, d_model) output dense
    b_2: np.ndarray  # (d_model,)
    ln_ffn: LayerNormWeights


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


def run_layers(E: np.ndarray, P: np.ndarray, ln_embed: LayerNormWeights,
               layers: tuple[LayerWeights, ...], heads: int, eps: float) -> Forward:
    """X_0 = LayerNorm(E + P), then every layer in `layers`, keeping each input and A."""
    x = layer_norm(E + P, ln_embed, eps)  # (n, d)
    hidden, attention = [x], []
    with one_blas_thread():
        for lw in layers:
            x, A = encoder_layer(x, lw, heads, eps)
            hidden.append(x)
            attention.append(A)
    n = E.shape[0]
    return Forward(E, P, tuple(hidden), np.stack(attention) if attention else
                   np.zeros((0, heads, n, n)))


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


def layer_heads(X: np.ndarray, lw: LayerWeights, num_heads: int, layer: int,
                normalized: bool) -> tuple[HeadTrace, ...]:
    """Every head of one layer: head h uses columns h·d_k … (h+1)·d_k of W_Q, W_K, W_V.

    Q_h = X·W_Q[:, h] + b_Q[h] (likewise K_h, V_h); weights = softmax(Q_h·K_hᵀ/√d_k)."""
    n = X.shape[0]
    d_k = X.shape[1] // num_heads
    mask = np.ones((n, n), dtype=bool)  # (n, n) one sentence, no padding
    heads = []
    for h in range(num_heads):
        c = slice(h * d_k, (h + 1) * d_k)
        heads.append(compute_head(layer, h, X, X, lw.W_Q[:, c], lw.W_K[:, c], lw.W_V[:, c],
                                  lw.b_Q[c], lw.b_K[c], lw.b_V[c], mask, normalized))
    return tuple(heads)


# ---- the sentence's length -----------------------------------------------------------------
def check_length(enc: Encoding, s: Settings, model: str, max_positions: int,
                 pieces: str = "pieces") -> None:
    """An encoded sentence (its first and last tokens the model's own, [CLS] and [SEP] or
    <s> and </s>) has a visible piece, at most --max-tokens tokens counting both ends, and
    no more than the model's positions."""
    tokens = enc.tokens
    n = len(tokens)
    if all(t.text == "▁" for t in tokens[1:-1]):  # none, or only e5's word-start marks
        raise SettingsError("sentence", "the sentence has no visible words or marks")
    if n > s.max_tokens:
        raise SettingsError(
            "sentence", f"the sentence has {n} tokens ({n - 2} {pieces} plus {tokens[0].text} "
            f"and {tokens[-1].text}); the limit is {s.max_tokens} (shorten it, or raise "
            f"max_tokens up to {MAX_TOKENS_LIMIT})")
    if n > max_positions:
        raise SettingsError("sentence", f"the sentence has {n} tokens; {model} reads at most "
                            f"{max_positions}")


# ---- the followed token ------------------------------------------------------------------
def is_real_word(t: Token) -> bool:
    """A word or a piece of one: not [CLS]/[SEP] (<s>/</s>), not punctuation."""
    return t.kind in ("word", "subword")


def _matches(enc: Encoding, i: int, query: str, normalize: Callable[[str], str]) -> bool:
    """Token i is the query: its own text, or the (normalised) word it is the first piece of;
    compared in one Unicode form (focus.same_word)."""
    if same_word(enc.tokens[i].text, query):
        return True
    w = enc.word_of[i]
    return (w >= 0 and same_word(normalize(unicodedata.normalize("NFC", query.strip())),
                                 enc.words[w]) and enc.word_of.index(w) == i)


def resolve_focus(enc: Encoding, s: Settings, normalize: Callable[[str], str]) -> int:
    """--query-index (counting the first special token as 0), else --query, else the last
    real word. A word split into pieces is followed through its first piece."""
    tokens = enc.tokens
    if s.query_index is not None:
        if s.query_index >= len(tokens):
            raise SettingsError("query_index", f"{s.query_index} is out of range; allowed: 0 to "
                                f"{len(tokens) - 1} (0 is {tokens[0].text})")
        if s.query is not None and not _matches(enc, s.query_index, s.query, normalize):
            raise not_at(s.query_index, tokens[s.query_index].text, s.query)
        return s.query_index
    if s.query is not None:
        for i in range(len(tokens)):
            if _matches(enc, i, s.query, normalize):
                return i
        raise not_found(s.query, [*enc.words, *(t.text for t in enc.tokens)])
    real = [i for i, t in enumerate(tokens) if is_real_word(t)]
    if not real:
        return len(tokens) - 2  # only marks: follow the last one
    return enc.word_of.index(enc.word_of[real[-1]])


