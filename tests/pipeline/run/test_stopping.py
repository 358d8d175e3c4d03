"""Ctrl-C and SIGTERM stop the command at once, with chapters still queued: a real render
and a real batch in their own process, the signal sent to the whole process group (as a
terminal's Ctrl-C is) or to the main process alone (as `kill` is). Each ends within 5 s
with one line and the shell's status for the signal (130, 143), no traceback, no worker
left running, the earlier output kept and no scratch or partial file left.

Before pipeline.run.workers stopped its pool without cancelling the queued jobs, every case
printed a thread's InvalidStateError, then "Interrupted: …", and never exited."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from tests.support.paths import ROOT

pytestmark = [pytest.mark.slow, pytest.mark.alone]  # alone: it times a render's stop or start
EXIT_SECONDS = 5.0  # from the signal to the end of the process
START_SECONDS = 180.0  # until a worker renders: generous, for a loaded machine

CASES = [pytest.param(sig, target, id=f"{sig.name}-{target}")
         for sig in (signal.SIGINT, signal.SIGTERM) for target in ("group", "main")]

SENTENCE = "Ctrl C stops a video now"  # the pretrained model's: its jobs fill the pool's pipe
COURSE = """
[defaults]
weights = "random"
quality = "l"
chapters = [1, 2]

[[video]]
sentence = "cats drink milk"
output = "{out}/cats.mp4"

[[video]]
sentence = "Ctrl C stops a video now"
weights = "pretrained"
output = "{out}/ctrl.mp4"
"""


def start(args: list[str], tmp_path: Path) -> tuple[subprocess.Popen, Path]:
    """render.py in a session of its own (its process group is its id); stderr to a file."""
    err = tmp_path / "stderr.txt"
    env = dict(os.environ, ATTENTION_CACHE_DIR=str(tmp_path / "cache"))
    with open(err, "w") as f:
        p = subprocess.Popen([sys.executable, str(ROOT / "render.py"), *args], cwd=tmp_path,
                             env=env, stdout=subprocess.DEVNULL, stderr=f,
                             start_new_session=True)
    return p, err


def rendering(p: subprocess.Popen, err: Path, scratch: Path) -> list[psutil.Process]:
    """Wait until a worker process renders a chapter (it has a scratch folder); its
    worker processes then."""
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline and p.poll() is None:
        workers = psutil.Process(p.pid).children(recursive=True)
        if ("rendering" in err.read_text() and scratch.is_dir()
                and any(scratch.iterdir()) and workers):
            time.sleep(0.5)  # the worker is into its chapter
            return psutil.Process(p.pid).children(recursive=True)
        time.sleep(0.1)
    pytest.fail(f"no chapter started rendering within {START_SECONDS:.0f} s:\n{err.read_text()}")


def stop(p: subprocess.Popen, sig: signal.Signals, target: str) -> float:
    """Send the signal; the seconds until the process has ended."""
    sent = time.monotonic()
    if target == "group":
        os.killpg(p.pid, sig)
    else:
        p.send_signal(sig)
    try:
        p.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        pytest.fail(f"still running 30 s after {sig.name}")
    return time.monotonic() - sent


def assert_stopped(p, err: Path, seconds: float, sig, workers, scratch: Path) -> None:
    text = err.read_text()
    lines = [line for line in text.splitlines() if line.strip()]
    assert seconds < EXIT_SECONDS, f"{seconds:.1f} s from {sig.name} to exit\n{text}"
    assert p.returncode == 128 + sig, text
    assert lines[-1] == ("Interrupted: stopped, temporary files removed, earlier output "
                         "left as it was."), text
    for bad in ("Traceback", "Error", "FAILED", "Exception", "rendered in"):
        assert bad not in text, text  # "rendered in": it stopped with chapters still queued
    _, alive = psutil.wait_procs(workers, timeout=3)
    assert alive == [], f"workers left running: {alive}"
    assert not any(scratch.iterdir())


@pytest.mark.parametrize("sig, target", CASES)
def test_a_render_with_chapters_queued_stops_at_once(tmp_path, sig, target):
    out = tmp_path / "video.mp4"
    out.write_bytes(b"earlier video")
    p, err = start([SENTENCE, "-q", "l", "--chapters", "1,2,3", "-j", "1", "-o", str(out)],
                   tmp_path)
    scratch = tmp_path / "cache" / "tmp"
    workers = rendering(p, err, scratch)
    seconds = stop(p, sig, target)
    assert_stopped(p, err, seconds, sig, workers, scratch)
    assert out.read_bytes() == b"earlier video"
    assert [f.name for f in tmp_path.iterdir() if f.suffix in (".part", ".srt", ".vtt")] == []


@pytest.mark.parametrize("sig, target", CASES)
def test_a_batch_with_chapters_queued_stops_at_once(tmp_path, sig, target):
    (tmp_path / "cats.mp4").write_bytes(b"earlier video")
    manifest = tmp_path / "course.toml"
    manifest.write_text(COURSE.format(out=tmp_path), encoding="utf-8")
    p, err = start(["--batch", str(manifest), "-j", "1"], tmp_path)
    scratch = tmp_path / "cache" / "tmp"
    workers = rendering(p, err, scratch)
    seconds = stop(p, sig, target)
    assert_stopped(p, err, seconds, sig, workers, scratch)
    assert (tmp_path / "cats.mp4").read_bytes() == b"earlier video"
    assert not (tmp_path / "ctrl.mp4").exists()
    assert [f.name for f in tmp_path.iterdir() if f.suffix == ".part"] == []
