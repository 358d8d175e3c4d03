"""The translation model: a one-layer encoder–decoder with hand-written gradients.

    encoder   X = E_src[source] + P                         learned rows + fixed positions
              M = X + SelfAttn(X)                           the memory the decoder reads
    decoder   Y  = E_tgt[<s>, w_0, …, w_{T−1}] + P          input row t holds word t−1
              Y1 = Y + CausalSelfAttn(Y)                    row t sees rows 0 … t only
              Y2 = Y1 + CrossAttn(queries Y1, keys and values M)
              logits = ReLU(Y2·W_1 + b_1)·W_2 + b_2         row t scores word t (then </s>)

    Attn(X_q, X_kv) = softmax(X_q·W_Q · (X_kv·W_K)ᵀ / √d_k) · X_kv·W_V · W_O   one head each

Row convention: decoder row t is the row that WRITES target word t; its input is the word
before it (<s> for row 0). So in "the ball is blue" → "la bola es azul" the cross-attention
row writing "azul" is row 3 (its input is "es"). The last row writes </s>.

Every step's gradient is the `*_backward` function next to it (most steps are shared with
the tiny model: attncore.trained.layers). Shapes: B pairs, s source tokens, t target
rows (padded), d = d_model, d_k head width, m = d_hidden, V_s, V_t vocabulary sizes.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from attention_video.attncore import attention as att
from attention_video.attncore.tokenize import Token
from attention_video.attncore.trained.history import History
from attention_video.attncore.trained.layers import (
    embed,
    embed_backward,
    linear,
    linear_backward,
    positions,
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
from attention_video.attncore.translate import corpus
from attention_video.attncore.translate.config import ModelConfig, TrainConfig

ATTENTIONS = ("enc", "self", "cross")  # encoder self-, decoder causal self-, cross-attention
GRID_PARAMS = ("E_src", "E_tgt", *(f"{a}_{w}" for a in ATTENTIONS
                                   for w in ("W_Q", "W_K", "W_V", "W_O")))
READOUT = ("W_1", "b_1", "W_2", "b_2")
BOS_ID, EOS_ID = 0, 1  # rows of E_tgt: corpus.BOS, corpus.EOS


@dataclass(frozen=True, eq=False)
class Params(GridParams):
    """The learned arrays. A finished model has the GRID_PARAMS on the 0.1 grid."""

    GRID: ClassVar[tuple[str, ...]] = GRID_PARAMS

    E_src: np.ndarray  # (V_s, d)
    E_tgt: np.ndarray  # (V_t, d)
    enc_W_Q: np.ndarray  # (d, d_k)
    enc_W_K: np.ndarray  # (d, d_k)
    enc_W_V: np.ndarray  # (d, d_k)
    enc_W_O: np.ndarray  # (d_k, d)
    self_W_Q: np.ndarray  # (d, d_k)
    self_W_K: np.ndarray
    self_W_V: np.ndarray
    self_W_O: np.ndarray  # (d_k, d)
    cross_W_Q: np.ndarray  # (d, d_k)  applied to decoder rows
    cross_W_K: np.ndarray  # (d, d_k)  applied to the encoder's memory
    cross_W_V: np.ndarray  # (d, d_k)  applied to the encoder's memory
    cross_W_O: np.ndarray  # (d_k, d)
    W_1: np.ndarray  # (d, m) readout
    b_1: np.ndarray  # (m,)
    W_2: np.ndarray  # (m, V_t)
    b_2: np.ndarray  # (V_t,)

    def attention(self, which: str) -> tuple[np.ndarray, ...]:
        """W_Q, W_K, W_V, W_O of "enc", "self" or "cross"."""
        return tuple(getattr(self, f"{which}_{w}") for w in ("W_Q", "W_K", "W_V", "W_O"))


def init_params(c: ModelConfig, n_src: int, n_tgt: int, rng: np.random.Generator) -> Params:
    """E ~ N(0, 1); W_Q, W_K small (near-uniform attention at first); other W Xavier-like."""
    d, d_k, m = c.d_model, c.d_k, c.d_hidden
    arrays: dict[str, np.ndarray] = {"E_src": rng.normal(0.0, 1.0, (n_src, d)),
                                     "E_tgt": rng.normal(0.0, 1.0, (n_tgt, d))}
    for a in ATTENTIONS:
        arrays[f"{a}_W_Q"] = rng.normal(0.0, c.init_qk / math.sqrt(d), (d, d_k))
        arrays[f"{a}_W_K"] = rng.normal(0.0, c.init_qk / math.sqrt(d), (d, d_k))
        arrays[f"{a}_W_V"] = rng.normal(0.0, 1.0 / math.sqrt(d), (d, d_k))
        arrays[f"{a}_W_O"] = rng.normal(0.0, 1.0 / math.sqrt(d_k), (d_k, d))
    arrays |= {"W_1": rng.normal(0.0, math.sqrt(2.0 / d), (d, m)), "b_1": np.zeros(m),
               "W_2": rng.normal(0.0, 1.0 / math.sqrt(m), (m, n_tgt)), "b_2": np.zeros(n_tgt)}
    return Params(**arrays)


# ---------------------------------------------------------------- one attention, both ways

@dataclass(frozen=True, eq=False)
class Attention:
    """One single-head attention on a batch: every intermediate."""

    Q: np.ndarray  # (B, n_q, d_k)  X_q·W_Q
    K: np.ndarray  # (B, n_k, d_k)  X_kv·W_K
    V: np.ndarray  # (B, n_k, d_k)  X_kv·W_V
    scores: np.ndarray  # (B, n_q, n_k)  Q·Kᵀ
    scaled: np.ndarray  # (B, n_q, n_k)  Q·Kᵀ/√d_k
    mask: np.ndarray  # (B or 1, n_q or 1, n_k)  True where attending is allowed
    weights: np.ndarray  # (B, n_q, n_k)  softmax rows
    Z: np.ndarray  # (B, n_q, d_k)  weights·V
    output: np.ndarray  # (B, n_q, d)  Z·W_O


def attend(X_q: np.ndarray, X_kv: np.ndarray, W_Q: np.ndarray, W_K: np.ndarray,
           W_V: np.ndarray, W_O: np.ndarray, mask: np.ndarray) -> Attention:
    """softmax(X_q·W_Q·(X_kv·W_K)ᵀ/√d_k)·X_kv·W_V·W_O, the steps of attncore.attention."""
    Q = linear(X_q, W_Q)  # (B, n_q, d_k)
    K = linear(X_kv, W_K)  # (B, n_k, d_k)
    V = linear(X_kv, W_V)  # (B, n_k, d_k)
    S = scores(Q, K)  # (B, n_q, n_k)
    S_scaled = att.scale(S, W_Q.shape[1])  # (B, n_q, n_k)
    A = att.softmax(S_scaled, np.broadcast_to(mask, S.shape))  # (B, n_q, n_k)
    Z = att.weighted_sum(A, V)  # (B, n_q, d_k)
    return Attention(Q, K, V, S, S_scaled, mask, A, Z, linear(Z, W_O))


def attend_backward(dO: np.ndarray, f: Attention, X_q: np.ndarray, X_kv: np.ndarray,
                    W_Q: np.ndarray, W_K: np.ndarray, W_V: np.ndarray, W_O: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, ...]]:
    """∂L/∂X_q, ∂L/∂X_kv (through K and V) and ∂L/∂(W_Q, W_K, W_V, W_O), given ∂L/∂output."""
    dZ, dW_O, _ = linear_backward(dO, f.Z, W_O)
    dA, dV = weighted_sum_backward(dZ, f.weights, f.V)
    dS = scale_backward(softmax_backward(dA, f.weights), W_Q.shape[1])
    dQ, dK = scores_backward(dS, f.Q, f.K)
    dX_q, dW_Q, _ = linear_backward(dQ, X_q, W_Q)
    dX_k, dW_K, _ = linear_backward(dK, X_kv, W_K)
    dX_v, dW_V, _ = linear_backward(dV, X_kv, W_V)
    return dX_q, dX_k + dX_v, (dW_Q, dW_K, dW_V, dW_O)


def log_softmax(logits: np.ndarray) -> np.ndarray:
    """log p_j = z_j − max z − log Σ_k exp(z_k − max z)."""
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))  # (B, t, V_t)


def cross_entropy(logits: np.ndarray, y: np.ndarray, weight: np.ndarray) -> float:
    """Mean over the real target rows of −log p(the right word): L = Σ w·(−log p_y) / Σ w."""
    nll = -np.take_along_axis(log_softmax(logits), y[..., None], axis=-1)[..., 0]  # (B, t)
    return float((weight * nll).sum() / weight.sum())


def cross_entropy_backward(logits: np.ndarray, y: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """∂L/∂z = w·(softmax(z) − onehot(y)) / Σ w."""
    g = np.exp(log_softmax(logits))  # (B, t, V_t)
    np.put_along_axis(g, y[..., None], np.take_along_axis(g, y[..., None], -1) - 1.0, -1)
    return g * (weight / weight.sum())[..., None]


# ---------------------------------------------------------------- the whole model

@dataclass(frozen=True, eq=False)
class Encoded:
    """The encoder on a batch of source sentences."""

    ids: np.ndarray  # (B, s)
    mask: np.ndarray  # (B, s) True for real words
    P: np.ndarray  # (s, d)
    X: np.ndarray  # (B, s, d)  E_src[ids] + P
    attn: Attention
    memory: np.ndarray  # (B, s, d)  X + SelfAttn(X): the keys' and values' input


def encode(p: Params, ids: np.ndarray, mask: np.ndarray) -> Encoded:
    P = positions(ids.shape[1], p.E_src.shape[1])  # (s, d)
    X = embed(p.E_src, ids, P)  # (B, s, d)
    a = attend(X, X, *p.attention("enc"), mask[:, None, :])
    return Encoded(ids, mask, P, X, a, X + a.output)


@dataclass(frozen=True, eq=False)
class Decoded:
    """The decoder on a batch of target prefixes, given the encoder."""

    ids: np.ndarray  # (B, t) input words: <s>, w_0, …
    mask: np.ndarray  # (B, t)
    P: np.ndarray  # (t, d)
    Y: np.ndarray  # (B, t, d)  E_tgt[ids] + P
    self_attn: Attention  # causal
    Y1: np.ndarray  # (B, t, d)  Y + CausalSelfAttn(Y): the cross-attention's query input
    cross: Attention  # queries from Y1, keys and values from the memory
    Y2: np.ndarray  # (B, t, d)  Y1 + CrossAttn
    pre: np.ndarray  # (B, t, m)
    hidden: np.ndarray  # (B, t, m)
    logits: np.ndarray  # (B, t, V_t)


def decode_rows(p: Params, enc: Encoded, ids: np.ndarray, mask: np.ndarray) -> Decoded:
    t = ids.shape[1]
    P = positions(t, p.E_tgt.shape[1])  # (t, d)
    Y = embed(p.E_tgt, ids, P)  # (B, t, d)
    causal = att.causal_mask(t, t)[None] & mask[:, None, :]  # (B, t, t)
    sa = attend(Y, Y, *p.attention("self"), causal)
    Y1 = Y + sa.output  # (B, t, d)
    ca = attend(Y1, enc.memory, *p.attention("cross"), enc.mask[:, None, :])
    Y2 = Y1 + ca.output  # (B, t, d)
    U = linear(Y2, p.W_1, p.b_1)  # (B, t, m)
    Hd = relu(U)  # (B, t, m)
    return Decoded(ids, mask, P, Y, sa, Y1, ca, Y2, U, Hd, linear(Hd, p.W_2, p.b_2))


def forward(p: Params, src: np.ndarray, src_mask: np.ndarray, tgt_in: np.ndarray,
            tgt_mask: np.ndarray) -> tuple[Encoded, Decoded]:
    """Encoder then decoder (teacher forcing: the decoder reads the right previous words)."""
    enc = encode(p, src, src_mask)
    return enc, decode_rows(p, enc, tgt_in, tgt_mask)


def backward(p: Params, enc: Encoded, dec: Decoded, dlogits: np.ndarray) -> Params:
    """∂L/∂(every parameter), given ∂L/∂logits: the steps of `forward` in reverse."""
    dHd, dW_2, db_2 = linear_backward(dlogits, dec.hidden, p.W_2)
    dU = relu_backward(dHd, dec.pre)
    dY2, dW_1, db_1 = linear_backward(dU, dec.Y2, p.W_1)
    dY1_q, dM, g_cross = attend_backward(dY2, dec.cross, dec.Y1, enc.memory,
                                         *p.attention("cross"))
    dY1 = dY2 + dY1_q  # Y2 = Y1 + CrossAttn(Y1, M)
    dY_q, dY_kv, g_self = attend_backward(dY1, dec.self_attn, dec.Y, dec.Y,
                                          *p.attention("self"))
    dY = dY1 + dY_q + dY_kv  # Y1 = Y + SelfAttn(Y)
    dE_tgt = embed_backward(dY, dec.ids, p.E_tgt.shape[0])
    dX_q, dX_kv, g_enc = attend_backward(dM, enc.attn, enc.X, enc.X, *p.attention("enc"))
    dX = dM + dX_q + dX_kv  # M = X + SelfAttn(X)
    dE_src = embed_backward(dX, enc.ids, p.E_src.shape[0])
    grads = {"E_src": dE_src, "E_tgt": dE_tgt, "W_1": dW_1, "b_1": db_1, "W_2": dW_2,
             "b_2": db_2}
    for a, g in zip(ATTENTIONS, (g_enc, g_self, g_cross)):
        grads |= {f"{a}_{w}": gw for w, gw in zip(("W_Q", "W_K", "W_V", "W_O"), g)}
    return Params(**grads)


def loss_and_grads(p: Params, src: np.ndarray, src_mask: np.ndarray, tgt_in: np.ndarray,
                   tgt_out: np.ndarray, tgt_mask: np.ndarray
                   ) -> tuple[float, Params, Decoded]:
    """Teacher-forced mean cross-entropy of a batch, its gradient and the decoder pass."""
    enc, dec = forward(p, src, src_mask, tgt_in, tgt_mask)
    w = tgt_mask.astype(np.float64)  # (B, t)
    loss = cross_entropy(dec.logits, tgt_out, w)
    return loss, backward(p, enc, dec, cross_entropy_backward(dec.logits, tgt_out, w)), dec


def greedy(p: Params, src: np.ndarray, src_mask: np.ndarray, max_len: int) -> np.ndarray:
    """Greedy decoding of a batch: start from <s>, append the likeliest word (never <s>)
    until every row has written </s> or max_len words. (B, ≤ max_len + 1) word ids; after
    a row's </s> the rest is </s>."""
    enc = encode(p, src, src_mask)
    B = src.shape[0]
    out = np.full((B, 1), BOS_ID, dtype=np.int64)  # (B, 1)
    done = np.zeros(B, dtype=bool)
    for _ in range(max_len + 1):
        dec = decode_rows(p, enc, out, np.ones(out.shape, dtype=bool))
        nxt = dec.logits[:, -1, 1:].argmax(axis=-1) + 1  # (B,) never <s>
        nxt = np.where(done, EOS_ID, nxt)
        out = np.concatenate([out, nxt[:, None]], axis=1)
        done |= nxt == EOS_ID
        if done.all():
            break
    return out[:, 1:]


# ---------------------------------------------------------------- one pair, for the video

def _head(W: tuple[np.ndarray, ...], a: Attention) -> HeadRun:
    return HeadRun(0, *(read_only(x) for x in (W[0], W[1], W[2], a.Q[0], a.K[0], a.V[0],
                                                a.scores[0], a.scaled[0], a.weights[0],
                                                a.Z[0])))


@dataclass(frozen=True, eq=False)
class TranslationRun:
    """One source sentence and one target (decoded or forced) through the model: every
    number the video shows. Arrays are read-only.

    Row convention of every decoder array: row i WRITES target_tokens[i]; its input word is
    input_tokens[i] (<s> for row 0, else target_tokens[i−1]). With eos_row=True there is
    one more row, the one writing </s>.

    For an AttentionTrace with cross=True: query_tokens = target_tokens, key_tokens =
    source_tokens, X_q = cross_X_q, X_kv = cross_X_kv, and the head is `cross`
    (attncore.trace.compute_head(0, 0, cross_X_q, cross_X_kv, cross.W_Q, cross.W_K,
    cross.W_V, zeros, zeros, zeros, mask = all True) gives the same numbers).
    """

    source_tokens: tuple[Token, ...]  # the English words as typed
    target_tokens: tuple[Token, ...]  # the Spanish words written (decoded or as forced)
    input_tokens: tuple[Token, ...]  # the decoder's input words, one per row
    forced: bool  # True: the target was given (teacher forcing); False: greedy decoding
    # encoder
    E: np.ndarray  # (s, d)  the source words' rows of E_src
    P: np.ndarray  # (s, d)  positional encoding (0.1 grid)
    X: np.ndarray  # (s, d)  E + P
    encoder: HeadRun  # self-attention of the source
    encoder_W_O: np.ndarray  # (d_k, d)
    encoder_output: np.ndarray  # (s, d)  Z·W_O
    memory: np.ndarray  # (s, d)  X + encoder_output: what the cross-attention's K, V read
    # decoder
    E_q: np.ndarray  # (t, d)  the input words' rows of E_tgt
    P_q: np.ndarray  # (t, d)
    X_q: np.ndarray  # (t, d)  E_q + P_q
    decoder_self: HeadRun  # causal self-attention of the target
    self_W_O: np.ndarray  # (d_k, d)
    Y1: np.ndarray  # (t, d)  X_q + CausalSelfAttn(X_q): the cross-attention's query input
    cross: HeadRun  # Q from Y1 (target rows), K and V from memory (source words)
    cross_W_O: np.ndarray  # (d_k, d)
    cross_output: np.ndarray  # (t, d)  Z·W_O
    Y2: np.ndarray  # (t, d)  Y1 + cross_output
    probabilities: np.ndarray  # (t, V_t) the readout's next-word distribution per row
    predicted: tuple[str, ...]  # the likeliest word of each row (what greedy would write)

    @property
    def cross_X_q(self) -> np.ndarray:
        return self.Y1

    @property
    def cross_X_kv(self) -> np.ndarray:
        return self.memory

    def row_writing(self, word: str) -> int:
        """The first decoder row that writes `word` (case-folded)."""
        keys = [t.key for t in self.target_tokens]
        if word.casefold() not in keys:
            raise ValueError(f"{word!r} is not written in {' '.join(t.text for t in self.target_tokens)!r}")
        return keys.index(word.casefold())


@dataclass(frozen=True, eq=False)
class TranslationModel:
    """A trained English → Spanish model: vocabularies, weights (GRID_PARAMS on the 0.1
    grid), the settings that trained it, its held-out scores, its training history and how
    it was made (the command that trains it again, the platform that trained it)."""

    config: ModelConfig
    src_vocab: tuple[str, ...]  # row w of E_src is src_vocab[w]
    tgt_vocab: tuple[str, ...]  # row w of E_tgt is tgt_vocab[w]; 0 is <s>, 1 is </s>
    params: Params
    train_config: TrainConfig | None = None
    history: History | None = None
    scores: dict[str, float] = dataclasses.field(default_factory=dict)
    provenance: Provenance = Provenance()

    @property
    def name(self) -> str:
        seed = "" if self.train_config is None else f", seed {self.train_config.seed}"
        return f"tiny translation model (English → Spanish, d_model {self.config.d_model}{seed})"

    def tokenize(self, sentence: str) -> tuple[Token, ...]:
        """The English sentence in the model's vocabulary (UnknownWordError names the rest)."""
        return corpus.tokenize(sentence, self.src_vocab, "en")

    def tokenize_target(self, sentence: str) -> tuple[Token, ...]:
        return corpus.tokenize(sentence, self.tgt_vocab, "es")

    def _ids(self, tokens: Sequence[Token], vocab: tuple[str, ...], language: str
             ) -> list[int]:
        index = {w: i for i, w in enumerate(vocab)}
        missing = tuple(dict.fromkeys(t.text for t in tokens if t.key not in index))
        if missing:
            raise corpus.UnknownWordError(missing, vocab, language)
        return [index[t.key] for t in tokens]

    def decode(self, sentence: str | Sequence[Token], max_len: int | None = None
               ) -> tuple[Token, ...]:
        """Greedy translation: the Spanish words (vocabulary forms), without <s> and </s>."""
        src = self.tokenize(sentence) if isinstance(sentence, str) else tuple(sentence)
        ids = np.asarray([self._ids(src, self.src_vocab, "English")])
        out = greedy(self.params, ids, np.ones(ids.shape, dtype=bool),
                     max_len or len(src) + 2)[0]
        words = []
        for i in out:
            if i == EOS_ID:
                break
            words.append(Token(self.tgt_vocab[i], "word"))
        return tuple(words)

    def translate(self, sentence: str) -> str:
        """The greedy translation as text, first letter capitalised."""
        text = " ".join(t.text for t in self.decode(sentence))
        return text[:1].upper() + text[1:]

    def run(self, source: str | Sequence[Token], target: str | Sequence[Token] | None = None,
            eos_row: bool = False) -> TranslationRun:
        """The source through the encoder and the target (greedy-decoded when None, else
        forced) through the decoder, every intermediate kept; see TranslationRun for which
        row is which."""
        src = self.tokenize(source) if isinstance(source, str) else tuple(source)
        forced = target is not None
        if target is None:
            tgt = self.decode(src)
        else:
            tgt = self.tokenize_target(target) if isinstance(target, str) else tuple(target)
        src_ids = np.asarray([self._ids(src, self.src_vocab, "English")])
        tgt_ids = self._ids(tgt, self.tgt_vocab, "Spanish")
        if not tgt_ids and not eos_row:
            raise ValueError("the target is empty (the model wrote </s> first): nothing to "
                             "show; run(..., eos_row=True) shows the row that wrote </s>")
        inputs = [BOS_ID, *tgt_ids] if eos_row else [BOS_ID, *tgt_ids[:-1]]
        in_ids = np.asarray([inputs])
        p = self.params
        enc, dec = forward(p, src_ids, np.ones(src_ids.shape, dtype=bool), in_ids,
                           np.ones(in_ids.shape, dtype=bool))
        written = tgt + ((Token(corpus.EOS, "special"),) if eos_row else ())
        input_tokens = (Token(corpus.BOS, "special"), *written[:-1])
        probs = np.exp(log_softmax(dec.logits[0]))  # (t, V_t)
        return TranslationRun(
            src, tuple(written), input_tokens, forced,
            read_only(p.E_src[src_ids[0]]), read_only(enc.P), read_only(enc.X[0]),
            _head(p.attention("enc"), enc.attn), read_only(p.enc_W_O),
            read_only(enc.attn.output[0]), read_only(enc.memory[0]),
            read_only(p.E_tgt[in_ids[0]]), read_only(dec.P), read_only(dec.Y[0]),
            _head(p.attention("self"), dec.self_attn), read_only(p.self_W_O),
            read_only(dec.Y1[0]),
            _head(p.attention("cross"), dec.cross), read_only(p.cross_W_O),
            read_only(dec.cross.output[0]), read_only(dec.Y2[0]), read_only(probs),
            tuple(self.tgt_vocab[1 + int(i)] for i in probs[:, 1:].argmax(axis=-1)))
