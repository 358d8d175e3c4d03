"""fastmanim.encoder.ChapterStream: a chapter's animations written as parts of one x264
stream (one encoder, not one per animation). Each part starts on a keyframe, a hold is still
one picture shown for its whole length and looks as good as Manim's way, the parts come out
in the order Manim opened them whichever thread writes first, and a failed part stops the
stream instead of hanging it."""

from __future__ import annotations

import threading
import time
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pytest
from attention_video.fastmanim.encoder import ChapterStream, HeldFrameEncoder
from attention_video.pipeline.outputs.video import frame_at, join, probe
from manim._config.video_encoder import VideoEncoderSpec

W, H, FPS = 320, 240, 30
RED, GREEN, BLUE = (220, 40, 40), (40, 200, 60), (40, 60, 220)


def spec() -> VideoEncoderSpec:
    return VideoEncoderSpec("mp4", "libx264", "yuv420p", W, H, Fraction(FPS),
                            (("crf", "23"), ("preset", "veryfast")))


def picture(colour: tuple[int, int, int], shift: int = 0, detail: bool = False) -> np.ndarray:
    a = np.empty((H, W, 4), np.uint8)
    a[..., :3], a[..., 3] = colour, 255
    a[100:140, (shift * 7) % (W - 30):(shift * 7) % (W - 30) + 30, :3] = 255
    if detail:  # sharp text-like detail: what a low quantiser is needed for
        rng = np.random.default_rng(0)
        a[150:230, 20:300, :3] = rng.integers(0, 2, (80, 280, 1)) * 200 + 30
    return a


PARTS = [  # (picture, repeat) pairs per animation: moving, a hold, moving, a hold, moving
    [(picture(BLUE, i), 1) for i in range(15)],
    [(picture(RED, detail=True), 60)],
    [(picture(BLUE, i), 1) for i in range(15)],
    [(picture(GREEN, detail=True), 60)],
    [(picture(BLUE, i), 1) for i in range(9)],
]


def stream_clip(folder: Path, parts=PARTS, order=None) -> Path:
    """The parts written as one ChapterStream, each on its own thread as Manim's encode
    jobs do (started in `order`, default the parts' own), then joined as a chapter is."""
    stream = ChapterStream(folder / "stream.mp4", spec())
    segments = [stream.segment(folder / f"part{i}.mp4") for i in range(len(parts))]

    def write(i: int) -> None:
        for pixels, repeat in parts[i]:
            segments[i].write_frame(pixels.copy(), repeat=repeat)
        segments[i].finish()

    threads = [threading.Thread(target=write, args=(i,)) for i in (order or range(len(parts)))]
    for t in threads:
        t.start()
        time.sleep(0.01)
    for t in threads:
        t.join(30)
    assert not any(t.is_alive() for t in threads)
    stream.close()
    out = folder / "chapter.mp4"
    join([stream.target], out)
    return out


def keyframe_times(video: Path) -> list[float]:
    with av.open(str(video)) as c:
        s = c.streams.video[0]
        return sorted(float(p.pts * s.time_base) for p in c.demux(s)
                      if p.is_keyframe and p.pts is not None)


def test_parts_are_one_stream_each_starting_on_a_keyframe(tmp_path):
    clip = stream_clip(tmp_path)
    info = probe(clip)
    assert info.duration == pytest.approx(5.3, abs=1e-6)
    assert info.frames == 159 and info.stored == 15 + 2 + 15 + 2 + 9
    assert keyframe_times(clip) == pytest.approx([0.0, 0.5, 2.5, 3.0, 5.0], abs=1e-6)
    assert not list(tmp_path.glob("part*.mp4"))  # no file per animation


def test_parts_come_out_in_the_order_they_were_opened_whichever_thread_writes_first(tmp_path):
    clip = stream_clip(tmp_path, order=[4, 3, 2, 1, 0])
    for seconds, colour in [(1.5, RED), (4.0, GREEN)]:
        assert np.abs(frame_at(clip, seconds)[20, 20].astype(int) - colour).max() <= 12


def test_a_hold_in_the_stream_looks_as_good_as_manims_way(tmp_path):
    """A hold is one stored picture (and one copy of it, shown for the rest of the hold,
    which makes x264 spend its bits on the picture). Manim's way encodes it 60 times."""
    truth = av.VideoFrame.from_ndarray(picture(RED, detail=True), format="rgba")
    truth = truth.reformat(format="yuv420p").to_ndarray(format="rgb24").astype(float)

    def psnr(video: Path, seconds: float) -> float:
        err = ((frame_at(video, seconds).astype(float) - truth) ** 2).mean()
        return 10 * np.log10(255 ** 2 / err)

    clip = stream_clip(tmp_path)
    e = HeldFrameEncoder(target=tmp_path / "each.mp4", spec=spec())
    e.holds = "each"
    for pixels, repeat in PARTS[1]:
        e.write_frame(pixels, repeat=repeat)
    e.finish()
    for seconds in (0.55, 1.5, 2.45):  # the hold's first frame, its middle and its end
        assert psnr(clip, seconds) >= psnr(tmp_path / "each.mp4", 1.0) - 0.5


def test_a_failed_part_stops_the_stream_and_the_next_part_is_not_left_waiting(tmp_path):
    stream = ChapterStream(tmp_path / "stream.mp4", spec())
    first, second = stream.segment(tmp_path / "a.mp4"), stream.segment(tmp_path / "b.mp4")
    errors: list[BaseException] = []

    def write_second() -> None:
        try:
            second.write_frame(picture(BLUE), repeat=1)
        except RuntimeError as error:
            errors.append(error)
        second.finish()

    t = threading.Thread(target=write_second)
    t.start()
    first.write_frame(picture(RED), repeat=1)
    first.abort()  # as Manim's encode job does when its segment fails
    t.join(10)
    assert not t.is_alive() and errors, "the second part must fail, not wait for ever"
    with pytest.raises(RuntimeError, match="failed"):
        stream.close()
