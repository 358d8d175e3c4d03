"""The tiny model: one attention layer and a small readout, with hand-written gradients.

    X = E[tokens] + P                                  learned embeddings + fixed positions
    Q_h = X·W_Q,h   K_h = X·W_K,h   V_h = X·W_V,h      per head, no biases
    A_h = softmax(Q_h·K_hᵀ / √d_k)                     rows are queries and sum to 1
    Z_h = A_h·V_h
    O = Concat(Z_1, …, Z_H)·W_O
    R = X + O                                          residual
    p = σ(ReLU(R·W_1 + b_1)·w_2 + b_2)                 per word: was it swapped?

Every step is a small function; the gradient of each is the `*_backward` function written
right below it (the steps both trained models use are in attncore.trained.layers, the
readout and the loss here). `forward` returns every intermediate (a Forward); `backward`
walks the same steps in reverse. Shapes: B sentences, n tokens (padded), d = d_model, H heads, d_k head
width, m = d_hidden, V = vocabulary size.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from attention_video.attncore import attention as att
from attention_video.attncore.tiny import corpus
from attention_video.attncore.tiny.config import ModelConfig, TrainConfig
from attention_video.attncore.tokenize import Token
from attention_video.attncore.trained.history import History
from attention_video.attncore.trained.layers import (
    concat_heads,
    concat_heads_backward,
    embed,
    embed_backward,
    linear,
    linear_backward,
    positions,
    project,
    project_backward,
    relu,
    relu_backward,
    scale_backward,
    scores,
    scores_backward,
    softmax_backward,
    weighted_sum_backward,
)
from attention_video.attncore.trained.params import GridParams
from attention_video.attncore.trained.provenance import Provenance
from attention_video.attncore.trained.run import HeadRun, read_only

GRID_PARAMS = ("E", "W_Q", "W_K", "W_V", "W_O")  # on the 0.1 grid in a finished model


@dataclass(frozen=True, eq=False)
class Params(GridParams):
    """The learned arrays. A finished model has E, W_Q, W_K, W_V, W_O on the 0.1 grid."""

    GRID: ClassVar[tuple[str, ...]] = GRID_PARAMS

    E: np.ndarray  # (V, d) one row per vocabulary word
    W_Q: np.ndarray  # (H, d, d_k)
    W_K: np.ndarray  # (H, d, d_k)
    W_V: np.ndarray  # (H, d, d_k)
    W_O: np.ndarray  # (H·d_k, d)
    W_1: np.ndarray  # (d, m) readout
    b_1: np.ndarray  # (m,)
    w_2: np.ndarray  # (m,)
    b_2: np.ndarray  # () a 0-d array


def init_params(config: ModelConfig, vocab_size: int, rng: np.random.Generator) -> Params:
    """E ~ N(0, 1) like the random model; W ~ N(0, 1/fan_in) (Xavier-like); ReLU layer He."""
    d, H, d_k, m = config.d_model, config.heads, config.d_k, config.d_hidden
    return Params(
        E=rng.normal(0.0, 1.0, (vocab_size, d)),
        W_Q=rng.normal(0.0, config.init_qk / math.sqrt(d), (H, d, d_k)),
        W_K=rng.normal(0.0, config.init_qk / math.sqrt(d), (H, d, d_k)),
        W_V=rng.normal(0.0, 1.0 / math.sqrt(d), (H, d, d_k)),
        W_O=rng.normal(0.0, 1.0 / math.sqrt(H * d_k), (H * d_k, d)),
        W_1=rng.normal(0.0, math.sqrt(2.0 / d), (d, m)),
        b_1=np.zeros(m),
        w_2=rng.normal(0.0, 1.0 / math.sqrt(m), (m,)),
        b_2=np.zeros(()),
    )


def readout(Hd: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    """logit = h·w_2 + b_2: one number per word; σ(logit) is P(swapped)."""
    return Hd @ w + b  # (B, n)


def readout_backward(dlogit: np.ndarray, Hd: np.ndarray, w: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """∂L/∂h = ∂L/∂logit·w_2ᵀ,  ∂L/∂w_2 = Σ h·∂L/∂logit,  ∂L/∂b_2 = Σ ∂L/∂logit."""
    dHd = dlogit[..., None] * w  # (B, n, m)
    dw = np.tensordot(dlogit, Hd, axes=([0, 1], [0, 1]))  # (m,)
    return dHd, dw, dlogit.sum()


def sigmoid(x: np.ndarray) -> np.ndarray:
    """σ(x) = 1 / (1 + e^−x), without overflow for large |x|."""
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def bce_loss(logits: np.ndarray, y: np.ndarray, weight: np.ndarray) -> float:
    """Mean binary cross-entropy over the real (unpadded) words:
    L = Σ w·(softplus(logit) − y·logit) / Σ w,  softplus(x) = max(x, 0) + log(1 + e^−|x|)."""
    per_word = np.maximum(logits, 0.0) - y * logits + np.log1p(np.exp(-np.abs(logits)))
    return float((weight * per_word).sum() / weight.sum())


def bce_loss_backward(logits: np.ndarray, y: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """∂L/∂logit = w·(σ(logit) − y) / Σ w."""
    return weight * (sigmoid(logits) - y) / weight.sum()  # (B, n)


# ---------------------------------------------------------------- the whole model

@dataclass(frozen=True, eq=False)
class Forward:
    """Every intermediate of a batch of sentences (padded to n tokens)."""

    ids: np.ndarray  # (B, n) vocabulary indices
    mask: np.ndarray  # (B, n) True for real words, False for padding
    P: np.ndarray  # (n, d)
    X: np.ndarray  # (B, n, d)  E[ids] + P
    Q: np.ndarray  # (B, H, n, d_k)
    K: np.ndarray  # (B, H, n, d_k)
    V: np.ndarray  # (B, H, n, d_k)
    scores: np.ndarray  # (B, H, n, n)  Q·Kᵀ
    scaled: np.ndarray  # (B, H, n, n)  Q·Kᵀ/√d_k
    weights: np.ndarray  # (B, H, n, n)  softmax rows; padded keys get 0
    Z: np.ndarray  # (B, H, n, d_k)  weights·V
    concat: np.ndarray  # (B, n, H·d_k)
    output: np.ndarray  # (B, n, d)  Concat(Z)·W_O
    residual: np.ndarray  # (B, n, d)  X + output
    pre: np.ndarray  # (B, n, m)  R·W_1 + b_1
    hidden: np.ndarray  # (B, n, m)  ReLU
    logits: np.ndarray  # (B, n)

    @property
    def p_replaced(self) -> np.ndarray:
        """σ(logit): the model's probability that each word was swapped."""
        return sigmoid(self.logits)  # (B, n)


def forward(p: Params, ids: np.ndarray, mask: np.ndarray | None = None) -> Forward:
    """The model on a batch of sentences; `mask` marks real words (padding attends to nothing
    and nothing attends to it)."""
    ids = np.asarray(ids)
    if mask is None:
        mask = np.ones(ids.shape, dtype=bool)
    n, d_k = ids.shape[1], p.W_Q.shape[-1]
    P = positions(n, p.E.shape[1])  # (n, d)
    X = embed(p.E, ids, P)  # (B, n, d)
    Q = project(X, p.W_Q)  # (B, H, n, d_k)
    K = project(X, p.W_K)  # (B, H, n, d_k)
    V = project(X, p.W_V)  # (B, H, n, d_k)
    S = scores(Q, K)  # (B, H, n, n)
    S_scaled = att.scale(S, d_k)  # (B, H, n, n)
    A = att.softmax(S_scaled, mask[:, None, None, :])  # (B, H, n, n)
    Z = att.weighted_sum(A, V)  # (B, H, n, d_k)
    C = concat_heads(Z)  # (B, n, H·d_k)
    out = linear(C, p.W_O)  # (B, n, d)
    R = X + out  # (B, n, d)
    U = linear(R, p.W_1, p.b_1)  # (B, n, m)
    Hd = relu(U)  # (B, n, m)
    logits = readout(Hd, p.w_2, p.b_2)  # (B, n)
    return Forward(ids, mask, P, X, Q, K, V, S, S_scaled, A, Z, C, out, R, U, Hd, logits)


def backward(p: Params, f: Forward, dlogits: np.ndarray) -> Params:
    """∂L/∂(every parameter), given ∂L/∂logits: the steps of `forward` in reverse."""
    dHd, dw_2, db_2 = readout_backward(dlogits, f.hidden, p.w_2)
    dU = relu_backward(dHd, f.pre)
    dR, dW_1, db_1 = linear_backward(dU, f.residual, p.W_1)
    dX, dO = dR, dR  # R = X + O
    dC, dW_O, _ = linear_backward(dO, f.concat, p.W_O)
    dZ = concat_heads_backward(dC, p.W_Q.shape[0])
    dA, dV = weighted_sum_backward(dZ, f.weights, f.V)
    dS_scaled = softmax_backward(dA, f.weights)
    dS = scale_backward(dS_scaled, p.W_Q.shape[-1])
    dQ, dK = scores_backward(dS, f.Q, f.K)
    dX_q, dW_Q = project_backward(dQ, f.X, p.W_Q)
    dX_k, dW_K = project_backward(dK, f.X, p.W_K)
    dX_v, dW_V = project_backward(dV, f.X, p.W_V)
    dX = dX + dX_q + dX_k + dX_v
    dE = embed_backward(dX, f.ids, p.E.shape[0])
    return Params(dE, dW_Q, dW_K, dW_V, dW_O, dW_1, db_1, dw_2, np.asarray(db_2))


def loss_and_grads(p: Params, ids: np.ndarray, mask: np.ndarray, y: np.ndarray
                   ) -> tuple[float, Params, Forward]:
    """The mean per-word loss of a batch, its gradient and the forward pass."""
    f = forward(p, ids, mask)
    weight = mask.astype(np.float64)  # (B, n)
    loss = bce_loss(f.logits, y, weight)
    return loss, backward(p, f, bce_loss_backward(f.logits, y, weight)), f


# ---------------------------------------------------------------- one sentence, for the video

@dataclass(frozen=True, eq=False)
class Run:
    """One sentence through the tiny model: every number the video shows. Arrays read-only."""

    tokens: tuple[Token, ...]
    ids: tuple[int, ...]  # vocabulary indices
    E: np.ndarray  # (n, d)  the words' rows of E
    P: np.ndarray  # (n, d)  positional encoding (0.1 grid)
    X: np.ndarray  # (n, d)  E + P
    heads: tuple[HeadRun, ...]
    W_O: np.ndarray  # (H·d_k, d)
    concat: np.ndarray  # (n, H·d_k)  Concat(Z_1, …, Z_H)
    output: np.ndarray  # (n, d)  Concat(Z)·W_O
    p_replaced: np.ndarray  # (n,)  the readout: P(this word was swapped)


def run_params(p: Params, tokens: Sequence[Token], ids: Sequence[int]) -> Run:
    """`forward` on one sentence, unbatched into per-head arrays."""
    f = forward(p, np.asarray([ids]))
    heads = tuple(
        HeadRun(h, *(read_only(a) for a in (
            p.W_Q[h], p.W_K[h], p.W_V[h], f.Q[0, h], f.K[0, h], f.V[0, h],
            f.scores[0, h], f.scaled[0, h], f.weights[0, h], f.Z[0, h])))
        for h in range(p.W_Q.shape[0]))
    return Run(tuple(tokens), tuple(int(i) for i in ids), read_only(p.E[list(ids)]),
               read_only(f.P), read_only(f.X[0]), heads, read_only(p.W_O),
               read_only(f.concat[0]), read_only(f.output[0]), read_only(f.p_replaced[0]))


@dataclass(frozen=True, eq=False)
class TinyModel:
    """A trained tiny model: its vocabulary, weights (E, W_Q, W_K, W_V, W_O on the 0.1 grid),
    the settings that trained it, its held-out scores, its training history and how it was
    made (the command that trains it again, the platform that trained it)."""

    config: ModelConfig
    vocab: tuple[str, ...]  # row w of E is vocab[w]
    params: Params
    train_config: TrainConfig | None = None
    history: History | None = None
    scores: dict[str, float] = dataclasses.field(default_factory=dict)  # held-out figures
    provenance: Provenance = Provenance()

    @property
    def name(self) -> str:
        """For the screen: "tiny model (d_model 4, 1 head, seed 0)"."""
        c = self.config
        heads = f"{c.heads} head" + ("s" if c.heads > 1 else "")
        seed = "" if self.train_config is None else f", seed {self.train_config.seed}"
        return f"tiny model (d_model {c.d_model}, {heads}{seed})"

    @property
    def verb_head(self) -> int:
        """The head in which objects look at their verbs most often (held-out)."""
        return int(self.scores.get("test_head", 0))

    def tokenize(self, sentence: str) -> tuple[Token, ...]:
        """The sentence in this model's vocabulary (UnknownWordError names the others)."""
        return corpus.tokenize(sentence, self.vocab)

    def ids(self, tokens: Sequence[Token]) -> tuple[int, ...]:
        index = {w: i for i, w in enumerate(self.vocab)}
        missing = tuple(dict.fromkeys(t.text for t in tokens if t.key not in index))
        if missing:
            raise corpus.UnknownWordError(missing, self.vocab)
        return tuple(index[t.key] for t in tokens)

    def run(self, sentence: str | Sequence[Token]) -> Run:
        """One sentence (text or tokens) through the model, every intermediate kept."""
        tokens = self.tokenize(sentence) if isinstance(sentence, str) else tuple(sentence)
        return run_params(self.params, tokens, self.ids(tokens))

    def in_vocabulary(self, sentence: str) -> bool:
        return corpus.in_vocabulary(sentence, self.vocab)
