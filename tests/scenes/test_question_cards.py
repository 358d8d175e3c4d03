"""--questions (scenes.predict): each question is asked as the chapter that reveals its
answer opens, before the chapter's own first caption; its think time starts once it has
been read; the answer's caption follows; only the chapters that ask change their cache
key; and the cards pass the picture lint."""

from __future__ import annotations

import dataclasses

import pytest
from attention_video.attncore import Settings
from attention_video.attncore import questions as qs
from attention_video.pipeline.cache.keys import chapter_key
from attention_video.scenes.catalogue import Translate
from attention_video.scenes.pacing import reading_seconds
from attention_video.scenes.questions import worded

from tests.support.builds import chapter_lint, dry_run, plan_of, trace_of

# PLAIN is the default video: its chapters are built once per session for
# tests/scenes/test_scenes.py too, on the worker of their xdist group.
pytestmark = pytest.mark.xdist_group("scene-builds")
PLAIN = Settings(sentence="The black cat drank the milk")
ASKING = dataclasses.replace(PLAIN, questions=True, think_time=4.0)


@pytest.mark.slow
def test_each_question_opens_its_chapter_and_the_answer_follows_after_the_think_time():
    trace = trace_of(ASKING)
    asked = worded(trace, Translate("en"))
    assert {q.before for q in asked} >= {"factor", "dot", "softmax", "learning"}
    for slug in sorted({q.before for q in asked}):
        mine = [q for q in asked if q.before == slug]
        cues = dry_run(ASKING, slug).subtitles
        plain = dry_run(PLAIN, slug).subtitles
        for n, q in enumerate(mine):
            (a0, _, ask), (r0, _, reason) = cues[2 * n], cues[2 * n + 1]
            assert (ask, reason) == (q.ask, q.reason)
            read = reading_seconds(q.ask, "en", 1.0)
            assert r0 - a0 >= read + 4.0 - 0.05, (slug, r0 - a0, read)
        assert [c[2] for c in cues[2 * len(mine):]] == [c[2] for c in plain]  # then the chapter


def test_only_the_chapters_that_ask_get_another_cache_key():
    trace = trace_of(PLAIN)
    plan = plan_of(PLAIN)
    asking = {q.before for q in qs.questions(trace)}
    for slug in plan:
        same = chapter_key(slug, trace, PLAIN, plan) == chapter_key(slug, trace, ASKING, plan)
        assert same == (slug not in asking), slug
    slower = dataclasses.replace(ASKING, think_time=6.0)
    assert chapter_key("factor", trace, ASKING, plan) != chapter_key("factor", trace, slower, plan)


@pytest.mark.slow
@pytest.mark.parametrize("slug", ["factor", "softmax"])
def test_the_cards_pass_the_picture_lint(slug):
    assert chapter_lint(ASKING, slug).problems == []


def test_a_deck_stops_on_each_question_before_its_answer():
    """A deck step holds where its caption's picture is complete (ChapterResult.holds,
    pipeline.outputs.slides): for a question, after its countdown and before the answer is
    marked, so the lecturer's deck waits on the question until moved on."""
    r = dry_run(ASKING, "factor")
    asked = [q for q in worded(trace_of(ASKING), Translate("en")) if q.before == "factor"]
    for n, q in enumerate(asked):
        (a0, _, ask), (r0, _, reason) = r.subtitles[2 * n], r.subtitles[2 * n + 1]
        assert (ask, reason) == (q.ask, q.reason)
        hold = r.holds[2 * n]
        assert a0 + reading_seconds(ask, "en", 1.0) + 4.0 - 0.05 <= hold <= r0 + 1e-6
