"""Real low-quality renders: the video file, the chapter cache, and interruption.

These write frames, so they are marked slow; they still run in CI (a few chapters at
480p15 on a two-word sentence).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import av
import numpy as np
import pytest
from attention_video.attncore import Settings
from attention_video.pipeline.cache.store import ChapterCache
from attention_video.pipeline.outputs.video import probe
from attention_video.pipeline.run.render import render_video

from tests.support.paths import ROOT

pytestmark = [pytest.mark.slow, pytest.mark.alone]  # alone: it times a render's stop or start
BASE = dict(sentence="cats drink milk", quality="l", chapters=(1, 2), weights="random")


@pytest.fixture(scope="module")
def first_render(tmp_path_factory):
    """One real render shared by the tests below: (settings, result, cache)."""
    root = tmp_path_factory.mktemp("render")
    cache = ChapterCache(root / "cache")
    (root / "out").mkdir()
    s = Settings(**BASE, output=str(root / "out" / "video.mp4"))
    return s, render_video(s, jobs=2, cache=cache), cache


def test_video_is_h264_yuv420p_at_the_quality_and_as_long_as_its_chapters(first_render):
    s, result, _ = first_render
    info = probe(result.video)
    assert (info.width, info.height, info.codec, info.pix_fmt) == (854, 480, "h264", "yuv420p")
    assert info.fps == pytest.approx(15, abs=0.01)
    expected = sum(c.duration for c in result.chapters)
    assert abs(info.duration - expected) <= 2 / 15
    assert info.frames == pytest.approx(expected * 15, abs=2)


def test_frames_are_not_blank(first_render):
    _, result, _ = first_render
    with av.open(str(result.video)) as c:
        frames = [f.to_ndarray(format="gray") for i, f in enumerate(c.decode(video=0))
                  if i % 40 == 20]
    assert len(frames) >= 3
    assert max(float(np.std(f)) for f in frames) > 10  # text on a plain background


def test_subtitles_sit_beside_the_video_and_cover_its_length(first_render):
    """(--captions soft: burned captions, the default, write no sidecar.)"""
    s, _, cache = first_render
    result = render_video(s.replace(captions="soft"), jobs=2, cache=cache)
    assert result.subtitles == result.video.with_suffix(".srt")
    text = result.subtitles.read_text(encoding="utf-8")
    assert text.startswith("1\n00:00:0") and " --> " in text
    assert "The sentence is split into 3 tokens" in text


def test_a_rerun_with_nothing_changed_renders_nothing(first_render):
    s, _, cache = first_render
    again = render_video(s, jobs=2, cache=cache)
    assert all(c.cached for c in again.chapters)
    assert again.seconds < 5


def test_changing_the_followed_word_rerenders_only_the_chapters_that_show_it(first_render):
    s, _, cache = first_render
    r = render_video(s.replace(query="drink"), jobs=2, cache=cache)
    cached = {c.chapter: c.cached for c in r.chapters}
    assert cached == {"input": True, "linear": False}


def test_changing_the_theme_rerenders_every_chapter(first_render):
    s, _, cache = first_render
    r = render_video(s.replace(theme="light", chapters=(1,)), jobs=1, cache=cache)
    assert not r.chapters[0].cached


def test_no_cache_renders_again(first_render):
    s, _, cache = first_render
    r = render_video(s.replace(chapters=(1,)), jobs=1, cache=cache, use_cache=False)
    assert not r.chapters[0].cached


def test_a_truncated_cache_entry_is_rendered_again(first_render):
    s, _, cache = first_render
    one = s.replace(chapters=(1,))
    clip = render_video(one, jobs=1, cache=cache).chapters[0].clip
    data = clip.read_bytes()
    clip.write_bytes(data[: len(data) // 2])
    r = render_video(one, jobs=1, cache=cache)
    assert not r.chapters[0].cached
    assert probe(r.video).frames > 0


def _folder_for(path: Path) -> None:
    path.unlink()
    (path / "inside").mkdir(parents=True)


DAMAGED = {  # what blocked every render before, until the entry was found by hand
    "clip-is-a-folder": lambda clip, meta: _folder_for(clip),  # "Is a directory: …/tmp/…"
    "record-is-a-folder": lambda clip, meta: _folder_for(meta),  # named ".<key>.….json.part"
    "result-null": lambda clip, meta: meta.write_text(  # "this is a bug"
        json.dumps(dict(json.loads(meta.read_text()), result=None))),
}


@pytest.mark.parametrize("damage", DAMAGED)
def test_a_damaged_cache_entry_is_rendered_again_and_replaced(first_render, damage):
    s, _, cache = first_render
    one = s.replace(chapters=(1,))
    clip = render_video(one, jobs=1, cache=cache).chapters[0].clip
    DAMAGED[damage](clip, cache.meta_path(clip.stem))
    said: list[str] = []
    r = render_video(one, jobs=1, cache=cache, progress=said.append)
    assert not r.chapters[0].cached and probe(r.video).frames > 0
    warnings = [line for line in said if "unusable" in line]
    assert len(warnings) == 1 and "rendering it again and replacing it" in warnings[0]
    again = render_video(one, jobs=1, cache=cache)
    assert again.chapters[0].cached


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_interrupting_a_render_keeps_the_earlier_output(tmp_path, sig):
    out = tmp_path / "video.mp4"
    out.write_bytes(b"earlier video")
    env = dict(os.environ, ATTENTION_CACHE_DIR=str(tmp_path / "cache"))
    p = subprocess.Popen([sys.executable, str(ROOT / "render.py"), "cats drink milk", "-q", "l",
                          "--chapters", "2", "--weights", "random", "-o", str(out)], cwd=tmp_path, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    scratch = tmp_path / "cache" / "tmp"
    while time.time() < deadline and not (scratch.exists() and any(scratch.iterdir())):
        time.sleep(0.2)  # wait until the render has started
    time.sleep(2.0)
    p.send_signal(sig)
    try:
        _, err = p.communicate(timeout=15)
    except subprocess.TimeoutExpired:
        p.kill()
        pytest.fail("the render did not stop within 15 s of Ctrl-C")
    assert p.returncode != 0
    assert "Interrupted" in err and "Traceback" not in err
    assert out.read_bytes() == b"earlier video"
    assert [f.name for f in tmp_path.iterdir() if f.name.endswith(".part")] == []
    assert not any(scratch.iterdir())


def test_hostile_text_renders_for_real(tmp_path):
    """Quotes, markup and LaTeX specials, emoji, Arabic and CJK in one real render."""
    out = tmp_path / "hostile.mp4"
    s = Settings(sentence='I can\'t say "no" <b>&amp; $%_^\\{} 👍 مرحبا 日本', weights="random",
                 quality="l", chapters=(1,), output=str(out))
    r = render_video(s, jobs=1, cache=ChapterCache(tmp_path / "cache"))
    info = probe(r.video)
    assert (info.width, info.height) == (854, 480) and info.frames > 30
