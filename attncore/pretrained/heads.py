"""The head table and --head auto of the encoders live in attncore.encoder_heads (shared by
the pretrained and the multilingual encoder, on the rule of attncore.heads); this module keeps
the names the pretrained package always offered."""

from __future__ import annotations

from attention_video.attncore.encoder_heads import (  # noqa: F401 (re-exported)
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
    reading,
    special_share,
    summaries,
)
