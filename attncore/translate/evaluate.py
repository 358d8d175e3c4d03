"""Pairs as padded arrays, and the held-out figures of a set of weights.

    exact_match     greedy decoding writes the reference translation word for word (and </s>)
    token_accuracy  teacher-forced: each row's likeliest word is the right one (</s> included)
    alignment       the cross-attention row writing a content word (not an article) gives its
                    largest weight to the English word it translates (teacher-forced)
    crossing        among pairs with an adjective: the noun's and the adjective's rows both
                    look at their own English word (the alignment crosses)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from attention_video.attncore.trained.training import Rows
from attention_video.attncore.translate.corpus import Pair, default_corpus
from attention_video.attncore.translate.model import (
    BOS_ID,
    EOS_ID,
    Params,
    cross_entropy,
    forward,
    greedy,
)


@dataclass(frozen=True, eq=False)
class Batch(Rows):
    """Pairs as vocabulary indices, padded to the longest."""

    src: np.ndarray  # (N, s)
    src_mask: np.ndarray  # (N, s)
    tgt_in: np.ndarray  # (N, t) <s>, w_0, …, w_{T−1}
    tgt_out: np.ndarray  # (N, t) w_0, …, w_{T−1}, </s>
    tgt_mask: np.ndarray  # (N, t)
    align: np.ndarray  # (N, t) source index a content word translates; −1 elsewhere
    crossing: np.ndarray  # (N,) bool: the pair has an attributive adjective


def encode_pairs(pairs: Sequence[Pair], src_vocab: Sequence[str],
                 tgt_vocab: Sequence[str]) -> Batch:
    si = {w: i for i, w in enumerate(src_vocab)}
    ti = {w: i for i, w in enumerate(tgt_vocab)}
    articles = set(default_corpus().es_article)
    N = len(pairs)
    s = max(len(p.en) for p in pairs)
    t = max(len(p.es) for p in pairs) + 1
    src = np.zeros((N, s), dtype=np.int64)  # padding holds word 0; it is masked everywhere
    src_mask = np.zeros((N, s), dtype=bool)
    tgt_in = np.zeros((N, t), dtype=np.int64)
    tgt_out = np.zeros((N, t), dtype=np.int64)
    tgt_mask = np.zeros((N, t), dtype=bool)
    align = np.full((N, t), -1, dtype=np.int64)
    for b, p in enumerate(pairs):
        src[b, :len(p.en)] = [si[w] for w in p.en]
        src_mask[b, :len(p.en)] = True
        ids = [ti[w] for w in p.es]
        tgt_in[b, :len(ids) + 1] = [BOS_ID, *ids]
        tgt_out[b, :len(ids) + 1] = [*ids, EOS_ID]
        tgt_mask[b, :len(ids) + 1] = True
        for i, (w, a) in enumerate(zip(p.es, p.alignment)):
            if w not in articles:
                align[b, i] = a
    crossing = np.array([p.frame.adjective is not None for p in pairs])
    return Batch(src, src_mask, tgt_in, tgt_out, tgt_mask, align, crossing)


@dataclass(frozen=True)
class Scores:
    sentences: int
    loss: float  # teacher-forced mean cross-entropy per word
    token_accuracy: float
    exact_match: float
    alignment: float
    crossing: float

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def evaluate(p: Params, data: Batch) -> Scores:
    _, dec = forward(p, data.src, data.src_mask, data.tgt_in, data.tgt_mask)
    w = data.tgt_mask.astype(np.float64)
    loss = cross_entropy(dec.logits, data.tgt_out, w)
    right = dec.logits.argmax(axis=-1) == data.tgt_out  # (N, t)
    token_accuracy = float(right[data.tgt_mask].mean())
    out = greedy(p, data.src, data.src_mask, data.tgt_out.shape[1] + 1)  # (N, ≤ t + 2)
    t = data.tgt_out.shape[1]
    width = max(out.shape[1], t)
    got = np.full((len(data), width), EOS_ID)
    got[:, :out.shape[1]] = out
    want = np.where(data.tgt_mask, data.tgt_out, EOS_ID)
    want = np.pad(want, ((0, 0), (0, width - t)), constant_values=EOS_ID)
    exact = float((got == want).all(axis=1).mean())
    looks = dec.cross.weights.argmax(axis=-1)  # (N, t) the key each row weighs most
    content = data.align >= 0
    hits = (looks == data.align) & content
    alignment = float(hits.sum() / content.sum())
    both = hits.sum(axis=1) == content.sum(axis=1)  # every content row of the pair hits
    crossing = float(both[data.crossing].mean()) if data.crossing.any() else 0.0
    return Scores(len(data), loss, token_accuracy, exact, alignment, crossing)
