"""The words a voice reads symbols with (scenes.spoken), from the caption language's
catalogue: a language added as a catalogue is said in its own words, never in English."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

from attention_video.scenes.catalogue import Translate


@cache
def spoken_words(language: str) -> dict[str, str | Callable[[str, str], str]]:
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
                                                 function=function, argument=argument))
