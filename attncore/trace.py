"""The AttentionTrace: every intermediate of one attention computation, frozen.

Scenes read only this (and the settings). Arrays are read-only copies.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

import numpy as np

from attncore import attention as att
from attncore import random_weights as rw
from attncore.settings import Settings, SettingsError
from attncore.tokenize import Token, TokenizeError, tokenize


def frozen(a: np.ndarray | None) -> np.ndarray | None:
    """A read-only float64 copy."""
    if a is None:
        return None
    out = np.array(a, dtype=np.float64 if np.asarray(a).dtype != bool else bool, copy=True)
    out.setflags(write=False)
    return out


@dataclass(frozen=True, eq=False)
class HeadTrace:
    """One head: its weights, Q, K, V, the factor matrix, the weights and Z."""

    layer: int
    head: int
    W_Q: np.ndarray  # (d_model, d_k)
    W_K: np.ndarray  # (d_model, d_k)
    W_V: np.ndarray  # (d_model, d_k)
    b_Q: np.ndarray  # (d_k,) zeros for the random model
    b_K: np.ndarray  # (d_k,)
    b_V: np.ndarray  # (d_k,)
    Q: np.ndarray  # (n_q, d_k)
    K: np.ndarray  # (n_k, d_k)
    V: np.ndarray  # (n_k, d_k)
    scores: np.ndarray  # (n_q, n_k)  Q·Kᵀ
    scaled: np.ndarray  # (n_q, n_k)  Q·Kᵀ/√d_k
    mask: np.ndarray  # (n_q, n_k)  True where attending is allowed
    weights: np.ndarray  # (n_q, n_k)  softmax rows (or the raw factors without softmax)
    Z: np.ndarray  # (n_q, d_k)  weights·V

    ARRAYS = ("W_Q", "W_K", "W_V", "b_Q", "b_K", "b_V", "Q", "K", "V",
              "scores", "scaled", "mask", "weights", "Z")

    def __post_init__(self) -> None:
        for name in self.ARRAYS:
            object.__setattr__(self, name, frozen(getattr(self, name)))

    @property
    def has_bias(self) -> bool:
        return bool(np.any(self.b_Q) or np.any(self.b_K) or np.any(self.b_V))


@dataclass(frozen=True, eq=False)
class AttentionTrace:
    """Tokens, embeddings, every head of the shown layer and the multi-head output."""

    query_tokens: tuple[Token, ...]  # the words that ask (the target sentence in cross-attention)
    key_tokens: tuple[Token, ...]  # the words that answer (the source sentence)
    E: np.ndarray  # (n_k, d_model) embeddings of the key tokens
    P: np.ndarray  # (n_k, d_model) positional encoding
    X: np.ndarray  # (n_k, d_model) input rows of the keys/values
    E_q: np.ndarray  # (n_q, d_model) the same for the query tokens (== E in self-attention)
    P_q: np.ndarray  # (n_q, d_model)
    X_q: np.ndarray  # (n_q, d_model)
    heads: tuple[HeadTrace, ...]  # every head of the layer shown
    W_O: np.ndarray  # (heads·d_k, d_model)
    output: np.ndarray  # (n_q, d_model)  Concat(Z_h)·W_O
    focus: int  # index of the followed word among the query tokens
    head_index: int = 0  # the head the video follows
    source: str = "random"  # "random" (untrained) or "pretrained"
    model_name: str | None = None  # pretrained checkpoint name
    layer: int = 0
    causal: bool = False
    cross: bool = False
    normalized: bool = True  # True: scaled + softmax; False: the raw factors weigh V
    seed: int = 0
    head_reason: str | None = None  # why this head was chosen (head "auto")
    x_label: str = "E + P"  # how X was made, for captions
    settings: dict = field(default_factory=dict)  # the settings that made it

    ARRAYS = ("E", "P", "X", "E_q", "P_q", "X_q", "W_O", "output")

    def __post_init__(self) -> None:
        for name in self.ARRAYS:
            object.__setattr__(self, name, frozen(getattr(self, name)))

    @property
    def head(self) -> HeadTrace:
        """The head the video follows."""
        return self.heads[self.head_index]

    @property
    def n_q(self) -> int:
        return len(self.query_tokens)

    @property
    def n_k(self) -> int:
        return len(self.key_tokens)

    @property
    def d_model(self) -> int:
        return self.X.shape[1]

    @property
    def d_k(self) -> int:
        return self.head.Q.shape[1]

    @property
    def trained(self) -> bool:
        return self.source == "pretrained"


def _resolve_focus(tokens: tuple[Token, ...], s: Settings) -> int:
    """The followed word's token index: --query-index, else --query, else the last word."""
    if s.query_index is not None:
        if s.query_index >= len(tokens):
            raise SettingsError(
                "query_index", f"{s.query_index} is out of range; allowed: 0 to {len(tokens) - 1}")
        idx = s.query_index
        if s.query is not None and tokens[idx].key != Token(s.query).key:
            raise SettingsError(
                "query_index", f"token {idx} is {tokens[idx].text!r}, not {s.query!r}")
        return idx
    if s.query is not None:
        want = Token(s.query.strip()).key
        for i, t in enumerate(tokens):
            if t.key == want:
                return i
        words = list(dict.fromkeys(t.text for t in tokens))
        close = difflib.get_close_matches(s.query, words, n=3, cutoff=0.4)
        hint = f"did you mean {', '.join(repr(c) for c in close)}?" if close else (
            "the words are: " + ", ".join(repr(w) for w in words[:12]))
        raise SettingsError("query", f"{s.query!r} is not in the sentence; {hint}")
    words = [i for i, t in enumerate(tokens) if t.is_word]
    return words[-1] if words else len(tokens) - 1


def _tokens(text: str, s: Settings, name: str) -> tuple[Token, ...]:
    try:
        return tokenize(text, s.max_tokens)
    except TokenizeError as e:
        raise SettingsError(name, str(e)) from None


def compute_head(
    layer: int, head: int, X_q: np.ndarray, X_kv: np.ndarray,
    W_Q: np.ndarray, W_K: np.ndarray, W_V: np.ndarray,
    b_Q: np.ndarray, b_K: np.ndarray, b_V: np.ndarray,
    mask: np.ndarray, normalized: bool = True,
) -> HeadTrace:
    """One head, step by step: Q, K, V → Q·Kᵀ → /√d_k → softmax → weights·V."""
    Q, K, V = att.project_qkv(X_q, X_kv, W_Q, W_K, W_V, b_Q, b_K, b_V)
    S = att.scores(Q, K)  # (n_q, n_k)
    S_scaled = att.scale(S, Q.shape[1])  # (n_q, n_k)
    if normalized:
        A = att.softmax(S_scaled, mask)  # (n_q, n_k)
    else:  # the article's simplification: the raw factors weigh the V rows
        A = np.where(mask, S, 0.0)
    Z = att.weighted_sum(A, V)  # (n_q, d_k)
    return HeadTrace(layer, head, W_Q, W_K, W_V, b_Q, b_K, b_V, Q, K, V, S, S_scaled, mask, A, Z)


def build_random_trace(s: Settings) -> AttentionTrace:
    """The untrained model: seeded embeddings, sinusoidal positions, seeded W_Q, W_K, W_V."""
    key_tokens = _tokens(s.sentence, s, "sentence")
    query_tokens = _tokens(s.target, s, "target") if s.target else key_tokens
    focus = _resolve_focus(query_tokens, s)
    d_k = s.dk

    E = rw.embed(key_tokens, s.seed, s.d_model)  # (n_k, d_model)
    P = rw.positions(len(key_tokens), s.d_model, s.positional)  # (n_k, d_model)
    X = E + P  # (n_k, d_model)
    if s.target:
        E_q = rw.embed(query_tokens, s.seed, s.d_model)  # (n_q, d_model)
        P_q = rw.positions(len(query_tokens), s.d_model, s.positional)
        X_q = E_q + P_q  # (n_q, d_model)
    else:
        E_q, P_q, X_q = E, P, X

    n_q, n_k = len(query_tokens), len(key_tokens)
    mask = att.causal_mask(n_q, n_k) if s.causal else np.ones((n_q, n_k), dtype=bool)
    zeros = np.zeros(d_k)
    heads = tuple(
        compute_head(0, h, X_q, X, W_Q, W_K, W_V, zeros, zeros, zeros, mask, s.softmax)
        for h, (W_Q, W_K, W_V) in enumerate(rw.head_weights(s.seed, s.heads, s.d_model, d_k))
    )
    W_O = rw.output_weights(s.seed, s.heads, s.d_model, d_k)  # (heads·d_k, d_model)
    output = att.multi_head([h.Z for h in heads], W_O)  # (n_q, d_model)
    head_index = 0 if s.head == "auto" else int(s.head)
    return AttentionTrace(
        query_tokens=query_tokens, key_tokens=key_tokens,
        E=E, P=P, X=X, E_q=E_q, P_q=P_q, X_q=X_q,
        heads=heads, W_O=W_O, output=output, focus=focus, head_index=head_index,
        source="random", model_name=None, layer=0, causal=s.causal, cross=bool(s.target),
        normalized=s.softmax, seed=s.seed,
        head_reason="untrained weights have no meaningful head to pick" if s.head == "auto" else None,
        x_label="E + P" if s.positional else "E",
        settings=s.to_dict(),
    )


def build_trace(s: Settings) -> AttentionTrace:
    """Settings → trace, by the chosen weight source."""
    if s.weights == "pretrained":
        from attncore.pretrained import build_pretrained_trace

        return build_pretrained_trace(s)
    return build_random_trace(s)
