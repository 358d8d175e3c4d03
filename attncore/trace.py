"""The AttentionTrace: every intermediate of one attention computation, frozen.

Scenes read only this (and the settings). Arrays are read-only copies.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from attention_video.attncore import attention as att
from attention_video.attncore import sources
from attention_video.attncore.geometry import QueryGeometry, query_geometry
from attention_video.attncore.sources import Capabilities
from attention_video.attncore.tokenize import Token


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
    row_max: np.ndarray  # (n_q,)  softmax's max over each row's allowed scaled scores
    exp_shifted: np.ndarray  # (n_q, n_k)  exp(scaled − row_max), 0 where masked
    exp_sum: np.ndarray  # (n_q,)  Σ of each row of exp_shifted
    weights: np.ndarray  # (n_q, n_k)  softmax rows (or the raw factors without softmax)
    Z: np.ndarray  # (n_q, d_k)  weights·V
    # What the head does whatever the words, as a tag ("previous token", "next token",
    # "[CLS]/[SEP]", as --list-heads prints them; the scenes word them),
    # found from its weights (attncore.pretrained.heads); None: it depends on the words, or
    # the model was not checked for it (only the pretrained model is).
    pattern: str | None = None

    ARRAYS = ("W_Q", "W_K", "W_V", "b_Q", "b_K", "b_V", "Q", "K", "V",
              "scores", "scaled", "mask", "row_max", "exp_shifted", "exp_sum", "weights", "Z")

    def __post_init__(self) -> None:
        for name in self.ARRAYS:
            object.__setattr__(self, name, frozen(getattr(self, name)))

    @property
    def has_bias(self) -> bool:
        return bool(np.any(self.b_Q) or np.any(self.b_K) or np.any(self.b_V))

    # ---- readings: what the chapters state about these numbers, each defined once --------
    def products(self, i: int, j: int) -> np.ndarray:
        """Cell (i, j) of Q·Kᵀ before its sum: Q_i,m · K_j,m for each m."""
        return att.pair_products(self.Q[i], self.K[j])  # (d_k,)

    def agreement(self, i: int, j: int) -> np.ndarray:
        """+1 / −1 / 0 per pair of cell (i, j): the signs agree, differ, or one is 0."""
        return att.agreement(self.products(i, j))  # (d_k,)

    def weighted_rows(self, i: int) -> np.ndarray:
        """Query i's weighted V rows, weights[i, j]·V_j; they sum to Z_i."""
        return att.weighted_rows(self.weights[i], self.V)  # (n_k, d_k)

    def ranking(self, i: int, by_size: bool = False) -> tuple[int, ...]:
        """Query i's allowed keys by weight, largest first (by |weight| when by_size)."""
        return att.ranking(self.weights[i], self.mask[i], by_size)

    def best_key(self, i: int, others: bool = False) -> int:
        """The allowed key query i scores highest (the first of equals). `others`: not the
        query's own word in self-attention, unless it is the only key allowed."""
        allowed = self.mask[i].copy()  # (n_k,)
        if others and i < len(allowed) and allowed.sum() > 1:
            allowed[i] = False
        if not allowed.any():
            return i if i < len(allowed) else 0
        return int(np.argmax(np.where(allowed, self.scores[i], -np.inf)))

    def geometry(self, i: int) -> QueryGeometry:
        """Query i against every key as arrows in their planes: |q|, each |k|, θ and shadow
        (attncore.geometry; chapter `dot` draws it)."""
        return query_geometry(self.Q[i], self.K, self.mask[i])


@dataclass(frozen=True)
class HeadChoice:
    """Why --head auto follows this head, as data: the scenes phrase it in the caption
    language (scenes.reasons)."""

    rule: str  # one of the rules below
    layer: int
    head: int
    focus_name: str = ""  # the followed token as named in the reason: "'milk'", or
    #                       "'dr' (part of 'drank')" for a piece of a longer word
    word: int | None = None  # STRONGEST_LINK: the key the followed word weighs most here
    word_name: str | None = None
    weight: float | None = None  # … and that weight
    offset: int | None = None  # −1 / +1: that key is the token just before / after it
    skipped: tuple[tuple[int, int], ...] = ()  # positional heads left out, (layer, head)
    skipped_sides: tuple[int, ...] = ()  # which sides they look at: −1 before, +1 after
    skipped_kinds: tuple[str, ...] = ()  # the fixed patterns left out (attncore.heads.PREVIOUS …)
    kind: str | None = None  # the chosen head's fixed pattern, when every head has one
    rate: float | None = None  # VERB_HEAD: share of held-out objects attending to their verb
    # A decoder's first token, left out of the words compared (an attention sink: it takes
    # much of every head's weight whatever the words), and the mean weight it gets: every
    # head of every layer, every token after it.
    sink_name: str | None = None
    sink_share: float | None = None

    STRONGEST_LINK = "strongest link"  # the largest weight to another word of any head
    VERB_HEAD = "verb head"  # the tiny model's head where objects find their verbs
    NO_OTHER_WORD = "no other word"  # nothing else to attend to: layer's head 0
    UNTRAINED = "untrained"  # random weights: head 0, no head means more than another


@dataclass(frozen=True, eq=False)
class TrainingHistory:
    """How the followed word's attention formed while the model trained (chapter `learning`): the
    model replayed on this sentence at snapshots through training, and the curves.

    partner is the key the followed word weighs most at the end, other than itself.
    """

    partner: int
    steps: np.ndarray  # (s,) training step of each snapshot, 0 first, the final model last
    weights: np.ndarray  # (s, n_k) the followed word's attention row at each snapshot
    q: np.ndarray  # (s, d_k) its Q row
    k: np.ndarray  # (s, d_k) the partner's K row
    products: np.ndarray  # (s, d_k) q_m · k_m, the pairs of the dot product
    scores: np.ndarray  # (s,) q·k = Σ products: its cell of Q·Kᵀ
    keys: np.ndarray  # (s, n_k, d_k) every key's K row (k is the partner's): the arrows
    curve_step: np.ndarray  # (c,) steps at which the curves were sampled
    curve_loss: np.ndarray  # (c,) mean training loss since the previous point
    curve_accuracy: np.ndarray  # (c,) held-out accuracy of the training task
    task: str = ""  # what the model was trained to do: one of the tasks below (the scenes word it)
    # The swapped-object task's example, per language of the corpus: (language, verb, object),
    # a verb with an object of another verb's category ("drank the bread").
    examples: tuple[tuple[str, str, str], ...] = ()

    SWAPPED_OBJECT = "swapped object"  # the tiny model: spot an object its verb does not take
    TRANSLATE = "translate"  # the translation model: English into Spanish, word by word

    ARRAYS = ("steps", "weights", "q", "k", "products", "scores", "keys", "curve_step",
              "curve_loss", "curve_accuracy")

    def __post_init__(self) -> None:
        for name in self.ARRAYS:
            object.__setattr__(self, name, frozen(getattr(self, name)))

    def geometry(self, s: int) -> QueryGeometry:
        """The followed word's query against every key at snapshot s, as arrows
        (attncore.geometry; chapter `learning` draws it)."""
        return query_geometry(self.q[s], self.keys[s])

    @property
    def agreement(self) -> np.ndarray:
        """+1 / −1 / 0 per pair at each snapshot (attention.agreement)."""
        return att.agreement(self.products)  # (s, d_k)

    def agreeing(self, s: int) -> int:
        """How many pairs agree in sign at snapshot s."""
        return int((self.agreement[s] > 0).sum())


@dataclass(frozen=True, eq=False)
class RotaryTrace:
    """Rotary position embedding (RoPE) of the layer shown, for a decoder that has it.

    RoPE adds no P to X: it turns each 2-number pair of every q and k row by an angle
    proportional to the word's position, so q·k depends on how far apart two words are.
    Pair m is entries (2m, 2m+1) of a row (the GGUF layout, after llama.cpp's permutation);
    HeadTrace.Q and .K are the rows AFTER rotation (what the scores use).
    """

    base: float  # the angle base: pair m of position p turns by p · base^(−2m/d_k)
    angles: np.ndarray  # (n, d_k/2) radians, position p (row) and pair m (column)
    Q_before: np.ndarray  # (heads, n_q, d_k) each query head's Q before rotation
    K_before: np.ndarray  # (kv_heads, n_k, d_k) each key/value head's K before rotation

    ARRAYS = ("angles", "Q_before", "K_before")

    def __post_init__(self) -> None:
        for name in self.ARRAYS:
            object.__setattr__(self, name, frozen(getattr(self, name)))


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
    source: str = "random"  # the weight source's name (a row of attncore.sources)
    model_name: str | None = None  # the trained model's name
    layer: int = 0
    causal: bool = False
    cross: bool = False
    normalized: bool = True  # True: scaled + softmax; False: the raw factors weigh V
    seed: int = 0
    head_choice: HeadChoice | None = None  # why this head was chosen (head "auto")
    x_label: str = "E + P"  # how X was made, as a formula
    # where X comes from: the EMBEDDING (E + P, E, or its norm), the ENCODER's output (the
    # translation model's keys), the HIDDEN state after the layer below, or that NORMED
    x_from: str = "embedding"
    positional: bool = True  # X = E + P; False: X = E (random weights only)
    history: TrainingHistory | None = None  # the tiny model's training, replayed (`learning`)
    source_reason: str | None = None  # why this weight source ("--weights auto")
    # A decoder (the translation model): query row i WRITES query_tokens[i] and reads
    # query_inputs[i], the word before it (<s> first); X_q was made as x_label_q says.
    query_inputs: tuple[Token, ...] | None = None
    x_label_q: str | None = None
    # Every layer's attention, (layers, heads, n_q, n_k), for the model overview of chapter
    # 10 (the pretrained model; None when only one layer exists or was computed).
    model_weights: np.ndarray | None = None
    # A decoder with rotary positions (--weights decoder); None for the others.
    rope: RotaryTrace | None = None
    # Grouped-query attention: for each query head of the layer, the key/value head it reads
    # (HeadTrace.W_K, W_V, K, V are that shared head's); None: every head has its own.
    kv_heads: tuple[int, ...] | None = None
    # What the model that made it can do (its row of attncore.sources); None: that row's.
    can: Capabilities | None = None

    ARRAYS = ("E", "P", "X", "E_q", "P_q", "X_q", "W_O", "output")
    EMBEDDING, ENCODER, HIDDEN, NORMED_HIDDEN = "embedding", "encoder", "hidden", "normed_hidden"

    def __post_init__(self) -> None:
        if self.can is None:
            object.__setattr__(self, "can", sources.source(self.source).can)
        for name in self.ARRAYS:
            object.__setattr__(self, name, frozen(getattr(self, name)))
        if self.model_weights is not None:
            object.__setattr__(self, "model_weights", frozen(self.model_weights))

    @property
    def head(self) -> HeadTrace:
        """The head the video follows."""
        return self.heads[self.head_index]

    @property
    def partner(self) -> int:
        """The key the followed word scores highest other than itself (itself if there is
        none; in cross-attention every key is another word): the key `linear` to `dot` feature."""
        return self.head.best_key(self.focus, others=not self.cross)

    def projection_terms(self, name: str, i: int, c: int) -> np.ndarray:
        """Entry (i, c) of Q, K or V (`name`) before its sum: X[i, m] · W[m, c] for each m
        (X_q for Q); the terms plus the bias b[c] make the entry (chapter `linear`)."""
        X = self.X_q if name == "Q" else self.X
        W = getattr(self.head, f"W_{name}")
        return att.pair_products(X[i], W[:, c])  # (d_model,)

    def is_self_pair(self, j: int) -> bool:
        """The followed word paired with itself (no other key to pair with)."""
        return not self.cross and j == self.focus

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
        """The weights were learned, so the pattern means something."""
        return self.can.trained

    @property
    def trained_here(self) -> bool:
        """Trained by this project (the tiny and translation models): `learning` can show it."""
        return self.can.trained_here

    @property
    def decoder(self) -> bool:
        """Queries from a decoder's rows, each writing its target word."""
        return self.query_inputs is not None

    @property
    def on_grid(self) -> bool:
        """Weights and embeddings on the 0.1 grid: X has one decimal, Q, K, V two, and
        every product can be redone on paper (random and tiny weights)."""
        return self.can.on_grid


def compute_head(
    layer: int, head: int, X_q: np.ndarray, X_kv: np.ndarray,
    W_Q: np.ndarray, W_K: np.ndarray, W_V: np.ndarray,
    b_Q: np.ndarray, b_K: np.ndarray, b_V: np.ndarray,
    mask: np.ndarray, normalized: bool = True,
) -> HeadTrace:
    """One head, step by step: Q, K, V → Q·Kᵀ → /√d_k → softmax → weights·V.

    The softmax parts (row max, exp, Σ) are kept even without softmax, where the raw
    factors weigh V instead (the article's simplification).
    """
    Q, K, V = att.project_qkv(X_q, X_kv, W_Q, W_K, W_V, b_Q, b_K, b_V)
    S = att.scores(Q, K)  # (n_q, n_k)
    S_scaled = att.scale(S, Q.shape[1])  # (n_q, n_k)
    parts = att.softmax_parts(S_scaled, mask)
    A = parts.weights if normalized else np.where(mask, S, 0.0)  # (n_q, n_k)
    Z = att.weighted_sum(A, V)  # (n_q, d_k)
    return HeadTrace(layer, head, W_Q, W_K, W_V, b_Q, b_K, b_V, Q, K, V, S, S_scaled, mask,
                     parts.row_max, parts.exp, parts.total, A, Z)


