"""Settings → AttentionTrace: which weight source tells the sentence (--weights auto
chooses), then that source's builder, named in its row of attncore.sources.

The trace dataclasses live in attncore.trace and the rows in attncore.sources, so neither
imports a weight source, and no weight source imports this module.
"""

from __future__ import annotations

import dataclasses
import unicodedata
from pathlib import Path

from attention_video.attncore import sources
from attention_video.attncore.focus import resolve_focus, tokens_of
from attention_video.attncore.random_weights import build_random_trace
from attention_video.attncore.settings import (
    TINY_MAX_DIM,
    TINY_MAX_HEADS,
    Settings,
    SettingsError,
    ignored_options,
    unset,
)
from attention_video.attncore.sources import Kept
from attention_video.attncore.tiny import corpus as tiny_corpus
from attention_video.attncore.tiny.trace import tiny_model_for
from attention_video.attncore.trace import AttentionTrace
from attention_video.attncore.translate import corpus as translation_corpus

__all__ = ["build_random_trace", "build_trace", "choose_source", "resolve_focus", "settings_for",
           "tiny_model_for", "tokens_of"]


DECODER_REASON = f"--weights decoder: {sources.source('decoder').description}"
# The most frequent English words that other languages written in Latin letters do not use
# as words of their own ("a", "I", "in", "no" … are left out: Spanish, French, Italian,
# Portuguese and German use them). A sentence of MIN_WORDS_FOR_ENGLISH words or more
# without any of them is taken to be in another language.
ENGLISH_WORDS = frozenset(
    "the of and to is are was were be been it its that this these those for on with as at "
    "by from an or not but have has had he she they we you his her their our my your what "
    "which who will would can could there if so into than them then about".split())
MIN_WORDS_FOR_ENGLISH = 3


def outside_english(sentence: str) -> str | None:
    """Why the sentence is not English, or None. Plainly, in this order:

    1. a letter outside the Latin alphabet (Chinese, Arabic, Cyrillic, Devanagari …);
    2. MIN_WORDS_FOR_ENGLISH or more words in Latin letters, none of them one of the common
       English words above ("El gato negro bebió la leche", "Le chat noir a bu le lait").
    Shorter Latin-letter sentences count as English: two words are too few to tell."""
    other = [ch for ch in dict.fromkeys(sentence)
             if ch.isalpha() and not unicodedata.name(ch, "").startswith("LATIN")]
    if other:
        shown_letters = ", ".join(other[:3]) + (" …" if len(other) > 3 else "")
        return f"letters outside the Latin alphabet ({shown_letters})"
    words = [w.casefold() for w in "".join(ch if ch.isalpha() or ch == "'" else " "
                                           for ch in sentence).split()]
    if len(words) >= MIN_WORDS_FOR_ENGLISH and not ENGLISH_WORDS.intersection(words):
        return (f"{len(words)} words in Latin letters and none of the common English words "
                "(the, of, and, is …)")
    return None


def encoder_source(s: Settings, why: str) -> tuple[str, str]:
    """The real encoder for a sentence the tiny model cannot show: the multilingual one for
    text outside English (unless --model names an English checkpoint), else the English one."""
    other = outside_english(s.sentence) if s.model is None else None
    if other:
        return "multilingual", f"{why}; the sentence is outside English: {other}"
    return "pretrained", why


def choose_source(s: Settings) -> tuple[str, str | None]:
    """The weight source a video uses, and why when it was chosen for the user.

    "auto" takes the tiny model (trained here, every number checkable) when it can show
    the sentence: every word in its vocabulary, its own sizes, one sentence, no mask.
    A target sentence (or --translate) takes the translation model, trained here too, when
    both sentences are in its vocabulary. Otherwise a real encoder: multilingual-e5-small
    for a sentence outside English (outside_english), all-MiniLM-L6-v2 for English; or
    untrained random weights for what no trained model here can show (causal masking,
    other pairs).
    """
    if (s.target is not None or s.translate) and s.weights in ("auto", "tiny"):
        unknown = translation_unknown(s)
        if not unknown:
            return "translation", "both sentences are in the translation model's vocabulary"
        if s.weights == "tiny" or s.translate:
            field, words = unknown
            raise SettingsError(field, f"not in the translation model's vocabulary: {words}; "
                                "--list-vocab prints it, and --weights random shows any pair "
                                "with untrained weights")
        return "random", (f"not in the translation model's vocabulary: {unknown[1]}, so "
                          "untrained random weights show the cross-attention")
    if s.weights == "decoder":
        return "decoder", DECODER_REASON
    if s.weights != "auto":
        return s.weights, None
    if s.causal:
        return "random", ("causal masking: --weights auto shows it with untrained random "
                          "weights (--weights decoder shows a real decoder's)")
    try:
        tiny_corpus.tokenize(s.sentence)
    except tiny_corpus.UnknownWordError as e:
        unknown = ", ".join(repr(w) for w in e.unknown[:4]) + (" …" if len(e.unknown) > 4 else "")
        return encoder_source(s, f"not in the tiny model's vocabulary: {unknown}")
    sizes_ok = (2 <= s.d_model <= TINY_MAX_DIM and s.heads <= TINY_MAX_HEADS and s.positional
                and (s.d_k is None or s.d_k == s.d_model // s.heads))
    if not sizes_ok:
        return encoder_source(s, "the sizes asked for are beyond the tiny model's (d_model ≤ 16, "
                              "heads ≤ 4)")
    return "tiny", "every word is in the tiny model's vocabulary"


def translation_unknown(s: Settings) -> tuple[str, str] | None:
    """(field, the unknown words) when a sentence is outside the translation model's
    vocabulary, else None."""
    for field, text, language in (("sentence", s.sentence, "en"), ("target", s.target, "es")):
        if text is None:
            continue
        try:
            translation_corpus.tokenize(text, language=language)
        except translation_corpus.UnknownWordError as e:
            words = ", ".join(repr(w) for w in e.unknown[:4]) + (" …" if len(e.unknown) > 4 else "")
            return field, words
    return None


def settings_for(s: Settings, source: str) -> Settings:
    """`s` with the weights resolved to `source` and the settings that source does not
    read (which --weights auto may carry, see ignored_options) back to "not given"."""
    return s.replace(weights=source, **{n: unset(n) for n in ignored_options(s, source)})


def next_choices(s: Settings, name: str) -> tuple[str, ...]:
    """For --weights auto, the sources to try when `name` cannot tell the sentence (more
    tokens than it takes, say): the real encoders not tried yet, the one encoder_source
    prefers first. None for a source the user named, a checkpoint folder the user named,
    or a sentence pair or mask (only one model here shows those)."""
    if s.weights != sources.AUTO or s.model is not None or s.target is not None \
            or s.translate or s.causal:
        return ()
    encoders = sources.named(lambda can: can.trained and can.layered and not can.causal
                             and not can.cross)
    first = encoder_source(s, "")[0]
    return tuple(n for n in sorted(encoders, key=lambda n: n != first) if n != name)


def build_trace(s: Settings, tiny_model=None, weights_cache: Path | None = None,
                kept: Kept | None = None) -> AttentionTrace:
    """Settings → trace, by the weight source chosen (choose_source) and its row of
    attncore.sources. `kept`: what the pipeline keeps between runs (the tiny model for these
    settings, the folder of real models' dequantised weights); `tiny_model` and
    `weights_cache` are its two parts given one by one. None: made or read now.

    --weights auto never refuses a sentence one of its models can tell: when the chosen
    model cannot (its tokens over its limit), the next one does, and the reason says so."""
    kept = kept or Kept(tiny_model=None if tiny_model is None else (lambda _s: tiny_model),
                        models_dir=weights_cache)
    chosen, reason = choose_source(s)
    first_error = None
    for name in (chosen, *next_choices(s, chosen)):
        try:
            trace = build_with(s, name, kept)
            break
        except SettingsError as e:
            if e.field != "sentence":
                raise (first_error or e) from None
            first_error = first_error or e
            reason = f"{reason}; {name} cannot tell it ({e.message}), so the next model does"
    else:
        raise first_error
    if reason:
        said = f"{reason}; {trace.source_reason}" if trace.source_reason else reason
        trace = dataclasses.replace(trace, source_reason=said)
    return trace


def build_with(s: Settings, name: str, kept: Kept) -> AttentionTrace:
    """The trace of the named source, from the settings it reads (settings_for)."""
    row = sources.source(name)
    return sources.call(row.build, settings_for(s, name) if row.selectable else s, kept)
