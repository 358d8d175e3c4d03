"""The head table and --head auto now live in attncore.heads (shared by the encoder weight
sources); this module keeps the names the pretrained package always offered."""

from __future__ import annotations

from attention_video.attncore.heads import (  # noqa: F401 (re-exported)
    OFFSET_NAMES,
    POSITIONAL_SHARE,
    SPECIAL,
    SPECIAL_SHARE,
    HeadSummary,
    choose_head,
    describe,
    format_heads,
    head_pattern,
    other_words,
    positional_offset,
    special_share,
    summaries,
)
