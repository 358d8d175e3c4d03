"""pipeline.commands.batch and --batch: a manifest's videos inherit the shared defaults and override
them, flags win over both; a bad manifest is one line; every video's chapters go through one
cache (a chapter two videos share is rendered once); a failing video is reported while the
others are made, and the exit is non-zero. The renderer and joiner are stubbed (no frames);
real renders through a Dask cluster are in test_cluster.py."""

from __future__ import annotations

from concurrent.futures import Future
from pathlib import Path

import pytest
from attention_video.attncore.chapters import number
from attention_video.pipeline.cache.store import ChapterCache
from attention_video.pipeline.commands.batch import read_manifest, render_batch, summary_table
from attention_video.pipeline.run import render as render_mod
from attention_video.pipeline.run.chapter import ChapterJob, ChapterResult
from attention_video.pipeline.run.executors import ShippedChapter, render_shipped, shares_files
from attention_video.pipeline.run.workers import InlineExecutor

from tests.pipeline.commands.test_cli import (
    run_main as run,  # (exit code, stdout, stderr) of the command
)
from tests.support.paths import ROOT


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


COURSE = """
[defaults]
weights = "random"
captions = "soft"
quality = "l"
chapters = "1-2"

[[video]]
sentence = "cats drink milk"
output = "{out}/cats.mp4"

[[video]]
sentence = "cats drink milk"
query = "cats"
chapters = [2, 1]
output = "{out}/cats-query.mp4"
"""


def test_each_video_inherits_the_defaults_and_overrides_them(tmp_path):
    manifest = write(tmp_path / "course.toml", COURSE.format(out=tmp_path))
    first, second = read_manifest(manifest)
    assert (first.settings.weights, first.settings.quality) == ("random", "l")
    assert first.settings.chapters == ("input", "linear") and first.settings.query is None
    assert second.settings.query == "cats" and second.settings.weights == "random"
    assert second.settings.chapters == ("input", "linear") and second.output == tmp_path / "cats-query.mp4"


def test_flags_win_over_the_manifest(tmp_path):
    manifest = write(tmp_path / "course.toml", COURSE.format(out=tmp_path))
    videos = read_manifest(manifest, {"quality": "m", "chapters": (3,), "query": None})
    assert [v.settings.quality for v in videos] == ["m", "m"]
    assert [v.settings.chapters for v in videos] == [("factor",), ("factor",)]
    assert [v.settings.query for v in videos] == [None, "cats"]  # None: not given


def test_a_video_may_name_a_config_file_beside_the_manifest(tmp_path):
    write(tmp_path / "shared.toml", 'language = "zh"\ntheme = "light"\n')
    manifest = write(tmp_path / "course.toml", f"""
[defaults]
weights = "random"
[[video]]
sentence = "cats drink milk"
config = "shared.toml"
theme = "dark"
output = "{tmp_path}/a.mp4"
""")
    (video,) = read_manifest(manifest)
    assert video.settings.language == "zh"  # from the config file
    assert video.settings.theme == "dark"  # the video's own key wins over its config file


def test_the_example_course_is_a_valid_manifest():
    videos = read_manifest(ROOT / "examples" / "course.toml")
    assert len(videos) >= 2 and len({v.output for v in videos}) == len(videos)


@pytest.mark.parametrize("text, expect", [
    ("[[video]]\nsentence = 'a b'\nquality = 'x'\n",
     r"video 1: quality: 'x' is not allowed; choose one of: l, m, h, k"),
    ("[defaults]\nthem = 'dark'\n[[video]]\nsentence = 'a b'\n",
     r"\[defaults\]: them: unknown setting; did you mean 'theme'\?"),
    ("[[video]]\nsentence = 'a b'\n[[video]]\nquery = 'x'\n",
     "video 2: sentence: every video needs a sentence"),
    ("[[video]]\nsentence = 'a b'\noutput = 'same.mp4'\n[[video]]\nsentence = 'c d'\n"
     "output = 'same.mp4'\n", "video 2: output: its video same.mp4 would also be video 1's video"),
    ("[[video]]\nsentence = 'a b'\noutput = 'x.mp4'\n[[video]]\nsentence = 'c d'\n"
     "output = 'x.mov'\n", "video 2: output: its subtitles x.srt would also be video 1's subtitles"),
    ("[defaults]\nquality = 'l'\n", "has no videos; add one \\[\\[video\\]\\] table"),
    ("[video]\nsentence = 'a b'\n", r"write \[\[video\]\] above its keys"),
    ("sentence = 'a b'\n", "'sentence' is not a section"),
    ("[[video]]\nsentence = 'a b'\nchapters = '1-99'\n", "video 1: chapters: 99 is not a chapter"),
    ("[[video]]\nsentence = 'a b'\nconfig = 'missing.toml'\n", "missing.toml does not exist"),
    ("[[video]\n", "is not valid TOML"),
])
def test_a_bad_manifest_is_one_line_naming_the_video_and_key(tmp_path, capsys, text, expect):
    manifest = write(tmp_path / "course.toml", text)
    code, out, err = run(["--batch", str(manifest)], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert err.startswith(f"Error: batch {manifest}") and "Traceback" not in err
    import re

    assert re.search(expect, err), err


def test_a_missing_manifest_is_one_line(tmp_path, capsys):
    code, _, err = run(["--batch", str(tmp_path / "nope.toml")], capsys)
    assert code == 2 and err == f"Error: batch {tmp_path / 'nope.toml'}: does not exist\n"


@pytest.mark.parametrize("extra, named", [
    (["a sentence"], "a sentence"), (["-o", "x.mp4"], "-o"), (["--dry-run"], "--dry-run"),
    (["--slides"], "--slides"), (["--config", "c.toml"], "--config"),
    (["--init-config", "s.toml"], "--init-config"),
])
def test_batch_refuses_what_each_video_has_its_own_of(tmp_path, capsys, extra, named):
    manifest = write(tmp_path / "course.toml", COURSE.format(out=tmp_path))
    code, _, err = run(["--batch", str(manifest), *extra], capsys)
    assert code == 2 and "--batch cannot be combined with" in err and named in err


@pytest.mark.parametrize("address", ["nonsense", "tcp://host", "tcp://host:99999", ":8786"])
def test_a_scheduler_address_needs_a_host_and_port(capsys, address):
    code, _, err = run(["a b", "--scheduler", address], capsys)
    assert code == 2 and "is not a scheduler address" in err


@pytest.mark.slow
def test_a_scheduler_nobody_listens_on_is_one_line(tmp_path, capsys, monkeypatch):
    import socket

    from attention_video.pipeline.run import executors

    monkeypatch.setattr(executors, "CONNECT_SECONDS", 1)
    with socket.socket() as s:  # a free port: bound, never listened on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        code, _, err = run(["cats drink milk", "--weights", "random", "-o",
                            str(tmp_path / "v.mp4"), "--scheduler", f"tcp://127.0.0.1:{port}"],
                           capsys)
    assert code == 1 and len(err.strip().splitlines()) == 1, err
    assert f"Error: --scheduler tcp://127.0.0.1:{port}: cannot connect to a Dask scheduler" in err
    assert not (tmp_path / "v.mp4").exists()


def serve(reply: bytes | None):
    """A TCP server on a free port in a thread: each connection gets `reply` and is closed
    (None: it gets nothing and is held open). Returns the port and a function that stops
    the server."""
    import socket
    import threading

    server = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            if reply is None:
                held.append(conn)
            else:
                with conn:
                    conn.sendall(reply)

    threading.Thread(target=accept, daemon=True).start()

    def close() -> None:
        server.close()
        for conn in held:
            conn.close()

    return server.getsockname()[1], close


@pytest.mark.slow
@pytest.mark.parametrize("reply, words", [
    (None, "something accepts connections there but did not answer as a Dask scheduler "
           "within 1 s"),
    (b"HTTP/1.0 400 Bad Request\r\nContent-Length: 0\r\n\r\n",
     "what answers there is not a Dask scheduler"),
    (b"SSH-2.0-OpenSSH_9.2\r\n", "what answers there is not a Dask scheduler"),
    (b"", "what answers there is not a Dask scheduler"),
], ids=["silent", "http", "ssh", "hangs-up"])
def test_a_server_that_is_not_a_scheduler_is_one_line_within_the_limit(tmp_path, capsys,
                                                                       monkeypatch, reply,
                                                                       words):
    """Before, a port that accepts and never answers held the client 120 s, then
    ConnectionResetError; an HTTP server gave 11 lines ("this is a bug", a traceback
    from Client.__del__, TimeoutError) after 20 s."""
    import time

    from attention_video.pipeline.run import executors

    monkeypatch.setattr(executors, "CONNECT_SECONDS", 1)
    port, close = serve(reply)
    try:
        started = time.monotonic()
        code, _, err = run(["cats drink milk", "--weights", "random", "-o",
                            str(tmp_path / "v.mp4"), "--scheduler", f"tcp://127.0.0.1:{port}"],
                           capsys)
        seconds = time.monotonic() - started
    finally:
        close()
    assert code == 1 and len(err.strip().splitlines()) == 1, err
    assert err.startswith(f"Error: --scheduler tcp://127.0.0.1:{port}: {words}"), err
    assert seconds < 5 and not (tmp_path / "v.mp4").exists()


rendered: list[tuple[str, int]] = []


def fake_render(fail: str | None = None):
    def render_chapter(job: ChapterJob) -> ChapterResult:
        if job.chapter == fail:
            raise RuntimeError("boom in the scene")
        n = number(job.chapter)
        rendered.append((job.trace.query_tokens[job.trace.focus].text, n))
        Path(job.clip).write_bytes(f"[{job.settings.sentence} ch{n}]".encode())
        return ChapterResult(job.chapter, 2.0, [(0.0, 2.0, f"caption {n}")],
                             seconds=0.5, clip=job.clip)
    return render_chapter


def fake_join(clips, out, **kwargs):
    Path(out).write_bytes(b"".join(Path(c).read_bytes() for c in clips))
    return 2.0 * len(clips)


@pytest.fixture
def stubbed(monkeypatch, tmp_path):
    rendered.clear()
    monkeypatch.setattr(render_mod, "render_chapter", fake_render())
    monkeypatch.setattr(render_mod, "join", fake_join)
    monkeypatch.setattr(render_mod, "LocalPool", InlineExecutor)
    monkeypatch.setenv("ATTENTION_CACHE_DIR", str(tmp_path / "cache"))
    return monkeypatch


def test_a_chapter_two_videos_share_is_rendered_once(stubbed, tmp_path):
    """Chapter 1 does not show the followed word, so both videos take the same clip;
    chapter 2 does, so each renders its own."""
    videos = read_manifest(write(tmp_path / "c.toml", COURSE.format(out=tmp_path)))
    rows = render_batch(videos)
    assert sorted(rendered) == [("cats", 2), ("milk", 1), ("milk", 2)]
    assert [(r.rendered, r.cached, r.error) for r in rows] == [(2, 0, None), (1, 1, None)]
    assert (tmp_path / "cats.mp4").read_bytes() == b"[cats drink milk ch1][cats drink milk ch2]"
    assert (tmp_path / "cats-query.srt").read_text(encoding="utf-8").count("caption") == 2
    again = render_batch(read_manifest(tmp_path / "c.toml"))
    assert [(r.rendered, r.cached) for r in again] == [(0, 2), (0, 2)]  # one shared cache
    assert len(rendered) == 3


def test_a_failing_video_is_reported_and_the_others_are_made(stubbed, tmp_path, capsys):
    manifest = write(tmp_path / "c.toml", COURSE.format(out=tmp_path) + f"""
[[video]]
sentence = "dogs eat bones"
query = "cats"
output = "{tmp_path}/dogs.mp4"

[[video]]
sentence = "birds sing songs"
output = "{tmp_path}/birds.mp4"
""")
    code, out, err = run(["--batch", str(manifest)], capsys)
    assert code == 1
    lines = out.splitlines()
    assert lines[0].split() == ["#", "video", "chapters", "time", "output"]
    assert "3  dogs eat bones" in lines[3] and "FAILED: query: 'cats' is not in the sentence" in lines[3]
    assert lines[4].endswith(str(tmp_path / "birds.mp4")) and "2 rendered, 0 cached" in lines[4]
    assert lines[-1].startswith("batch: 3 of 4 videos made, 1 failed;")
    assert "[3] FAILED: query: 'cats'" in err and "Traceback" not in err + out
    assert err.splitlines()[-1].startswith("Error: 1 of 4 videos failed (video 3: see the table)")
    for name in ("cats", "cats-query", "birds"):
        assert (tmp_path / f"{name}.mp4").exists()
    assert not (tmp_path / "dogs.mp4").exists()


def test_a_failing_chapter_fails_only_the_videos_that_need_it(stubbed, tmp_path):
    stubbed.setattr(render_mod, "render_chapter", fake_render(fail="linear"))
    manifest = write(tmp_path / "c.toml", COURSE.format(out=tmp_path) + f"""
[[video]]
sentence = "birds sing songs"
chapters = [1]
output = "{tmp_path}/birds.mp4"
""")
    rows = render_batch(read_manifest(manifest))
    assert [r.error is None for r in rows] == [False, False, True]
    assert "chapter 2 (linear layers) failed: RuntimeError: boom in the scene" in rows[0].error
    assert rows[2].output == tmp_path / "birds.mp4" and rows[2].output.exists()
    assert not (tmp_path / "cats.mp4").exists()


def test_the_summary_lines_up_wide_characters():
    from attention_video.attncore import Settings
    from attention_video.pipeline.commands.batch import BatchRow, BatchVideo, _width

    rows = [BatchRow(BatchVideo(1, Settings(sentence="黑猫喝了牛奶", weights="random")),
                     rendered=2, seconds=3.25, output=Path("a.mp4")),
            BatchRow(BatchVideo(2, Settings(sentence="the cat", weights="random")),
                     cached=2, error="chapter 2 (linear layers) failed: boom")]
    table = summary_table(rows, 12.4).splitlines()
    columns = [_width(line[:line.index(" rendered") - 1]) for line in table[1:3]]
    assert columns[0] == columns[1]  # the chapters column starts at one terminal column
    assert table[1].endswith("3.2 s  a.mp4") and table[2].endswith("FAILED: chapter 2 "
                                                                     "(linear layers) failed: boom")
    assert table[3].startswith("batch: 1 of 2 videos made, 1 failed; 12 s wall time")


class ElsewhereExecutor:
    """Runs jobs at once, but like a machine without this one's files: not a local pool,
    so the pipeline asks for the clip back as bytes."""

    def submit(self, fn, *args) -> Future:
        return InlineExecutor().submit(fn, *args)

    def shutdown(self, wait: bool = True) -> None:
        raise AssertionError("the pipeline never shuts down an executor it was given")


def test_an_executor_elsewhere_sends_the_clip_back_as_bytes(stubbed, tmp_path):
    assert shares_files(InlineExecutor()) and not shares_files(ElsewhereExecutor())
    shipped = render_shipped(ChapterJob("input", *_job_parts(), clip=Path("/nowhere/chapter1.mp4")),
                             fake_render())
    assert isinstance(shipped, ShippedChapter) and shipped.clip == b"[cats drink milk ch1]"
    assert shipped.result.clip is None  # the worker's own folder is gone
    videos = read_manifest(write(tmp_path / "c.toml", COURSE.format(out=tmp_path)))
    rows = render_batch(videos, executor=ElsewhereExecutor())
    assert all(r.error is None for r in rows)
    assert (tmp_path / "cats.mp4").read_bytes() == b"[cats drink milk ch1][cats drink milk ch2]"
    cache = ChapterCache()
    assert len(list(cache.root.glob("*.mp4"))) == 3  # the shipped clips are cached here


def _job_parts():
    from attention_video.attncore import Settings, build_trace

    s = Settings(sentence="cats drink milk", weights="random", quality="l")
    return build_trace(s), s


def test_an_interrupted_batch_keeps_earlier_videos_and_leaves_no_scratch(stubbed, tmp_path,
                                                                        capsys):
    """Ctrl-C while a chapter renders: the command stops with one line and exit 130, a video
    from an earlier run at an output path is untouched and no partial file is left."""
    def interrupted(job: ChapterJob) -> ChapterResult:
        if job.chapter == "linear":
            raise KeyboardInterrupt
        return fake_render()(job)

    stubbed.setattr(render_mod, "render_chapter", interrupted)
    (tmp_path / "cats.mp4").write_bytes(b"earlier video")
    manifest = write(tmp_path / "c.toml", COURSE.format(out=tmp_path))
    code, _, err = run(["--batch", str(manifest)], capsys)
    assert code == 130 and err.splitlines()[-1].startswith("Interrupted: stopped")
    assert (tmp_path / "cats.mp4").read_bytes() == b"earlier video"
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".part")] == []
    assert list((tmp_path / "cache" / "tmp").iterdir()) == []


@pytest.mark.slow
def test_sigterm_stops_a_real_batch_and_its_workers(tmp_path):
    """A real batch in its own process, SIGTERM while chapters render: one line, exit 143,
    the worker processes end, an earlier video stays, no scratch or partial file is left."""
    import os
    import signal
    import subprocess
    import sys
    import time

    import psutil

    (tmp_path / "cats.mp4").write_bytes(b"earlier video")
    manifest = write(tmp_path / "c.toml", COURSE.format(out=tmp_path))
    env = dict(os.environ, ATTENTION_CACHE_DIR=str(tmp_path / "cache"))
    p = subprocess.Popen([sys.executable, str(ROOT / "render.py"), "--batch", str(manifest),
                          "-j", "2"], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    scratch = tmp_path / "cache" / "tmp"
    deadline = time.time() + 60
    while time.time() < deadline and not (scratch.exists() and any(scratch.iterdir())):
        time.sleep(0.2)  # the chapters are submitted
    time.sleep(2.0)
    workers = psutil.Process(p.pid).children(recursive=True)
    assert workers, "the batch started no worker process"
    p.send_signal(signal.SIGTERM)
    try:
        _, err = p.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        p.kill()
        pytest.fail("the batch did not stop within 20 s of SIGTERM")
    assert p.returncode == 143 and err.splitlines()[-1].startswith("Interrupted: stopped"), err
    _, alive = psutil.wait_procs(workers, timeout=10)
    assert alive == []
    assert (tmp_path / "cats.mp4").read_bytes() == b"earlier video"
    assert [f.name for f in tmp_path.iterdir() if f.name.endswith(".part")] == []
    assert not any(scratch.iterdir())


def test_a_refused_manifest_stays_one_line_when_the_cache_is_due_a_tidy(tmp_path, capsys,
                                                                         monkeypatch):
    """The cache's walk reports what it removed; a manifest refused before any video made
    nothing new, so nothing is tidied and the refusal is the only line."""
    from attention_video.pipeline.commands import app  # noqa: PLC0415

    monkeypatch.setattr(app, "tidy_cache", lambda limit, say: say("cache:     removed 3 entries"))
    manifest = write(tmp_path / "course.toml", "[[video]]\nsentence = 'a b'\nquality = 'x'\n")
    code, _, err = run(["--batch", str(manifest)], capsys)
    assert code == 2 and err.strip().splitlines() == [
        f"Error: batch {manifest}, video 1: quality: 'x' is not allowed; choose one of: l, m, h, k"]
