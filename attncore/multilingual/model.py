"""multilingual-e5-small loaded for the numpy encoder: the 4-bit weights of every layer
dequantised once (float64, (in, out) as y = x·W + b reads), the word embeddings kept 4-bit in
the mapped file and dequantised per token, the tokenizer built from the stored vocabulary."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from attention_video.attncore.encoder import (
    Forward,
    LayerNormWeights,
    LayerWeights,
    run_layers,
)
from attention_video.attncore.multilingual import e5file
from attention_video.attncore.multilingual.e5file import E5Config, E5File
from attention_video.attncore.multilingual.locate import ModelRef
from attention_video.attncore.multilingual.unigram import UnigramTokenizer


@dataclass(frozen=True, eq=False)
class E5Model:
    """Everything the forward pass and the tokenizer need."""

    ref: ModelRef
    file: E5File
    config: E5Config
    word_blocks: np.ndarray  # (vocab rows, d_model/32) Q4_0 blocks, a view of the mapped file
    position_embeddings: np.ndarray  # (max_positions, d_model)
    token_type_embeddings: np.ndarray  # (types, d_model)
    ln_embed: LayerNormWeights
    layers: tuple[LayerWeights, ...]
    tokenizer: UnigramTokenizer

    @property
    def name(self) -> str:
        return self.ref.name


def linear(f: E5File, name: str, nin: int) -> tuple[np.ndarray, np.ndarray]:
    """A stored Q4_0 weight (nout, nin) and its bias → (W (nin, nout), b (nout,)) in float64."""
    W = np.ascontiguousarray(e5file.dequantize(f.q4(name + ".w", nin)).T, dtype=np.float64)
    W.setflags(write=False)
    return W, f.f32(name + ".b")


def layer_norm_weights(f: E5File, name: str) -> LayerNormWeights:
    return LayerNormWeights(f.f32(name + ".w"), f.f32(name + ".b"))


def read_layer(f: E5File, i: int) -> LayerWeights:
    """Layer i's tensors, named as e5.c reads them (l{i}.q.w … l{i}.oln.b)."""
    H, FF = f.config.hidden_size, f.config.intermediate_size
    p = f"l{i}."
    W_Q, b_Q = linear(f, p + "q", H)
    W_K, b_K = linear(f, p + "k", H)
    W_V, b_V = linear(f, p + "v", H)
    W_O, b_O = linear(f, p + "ao", H)
    W_1, b_1 = linear(f, p + "fi", H)
    W_2, b_2 = linear(f, p + "fo", FF)
    return LayerWeights(W_Q, b_Q, W_K, b_K, W_V, b_V, W_O, b_O, layer_norm_weights(f, p + "aln"),
                        W_1, b_1, W_2, b_2, layer_norm_weights(f, p + "oln"))


@functools.lru_cache(maxsize=2)
def load_file(path: str, name: str) -> E5Model:
    """Parse and dequantise one model file; cached per file in this process."""
    ref = ModelRef(Path(path), name)
    f = e5file.read(ref.path)
    c = f.config
    return E5Model(
        ref=ref, file=f, config=c,
        word_blocks=f.q4("emb.word", c.hidden_size),
        position_embeddings=f.f32("emb.pos", (c.max_positions, c.hidden_size)),
        token_type_embeddings=f.f32("emb.type", (c.token_types, c.hidden_size)),
        ln_embed=layer_norm_weights(f, "emb.ln"),
        layers=tuple(read_layer(f, i) for i in range(c.num_layers)),
        tokenizer=UnigramTokenizer(f.vocab),
    )


def load(ref: ModelRef) -> E5Model:
    return load_file(str(ref.path), ref.name)


def embed(m: E5Model, ids: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """E = word_embeddings[ids] (dequantised rows);  P = position_embeddings[0…n−1] +
    token_type_embeddings[0] (e5 counts positions from 0, unlike XLM-R's padding offset)."""
    n = len(ids)
    E = e5file.dequantize(m.word_blocks[np.asarray(ids)]).astype(np.float64)  # (n, d)
    P = m.position_embeddings[:n] + m.token_type_embeddings[0]  # (n, d)
    return E, P


def encode(m: E5Model, ids: tuple[int, ...], layers: int | None = None) -> Forward:
    """Every layer (or the first `layers`) over one sentence, attention mask all ones."""
    c = m.config
    E, P = embed(m, ids)  # (n, d) each
    return run_layers(E, P, m.ln_embed, m.layers[: c.num_layers if layers is None else layers],
                      c.num_heads, c.layer_norm_eps)


def sentence_embedding(fw: Forward) -> np.ndarray:
    """e5's sentence embedding: the mean of the last layer's rows, L2-normalised."""
    v = fw.hidden[-1].mean(axis=0)  # (d,)
    return v / max(float(np.linalg.norm(v)), 1e-6)
