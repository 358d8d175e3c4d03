"""One sentence through a pretrained checkpoint: settings checked, tokens, the followed word,
every layer's attention. Shared by the trace builder and the head table."""

from __future__ import annotations

from dataclasses import dataclass

from attention_video.attncore.encoder import is_real_word, resolve_focus  # noqa: F401 (re-exported)
from attention_video.attncore.pretrained.checkpoint import Checkpoint, load
from attention_video.attncore.pretrained.forward import Forward, encode
from attention_video.attncore.pretrained.locate import ModelRef, find_model
from attention_video.attncore.pretrained.wordpiece import Encoding
from attention_video.attncore.settings import MAX_TOKENS_LIMIT, Settings, SettingsError
from attention_video.attncore.tokenize import Token

ONLY_RANDOM = "is only available with --weights random"


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


def check_supported(s: Settings) -> None:
    """Settings the pretrained encoder cannot honour, named one by one."""
    if s.target is not None:
        raise SettingsError("target", f"cross-attention (a target sentence) {ONLY_RANDOM}; "
                            "the pretrained encoder attends within one sentence")
    if s.causal:
        raise SettingsError("causal", f"causal masking {ONLY_RANDOM}; "
                            "the pretrained encoder (BERT) attends in both directions")
    if not s.positional:
        raise SettingsError("positional", f"turning off positions {ONLY_RANDOM}; "
                            "the pretrained model always adds its learned position embeddings")


def check_layer_head(s: Settings, ck: Checkpoint) -> None:
    """--layer within 0…L−1, --head within 0…H−1 (or auto)."""
    L, H = ck.config.num_layers, ck.config.num_heads
    if not 0 <= s.layer < L:
        raise SettingsError("layer", f"{s.layer} is out of range; {ck_name(ck)} has layers "
                            f"0 to {L - 1}")
    if s.head != "auto" and not 0 <= int(s.head) < H:
        raise SettingsError("head", f"{s.head} is out of range; {ck_name(ck)} has heads 0 to "
                            f"{H - 1} in every layer, or 'auto'")


def ck_name(ck: Checkpoint) -> str:
    return ck.name or "the model"


def encode_sentence(ck: Checkpoint, s: Settings) -> Encoding:
    """WordPiece tokens with [CLS] and [SEP]; the token limit counts both."""
    enc = ck.tokenizer.encode(s.sentence)
    n = len(enc.tokens)
    if n == 2:
        raise SettingsError("sentence", "the sentence has no visible words or marks")
    if n > s.max_tokens:
        raise SettingsError(
            "sentence", f"the sentence has {n} tokens ({n - 2} word pieces plus [CLS] and "
            f"[SEP]); the limit is {s.max_tokens} (shorten it, or raise max_tokens up to "
            f"{MAX_TOKENS_LIMIT})")
    if n > ck.config.max_positions:
        raise SettingsError("sentence", f"the sentence has {n} tokens; {ck_name(ck)} reads at "
                            f"most {ck.config.max_positions}")
    return enc


def run(s: Settings, layers: int | None = None) -> Run:
    """Settings → checkpoint → tokens → focus → forward (through `layers` layers; None: all)."""
    check_supported(s)
    ref = find_model(s.model)
    ck = load(ref)
    check_layer_head(s, ck)
    enc = encode_sentence(ck, s)
    focus = resolve_focus(enc, s, ck.tokenizer.normalize)
    return Run(ref, ck, enc, encode(ck, enc.ids, layers), focus)
