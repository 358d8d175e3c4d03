"""One sentence through the decoder: settings checked, tokens, the followed token, every
layer's attention. Shared by the trace builder and the head table."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from attention_video.attncore import heads as common
from attention_video.attncore.decoder.bpe import BPETokenizer, Encoding
from attention_video.attncore.decoder.forward import Forward, run_layers
from attention_video.attncore.decoder.gguf_file import MODEL_NAME, Model
from attention_video.attncore.decoder.store import load
from attention_video.attncore.focus import not_at, not_found, same_word
from attention_video.attncore.settings import (
    MAX_TOKENS_LIMIT,
    Settings,
    SettingsError,
    check_layer_head,
)
from attention_video.attncore.settings import check_decoder as check_supported


@dataclass(frozen=True, eq=False)
class Run:
    """A sentence encoded and run through the decoder, with the followed token."""

    model: Model
    encoding: Encoding
    forward: Forward
    focus: int

    @property
    def tokens(self):
        return self.encoding.tokens


@functools.lru_cache(maxsize=1)
def tokenizer(m: Model) -> BPETokenizer:
    return BPETokenizer(m.tokens, m.merges, m.token_types, m.pre)


def encode_sentence(m: Model, s: Settings) -> Encoding:
    """Byte-level BPE tokens (no BOS: the model adds none); the token limit counts them."""
    enc = tokenizer(m).encode(s.sentence)
    n = len(enc.tokens)
    if not any(t.text != "␣" for t in enc.tokens):
        raise SettingsError("sentence", "the sentence has no visible words or marks")
    if n > s.max_tokens:
        raise SettingsError("sentence", f"the sentence has {n} tokens (BPE pieces); the limit "
                            f"is {s.max_tokens} (shorten it, or raise max_tokens up to "
                            f"{MAX_TOKENS_LIMIT})")
    return enc


def _matches(enc: Encoding, i: int, query: str) -> bool:
    """Token i is the query: its own text, or the word it is the first piece of; compared
    in one Unicode form (focus.same_word)."""
    if same_word(enc.tokens[i].text, query):
        return True
    w = enc.word_of[i]
    return w >= 0 and same_word(enc.words[w], query) and enc.word_of.index(w) == i


def resolve_focus(enc: Encoding, s: Settings) -> int:
    """--query-index, else --query, else the first piece of the last real word."""
    tokens = enc.tokens
    if s.query_index is not None:
        if s.query_index >= len(tokens):
            raise SettingsError("query_index", f"{s.query_index} is out of range; allowed: 0 to "
                                f"{len(tokens) - 1}")
        if s.query is not None and not _matches(enc, s.query_index, s.query):
            raise not_at(s.query_index, tokens[s.query_index].text, s.query)
        return s.query_index
    if s.query is not None:
        for i in range(len(tokens)):
            if _matches(enc, i, s.query):
                return i
        raise not_found(s.query, [*enc.words, *(t.text for t in tokens)])
    real = [i for i, t in enumerate(tokens) if common.is_real_word(t)]
    if not real:
        return len(tokens) - 1
    return enc.word_of.index(enc.word_of[real[-1]])


def run(s: Settings, layers: int | None = None, cache: Path | None = None) -> Run:
    """Settings → model → tokens → focus → forward (through `layers` layers; None: all).
    `cache`: where the dequantised weights are kept between runs (None: read the file)."""
    check_supported(s)
    m = load(cache)
    check_layer_head(s, MODEL_NAME, m.config.num_layers, m.config.num_heads)
    enc = encode_sentence(m, s)
    focus = resolve_focus(enc, s)
    return Run(m, enc, run_layers(m, enc.ids, layers), focus)


def pattern(A):
    """A head's tag whatever the words: only "previous token" can hold under a causal mask
    (see attncore.heads.positional_offset; the first token has no previous one)."""
    return common.OFFSET_NAMES.get(common.positional_offset(A, range(1, A.shape[0])))


def reading(r: Run) -> common.Reading:
    enc = r.encoding
    return common.Reading(enc.tokens, enc.word_of, enc.words, r.focus, r.forward.attention,
                          tuple(range(1, len(enc.tokens))), pattern, sink=0)
