"""The training history chapter `learning` draws: the cross-attention alignment emerging.

The kept restart's GRID_PARAMS (embeddings and attention weights, on the 0.1 grid) are
stored at step 0 and at a few steps through training, with the training loss and the
held-out teacher-forced word accuracy curves (attncore.trained.history.History holds
them). Any pair in the vocabulary can be replayed at every snapshot (`alignment_history`):
attention does not depend on the readout.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from attention_video.attncore.tokenize import Token
from attention_video.attncore.translate.model import TranslationModel


@dataclass(frozen=True, eq=False)
class AlignmentHistory:
    """One pair replayed at every snapshot: the cross-attention matrix each time."""

    source_tokens: tuple[Token, ...]
    target_tokens: tuple[Token, ...]  # row i writes target_tokens[i]
    steps: np.ndarray  # (k,)
    weights: np.ndarray  # (k, t, s) cross-attention weights (rows sum to 1)
    curve_step: np.ndarray
    curve_loss: np.ndarray
    curve_accuracy: np.ndarray


def alignment_history(model: TranslationModel, source: str | Sequence[Token],
                      target: str | Sequence[Token] | None = None) -> AlignmentHistory:
    """The cross-attention of (source, target) at every snapshot; target None: the final
    model's greedy translation, forced at every snapshot."""
    if model.history is None:
        raise ValueError("this translation model has no training history")
    final = model.run(source, target)
    target_tokens = final.target_tokens
    mats = []
    for snap in model.history.snapshots:
        m = TranslationModel(model.config, model.src_vocab, model.tgt_vocab,
                             snap.params(model.params))
        mats.append(m.run(final.source_tokens, target_tokens).cross.weights)
    h = model.history
    out = np.stack(mats)  # (k, t, s)
    out.setflags(write=False)
    return AlignmentHistory(final.source_tokens, target_tokens,
                            np.array(h.steps), out, h.curve_step, h.curve_loss,
                            h.curve_accuracy)
