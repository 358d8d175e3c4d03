"""The AttentionTrace of a pretrained model: the chosen layer's input and every one of its
heads, with the real learned weights and biases, built as every encoder's is
(attncore.encoder_heads.encoder_trace)."""

from __future__ import annotations

from attention_video.attncore import encoder
from attention_video.attncore.encoder_heads import HeadSummary, encoder_trace, summaries, x_label
from attention_video.attncore.pretrained.run import Run, run
from attention_video.attncore.settings import Settings
from attention_video.attncore.sources import Kept
from attention_video.attncore.trace import AttentionTrace, HeadTrace

__all__ = ["build", "build_pretrained_trace", "layer_heads", "list_heads", "x_label"]


def layer_heads(r: Run, layer: int, normalized: bool) -> tuple[HeadTrace, ...]:
    """Every head of `layer`, from that layer's input (attncore.encoder.layer_heads)."""
    return encoder.layer_heads(r.forward.hidden[layer], r.checkpoint.layers[layer],
                               r.checkpoint.config.num_heads, layer, normalized)


def build_pretrained_trace(s: Settings) -> AttentionTrace:
    """Settings (weights "pretrained") → the trace of one layer of the checkpoint."""
    r = run(s)  # every layer: the model overview (chapter `heads`) shows them all
    return encoder_trace(s, r, r.checkpoint.layers, r.checkpoint.config.num_heads, "pretrained",
                         r.ref.name)


def build(s: Settings, kept: Kept) -> AttentionTrace:
    """The weight source's row (attncore.sources): the checkpoint is read each time."""
    return build_pretrained_trace(s)


def list_heads(s: Settings) -> list[HeadSummary]:
    """Every layer × head for the sentence and followed word (settings' layer/head ignored)."""
    return summaries(run(s.replace(head="auto", layer=0)))
