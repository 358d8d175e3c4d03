"""pipeline.outputs.video: clips are joined by stream copy and probed, on tiny clips made here."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import av
import numpy as np
import pytest
from attention_video.pipeline.outputs.video import join, probe


def make_clip(path: Path, frames: int, grey: int, fps: int = 15) -> Path:
    with av.open(str(path), "w", format="mp4") as c:
        s = c.add_stream("libx264", rate=fps)
        s.width, s.height, s.pix_fmt = 64, 48, "yuv420p"
        for _ in range(frames):
            frame = av.VideoFrame.from_ndarray(np.full((48, 64, 3), grey, np.uint8), format="rgb24")
            for packet in s.encode(frame):
                c.mux(packet)
        for packet in s.encode():
            c.mux(packet)
    return path


def test_joined_video_is_as_long_as_its_clips_and_keeps_their_format(tmp_path):
    a = make_clip(tmp_path / "a.mp4", 10, 30)
    b = make_clip(tmp_path / "b.mp4", 5, 220)
    seconds = join([a, b], tmp_path / "ab.mp4")
    info = probe(tmp_path / "ab.mp4")
    assert seconds == pytest.approx(15 / 15, abs=1e-6)
    assert (info.width, info.height, info.codec, info.pix_fmt) == (64, 48, "h264", "yuv420p")
    assert info.frames == 15 and info.duration == pytest.approx(1.0, abs=1e-6)
    with av.open(str(tmp_path / "ab.mp4")) as c:
        greys = [float(f.to_ndarray(format="gray").mean()) for f in c.decode(video=0)]
    assert greys[9] < 100 < greys[10]  # the second clip starts where the first ends


def test_joining_nothing_is_an_error(tmp_path):
    with pytest.raises(ValueError, match="no clips"):
        join([], tmp_path / "none.mp4")


def ffprobe_chapters(path: Path) -> list[tuple[float, float, str]]:
    """The chapters a player lists, as ffprobe reads them (not PyAV, which wrote them)."""
    import json
    import subprocess

    done = subprocess.run(["ffprobe", "-v", "error", "-show_chapters", "-of", "json", str(path)],
                          capture_output=True, text=True, check=True)
    return [(float(c["start_time"]), float(c["end_time"]), c["tags"]["title"])
            for c in json.loads(done.stdout)["chapters"]]


def test_chapter_marks_are_written_where_each_clip_starts_with_its_title(tmp_path):
    from attention_video.attncore.chapters import chapter
    from attention_video.pipeline.outputs.chapters import chapter_marks
    from attention_video.pipeline.outputs.formats import write_webm
    from attention_video.pipeline.records import ChapterResult

    a = make_clip(tmp_path / "a.mp4", 10, 30)
    b = make_clip(tmp_path / "b.mp4", 5, 220)
    results = [ChapterResult("input", 10 / 15, [], title="1 · Input: words → rows"),
               ChapterResult("factor", 5 / 15, [])]  # kept before titles were recorded
    marks = chapter_marks(results, "en")
    assert marks == [(0.0, 10 / 15, "1 · Input: words → rows"),
                     (10 / 15, 1.0, f"3 · {chapter('factor').title}")]
    join([a, b], tmp_path / "ab.mp4", marks=marks)
    found = ffprobe_chapters(tmp_path / "ab.mp4")
    assert [t for *_, t in found] == [t for *_, t in marks]
    times = [t for s, e, _ in found for t in (s, e)]
    assert times == pytest.approx([t for s, e, _ in marks for t in (s, e)], abs=1e-3)
    write_webm(tmp_path / "ab.mp4", tmp_path / "ab.webm")
    assert ffprobe_chapters(tmp_path / "ab.webm") == found  # the WebM keeps them


FFPROBE = shutil.which("ffprobe")
CUES = [(0.0, 0.5, "one"), (0.5, 1.0, "two")]


def dispositions(path: Path) -> dict[str, int]:
    """The subtitle track's default and forced flags, as FFmpeg reads them (PyAV: the same
    libavformat as ffprobe and mpv)."""
    with av.open(str(path)) as c:
        d = c.streams.subtitles[0].disposition
    return {"default": int(bool(d & av.stream.Disposition.default)),
            "forced": int(bool(d & av.stream.Disposition.forced))}


def ffprobe_dispositions(path: Path) -> dict[str, int]:
    out = subprocess.run([FFPROBE, "-v", "error", "-select_streams", "s", "-show_streams",
                          "-of", "json", str(path)], capture_output=True, text=True,
                         check=True).stdout
    (stream,) = json.loads(out)["streams"]
    return {k: stream["disposition"][k] for k in ("default", "forced")}


@pytest.mark.parametrize("container", ["mp4", "mov"])
def test_a_subtitle_track_muxed_off_reads_back_off(tmp_path, container):
    """--captions both: the track is listed but neither default nor forced. FFmpeg's muxer
    enables the only subtitle track whatever its flag (mpv then showed it over the burned
    captions); join switches it off in the track header."""
    clip = make_clip(tmp_path / "a.mp4", 15, 30)
    out = tmp_path / f"off.{container}"
    join([clip], out, container=container, cues=CUES, cues_on=False)
    assert dispositions(out) == {"default": 0, "forced": 0}
    if FFPROBE:
        assert ffprobe_dispositions(out) == {"default": 0, "forced": 0}


def test_a_subtitle_track_muxed_on_stays_default(tmp_path):
    """--captions soft: the one caption track is shown by default."""
    clip = make_clip(tmp_path / "a.mp4", 15, 30)
    join([clip], tmp_path / "on.mp4", cues=CUES, cues_on=True)
    assert dispositions(tmp_path / "on.mp4") == {"default": 1, "forced": 0}
    if FFPROBE:
        assert ffprobe_dispositions(tmp_path / "on.mp4") == {"default": 1, "forced": 0}
