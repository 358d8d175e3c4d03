"""The WebVTT chapters track beside the video (pipeline.outputs.chapters, written by
pipeline.run.render.write_video): read back by FFmpeg's own WebVTT demuxer, each cue is one
chapter with the title and the span ffprobe lists among the MP4's chapter marks; it goes
beside the video with soft captions only, and is planned with the video's other files."""

from __future__ import annotations

import html
import time
from fractions import Fraction
from pathlib import Path

import av
import pytest
from attention_video.attncore.chapters import chapter
from attention_video.attncore.settings import Settings
from attention_video.pipeline.commands.app import Request, would_write
from attention_video.pipeline.outputs.chapters import chapter_marks, to_chapters_vtt
from attention_video.pipeline.outputs.files import chapters_track_path
from attention_video.pipeline.records import ChapterResult
from attention_video.pipeline.run.render import write_video
from attention_video.scenes.catalogue import Translate

from tests.pipeline.outputs.test_pipeline_video import ffprobe_chapters, make_clip


def read_vtt(path: Path) -> list[tuple[str, float, float, str]]:
    """Each cue of a WebVTT file as FFmpeg's WebVTT demuxer reads it: (its identifier, start,
    end, text), times in seconds, the text's character references read."""
    cues = []
    with av.open(str(path), format="webvtt") as c:
        stream = c.streams.subtitles[0]
        for packet in c.demux(stream):
            if packet.pts is None:
                continue
            base = Fraction(stream.time_base)
            ident = bytes(packet.get_sidedata("webvtt_identifier")).decode()
            cues.append((ident, float(packet.pts * base),
                         float((packet.pts + packet.duration) * base),
                         html.unescape(bytes(packet).decode())))  # its &amp; &lt; &gt;
    return cues


def two_chapters(folder: Path) -> list[ChapterResult]:
    a = make_clip(folder / "a.mp4", 30, 30)
    b = make_clip(folder / "b.mp4", 15, 220)
    return [ChapterResult("input", 2.0, [(0.2, 1.5, "one")], clip=a,
                          title="1 · Input: <words> & rows"),
            ChapterResult("factor", 1.0, [(0.0, 0.8, "two")], clip=b)]  # kept before titles


def test_the_chapters_track_is_the_mp4s_chapter_marks_read_back(tmp_path):
    chapters = two_chapters(tmp_path)
    settings = Settings(sentence="cats drink", captions="soft", output=str(tmp_path / "v.mp4"))
    result = write_video(settings, chapters, time.perf_counter(), use_cache=False)
    track = chapters_track_path(result.video)
    assert result.chapter_track == track == tmp_path / "v.chapters.vtt"
    cues = read_vtt(track)
    marks = ffprobe_chapters(result.video)
    assert [text for *_, text in cues] == [title for *_, title in marks]
    assert [t for _, a, b, _ in cues for t in (a, b)] == pytest.approx(
        [t for a, b, _ in marks for t in (a, b)], abs=2e-3)
    # the title the scene showed, its markup characters as text; the one kept before titles
    # were recorded: its number and its title in the caption language
    assert cues[0][3] == "1 · Input: <words> & rows"
    assert cues[1][3] == f"3 · {chapter('factor').title}"
    assert "&lt;words&gt; &amp; rows" in track.read_text(encoding="utf-8")


def test_a_title_kept_before_titles_were_recorded_is_in_the_caption_language(tmp_path):
    (r,) = [ChapterResult("factor", 1.0, [])]
    (mark,) = chapter_marks([r], "zh")
    zh = Translate("zh")(chapter("factor").title)
    assert zh != chapter("factor").title  # the catalogue has it: the check can tell
    assert mark[2] == f"3 · {zh}"
    text = to_chapters_vtt([r], "zh")
    assert text.startswith("WEBVTT\n") and f"factor\n00:00:00.000 --> 00:00:01.000\n3 · {zh}" in text


def test_cue_identifiers_are_the_chapters_slugs(tmp_path):
    path = tmp_path / "x.chapters.vtt"
    path.write_text(to_chapters_vtt(two_chapters(tmp_path), "en"), encoding="utf-8")
    assert [ident for ident, *_ in read_vtt(path)] == ["input", "factor"]


def test_it_goes_beside_the_video_with_soft_captions_only(tmp_path):
    chapters = two_chapters(tmp_path)
    burned = Settings(sentence="cats drink", captions="burned", output=str(tmp_path / "b.mp4"))
    write_video(burned, chapters, time.perf_counter(), use_cache=False)
    assert not chapters_track_path(tmp_path / "b.mp4").exists()
    assert "the chapter track" not in would_write(burned, Request())
    soft = Settings(sentence="cats drink", captions="soft", output=str(tmp_path / "s.mp4"))
    assert would_write(soft, Request())["the chapter track"] == tmp_path / "s.chapters.vtt"
