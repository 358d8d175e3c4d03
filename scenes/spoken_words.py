"""The words a voice reads symbols with (scenes.spoken), from the caption language's
catalogue: a language added as a catalogue is said in its own words, never in English."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from attention_video.scenes.catalogue import N_, Translate

# A repeated word's occurrence, said: "the₂" is "the second the" (said "the 2", it is heard
# as "the tube"). One message per ordinal, so that a language agrees the ordinal with the
# word it counts (Spanish "el primer", "el tercer"); past the tenth, "the 11th" by number.
ORDINALS = (N_("the first {word}"), N_("the second {word}"), N_("the third {word}"),
            N_("the fourth {word}"), N_("the fifth {word}"), N_("the sixth {word}"),
            N_("the seventh {word}"), N_("the eighth {word}"), N_("the ninth {word}"),
            N_("the tenth {word}"))


@cache
def spoken_words(language: str) -> dict[str, Any]:
    """The fields of scenes.spoken.Words for `language`, spaced as the rules join them."""
    tr = Translate(language)
    minus = tr.context("spoken", "minus")
    return dict(
        transpose=" " + tr.context("spoken", "transpose"),
        times=" " + tr.context("spoken", "times") + " ",
        by=" " + tr.context("spoken", "by") + " ",  # the × of a shape, 6 × 4
        divided=" " + tr.context("spoken", "divided by") + " ",
        root=" " + tr.context("spoken", "the square root of") + " ",
        total=" " + tr.context("spoken", "the sum") + " ",
        more=" " + tr.context("spoken", "and so on"),
        chapter=tr.context("spoken", "chapter") + " ",
        equals=" " + tr.context("spoken", "equals") + " ",
        plus=" " + tr.context("spoken", "plus") + " ",
        minus=minus + " ", less=" " + minus + " ",
        to=" " + tr.context("spoken", "to") + " ",
        about=" " + tr.context("spoken", "about") + " ",
        pause=", ",
        of=lambda function, argument: tr.context("spoken", "{function} of {argument}",
                                                 function=function, argument=argument),
        dot=" " + tr.context("spoken", "dot") + " ",  # q·k
        total_over=lambda index: " " + tr.context("spoken", "the sum over {index}",
                                                  index=index) + " ",
        infinity=tr.context("spoken", "infinity"),
        length=lambda x: tr.context("spoken", "the length of {x}", x=x),
        exp=lambda x: tr.context("spoken", "e to the {x}", x=x),
        exponential=tr.context("spoken", "the exponential"),
        function=lambda function, argument: tr.context(
            "spoken", "the {function} of {argument}", function=function, argument=argument),
        functions={"cos": tr.context("spoken", "cosine"), "sin": tr.context("spoken", "sine"),
                   "tan": tr.context("spoken", "tangent"), "log": tr.context("spoken", "log")},
        power=lambda base, exponent: _power(tr, base, exponent),
        occurrence=occurrence(language), contractions=contractions(tr),
        degrees=lambda n: tr.plural("{n} degree", "{n} degrees", _count(n)).replace(
            str(_count(n)), n, 1))  # (Greek letters are said by their names: scenes.spoken)


# Where a said ordinal starts, until the rules are done (scenes.spoken): a preposition
# before it contracts with its article (Spanish "de el segundo" → "del segundo"), and
# never with a word of the sentence ("la fila de el", the word "el", stays).
ORDINAL_MARK = "\u2063"  # INVISIBLE SEPARATOR: neither a word's letter nor a space


def occurrence(language: str) -> Callable[[str, int], str]:
    """(word, n) → the n-th occurrence of a repeated word, said in `language`: ("the", 2)
    → "the second the" (after ORDINAL_MARK). The catalogue is read when a caption is said,
    not at import."""
    def said(word: str, n: int) -> str:
        tr = Translate(language)
        if 1 <= n <= len(ORDINALS):
            return ORDINAL_MARK + tr(ORDINALS[n - 1], word=word)
        # TRANSLATORS: a repeated word's occurrence past the tenth: "occurrence 11 of the"
        return ORDINAL_MARK + tr("occurrence {n} of {word}", word=word, n=n)
    return said


def contractions(tr: Translate) -> tuple[tuple[str, str], ...]:
    """The catalogue's contractions of a preposition with the article an ordinal starts
    with, as ("de el", "del") pairs; none where the message is left untranslated."""
    # TRANSLATORS: how a preposition and the article that starts "the second {word}" are
    # said together, as "words=contraction" pairs split by commas: Spanish "de el=del, a
    # el=al". Where the language contracts none, a word without "=" ("none").
    pairs = tr.context("spoken", "contractions before an ordinal")
    if "=" not in pairs:
        return ()
    return tuple((a.strip(), b.strip()) for a, _, b in
                 (pair.partition("=") for pair in pairs.split(",")) if a.strip() and b.strip())


def _power(tr: Translate, base: str, exponent: str) -> str:
    """x², x³, W⁻¹ by their names; any other power as 'x to the n'."""
    if exponent == "2":
        return tr.context("spoken", "{base} squared", base=base)
    if exponent == "3":
        return tr.context("spoken", "{base} cubed", base=base)
    if exponent == "-1":
        return tr.context("spoken", "{base} inverse", base=base)
    return tr.context("spoken", "{base} to the {exponent}", base=base, exponent=exponent)


def _count(n: str) -> int:
    """The whole count a number is said with for its plural form (11.5 → 11)."""
    try:
        return int(float(n))
    except ValueError:
        return 2
