"""More formats from the finished MP4 (pipeline.outputs.formats: GIF, WebM, by PyAV, no re-render)
and the WebVTT captions written beside the SRT (pipeline.outputs.subtitles)."""

from __future__ import annotations

import re
from pathlib import Path

import av
import numpy as np
import pytest
from attention_video.pipeline.cache.limits import human_size
from attention_video.pipeline.outputs import formats
from attention_video.pipeline.outputs.subtitles import to_srt, to_vtt


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

    from tests.test_pipeline import fake_join, fake_render

    monkeypatch.setattr(render_mod, "render_chapter", fake_render)
    monkeypatch.setattr(render_mod, "join", fake_join)
    monkeypatch.setenv("ATTENTION_CACHE_DIR", str(tmp_path / "cache"))
    s = Settings(weights="random", sentence="cats drink", chapters=(1, 2),
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
          "--format", "gif,webm"])
    err = capsys.readouterr().err
    assert f"gif:       {out.with_suffix('.gif')}" in err and "webm:" in err
    video = decoded(out)
    codec, w, h, n = decoded(out.with_suffix(".gif"))
    assert codec == "gif" and h == 480 and n > 0
    codec, w, h, n = decoded(out.with_suffix(".webm"))
    assert (w, h) == video[1:3] and n == video[3]
    assert out.with_suffix(".vtt").read_text(encoding="utf-8").startswith("WEBVTT")
