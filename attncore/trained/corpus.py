"""What both corpora share: splitting text into a vocabulary's words, the error that names
the words a model does not know, and seeded draws of distinct sentences split three ways.

English (and any Latin-script text) is split into words looked up case-folded, a run of
Chinese characters by longest match (so 牛奶 is one token), each punctuation mark is one
token; every token keeps its original spelling for display.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from typing import Generic, TypeVar

import numpy as np
from attention_video.attncore.tokenize import Token, TokenizeError, clean

_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f"  # Chinese characters
_PIECE = re.compile(
    rf"(?P<han>[{_HAN}]+)"  # a run of Chinese characters: split by longest match
    rf"|(?P<word>(?:(?![{_HAN}])[^\W_])+(?:['’\-](?:(?![{_HAN}])[^\W_])+)*)"  # a word
    r"|(?P<mark>[^\w\s])"  # one punctuation mark
)


class UnknownWordError(TokenizeError):
    """Words a trained model has no embedding for; `.unknown` lists them in sentence order.
    Each model words its own message (`name_unknown` names the words, with hints)."""

    def __init__(self, unknown: tuple[str, ...], message: str):
        self.unknown = unknown
        super().__init__(message)


def name_unknown(unknown: Iterable[str], known: Iterable[str]) -> str:
    """"'zebra', 'mlik' (did you mean 'milk'?)": each word with its closest known words."""
    known = list(known)
    named = []
    for word in unknown:
        close = difflib.get_close_matches(word.casefold(), known, n=2, cutoff=0.6)
        hint = f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""
        named.append(f"{word!r}{hint}")
    return ", ".join(named)


def split_words(sentence: str, known: Iterable[str]) -> tuple[tuple[Token, ...], tuple[str, ...]]:
    """The sentence's tokens, and the pieces of it that are not in `known` (in sentence
    order, each once). TokenizeError if the sentence is empty."""
    lookup = set(known)
    longest = max((len(w) for w in lookup), default=1)
    text = clean(sentence)
    if not text.strip():
        raise TokenizeError("the sentence is empty: type at least one word")
    tokens: list[Token] = []
    unknown: list[str] = []
    for m in _PIECE.finditer(text):
        piece = m.group(0)
        if m["han"]:
            pieces, missing = _longest_match(piece, lookup, longest)
            tokens.extend(Token(p, "word") for p in pieces)
            unknown.extend(missing)
            continue
        token = Token(piece, "word" if m["word"] else "punct")
        if token.key not in lookup:
            unknown.append(piece)
        tokens.append(token)
    return tuple(tokens), tuple(dict.fromkeys(unknown))


def _longest_match(run: str, lookup: set[str], longest: int) -> tuple[list[str], list[str]]:
    """Greedy longest match from the left; characters no word starts with are gathered into
    unknown pieces (consecutive ones together, so 可乐 is reported as one word)."""
    pieces, unknown, pending = [], [], ""
    i = 0
    while i < len(run):
        for size in range(min(longest, len(run) - i), 0, -1):
            if run[i:i + size] in lookup:
                break
        else:
            pending += run[i]
            i += 1
            continue
        if pending:
            unknown.append(pending)
            pending = ""
        pieces.append(run[i:i + size])
        i += size
    if pending:
        unknown.append(pending)
    return pieces, unknown


T = TypeVar("T")


def draw_distinct(sample: Callable[[np.random.Generator], T], key: Callable[[T], Hashable],
                  seed: int | list[int], count: int, exclude: frozenset = frozenset()
                  ) -> tuple[T, ...]:
    """`count` samples from default_rng(seed) with distinct keys, none of them in
    `exclude`; a ValueError when the corpus runs short of them."""
    rng = np.random.default_rng(seed)
    seen = set(exclude)
    out: list[T] = []
    for _ in range(100 * count + 1000):
        if len(out) == count:
            return tuple(out)
        s = sample(rng)
        if key(s) not in seen:
            seen.add(key(s))
            out.append(s)
    raise ValueError(f"the corpus has too few distinct sentences for {count}")


@dataclass(frozen=True)
class Splits(Generic[T]):
    """Training, validation (picks the best restart) and test (the quality bar) sentences,
    no sentence in two of them."""

    train: tuple[T, ...]
    validation: tuple[T, ...]
    test: tuple[T, ...]


def draw_splits(draw: Callable[[list[int], int, frozenset], tuple[T, ...]],
                key: Callable[[T], Hashable], seed: int, train: int, validation: int,
                test: int, fixed: tuple[T, ...] = ()) -> Splits[T]:
    """Disjoint splits from the seed's three streams, `draw(stream, count, exclude)` each;
    the `fixed` sentences lead training."""
    tr = fixed + draw([seed, 0], train - len(fixed), frozenset(map(key, fixed)))
    seen = frozenset(map(key, tr))
    va = draw([seed, 1], validation, seen)
    te = draw([seed, 2], test, seen | frozenset(map(key, va)))
    return Splits(tr, va, te)
