"""One sentence through multilingual-e5-small: settings checked, pieces, the followed word,
every layer's attention. Shared by the trace builder and the head table.

The sentence is encoded as it is typed: e5's "query: "/"passage: " prefixes, which it was
trained to read before a text it embeds for retrieval, are left out, since the video shows
attention within the sentence, not a retrieval embedding."""

from __future__ import annotations

from dataclasses import dataclass

from attention_video.attncore.encoder import Encoding, Forward, resolve_focus
from attention_video.attncore.multilingual.locate import ModelRef, find_model
from attention_video.attncore.multilingual.model import E5Model, encode, load
from attention_video.attncore.settings import MAX_TOKENS_LIMIT, Settings, SettingsError
from attention_video.attncore.tokenize import Token

ONLY_RANDOM = "is only available with --weights random"


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


def check_supported(s: Settings) -> None:
    """Settings the encoder cannot honour, named one by one."""
    if s.target is not None:
        raise SettingsError("target", f"cross-attention (a target sentence) {ONLY_RANDOM}; "
                            "the multilingual encoder attends within one sentence")
    if s.causal:
        raise SettingsError("causal", f"causal masking {ONLY_RANDOM}; the multilingual "
                            "encoder (BERT) attends in both directions")
    if not s.positional:
        raise SettingsError("positional", f"turning off positions {ONLY_RANDOM}; the "
                            "multilingual model always adds its learned position embeddings")


def check_layer_head(s: Settings, m: E5Model) -> None:
    """--layer within 0…L−1, --head within 0…H−1 (or auto)."""
    L, H = m.config.num_layers, m.config.num_heads
    if not 0 <= s.layer < L:
        raise SettingsError("layer", f"{s.layer} is out of range; {m.name} has layers "
                            f"0 to {L - 1}")
    if s.head != "auto" and not 0 <= int(s.head) < H:
        raise SettingsError("head", f"{s.head} is out of range; {m.name} has heads 0 to "
                            f"{H - 1} in every layer, or 'auto'")


def encode_sentence(m: E5Model, s: Settings) -> Encoding:
    """<s> pieces </s>; the token limit counts both."""
    enc = m.tokenizer.encode(s.sentence)
    n = len(enc.tokens)
    if all(t.text == "▁" for t in enc.tokens[1:-1]):
        raise SettingsError("sentence", "the sentence has no visible words or marks")
    if n > s.max_tokens:
        raise SettingsError(
            "sentence", f"the sentence has {n} tokens ({n - 2} pieces plus <s> and </s>); "
            f"the limit is {s.max_tokens} (shorten it, or raise max_tokens up to "
            f"{MAX_TOKENS_LIMIT})")
    if n > m.config.max_positions:
        raise SettingsError("sentence", f"the sentence has {n} tokens; {m.name} reads at "
                            f"most {m.config.max_positions}")
    return enc


def run(s: Settings) -> Run:
    """Settings → model → pieces → focus → forward through every layer."""
    check_supported(s)
    ref = find_model(s.model)
    m = load(ref)
    check_layer_head(s, m)
    enc = encode_sentence(m, s)
    focus = resolve_focus(enc, s, m.tokenizer.normalize)
    return Run(ref, m, enc, encode(m, enc.ids), focus)
