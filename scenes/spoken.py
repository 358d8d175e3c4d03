"""A caption as it is said: the same text, its symbols read out by rule.

The voice reads the caption on screen (scenes.base.say), so what is said is made from the
same text that is shown, by the rules below, never typed by hand for a particular caption:

    Kᵀ → "K transpose"      X · W_Q → "X times W Q"     6 × 4 → "6 by 4"
    / → "divided by"         √d_k → "the square root of d k"
    Σ → "the sum"            … → "and so on"             ch. 2 → "chapter 2"
    V(drank) → "V of drank"  = → "equals"  + → "plus"   −0.27 → "minus 0.27"

Quotation marks and square brackets go, and round brackets become the pauses of commas. Chinese captions get the
same rules in Chinese words (for a Chinese Piper voice the user provides).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from attention_video.scenes.spoken_words import spoken_words

Rule = tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]]


@dataclass(frozen=True)
class Words:
    """The words a language reads the symbols with."""

    transpose: str
    times: str
    by: str  # the × of a shape, 6 × 4
    divided: str
    root: str  # √
    total: str  # Σ
    more: str  # …
    chapter: str
    equals: str
    plus: str
    minus: str  # − before a number
    less: str  # − between two terms
    to: str  # →
    about: str  # ≈
    of: Callable[[str, str], str]  # V(drank): (function, argument) → words
    pause: str  # what brackets become


ENGLISH = Words(transpose=" transpose", times=" times ", by=" by ", divided=" divided by ",
                root=" the square root of ", total=" the sum ", more=" and so on",
                chapter="chapter ", equals=" equals ", plus=" plus ", minus="minus ",
                less=" minus ", to=" to ", about=" about ", of=lambda f, x: f"{f} of {x}",
                pause=", ")
CHINESE = Words(transpose=" 转置", times=" 乘 ", by=" 乘 ", divided=" 除以 ", root=" 根号 ",
                total=" 总和 ", more="等等", chapter="第 ", equals=" 等于 ", plus=" 加 ",
                minus="负 ", less=" 减 ", to=" 到 ", about=" 约 ",
                of=lambda f, x: f"{x} 的 {f}", pause="，")
WORDS = {"en": ENGLISH, "zh": CHINESE}

_QUOTES = "\"“”„«»「」『』"
_SHAPE = re.compile(r"(?<![\d.])(\d+)\s*×\s*(\d+)(?!\.?\d)")  # a shape: whole numbers
# A name applied to what follows in brackets without a space: V(drank), Attention(Q, K, V).
_APPLIED = re.compile(r"(?<![\w.])([A-Za-z][\w']*)\(([^()]*)\)")


def _rules(w: Words) -> list[Rule]:
    return [
        (re.compile(f"[{_QUOTES}]"), ""),
        (re.compile(r"\bch\.\s*(\d+)"), lambda m: f"{w.chapter}{m[1]}"),
        (re.compile(r"\be\.g\.", re.IGNORECASE), "for example" if w is ENGLISH else "例如"),
        (re.compile(r"\bi\.e\.", re.IGNORECASE), "that is" if w is ENGLISH else "也就是"),
        (re.compile("ᵀ"), w.transpose),
        (re.compile("√"), w.root),
        (_APPLIED, lambda m: w.of(m[1], m[2])),
        (_SHAPE, lambda m: f"{m[1]}{w.by}{m[2]}"),
        (re.compile("×"), w.times),
        (re.compile("[·⋅]"), w.times),
        (re.compile(r"\s/\s|(?<=\w)/(?=[\s√])"), w.divided),
        (re.compile("Σ"), w.total),
        (re.compile(r"(?<=\w)…"), ""),  # a word cut short on screen: 'extraordi…'
        (re.compile(r"\s*[,，+]\s*…"), w.pause.strip() + w.more),
        (re.compile("…"), w.more),
        (re.compile(r"(?<![\w.])[−-](?=\d)"), w.minus),  # a negative number
        (re.compile(r"\s[−-]\s"), w.less),
        (re.compile("="), w.equals),
        (re.compile(r"\+"), w.plus),
        (re.compile("→"), w.to),
        (re.compile("≈"), w.about),
        (re.compile(r"(?<=[A-Za-z\d])_(?=[A-Za-z\d])"), " "),  # W_Q, d_k, d_model
        (re.compile(r"[(（]"), w.pause),  # brackets: the pauses of commas
        (re.compile(r"[)）]"), w.pause),
        (re.compile(r"[\[\]]"), ""),  # [CLS]: a token's name
    ]


_TIDY: list[Rule] = [
    (re.compile(r"\s+"), " "),
    (re.compile(r"\s+([,.;:!?，。；：！？、])"), r"\1"),
    (re.compile(r"([,，])(?:\s*[,，])+"), r"\1"),  # ", ," from brackets after a comma
    (re.compile(r"[,，]\s*([.;:!?。；：！？、])"), r"\1"),  # a comma before a full stop
    (re.compile(r"([;:；：、])\s*[,，]"), r"\1"),  # a comma after a colon
    (re.compile(r"^[\s,，]+|[\s,，]+$"), ""),
]
_COMPILED = {lang: _rules(w) for lang, w in WORDS.items()}


def spoken(text: str, language: str = "en") -> str:
    """`text` as the voice says it: its symbols in words of `language` (en, zh)."""
    out = text
    for pattern, replacement in (_COMPILED.get(language) or _from_catalogue(language)) + _TIDY:
        out = pattern.sub(replacement, out)
    return out


@cache
def _from_catalogue(language: str) -> list[Rule]:
    """The rules for a language that has only a catalogue (scenes.spoken_words)."""
    return _rules(Words(**spoken_words(language)))
