"""Renders at the same time, and renders killed outright, lose nothing: three identical
renders into one output all succeed with a valid video, and a SIGKILL of the whole
process group mid-render is followed by a successful rerun. Real renders: slow."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from attention_video.pipeline.outputs.video import probe

from tests.support.paths import ROOT

pytestmark = [pytest.mark.slow, pytest.mark.alone]  # alone: it times a render's stop or start


def command(out: Path, sentence: str = "cats drink milk") -> list[str]:
    return [sys.executable, str(ROOT / "render.py"), sentence, "-q", "l", "--chapters", "1",
            "--weights", "random", "-o", str(out), "-j", "1", "--captions", "soft"]


def start(cmd: list[str], tmp_path: Path, cache: Path) -> subprocess.Popen:
    env = dict(os.environ, ATTENTION_CACHE_DIR=str(cache))
    return subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)


@pytest.mark.parametrize("round_", [1, 2])
def test_three_identical_renders_at_once_all_succeed(tmp_path, round_):
    cache = tmp_path / "cache"  # shared, and empty: all three render and put at once
    out = tmp_path / "video.mp4"
    procs = [start(command(out), tmp_path, cache) for _ in range(3)]
    errors = []
    for p in procs:
        _, err = p.communicate(timeout=300)
        if p.returncode != 0 or "Traceback" in err or "leaked" in err:
            errors.append(err)
    assert errors == []
    info = probe(out)
    assert (info.width, info.height) == (854, 480) and info.frames > 15
    assert out.with_suffix(".srt").read_text(encoding="utf-8").strip()
    assert [f.name for f in tmp_path.iterdir() if f.name.endswith(".part")] == []


def test_three_different_renders_at_once_all_succeed(tmp_path):
    cache = tmp_path / "cache"
    sentences = ["cats drink milk", "القط يشرب الحليب", "dogs eat bones"]
    outs = [tmp_path / f"v{i}.mp4" for i in range(3)]
    procs = [start(command(o, s), tmp_path, cache) for o, s in zip(outs, sentences)]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0 and "Traceback" not in err, err
    assert all(probe(o).frames > 15 for o in outs)


def test_a_sigkill_of_the_process_group_then_a_rerun_succeeds(tmp_path):
    cache, out = tmp_path / "cache", tmp_path / "video.mp4"
    out.write_bytes(b"earlier video")
    p = start(command(out) + ["--chapters", "1,2", "-j", "2"], tmp_path, cache)
    scratch = cache / "tmp"
    deadline = time.time() + 60
    while time.time() < deadline and not (scratch.exists() and any(scratch.iterdir())):
        time.sleep(0.2)  # wait until the render has started
    time.sleep(2.0)
    os.killpg(p.pid, signal.SIGKILL)  # the command and its workers, with no clean-up
    p.communicate(timeout=30)
    assert out.read_bytes() == b"earlier video"
    rerun = start(command(out) + ["--chapters", "1,2"], tmp_path, cache)
    _, err = rerun.communicate(timeout=300)
    assert rerun.returncode == 0, err
    assert probe(out).frames > 15
