"""Attention sinks: a causal head that gives most of a word's weight to the first token.

In a causal decoder the first token is the one key every later word can see. Trained
decoders use it as a resting place: many heads send most of a word's weight there when
nothing else in the sentence is worth attending to ("attention sinks", Xiao et al. 2023,
Efficient Streaming Language Models with Attention Sinks). Whether the followed head does
is measured from its weights, never assumed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from attention_video.attncore.trace import AttentionTrace

SINK_SHARE = 0.5  # more than this share of the row's weight on token 0 makes it a sink


@dataclass(frozen=True)
class Sink:
    """The followed word's weight on the first token, when that is most of its row."""

    query: int  # the followed word
    share: float  # its weight on token 0


def first_token_share(weights: np.ndarray, query: int) -> float:
    """weights[query, 0]: the share of the query's row that goes to the first token."""
    return float(np.asarray(weights)[query, 0])


def attention_sink(trace: AttentionTrace) -> Sink | None:
    """The sink of the followed head for the followed word: only in a causal trace, only
    for a word after the first (token 0 can see nothing else), only when its weight on
    token 0 is above SINK_SHARE."""
    i = trace.focus
    if not trace.causal or trace.cross or i == 0 or not trace.normalized:
        return None
    share = first_token_share(trace.head.weights, i)
    return Sink(i, share) if share > SINK_SHARE else None
