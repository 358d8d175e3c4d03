"""Pretrained BERT-family attention, computed in numpy from a Hugging Face checkpoint folder.

    settings → find the checkpoint → WordPiece tokens ([CLS] … [SEP]) → encoder forward
             → the chosen layer's heads in an AttentionTrace

No torch at run time: weights are read with safetensors' numpy API.
"""

from __future__ import annotations

from attention_video.attncore.encoder_heads import (
    HeadSummary,
    choose_head,
    format_heads,
    head_pattern,
    positional_offset,
    summaries,
)
from attention_video.attncore.pretrained.build import build_pretrained_trace, list_heads
from attention_video.attncore.pretrained.checkpoint import Checkpoint, load, load_checkpoint
from attention_video.attncore.pretrained.forward import Forward, encode
from attention_video.attncore.pretrained.locate import INSTALL_LINE, ModelRef, find_model
from attention_video.attncore.pretrained.run import Run, run
from attention_video.attncore.pretrained.wordpiece import Encoding, WordPieceTokenizer
from attention_video.attncore.settings import Settings
from attention_video.attncore.sources import Kept

__all__ = [
    "INSTALL_LINE", "Checkpoint", "Encoding", "Forward", "HeadSummary", "ModelRef", "Run",
    "WordPieceTokenizer", "build_pretrained_trace", "choose_head", "encode", "find_model",
    "format_heads", "head_pattern", "head_table", "list_heads", "load", "load_checkpoint", "positional_offset",
    "run", "summaries",
]


def head_table(settings: Settings, kept: Kept | None = None) -> str:
    """The text table of every head for the settings' sentence and followed word (nothing
    kept is read: the model file is read each time)."""
    r = run(settings.replace(head="auto", layer=0))
    choice = choose_head(r)
    return format_heads(summaries(r), r.tokens[r.focus].text, (choice.layer, choice.head))
