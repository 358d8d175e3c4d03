"""The questions worded (scenes.questions): every kind in every caption language, with
distinct options, no placeholder left, and a reason that names the right option and
quotes the record's numbers as the video prints them."""

from __future__ import annotations

import pytest
from attention_video.attncore import Settings
from attention_video.attncore import questions as qs
from attention_video.scenes.catalogue import Translate
from attention_video.scenes.questions import number, worded

from tests.support.builds import trace_of

pytestmark = pytest.mark.xdist_group("decoder")  # with tests/attncore/test_questions.py

DEFAULT = "The black cat drank the milk"
CASES = [Settings(sentence=DEFAULT), Settings(sentence=DEFAULT, weights="decoder"),
         Settings(sentence="Time flies like an arrow and fruit flies like a banana",
                  weights="pretrained", head="auto")]


@pytest.mark.parametrize("language", ["en", "es", "zh"])
def test_every_question_reads_whole_in_every_language(language):
    kinds = set()
    for settings in CASES:
        trace = trace_of(settings)
        records = qs.questions(trace)
        for q, w in zip(records, worded(trace, Translate(language)), strict=True):
            kinds.add(w.kind)
            assert len(set(w.options)) == len(w.options), w.options
            for text in (w.ask, w.reason, *w.options):
                assert "{" not in text and "}" not in text, text
            right = w.options[w.answer]
            assert right.casefold() in w.reason.casefold(), (right, w.reason)
            quoted = [name for name, _ in q.facts if name in ("score", "weight")]
            for name in quoted:
                decimals = 3 if name == "weight" else 2  # a softmax weight, a score
                assert number(q.fact(name), decimals) in w.reason, (name, w.reason)
    assert kinds == set(qs.KINDS), "the cases ask every kind"


def test_a_repeated_word_is_told_apart_by_its_occurrence():
    trace = trace_of(CASES[2])
    options = {o for w in worded(trace, Translate("en")) for o in w.options}
    assert {'"flies₂"', '"like₂"'} <= options
