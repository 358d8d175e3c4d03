"""One sentence through multilingual-e5-small: settings checked, pieces, the followed word,
every layer's attention. Shared by the trace builder and the head table.

The sentence is encoded as it is typed: e5's "query: "/"passage: " prefixes, which it was
trained to read before a text it embeds for retrieval, are left out, since the video shows
attention within the sentence, not a retrieval embedding."""

from __future__ import annotations

from dataclasses import dataclass

from attention_video.attncore.encoder import Encoding, Forward, check_length, resolve_focus
from attention_video.attncore.multilingual.locate import ModelRef, find_model
from attention_video.attncore.multilingual.model import E5Model, encode, load
from attention_video.attncore.settings import Settings, check_encoder, check_layer_head
from attention_video.attncore.tokenize import Token


@dataclass(frozen=True, eq=False)
class Run:
    """A sentence encoded by the model, with the followed token."""

    ref: ModelRef
    model: E5Model
    encoding: Encoding
    forward: Forward
    focus: int  # index of the followed token (0 is <s>)

    @property
    def tokens(self) -> tuple[Token, ...]:
        return self.encoding.tokens


def run(s: Settings) -> Run:
    """Settings → model → pieces → focus → forward through every layer."""
    check_encoder(s, "the multilingual encoder")
    ref = find_model(s.model)
    m = load(ref)
    check_layer_head(s, m.name, m.config.num_layers, m.config.num_heads)
    enc = m.tokenizer.encode(s.sentence)
    check_length(enc, s, m.name, m.config.max_positions)
    focus = resolve_focus(enc, s, m.tokenizer.normalize)
    return Run(ref, m, enc, encode(m, enc.ids), focus)
