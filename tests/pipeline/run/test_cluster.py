"""Real renders on a real Dask cluster (distributed.LocalCluster, 2 worker processes, as
`dask worker` would run them): a 2-video batch comes back complete and valid; a worker
killed in the middle of a batch has its chapter rendered again elsewhere and every video is
still complete; a worker that runs other code is refused; scripts/cluster-demo.sh starts
and stops its own scheduler and workers. Short chapters at -q l keep this cheap."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from attention_video.pipeline.outputs.video import probe

from tests.pipeline.commands.test_cli import (
    run_main as run,  # (exit code, stdout, stderr) of the command
)
from tests.support.paths import ROOT

pytestmark = [pytest.mark.slow, pytest.mark.alone]  # alone: it times a render's stop or start


@pytest.fixture(scope="module")
def cluster():
    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as c:
        yield c


@pytest.fixture
def client(cluster):
    from distributed import Client

    with Client(cluster.scheduler_address, set_as_default=False) as c:
        yield c


def manifest(tmp_path: Path, sentences: list[str], chapters: str = "1") -> Path:
    videos = "".join(f'\n[[video]]\nsentence = "{s}"\noutput = "{tmp_path}/v{i}.mp4"\n'
                     for i, s in enumerate(sentences))
    path = tmp_path / "course.toml"
    path.write_text(f'[defaults]\nweights = "random"\nquality = "l"\ncaptions = "soft"\nchapters = "{chapters}"\n'
                    + videos, encoding="utf-8")
    return path


def assert_complete(video: Path, chapters: int = 1) -> None:
    """A playable 480p15 H.264 video as long as its subtitles say, with the cues of every
    chapter."""
    info = probe(video)
    assert (info.width, info.height, info.codec, round(info.fps)) == (854, 480, "h264", 15)
    assert info.duration > 5 and info.frames == pytest.approx(info.duration * 15, abs=2)
    srt = video.with_suffix(".srt").read_text(encoding="utf-8")
    assert srt.count(" --> ") >= chapters
    last_end = srt.strip().split("\n\n")[-1].splitlines()[1].split(" --> ")[1]
    h, m, s = last_end.replace(",", ".").split(":")
    assert float(h) * 3600 + float(m) * 60 + float(s) <= info.duration + 0.1


def test_a_two_video_batch_renders_through_the_cluster(cluster, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("ATTENTION_CACHE_DIR", str(tmp_path / "cache"))
    course = manifest(tmp_path, ["cats drink milk", "dogs eat bones"])
    code, out, err = run(["--batch", str(course), "--scheduler", cluster.scheduler_address],
                         capsys)
    assert code == 0, err
    assert f"scheduler: {cluster.scheduler_address} (2 workers so far)" in err
    assert "on 2 remote workers" in err
    assert out.splitlines()[-1].startswith("batch: 2 of 2 videos made;")
    for i in range(2):
        assert_complete(tmp_path / f"v{i}.mp4")
    assert len(list((tmp_path / "cache").glob("*.mp4"))) == 2  # the client cached the clips
    assert list((tmp_path / "cache" / "tmp").iterdir()) == []  # no scratch left


def test_one_video_renders_through_the_cluster(cluster, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("ATTENTION_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "one.mp4"
    code, paths, err = run(["ants carry leaves", "--weights", "random", "-q", "l", "--chapters",
                            "1", "-o", str(out), "--captions", "soft",
                            "--scheduler", cluster.scheduler_address], capsys)
    assert code == 0, err
    assert "chapter 1 (input): rendered" in err
    assert paths.splitlines()[0] == str(out)  # the paths written, on standard output
    assert_complete(out)


def test_a_worker_killed_mid_batch_has_its_chapter_rendered_elsewhere(cluster, client, tmp_path,
                                                                       capsys, monkeypatch):
    """SIGKILL the worker process while it renders a chapter: the scheduler hands the
    chapter to a live worker (the nanny restarts the killed one), and every video is
    still complete and valid."""
    monkeypatch.setenv("ATTENTION_CACHE_DIR", str(tmp_path / "cache"))
    course = manifest(tmp_path, ["birds sing songs", "fish swim fast"])
    killed: list[tuple[str, int]] = []
    finished = threading.Event()

    def kill_a_busy_worker():
        while not finished.is_set():
            busy = [w for w, keys in client.processing().items() if keys]
            if busy:
                time.sleep(1.0)  # well into the render (it takes several seconds)
                pids = client.run(os.getpid, workers=busy[:1])
                if pids:
                    (address, pid), = pids.items()
                    os.kill(pid, signal.SIGKILL)
                    killed.append((address, pid))
                    return
            time.sleep(0.1)

    killer = threading.Thread(target=kill_a_busy_worker)
    killer.start()
    try:
        code, out, err = run(["--batch", str(course), "--scheduler", cluster.scheduler_address],
                             capsys)
    finally:
        finished.set()
        killer.join()
    assert killed, "no worker was busy to kill"
    assert code == 0, err
    assert out.splitlines()[-1].startswith("batch: 2 of 2 videos made;")
    for i in range(2):
        assert_complete(tmp_path / f"v{i}.mp4")
    address, pid = killed[0]
    assert pid not in client.run(os.getpid).values()  # the killed process is gone
    seen = [msg.get("action") for _, msg in cluster.scheduler.get_events(address)]
    assert "remove-worker" in seen  # and the scheduler saw it go, with its chapter


def test_a_worker_with_other_code_is_refused(cluster, tmp_path, capsys, monkeypatch):
    """The client hashes a copy of the project with one file edited, as if its checkout
    had moved on: the workers' code no longer matches and the render is refused before
    anything is sent."""
    from attention_video.pipeline.cache import sources

    copy = tmp_path / "project"
    for package in sources.PACKAGES:
        shutil.copytree(sources.PROJECT_ROOT / package, copy / package,
                        ignore=shutil.ignore_patterns("__pycache__"))
    scene = copy / "scenes" / "chapters" / "input.py"
    scene.write_text(scene.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    monkeypatch.setattr(sources, "PROJECT_ROOT", copy)
    code, _, err = run(["cats drink milk", "--weights", "random", "-q", "l", "--chapters", "1",
                        "-o", str(tmp_path / "v.mp4"), "--scheduler", cluster.scheduler_address],
                       capsys)
    assert code == 1 and "run other code than this machine" in err, err
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "v.mp4").exists()


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_the_cluster_demo_script_renders_the_course_and_stops_what_it_started(tmp_path):
    env = dict(os.environ, ATTENTION_CACHE_DIR=str(tmp_path / "cache"),
               CLUSTER_DEMO_OUT=str(tmp_path / "course"), PYTHON=sys.executable)
    done = subprocess.run(["bash", str(ROOT / "scripts" / "cluster-demo.sh"), "--chapters", "1",
                           "--captions", "soft"],  # the .srt that assert_complete reads
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "batch: 3 of 3 videos made;" in done.stdout
    pids = [int(p) for p in done.stdout.split("; pids ")[1].split()[0].split(",")]
    for pid in pids:  # the scheduler and both workers were stopped by the script's trap
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    videos = sorted((tmp_path / "course" / "media" / "course").glob("*.mp4"))
    assert len(videos) == 3
    for v in videos:
        assert_complete(v)


def test_sigterm_mid_batch_leaves_no_work_on_the_cluster(cluster, tmp_path):
    """render.py --batch --scheduler in its own process, SIGTERM while the cluster renders:
    exit 143, and the scheduler forgets the batch's chapters (cancelled with the client)."""
    course = manifest(tmp_path, ["owls hunt mice", "cows eat grass"])
    env = dict(os.environ, ATTENTION_CACHE_DIR=str(tmp_path / "cache"))
    p = subprocess.Popen([sys.executable, str(ROOT / "render.py"), "--batch", str(course),
                          "--scheduler", cluster.scheduler_address], cwd=tmp_path, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not cluster.scheduler.tasks:
        time.sleep(0.1)  # the chapters reached the scheduler
    assert cluster.scheduler.tasks, "no chapter reached the cluster"
    time.sleep(1.0)
    p.send_signal(signal.SIGTERM)
    try:
        _, err = p.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        pytest.fail("the batch did not stop within 30 s of SIGTERM")
    assert p.returncode == 143 and err.splitlines()[-1].startswith("Interrupted: stopped"), err
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and cluster.scheduler.tasks:
        time.sleep(0.2)
    assert not cluster.scheduler.tasks
