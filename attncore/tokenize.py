"""Split a sentence into display tokens: words, and each punctuation mark on its own.

Chinese, Japanese and Korean characters are one token each (the article's Chinese
examples treat every character as a word). Original spelling is kept for display;
`key` gives the case-folded form used to look up a word's embedding, so "The" and
"the" share one embedding.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

# CJK ideographs, kana, hangul: one token per character.
_CJK = (
    "\u3040-\u30ff"  # hiragana, katakana
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # CJK ideographs
    "\uac00-\ud7af"  # hangul syllables
    "\U00020000-\U0002fa1f"
)
_TOKEN = re.compile(
    r"[\U0001F1E6-\U0001F1FF]{2}"  # a flag: two regional indicators
    r"|[0-9#*]\ufe0f?\u20e3"  # a keycap: 1️⃣
    rf"|[{_CJK}]"  # one CJK character
    r"|\d+(?:[.,]\d+)+"  # a number with a decimal point or separators: 3.14, 1,000
    rf"|(?:(?![{_CJK}])[\w])+(?:['’\-](?:(?![{_CJK}])[\w])+)*"  # a word, with inner ' ’ -
    r"|[^\w\s](?:[\ufe0f\U0001f3fb-\U0001f3ff]|\u200d[^\w\s])*"  # a mark, or an emoji sequence
)

_CJK_RE = re.compile(rf"[{_CJK}]")

DEFAULT_MAX_TOKENS = 32

# Line breaking (captions in the video and on the storyboard): a line never starts with
# closing punctuation and never ends with opening punctuation.
CLOSING = frozenset("，。；：、！？）》」』】〉”’,.;:!?)]")
OPENING = frozenset("（《「『【〈“‘([")


class TokenizeError(ValueError):
    """The sentence cannot be tokenized within the limits (empty, too long)."""


@dataclass(frozen=True)
class Token:
    """One token of the computation, as the viewer sees it."""

    text: str  # original spelling, for display
    kind: str = "word"  # "word" | "punct" | "special" | "subword"

    @property
    def key(self) -> str:
        """Case-folded, NFC-normalised form: the identity of the word for its embedding."""
        return unicodedata.normalize("NFC", self.text).casefold()

    @property
    def is_word(self) -> bool:
        return self.kind in ("word", "subword")


_PART = re.compile(r"(.+) (\d+)/(\d+)")  # "狗 2/3": part 2 of a character split in 3 pieces


def part_label(text: str, part: int, parts: int) -> str:
    """How a piece holding part of one character's bytes is shown: "狗 2/3"."""
    return f"{text} {part}/{parts}"


def spelled(t: Token) -> str:
    """What a token adds to the word it belongs to when its pieces are written together:
    "##ank" → "ank"; a character split across pieces (part_label) is written once, by its
    first piece."""
    m = _PART.fullmatch(t.text)
    if m and t.kind in ("word", "subword") and 1 <= int(m.group(2)) <= int(m.group(3)):
        return m.group(1) if m.group(2) == "1" else ""
    return t.text.removeprefix("##")


def _kind(text: str) -> str:
    return "word" if any(ch.isalnum() for ch in text) else "punct"


def clean(text: str) -> str:
    """NFC-normalise; control characters become spaces, invisible format characters go
    (except the zero-width joiner that holds emoji sequences together)."""
    out = []
    for ch in unicodedata.normalize("NFC", text):
        cat = unicodedata.category(ch)
        if cat == "Cc" or cat in ("Zl", "Zp"):
            out.append(" ")
        elif cat in ("Cf", "Cs", "Co", "Cn") and ch != "\u200d":
            continue
        else:
            out.append(ch)
    return "".join(out)


def _is_mark(ch: str) -> bool:
    return unicodedata.category(ch).startswith("M")


def _join_marks(text: str) -> list[str]:
    """Regex matches, with combining marks (Indic vowel signs, Arabic harakat, …) kept
    inside their word: `\\w` does not match marks, so the pattern alone would split them."""
    pieces: list[str] = []
    end = -1
    for m in _TOKEN.finditer(text):
        t = m.group(0)
        if pieces and m.start() == end and (_is_mark(t[0]) or _is_mark(pieces[-1][-1])) \
                and not _CJK_RE.match(t[0]) and not _CJK_RE.match(pieces[-1][-1]):
            pieces[-1] += t
        else:
            pieces.append(t)
        end = m.end()
    return pieces


def tokenize(text: str, max_tokens: int = DEFAULT_MAX_TOKENS) -> tuple[Token, ...]:
    """Words and punctuation as separate tokens; CJK one character per token."""
    text = clean(text)
    if not text.strip():
        raise TokenizeError("the sentence is empty: type at least one word")
    tokens = tuple(Token(t, _kind(t)) for t in _join_marks(text))
    if not tokens:  # only invisible characters (format, control) were typed
        raise TokenizeError("the sentence has no visible words or marks")
    if len(tokens) > max_tokens:
        raise TokenizeError(
            f"the sentence has {len(tokens)} tokens; the limit is {max_tokens} "
            f"(shorten it, or raise max_tokens up to 64)"
        )
    return tokens
