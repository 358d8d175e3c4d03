"""The AttentionTrace of multilingual-e5-small: the chosen layer's input and every one of its
heads, with the real (dequantised) weights and biases, built as every encoder's is
(attncore.encoder_heads.encoder_trace)."""

from __future__ import annotations

from attention_video.attncore.encoder_heads import HeadSummary, encoder_trace, summaries, x_label
from attention_video.attncore.multilingual.run import run
from attention_video.attncore.settings import Settings
from attention_video.attncore.sources import Kept
from attention_video.attncore.trace import AttentionTrace

__all__ = ["build", "build_multilingual_trace", "list_heads", "x_label"]


def build_multilingual_trace(s: Settings) -> AttentionTrace:
    """Settings (weights "multilingual") → the trace of one layer of multilingual-e5-small.

    A real encoder trained elsewhere, shown exactly as the English one: its row of
    attncore.sources has the same capabilities, which is what the scenes read."""
    r = run(s)  # every layer: the model overview (chapter `heads`) shows them all
    return encoder_trace(s, r, r.model.layers, r.model.config.num_heads, "multilingual",
                         r.ref.name)


def build(s: Settings, kept: Kept) -> AttentionTrace:
    """The weight source's row (attncore.sources): the model file is read each time."""
    return build_multilingual_trace(s)


def list_heads(s: Settings) -> list[HeadSummary]:
    """Every layer × head for the sentence and followed word (settings' layer/head ignored)."""
    return summaries(run(s.replace(head="auto", layer=0)))
