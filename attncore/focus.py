"""The followed word (--query) as every model's resolve_focus compares and echoes it, and
resolve_focus itself for the models that split a sentence by attncore.tokenize (random
weights, the tiny and the translation models).

One definition for all of them: a query and a token are the same word when their NFC forms
agree case-folded ('café' typed as e + U+0301 is the sentence's 'café'), and an error line
echoes the query and the close words cut by settings.shown (a 10,000-character query made a
10,075-character line)."""

from __future__ import annotations

import difflib
import unicodedata
from collections.abc import Iterable

from attention_video.attncore.settings import Settings, SettingsError, shown
from attention_video.attncore.tokenize import Token, TokenizeError, tokenize


def query_key(text: str) -> str:
    """The form two spellings of one word share: stripped, NFC, case-folded."""
    return unicodedata.normalize("NFC", text.strip()).casefold()


def same_word(a: str, b: str) -> bool:
    return query_key(a) == query_key(b)


def not_found(query: str, words: Iterable[str]) -> SettingsError:
    """'query: … is not in the sentence; did you mean …?' (or the sentence's words)."""
    words = list(dict.fromkeys(words))
    keys = {query_key(w): w for w in words}
    close = [keys[k] for k in difflib.get_close_matches(query_key(query), list(keys), n=3,
                                                          cutoff=0.4)]
    hint = (f"did you mean {', '.join(shown(c) for c in close)}?" if close else
            "the words are: " + ", ".join(shown(w) for w in words[:12]))
    return SettingsError("query", f"{shown(query)} is not in the sentence; {hint}")


def not_at(index: int, token: str, query: str) -> SettingsError:
    """--query-index and --query name different tokens."""
    return SettingsError("query_index", f"token {index} is {shown(token)}, not {shown(query)}")


def resolve_focus(tokens: tuple[Token, ...], s: Settings) -> int:
    """The followed word's token index: --query-index, else --query, else the last word."""
    if s.query_index is not None:
        if s.query_index >= len(tokens):
            raise SettingsError(
                "query_index", f"{s.query_index} is out of range; allowed: 0 to {len(tokens) - 1}")
        idx = s.query_index
        if s.query is not None and not same_word(tokens[idx].text, s.query):
            raise not_at(idx, tokens[idx].text, s.query)
        return idx
    if s.query is not None:
        for i, t in enumerate(tokens):
            if same_word(t.text, s.query):
                return i
        raise not_found(s.query, (t.text for t in tokens))
    words = [i for i, t in enumerate(tokens) if t.is_word]
    return words[-1] if words else len(tokens) - 1


def tokens_of(text: str, s: Settings, name: str) -> tuple[Token, ...]:
    """The sentence split by attncore.tokenize; too many tokens: one line naming `name`."""
    try:
        return tokenize(text, s.max_tokens)
    except TokenizeError as e:
        raise SettingsError(name, str(e)) from None
