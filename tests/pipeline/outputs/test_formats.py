"""More formats from the finished MP4 (pipeline.outputs.formats: GIF, WebM, by PyAV, no re-render)
and the WebVTT captions written beside the SRT (pipeline.outputs.subtitles)."""

from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pytest
from attention_video.fastmanim.encoder import HeldFrameEncoder
from attention_video.pipeline.cache.limits import human_size
from attention_video.pipeline.outputs import formats
from attention_video.pipeline.outputs.subtitles import mov_text_payload, to_srt, to_vtt
from attention_video.pipeline.outputs.video import frame_at, join, probe
from manim._config.video_encoder import VideoEncoderSpec


def make_clip(path: Path, frames: int, size: tuple[int, int] = (64, 48), fps: int = 15) -> Path:
    """A synthetic H.264 clip: a bar that moves, so frames differ."""
    w, h = size
    with av.open(str(path), "w", format="mp4") as c:
        s = c.add_stream("libx264", rate=fps)
        s.width, s.height, s.pix_fmt = w, h, "yuv420p"
        for i in range(frames):
            image = np.full((h, w, 3), 30, np.uint8)
            image[:, (i * 4) % w:(i * 4) % w + 8] = (200, 120, 40)
            for p in s.encode(av.VideoFrame.from_ndarray(image, format="rgb24")):
                c.mux(p)
        for p in s.encode():
            c.mux(p)
    return path


def decoded(path: Path) -> tuple[str, int, int, int]:
    with av.open(str(path)) as c:
        s = c.streams.video[0]
        n = sum(1 for _ in c.decode(s))
        return s.codec_context.name, s.width, s.height, n


def test_formats_parse_and_the_mp4_is_always_made():
    assert formats.parse_formats("gif") == ("mp4", "gif")
    assert formats.parse_formats("webm, GIF,mp4") == ("mp4", "gif", "webm")
    with pytest.raises(ValueError, match="'avi' is not a format; allowed: mp4, gif, webm"):
        formats.parse_formats("gif,avi")
    with pytest.raises(ValueError):
        formats.parse_formats(" , ")


def test_gif_and_webm_come_from_the_mp4_beside_it(tmp_path):
    video = make_clip(tmp_path / "talk.mp4", 30)  # 2 s at 15 fps
    made = formats.derive_formats(video, ("mp4", "gif", "webm"))
    assert [(d.format, d.path) for d in made] == [("gif", tmp_path / "talk.gif"),
                                                  ("webm", tmp_path / "talk.webm")]
    assert all(d.size == d.path.stat().st_size > 0 for d in made)
    codec, w, h, n = decoded(tmp_path / "talk.gif")
    assert (codec, w, h) == ("gif", 64, 48) and n == 2 * formats.GIF_FPS  # never scaled up
    codec, w, h, n = decoded(tmp_path / "talk.webm")
    assert (codec, w, h, n) in {("vp9", 64, 48, 30), ("libvpx-vp9", 64, 48, 30)}
    assert (tmp_path / "talk.gif").read_bytes()[:6] == b"GIF89a"
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".part")]


def test_gif_is_480p_by_default_and_keeps_the_aspect(tmp_path):
    video = make_clip(tmp_path / "big.mp4", 6, size=(1280, 720))
    formats.derive_formats(video, ("gif",))
    _, w, h, _ = decoded(tmp_path / "big.gif")
    assert (w, h) == (854, 480)
    assert not (tmp_path / "big.webm").exists()


def test_a_failed_conversion_leaves_no_partial_file_and_the_earlier_one(tmp_path):
    bad = tmp_path / "broken.mp4"
    bad.write_bytes(b"not a video")
    (tmp_path / "broken.gif").write_bytes(b"earlier")
    with pytest.raises(av.FFmpegError):
        formats.derive_formats(bad, ("gif",))
    assert (tmp_path / "broken.gif").read_bytes() == b"earlier"
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".part")]


def test_sizes_read_as_people_write_them():
    assert human_size(512) == "512 B"
    assert human_size(2_345_678) == "2.3 MB"


def test_vtt_has_its_header_and_dotted_cue_timings():
    cues = [(0.0, 1.0, "one"), (1.0, 1.0, "empty"), (1.0, 3661.5, "a < b & c\n\nnext")]
    vtt = to_vtt(cues)
    assert vtt.startswith("WEBVTT\n\n")
    assert "00:00:00.000 --> 00:00:01.000\none\n" in vtt
    assert "00:00:01.000 --> 01:01:01.500\na &lt; b &amp; c\nnext\n" in vtt
    assert "empty" not in vtt  # zero-length cues dropped, as in the SRT
    blocks = vtt.strip().split("\n\n")
    assert len(blocks) == 3 and all(re.match(r"\d\d:\d\d:\d\d\.\d{3} --> ", b) for b in blocks[1:])
    assert len(blocks) - 1 == to_srt(cues).count(" --> ")


def test_the_video_gets_its_vtt_beside_the_srt(tmp_path, monkeypatch):
    from attention_video.attncore import Settings
    from attention_video.pipeline.run import render as render_mod
    from attention_video.pipeline.run.workers import InlineExecutor

    from tests.pipeline.run.test_pipeline import fake_join, fake_render

    monkeypatch.setattr(render_mod, "render_chapter", fake_render)
    monkeypatch.setattr(render_mod, "join", fake_join)
    monkeypatch.setenv("ATTENTION_CACHE_DIR", str(tmp_path / "cache"))
    s = Settings(weights="random", sentence="cats drink", chapters=(1, 2), captions="soft",
                 output=str(tmp_path / "v.mp4"))
    result = render_mod.render_video(s, executor=InlineExecutor())
    assert result.captions == tmp_path / "v.vtt"
    vtt = result.captions.read_text(encoding="utf-8")
    assert vtt.startswith("WEBVTT") and "00:00:02.000 --> 00:00:04.000\ncaption 2" in vtt


@pytest.mark.slow
def test_a_real_render_gives_gif_and_webm_in_one_run(tmp_path, capsys):
    from attention_video.pipeline.commands.cli import main

    out = tmp_path / "talk.mp4"
    main(["The black cat drank the milk", "-q", "l", "--chapters", "summary", "-o", str(out),
          "--format", "gif,webm", "--captions", "soft"])
    said = capsys.readouterr()
    assert str(out.with_suffix(".gif")) in said.out.splitlines() and "webm:" in said.err
    video = decoded(out)
    codec, w, h, n = decoded(out.with_suffix(".gif"))
    assert codec == "gif" and h == 480 and n > 0
    codec, w, h, n = decoded(out.with_suffix(".webm"))
    assert (w, h) == video[1:3] and n == video[3]
    assert out.with_suffix(".vtt").read_text(encoding="utf-8").startswith("WEBVTT")


# ---- timing: the same picture at the same time as the MP4 ------------------------------
GRID = 30  # frames a second of the synthetic lecture's timestamp grid


def held_lecture(folder: Path) -> Path:
    """A 320×240 clip made as the renderer makes one (fastmanim.encoder's segments, joined):
    moving stretches of one frame per 1/30 s, and holds stored once and shown for up to
    2 s, the video ending on one. Every picture is different (a bar at its own place)."""
    plan = [[(i, 1) for i in range(12)], [(12, 45)], [(13 + i, 1) for i in range(9)],
            [(22, 60)], [(23, 1), (24, 1)], [(25, 30)]]  # segments of (picture, periods)
    spec = VideoEncoderSpec("mp4", "libx264", "yuv420p", 320, 240, Fraction(GRID),
                            (("crf", "18"), ("preset", "veryfast")))
    segments = []
    for k, frames in enumerate(plan):
        e = HeldFrameEncoder(target=folder / f"segment{k}.mp4", spec=spec)
        for n, periods in frames:
            image = np.full((240, 320, 4), 255, np.uint8)
            image[..., :3] = 30
            image[80:160, 10 * n:10 * n + 30, :3] = (250, 200, 40)
            e.write_frame(image, repeat=periods)
        e.finish()
        segments.append(folder / f"segment{k}.mp4")
    join(segments, folder / "held.mp4")
    return folder / "held.mp4"


def shown(path: Path) -> list[tuple[float, np.ndarray]]:
    """Every frame of a file with the time it starts, decoded from the start by PyAV."""
    with av.open(str(path)) as c:
        return [(float(f.pts * f.time_base), f.to_ndarray(format="rgb24").astype(np.int16))
                for f in c.decode(video=0)]


def at(frames: list[tuple[float, np.ndarray]], seconds: float) -> np.ndarray:
    """The picture on screen `seconds` in: the last frame that starts at or before it."""
    return [f for t, f in frames if t <= seconds + 1e-6][-1]


def which(picture: np.ndarray, sources: list[np.ndarray]) -> int:
    """The index of the source picture `picture` is an encoding of (the nearest)."""
    return int(np.argmin([np.abs(picture - s).mean() for s in sources]))


TIMES = [0.0, 0.02, 0.1, 0.39, 0.4, 0.41, 1.0, 1.8, 1.89, 1.9, 1.95, 2.1, 2.2, 2.3,
         3.0, 4.19, 4.2, 4.22, 4.25, 4.27, 4.3, 5.0, 5.25]  # moving, inside holds, across their ends


@pytest.fixture(scope="module")
def timed(tmp_path_factory) -> tuple[Path, dict[str, Path]]:
    folder = tmp_path_factory.mktemp("timed")
    video = held_lecture(folder)
    made = {d.format: d.path for d in formats.derive_formats(video, ("gif", "webm"))}
    return video, made


def test_the_webm_shows_the_mp4s_picture_at_every_time_holds_included(timed):
    """The WebM is encoded on the MP4's frame grid (not its average rate, which held frames
    make low) and each frame lasts as long: decoded by PyAV, from the start and by a
    player's seek, it shows at every time the picture the MP4 shows, and ends with it."""
    video, made = timed
    mp4, webm = shown(video), shown(made["webm"])
    sources = [f for _, f in mp4]
    assert [round(t, 3) for t, _ in webm] == [round(t, 3) for t, _ in mp4]
    for t in TIMES:
        expected = which(at(mp4, t), sources)
        assert which(at(webm, t), sources) == expected, f"{t} s"
        seeked = frame_at(made["webm"], t).astype(np.int16)
        assert which(seeked, sources) == expected, f"{t} s, after a seek"
    assert probe(made["webm"]).duration == pytest.approx(probe(video).duration, abs=0.002)


def test_the_gif_shows_at_each_frames_start_the_mp4s_picture_then(timed):
    """At 10 frames a second, each GIF frame is the picture the MP4 shows when that GIF
    frame starts (never one early), held frames repeated for their whole hold."""
    video, made = timed
    mp4, gif = shown(video), shown(made["gif"])
    sources = [f for _, f in mp4]
    assert [round(t, 3) for t, _ in gif] == [round(k / formats.GIF_FPS, 3)
                                             for k in range(len(gif))]
    assert probe(video).duration == pytest.approx(158 / GRID)
    assert len(gif) == round(158 / GRID * formats.GIF_FPS)
    for t in TIMES:
        start = int(t * formats.GIF_FPS + 1e-6) / formats.GIF_FPS
        assert which(at(gif, t), sources) == which(at(mp4, start), sources), f"{t} s"


# Plain-text maths a subtitle file could hold typeset: a subscript or superscript Unicode
# has small letters for ("_k", "^T"), written raw.
RAW_MATHS = re.compile(r"(?<![^\W\d_])[A-Za-z]_[0-9aehijklmnoprstuvx]+\b|\^T\b")


def test_subtitles_write_maths_in_unicode_where_it_has_the_letters():
    """SRT and WebVTT hold no markup: Kᵀ and dₖ in Unicode's small letters; W_Q as written
    everywhere (Unicode has no small capital Q); a word such as snake_case as it is."""
    cues = [(0.0, 2.0, "softmax(Q·K^T / √d_k) · V with Q = X · W_Q in snake_case")]
    for text in (to_srt(cues), to_vtt(cues), mov_text_payload(cues[0][2]).decode("utf-8", "replace")):
        assert "softmax(Q·Kᵀ / √dₖ) · V with Q = X · W_Q in snake_case" in text
        assert not RAW_MATHS.search(text)
