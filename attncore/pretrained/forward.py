"""The BERT encoder forward pass of a Hugging Face checkpoint: its embeddings, then the
layers of attncore.encoder (post-LayerNorm, exact GELU).

    X_0 = LayerNorm(E + P),  E = word embeddings, P = position + token-type(0) embeddings
"""

from __future__ import annotations

import numpy as np
from attention_video.attncore.encoder import (  # noqa: F401 (re-exported: the forward's steps)
    Forward,
    encoder_layer,
    gelu,
    layer_norm,
    one_blas_thread,
    run_layers,
    self_attention,
    split_heads,
)
from attention_video.attncore.pretrained.checkpoint import Checkpoint


def embed(ck: Checkpoint, ids: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """E = word_embeddings[ids];  P = position_embeddings[0…n−1] + token_type_embeddings[0]."""
    n = len(ids)
    E = ck.word_embeddings[np.asarray(ids)].astype(np.float64)  # (n, d)
    P = ck.position_embeddings[:n] + ck.token_type_embeddings[0]  # (n, d)
    return E, P


def encode(ck: Checkpoint, ids: tuple[int, ...], layers: int | None = None) -> Forward:
    """Run the encoder over one sentence (attention mask all ones); `layers` stops early."""
    c = ck.config
    E, P = embed(ck, ids)  # (n, d) each
    return run_layers(E, P, ck.ln_embed, ck.layers[: c.num_layers if layers is None else layers],
                      c.num_heads, c.layer_norm_eps)
