"""Settings → AttentionTrace, by the chosen weight source (seeded random or pretrained).

The trace dataclasses live in attncore.trace; the weight sources build them here, so the
trace module imports no weight source and no weight source imports this one.
"""

from __future__ import annotations

import dataclasses
import difflib
from pathlib import Path

import numpy as np
from attention_video.attncore import attention as att
from attention_video.attncore import random_weights as rw
from attention_video.attncore.decoder import build_decoder_trace
from attention_video.attncore.pretrained import build_pretrained_trace
from attention_video.attncore.settings import (
    PRETRAINED_ONLY,
    REAL_MODELS,
    SIZED_ONLY,
    TINY_MAX_DIM,
    TINY_MAX_HEADS,
    Settings,
    SettingsError,
    ignored_options,
    shown,
)
from attention_video.attncore.tiny import corpus as tiny_corpus
from attention_video.attncore.tiny import store as tiny_store
from attention_video.attncore.tiny.trace import build_tiny_trace, train_config
from attention_video.attncore.tiny.train import train
from attention_video.attncore.tokenize import Token, TokenizeError, tokenize
from attention_video.attncore.trace import AttentionTrace, HeadChoice, compute_head
from attention_video.attncore.translate import corpus as translation_corpus
from attention_video.attncore.translate import store as translation_store
from attention_video.attncore.translate.trace import build_translation_trace


def resolve_focus(tokens: tuple[Token, ...], s: Settings) -> int:
    """The followed word's token index: --query-index, else --query, else the last word."""
    if s.query_index is not None:
        if s.query_index >= len(tokens):
            raise SettingsError(
                "query_index", f"{s.query_index} is out of range; allowed: 0 to {len(tokens) - 1}")
        idx = s.query_index
        if s.query is not None and tokens[idx].key != Token(s.query).key:
            raise SettingsError(
                "query_index", f"token {idx} is {shown(tokens[idx].text)}, not {shown(s.query)}")
        return idx
    if s.query is not None:
        want = Token(s.query.strip()).key
        for i, t in enumerate(tokens):
            if t.key == want:
                return i
        words = list(dict.fromkeys(t.text for t in tokens))
        close = difflib.get_close_matches(s.query, words, n=3, cutoff=0.4)
        hint = f"did you mean {', '.join(shown(c) for c in close)}?" if close else (
            "the words are: " + ", ".join(shown(w) for w in words[:12]))
        raise SettingsError("query", f"{shown(s.query)} is not in the sentence; {hint}")
    words = [i for i, t in enumerate(tokens) if t.is_word]
    return words[-1] if words else len(tokens) - 1


def tokens_of(text: str, s: Settings, name: str) -> tuple[Token, ...]:
    try:
        return tokenize(text, s.max_tokens)
    except TokenizeError as e:
        raise SettingsError(name, str(e)) from None


def build_random_trace(s: Settings) -> AttentionTrace:
    """The untrained model: seeded embeddings, sinusoidal positions, seeded W_Q, W_K, W_V."""
    key_tokens = tokens_of(s.sentence, s, "sentence")
    query_tokens = tokens_of(s.target, s, "target") if s.target else key_tokens
    focus = resolve_focus(query_tokens, s)
    d_k = s.dk

    E = rw.embed(key_tokens, s.seed, s.d_model)  # (n_k, d_model)
    P = rw.positions(len(key_tokens), s.d_model, s.positional)  # (n_k, d_model)
    X = E + P  # (n_k, d_model)
    if s.target:
        E_q = rw.embed(query_tokens, s.seed, s.d_model)  # (n_q, d_model)
        P_q = rw.positions(len(query_tokens), s.d_model, s.positional)
        X_q = E_q + P_q  # (n_q, d_model)
    else:
        E_q, P_q, X_q = E, P, X

    n_q, n_k = len(query_tokens), len(key_tokens)
    mask = att.causal_mask(n_q, n_k) if s.causal else np.ones((n_q, n_k), dtype=bool)
    zeros = np.zeros(d_k)
    heads = tuple(
        compute_head(0, h, X_q, X, W_Q, W_K, W_V, zeros, zeros, zeros, mask, s.softmax)
        for h, (W_Q, W_K, W_V) in enumerate(rw.head_weights(s.seed, s.heads, s.d_model, d_k))
    )
    W_O = rw.output_weights(s.seed, s.heads, s.d_model, d_k)  # (heads·d_k, d_model)
    output = att.multi_head([h.Z for h in heads], W_O)  # (n_q, d_model)
    head_index = 0 if s.head == "auto" else int(s.head)
    return AttentionTrace(
        query_tokens=query_tokens, key_tokens=key_tokens,
        E=E, P=P, X=X, E_q=E_q, P_q=P_q, X_q=X_q,
        heads=heads, W_O=W_O, output=output, focus=focus, head_index=head_index,
        source="random", model_name=None, layer=0, causal=s.causal, cross=bool(s.target),
        normalized=s.softmax, seed=s.seed,
        head_choice=HeadChoice(HeadChoice.UNTRAINED, 0, 0) if s.head == "auto" else None,
        x_label="E + P" if s.positional else "E",
        positional=s.positional,
    )


DECODER_REASON = ("--weights decoder: a real Llama-style decoder (rotary positions, grouped-query "
                  "attention, always causal)")


def choose_source(s: Settings) -> tuple[str, str | None]:
    """The weight source a video uses, and why when it was chosen for the user.

    "auto" takes the tiny model (trained here, every number checkable) when it can show
    the sentence: every word in its vocabulary, its own sizes, one sentence, no mask.
    A target sentence (or --translate) takes the translation model, trained here too, when
    both sentences are in its vocabulary. Otherwise the pretrained model, or untrained
    random weights for what no trained model here can show (causal masking, other pairs).
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
        return "random", ("causal masking: no model here was trained with a mask, so untrained "
                          "random weights show it")
    try:
        tiny_corpus.tokenize(s.sentence)
    except tiny_corpus.UnknownWordError as e:
        unknown = ", ".join(repr(w) for w in e.unknown[:4]) + (" …" if len(e.unknown) > 4 else "")
        return "pretrained", f"not in the tiny model's vocabulary: {unknown}"
    sizes_ok = (2 <= s.d_model <= TINY_MAX_DIM and s.heads <= TINY_MAX_HEADS and s.positional
                and (s.d_k is None or s.d_k == s.d_model // s.heads))
    if not sizes_ok:
        return "pretrained", "the sizes asked for are beyond the tiny model's (d_model ≤ 16, heads ≤ 4)"
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
    unread = SIZED_ONLY if source in REAL_MODELS else PRETRAINED_ONLY
    return s.replace(weights=source, **{n: unread[n] for n in ignored_options(s, source)})


def build_trace(s: Settings, tiny_model=None, weights_cache: Path | None = None) -> AttentionTrace:
    """Settings → trace, by the chosen weight source. `tiny_model`: the tiny model to use
    (the pipeline passes a cached one); None loads the shipped one or trains in memory.
    `weights_cache`: a folder where a real model's dequantised weights are kept between runs
    (the decoder's; the pipeline passes one), None: read from the model file each time."""
    source, reason = choose_source(s)
    if source == "decoder":
        return dataclasses.replace(build_decoder_trace(s, weights_cache), source_reason=reason)
    if source == "pretrained":
        trace = build_pretrained_trace(settings_for(s, "pretrained"))
        return dataclasses.replace(trace, source_reason=reason) if reason else trace
    if source == "tiny":
        model = tiny_model if tiny_model is not None else tiny_model_for(s)
        return build_tiny_trace(s, model, resolve_focus, reason)
    if source == "translation":
        return build_translation_trace(s, translation_store.load_default(), resolve_focus,
                                       reason)
    trace = build_random_trace(settings_for(s, "random"))
    return dataclasses.replace(trace, source_reason=reason) if reason else trace


def tiny_model_for(s: Settings, progress=None):
    """The shipped tiny model when it is the one asked for, else one trained now (seconds;
    the pipeline keeps trained ones on disk so this happens once per size and seed)."""
    shipped = tiny_store.load_default()
    if shipped.train_config == train_config(s):
        return shipped
    return train(train_config(s), progress=progress)
