"""Pacing (issue 22): every caption stays up for its reading time, by holding frames.

The floors are checked on the written .srt of real renders of the default sentence in
both languages; the rule itself on dry runs (tests/scenes/test_scenes.py, fast tier) and here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from attention_video.attncore import Settings
from attention_video.pipeline.cache.store import ChapterCache
from attention_video.pipeline.outputs.video import probe
from attention_video.pipeline.run.render import render_video
from attention_video.scenes.pacing import caption_chars, reading_seconds, whole_frames

READING_CPS = {"en": 15, "zh": 7}  # characters a second, written out again (issue 22)


def read_srt(path: Path) -> list[tuple[float, float, str]]:
    """(start, end, text) of every cue of an .srt file, parsed on its own."""
    def seconds(stamp: str) -> float:
        h, m, s, ms = map(int, re.split(r"[:,]", stamp))
        return h * 3600 + m * 60 + s + ms / 1000

    cues = []
    for block in path.read_text(encoding="utf-8").strip().split("\n\n"):
        lines = block.splitlines()
        start, end = lines[1].split(" --> ")
        cues.append((seconds(start), seconds(end), " ".join(lines[2:])))
    return cues


def test_reading_time_is_the_characters_at_the_language_rate_and_at_least_a_second_and_a_half():
    assert reading_seconds("a" * 30, "en") == 2.0
    assert reading_seconds("字" * 14, "zh") == 2.0
    assert reading_seconds("Short.", "en") == 1.5
    assert reading_seconds("a" * 30, "en", pace=1.25) == pytest.approx(1.6)
    assert reading_seconds("a" * 30, "en", pace=0.8) == pytest.approx(2.5)
    assert caption_chars("two  spaces\nand a break") == len("two spaces and a break")


def test_a_hold_is_a_whole_number_of_frames_at_least_as_long_as_asked():
    assert whole_frames(1.0, 15) == 15
    assert whole_frames(1.01, 15) == 16
    assert whole_frames(0.0, 30) == whole_frames(-2.0, 30) == 0


@pytest.mark.slow
@pytest.mark.parametrize("language", ["en", "zh"])
def test_every_cue_of_the_default_video_meets_its_reading_time(tmp_path, language):
    s = Settings(language=language, quality="l", captions="soft",
                 output=str(tmp_path / "video.mp4"))
    result = render_video(s, jobs=2, cache=ChapterCache(tmp_path / "cache"))
    cues = read_srt(result.subtitles)
    assert len(cues) >= 40
    rate = READING_CPS[language]
    slow = [(round(b - a, 3), text) for a, b, text in cues
            if b - a < max(1.5, len(" ".join(text.split())) / rate)]
    assert slow == []
    assert all(b <= c for (_, b, _), (c, _, _) in zip(cues, cues[1:]))  # never overlapping
    assert cues[-1][1] <= probe(result.video).duration + 1e-3


@pytest.mark.slow
def test_a_slower_pace_holds_longer_without_storing_more_frames(tmp_path):
    """Holds stretch, animations keep their speed: at pace 0.6 the chapters run longer,
    every caption by the same factor or more, and the clips store the same frames."""
    made = {}
    for pace in (1.0, 0.6):
        s = Settings(quality="l", chapters=(1, 2), pace=pace, captions="soft",
                     output=str(tmp_path / f"pace{pace}.mp4"))
        result = render_video(s, jobs=2, cache=ChapterCache(tmp_path / "cache"))
        made[pace] = (probe(result.video), read_srt(result.subtitles))
    (brisk, brisk_cues), (slow, slow_cues) = made[1.0], made[0.6]
    assert slow.stored == brisk.stored
    assert slow.duration > brisk.duration + 20
    assert [c[2] for c in slow_cues] == [c[2] for c in brisk_cues]
    for a, b, text in slow_cues:
        assert b - a >= reading_seconds(text, "en", 0.6) - 1e-3
