"""The followed word: which token of the sentence the video follows, and the sentence's
tokens for the models that split it by attncore.tokenize (random weights)."""

from __future__ import annotations

import difflib

from attention_video.attncore.settings import Settings, SettingsError, shown
from attention_video.attncore.tokenize import Token, TokenizeError, tokenize


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
