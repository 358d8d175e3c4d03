"""One sentence through a pretrained checkpoint: settings checked, tokens, the followed word,
every layer's attention. Shared by the trace builder and the head table."""

from __future__ import annotations

from dataclasses import dataclass

from attention_video.attncore.encoder import (
    check_length,
    is_real_word,  # noqa: F401 (re-exported)
    resolve_focus,
)
from attention_video.attncore.pretrained.checkpoint import Checkpoint, load
from attention_video.attncore.pretrained.forward import Forward, encode
from attention_video.attncore.pretrained.locate import ModelRef, find_model
from attention_video.attncore.pretrained.wordpiece import Encoding
from attention_video.attncore.settings import Settings, check_encoder, check_layer_head
from attention_video.attncore.tokenize import Token


@dataclass(frozen=True, eq=False)
class Run:
    """A sentence encoded by a checkpoint, with the followed token."""

    ref: ModelRef
    checkpoint: Checkpoint
    encoding: Encoding
    forward: Forward
    focus: int  # index of the followed token (0 is [CLS])

    @property
    def tokens(self) -> tuple[Token, ...]:
        return self.encoding.tokens


def ck_name(ck: Checkpoint) -> str:
    return ck.name or "the model"


def run(s: Settings, layers: int | None = None) -> Run:
    """Settings → checkpoint → tokens → focus → forward (through `layers` layers; None: all)."""
    check_encoder(s, "the pretrained encoder")
    ref = find_model(s.model)
    ck = load(ref)
    check_layer_head(s, ck_name(ck), ck.config.num_layers, ck.config.num_heads)
    enc = ck.tokenizer.encode(s.sentence)
    check_length(enc, s, ck_name(ck), ck.config.max_positions, "word pieces")
    focus = resolve_focus(enc, s, ck.tokenizer.normalize)
    return Run(ref, ck, enc, encode(ck, enc.ids, layers), focus)
