"""Sentences as padded arrays, and the held-out figures of a set of weights.

    accuracy        the object's verdict (σ(logit) > ½ ⇔ swapped) is right
    object_to_verb  the object's largest attention weight (itself included) is on its verb,
                    among sentences whose object is one its verb takes (not swapped, and not
                    after a generic verb like "saw"): related words attend to each other
    swapped_to_verb the same among swapped objects, for comparison (it is low: the model
                    judges the pair in Q·K itself, so a swapped object looks elsewhere)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from attention_video.attncore.tiny.corpus import Sentence
from attention_video.attncore.tiny.model import Params, bce_loss, forward
from attention_video.attncore.trained.training import Rows


@dataclass(frozen=True, eq=False)
class Encoded(Rows):
    """Sentences as vocabulary indices, padded to the longest."""

    ids: np.ndarray  # (N, n) int
    mask: np.ndarray  # (N, n) True for real words
    labels: np.ndarray  # (N, n) 1 where the word was swapped
    verb: np.ndarray  # (N,) token index of the verb
    obj: np.ndarray  # (N,) token index of the object
    replaced: np.ndarray  # (N,) bool
    selective: np.ndarray  # (N,) bool: the verb takes only its own kind (not "saw")


def encode(sentences: Sequence[Sentence], vocab: Sequence[str]) -> Encoded:
    index = {w: i for i, w in enumerate(vocab)}
    N, n = len(sentences), max(len(s.words) for s in sentences)
    ids = np.zeros((N, n), dtype=np.int64)  # padding holds word 0; it is masked everywhere
    mask = np.zeros((N, n), dtype=bool)
    labels = np.zeros((N, n))
    for b, s in enumerate(sentences):
        ids[b, :len(s.words)] = [index[w] for w in s.words]
        mask[b, :len(s.words)] = True
        labels[b, :len(s.words)] = s.labels()
    return Encoded(ids, mask, labels, np.array([s.verb for s in sentences]),
                   np.array([s.obj for s in sentences]),
                   np.array([s.replaced for s in sentences]),
                   np.array([s.selective for s in sentences]))


@dataclass(frozen=True)
class Scores:
    """Held-out figures of one set of weights."""

    sentences: int
    accuracy: float  # replaced-object detection, judged at the object
    loss: float  # mean per-word cross-entropy
    object_to_verb: float  # objects their verb takes whose largest weight is on the verb
    swapped_to_verb: float  # the same among swapped objects
    head: int  # the head with the highest object_to_verb

    def to_dict(self) -> dict:
        return {"sentences": self.sentences, "accuracy": self.accuracy, "loss": self.loss,
                "object_to_verb": self.object_to_verb, "swapped_to_verb": self.swapped_to_verb,
                "head": self.head}


def evaluate(p: Params, data: Encoded) -> Scores:
    f = forward(p, data.ids, data.mask)
    rows = np.arange(len(data))
    verdict = f.logits[rows, data.obj] > 0.0  # (N,)
    accuracy = float((verdict == data.replaced).mean())
    loss = bce_loss(f.logits, data.labels, data.mask.astype(np.float64))
    obj_rows = f.weights[rows, :, data.obj, :]  # (N, H, n): each head's object row
    hits = obj_rows.argmax(axis=-1) == data.verb[:, None]  # (N, H)
    fits = data.selective & ~data.replaced  # (N,)
    to_verb = hits[fits].mean(axis=0)  # (H,)
    head = int(to_verb.argmax())
    swapped = float(hits[data.replaced, head].mean()) if data.replaced.any() else 0.0
    return Scores(len(data), accuracy, loss, float(to_verb[head]), swapped, head)
