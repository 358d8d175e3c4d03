"""The training history chapter `learning` draws: "training aligns the vectors".

The kept restart's attention weights (E, W_Q, W_K, W_V, W_O, on the 0.1 grid like the
final ones) are stored at step 0 and at a few steps through training, with the training
loss and held-out detection accuracy curves (attncore.trained.history.History holds them).
Parameters, not one sentence's attention, are stored, so any in-vocabulary sentence can be
replayed at every snapshot (`history_rows`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from attention_video.attncore.tiny.model import TinyModel, forward
from attention_video.attncore.tokenize import Token
from attention_video.attncore.trained.run import read_only


@dataclass(frozen=True, eq=False)
class HistoryRow:
    """The followed word at one snapshot: its attention row and the Q·K of its partner."""

    step: int
    weights: np.ndarray  # (n,) the followed word's attention row (sums to 1)
    q: np.ndarray  # (d_k,) its Q row
    k: np.ndarray  # (d_k,) the partner's K row
    products: np.ndarray  # (d_k,) q_c · k_c, the pairs of the dot product
    score: float  # q·k = Σ products
    scaled: float  # q·k / √d_k
    agree: int  # pairs with the same sign (a positive product)
    keys: np.ndarray | None = None  # (n, d_k) every key's K row (the partner's is row `partner`)


@dataclass(frozen=True, eq=False)
class HistoryRows:
    """One sentence replayed at every snapshot, for one followed word and one head."""

    tokens: tuple[Token, ...]
    focus: int  # the followed word
    partner: int  # the key it weighs most at the final snapshot, other than itself
    head: int
    rows: tuple[HistoryRow, ...]  # one per snapshot, in training order


def history_rows(model: TinyModel, tokens: Sequence[Token], focus: int,
                 head: int = 0) -> HistoryRows:
    """For each snapshot: the followed word's weights row, its Q row, the partner's K row.

    The partner is the key with the largest weight at the final snapshot other than the
    followed word itself (the word itself when the sentence has only one token).
    """
    if model.history is None:
        raise ValueError("this tiny model has no training history")
    tokens = tuple(tokens)
    if not 0 <= focus < len(tokens):
        raise ValueError(f"focus: {focus} is out of range; allowed: 0 to {len(tokens) - 1}")
    if not 0 <= head < model.config.heads:
        raise ValueError(f"head: {head} is out of range; allowed: 0 to {model.config.heads - 1}")
    ids = np.asarray([model.ids(tokens)])  # (1, n)
    runs = [forward(s.params(model.params), ids) for s in model.history.snapshots]
    final = runs[-1].weights[0, head, focus].copy()  # (n,)
    if len(tokens) > 1:
        final[focus] = -np.inf
    partner = int(final.argmax())
    rows = []
    for snap, f in zip(model.history.snapshots, runs):
        q, k = f.Q[0, head, focus], f.K[0, head, partner]  # (d_k,) each
        products = q * k  # (d_k,)
        rows.append(HistoryRow(
            snap.step, read_only(f.weights[0, head, focus]), read_only(q), read_only(k),
            read_only(products),
            float(f.scores[0, head, focus, partner]), float(f.scaled[0, head, focus, partner]),
            int((products > 0).sum()), read_only(f.K[0, head])))
    return HistoryRows(tokens, focus, partner, head, tuple(rows))
