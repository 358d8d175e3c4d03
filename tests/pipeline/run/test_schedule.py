"""pipeline.run.schedule: chapters go to the workers longest first, by what they took the
last time a video of the same kind was rendered, or by the figures measured here."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from attention_video.attncore import Settings, build_trace, sources
from attention_video.attncore.chapters import SLUGS, chapter
from attention_video.pipeline.cache.store import ChapterCache
from attention_video.pipeline.run import render as render_mod
from attention_video.pipeline.run import schedule
from attention_video.pipeline.run.chapter import ChapterJob, ChapterResult
from attention_video.pipeline.run.render import render_video
from attention_video.pipeline.run.workers import InlineExecutor

S = Settings(sentence="The black cat drank the milk", quality="l")
ALL = list(SLUGS)


@pytest.fixture(scope="module")
def tiny():
    return build_trace(S)


def test_the_measured_figures_order_each_kind_of_model(tiny):
    """Each kind of model is ordered by its own column of the rows' costs: the tiny model's
    longest chapter is `learning` (its training replayed), the pretrained model's `heads`
    (12 heads and the overview), which the old fixed order sent eighth."""
    assert schedule.longest_first(ALL, tiny, S) == sorted(ALL, key=lambda c: -chapter(c).cost.small)
    assert schedule.longest_first(ALL, tiny, S)[0] == "learning"
    pretrained = dataclasses.replace(tiny, source="pretrained", can=sources.source("pretrained").can)
    played = [c for c in ALL if c != "learning"]
    order = schedule.longest_first(played, pretrained, S)
    assert order == sorted(played, key=lambda c: -chapter(c).cost.large)
    assert order[0] == "heads" and order.index("heads") < order.index("linear")
    random = dataclasses.replace(tiny, source="random", can=sources.source("random").can)
    assert schedule.longest_first(ALL, random, S) == schedule.longest_first(ALL, tiny, S)


def test_recorded_times_come_first_and_scale_the_chapters_not_recorded(tiny, tmp_path):
    timings = schedule.Timings(tmp_path)
    for name in ("linear", "factor"):  # twice the measured figures: a slower machine, say
        timings.record(name, tiny, S, 2 * chapter(name).cost.small)
    timings.record("summary", tiny, S, 100.0)  # the summary took longest here
    timings.save()
    again = schedule.Timings(tmp_path)
    assert again.get("summary", tiny, S) == 100.0
    assert schedule.longest_first(ALL, tiny, S, again)[0] == "summary"
    # the learning chapter, not recorded: its measured figure times the median ratio (2, 2,
    # and the summary's 100 s over its figure)
    learning = chapter("learning").cost.small
    assert schedule.expected_seconds("learning", tiny, S, again) == pytest.approx(learning * 2)
    other = Settings(sentence=S.sentence, quality="h")  # another kind: nothing recorded
    assert schedule.expected_seconds("summary", tiny, other, again) == chapter("summary").cost.small


@pytest.mark.parametrize("content", ["not json", "[1, 2]", '{"a": "x"}'])
def test_an_unreadable_timings_file_only_loses_the_order(tiny, tmp_path, content):
    (tmp_path / schedule.TIMINGS_FILE).write_text(content, encoding="utf-8")
    timings = schedule.Timings(tmp_path)
    assert timings.get("linear", tiny, S) is None
    assert schedule.longest_first(ALL, tiny, S, timings) == schedule.longest_first(ALL, tiny, S)


def test_a_render_records_what_each_chapter_took_and_orders_the_next_by_it(
        tiny, tmp_path, monkeypatch):
    took = {"input": 9.0, "linear": 1.0, "factor": 5.0}
    sent: list[str] = []

    def fake_render(job: ChapterJob) -> ChapterResult:
        sent.append(job.chapter)
        Path(job.clip).write_bytes(b"clip")
        return ChapterResult(job.chapter, 2.0, [(0.0, 2.0, "caption")],
                             seconds=took[job.chapter], clip=job.clip)

    monkeypatch.setattr(render_mod, "render_chapter", fake_render)
    monkeypatch.setattr(render_mod, "join",
                        lambda clips, out, **kw: Path(out).write_bytes(b"v") and 6.0)
    monkeypatch.setattr(render_mod, "LocalPool", InlineExecutor)
    cache = ChapterCache(tmp_path / "cache")
    settings = Settings(sentence=S.sentence, quality="l", chapters=(1, 2, 3),
                        output=str(tmp_path / "v.mp4"))
    render_video(settings, jobs=2, cache=cache, trace=tiny)
    assert sent == sorted(["input", "linear", "factor"],  # the measured figures
                          key=lambda c: -chapter(c).cost.small)
    timings = schedule.Timings(cache.root)
    assert [timings.get(c, tiny, settings) for c in ("input", "linear", "factor")] == [9.0, 1.0, 5.0]
    sent.clear()
    render_video(settings, jobs=2, cache=cache, trace=tiny, use_cache=False)
    assert sent == ["input", "factor", "linear"]
