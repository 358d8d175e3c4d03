"""--describe --voice: each caption's description said after its speech, the picture held
until it has been said (extended description), and two audio tracks in the MP4 and the
WebM: the narration (silent while the picture holds for a description) and the described
narration, each labelled with its language, name and role, as ffprobe lists them. Heard
back by the offline listener (slow)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import av
import numpy as np
import pytest
from attention_video.attncore import Settings
from attention_video.pipeline.cache.keys import chapter_key
from attention_video.pipeline.cache.store import ChapterCache
from attention_video.pipeline.outputs import audio
from attention_video.pipeline.outputs.formats import write_webm
from attention_video.pipeline.outputs.slides import cut_steps
from attention_video.pipeline.outputs.video import join
from attention_video.pipeline.records import ChapterResult
from attention_video.pipeline.run.chapter import ChapterJob, narrations, render_chapter
from attention_video.scenes.pacing import SPEECH_GAP
from attention_video.scenes.voice import Narrator

from tests.scenes.test_narration import beep, onset, silent_clip
from tests.support.builds import trace_of

SENTENCE = "The black cat drank the milk"
FFPROBE = shutil.which("ffprobe")


def ffprobe_audio(path) -> list[dict]:
    out = subprocess.run([FFPROBE, "-v", "error", "-select_streams", "a", "-show_streams",
                          "-of", "json", str(path)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["streams"]


def cues_of_file(path) -> list[tuple[float, float, str]]:
    """A WebVTT file's cues in seconds."""
    def seconds(stamp: str) -> float:
        h, m, rest = stamp.split(":")
        return int(h) * 3600 + int(m) * 60 + float(rest)
    text = path.read_text(encoding="utf-8")
    return [(seconds(a), seconds(b), t) for a, b, t in re.findall(r"(\S+) --> (\S+)\n(.+)\n", text)]


def described_clips(tmp_path):
    """Two clips: the first with a description said after its caption, the second with
    nothing described (the narration alone)."""
    a, b = silent_clip(tmp_path / "a.mp4", 2.0), silent_clip(tmp_path / "b.mp4", 2.0)
    audio.add_tracks(a, [beep(0.2, 0.3, 2.0), beep(0.2, 0.3, 2.0) + beep(1.2, 0.3, 2.0)])
    audio.add_track(b, beep(0.5, 0.3, 2.0))
    return a, b


@pytest.mark.skipif(FFPROBE is None, reason="ffprobe is not installed")
def test_the_mp4_and_webm_carry_two_labelled_audio_tracks(tmp_path):
    out = tmp_path / "v.mp4"
    join(list(described_clips(tmp_path)), out, language="en")
    write_webm(out, tmp_path / "v.webm")
    for path in (out, tmp_path / "v.webm"):
        plain, described = ffprobe_audio(path)
        tags = [{k.lower(): v for k, v in s.get("tags", {}).items()} for s in (plain, described)]
        assert [t["language"] for t in tags] == ["eng", "eng"], path
        # the name players list a track by: MP4 keeps it as the handler name (FFmpeg's mp4
        # muxer writes no title a demuxer reads back), Matroska as its title
        name = "handler_name" if path.suffix == ".mp4" else "title"
        assert [t[name] for t in tags] == [audio.NARRATION, audio.DESCRIBED], path
        assert plain["disposition"]["default"] == 1 and described["disposition"]["default"] == 0
        if path.suffix == ".mp4":  # (WebM has no flags for these: its title says it)
            assert described["disposition"]["visual_impaired"] == 1
            assert described["disposition"]["descriptions"] == 1


def test_the_plain_narration_is_silent_where_the_description_is_said(tmp_path):
    out = tmp_path / "v.mp4"
    join(list(described_clips(tmp_path)), out)
    plain, described = audio.read_track(out), audio.read_track(out, index=1)
    at = round(1.2 * audio.RATE), round(1.5 * audio.RATE)
    assert np.abs(plain[at[0]:at[1]]).max() < 300  # (AAC's noise floor)
    assert onset(described[round(0.6 * audio.RATE):]) == pytest.approx(0.6, abs=0.01)
    # the second clip described nothing: both tracks say its caption, in step
    assert onset(plain[2 * audio.RATE:]) == onset(described[2 * audio.RATE:]) == pytest.approx(0.5, abs=0.01)


def test_a_deck_made_from_a_described_video_plays_the_described_narration(tmp_path):
    """Each step carries its stretch of the described narration, where the picture holds
    for the description (the plain narration is silent there)."""
    a, b = described_clips(tmp_path)
    chapters = [ChapterResult(slug, 2.0, [(0.0, 2.0, "a caption")], clip=clip, holds=[2.0])
                for slug, clip in (("input", a), ("linear", b))]
    (tmp_path / "steps").mkdir()
    described, plain = cut_steps(chapters, tmp_path / "steps")
    sound = audio.read_track(described.clip)
    assert onset(sound[round(0.6 * audio.RATE):]) == pytest.approx(0.6, abs=0.01)  # (at 1.2 s)
    assert onset(audio.read_track(plain.clip)) == pytest.approx(0.5, abs=0.01)  # its one track


def test_a_silent_video_stays_one_track_unlabelled(tmp_path):
    a = silent_clip(tmp_path / "a.mp4", 1.0)
    audio.add_track(a, beep(0.2, 0.3, 1.0))
    join([a], tmp_path / "j.mp4")
    with av.open(str(tmp_path / "j.mp4")) as c:
        assert len(c.streams.audio) == 1


def test_both_tracks_are_brought_to_the_narrations_loudness(tmp_path):
    out = tmp_path / "v.mp4"
    join(list(described_clips(tmp_path)), out)
    for k in (0, 1):
        level = audio.loudness(audio.read_track(out, index=k))
        assert level.integrated == pytest.approx(audio.TARGET_LUFS, abs=1.0)


def test_narrations_are_the_plain_and_the_described_timelines():
    class Said:
        def __init__(self, n):
            self.samples, self.rate = np.full(n, 1000, np.int16), audio.RATE

    plain, described = narrations([(0.0, Said(480))], [(1.0, Said(480))], 2.0)
    assert np.abs(plain[audio.RATE:]).max() == 0 and np.abs(described[audio.RATE:]).max() > 0
    assert len(narrations([(0.0, Said(480))], [], 2.0)) == 1  # nothing described: one track


def test_each_description_is_timed_where_the_described_narration_says_it(tmp_path):
    """Dry run of chapter 1, narrated and described: each said description's times are
    where its speech is placed, a gap after its caption's speech, from its first word (after
    the speech's lead-in silence) to its end;
    a caption with nothing to describe has none. (Speech kept in tmp_path, so that the check
    reads each back instead of synthesizing it again.)"""
    s = Settings(sentence=SENTENCE, quality="l", voice="joe", describe=True)
    narrator = Narrator.from_settings(s, tmp_path)
    r = render_chapter(ChapterJob("input", trace_of(s), s, clip=None, narrator=narrator))
    assert len(r.described_at) == len(r.subtitles) == len(r.descriptions)
    said = [(cue, text, at) for cue, text, at in zip(r.subtitles, r.descriptions, r.described_at)
            if text]
    assert said and all(at is None for text, at in zip(r.descriptions, r.described_at) if not text)
    for (_, speech_ends, _), text, (start, end) in said:
        speech = narrator.say(text)  # placed a gap after the caption's, from its first word
        assert start == pytest.approx(speech_ends + SPEECH_GAP + speech.first_word, abs=1e-6)
        assert end == pytest.approx(speech_ends + SPEECH_GAP + speech.seconds, abs=1e-6)


def test_describe_is_a_cache_variant_only_of_narrated_clips(tmp_path):
    plain, described = (Settings(sentence=SENTENCE, quality="l", describe=d) for d in (False, True))
    trace = trace_of(plain)
    assert chapter_key("linear", trace, plain, ("linear",)) == \
        chapter_key("linear", trace, described, ("linear",))
    voiced = [Settings(sentence=SENTENCE, quality="l", voice="joe", describe=d) for d in (False, True)]
    narrator = Narrator.from_settings(voiced[0], tmp_path, tmp_path)
    assert chapter_key("linear", trace, voiced[0], ("linear",), narrator) != \
        chapter_key("linear", trace, voiced[1], ("linear",), narrator)


@pytest.mark.slow
def test_a_described_chapter_holds_its_pictures_longer_and_is_heard_back(tmp_path):
    """Chapter 2 narrated with descriptions: longer than without, two tracks, and the
    offline listener hears each description as written (median word error under 8%)."""
    from attention_video.pipeline.run.render import render_video  # noqa: PLC0415
    from attention_video.scenes.pacing import SPEECH_GAP  # noqa: PLC0415
    from attention_video.scenes.spoken import spoken  # noqa: PLC0415

    from tests.support.listener import transcribe, word_error_rate  # noqa: PLC0415

    made = {}
    for d in (False, True):
        s = Settings(sentence=SENTENCE, quality="l", voice="joe", describe=d,
                     chapters=("linear",), output=str(tmp_path / f"v{d}.mp4"))
        made[d] = render_video(s, jobs=1, cache=ChapterCache(tmp_path / "cache"))
    assert made[True].duration > made[False].duration + 1.0
    video, chapter = made[True].video, made[True].chapters[0]
    assert audio.track_count(video) == 2
    sound = audio.read_track(video, index=1)
    errors = []
    starts = [a for a, _, _ in chapter.subtitles] + [chapter.duration]
    for k, ((_, said_until, _), text) in enumerate(zip(chapter.subtitles, chapter.descriptions)):
        if not text:
            continue
        # a narrated cue ends with its caption's speech; its description follows a gap later
        cut = sound[round((said_until + SPEECH_GAP / 2) * audio.RATE):round(starts[k + 1] * audio.RATE)]
        said, heard = spoken(text, "en"), transcribe(cut, audio.RATE)
        errors.append((word_error_rate(said, heard), said, heard))
    print("\n".join(f"{e:.2f} | {s} | {h}" for e, s, h in errors))
    errors = [e for e, _, _ in errors]
    assert errors and float(np.median(errors)) < 0.08, errors
    # the descriptions track's cues start where the described track speaks them
    cues = cues_of_file(made[True].descriptions)
    assert len(cues) == len(errors)
    for start, end, _ in cues:  # silent just before, its first word within 0.1 s after
        at = round(start * audio.RATE)
        assert np.abs(sound[at - round(0.15 * audio.RATE):at]).max() < 2000, start
        assert np.abs(sound[at:at + round(0.1 * audio.RATE)]).max() > 2000, start
        assert end > start
