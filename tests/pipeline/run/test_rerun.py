"""A re-run with nothing changed is nearly free: every chapter key is made from the chapter
table, so when all are cached Manim is never imported (benchmarks/bench_rerun.py times it)."""

from __future__ import annotations

import subprocess
import sys

from tests.support.paths import ROOT

# Renders are stubbed (a clip is a few bytes, the join concatenates them): what is checked is
# what the command imports, in an interpreter of its own.
SCRIPT = """
import sys
from pathlib import Path
from attention_video.pipeline.run import render as run
from attention_video.pipeline.run.chapter import ChapterResult

def fake_render(job):
    Path(job.clip).write_bytes(job.chapter.encode())
    return ChapterResult(job.chapter, 1.0, [(0.0, 1.0, "caption")], clip=job.clip)

def fake_join(clips, out, **kwargs):
    Path(out).write_bytes(b"".join(Path(c).read_bytes() for c in clips))
    return float(len(clips))

run.join = fake_join
if sys.argv[1] == "first":
    from attention_video.pipeline.run.workers import InlineExecutor
    run.render_chapter = fake_render
    run.LocalPool = InlineExecutor
from attention_video.pipeline.commands.cli import main
try:
    main(sys.argv[2:])
except SystemExit as e:
    assert not e.code, e.code
print("manim" in sys.modules)
"""


def test_a_rerun_with_every_chapter_cached_does_not_import_manim(tmp_path):
    env = {"ATTENTION_CACHE_DIR": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin"}
    args = ["The black cat drank the milk", "-q", "l", "-o", str(tmp_path / "v.mp4")]

    def run(stage: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-c", SCRIPT, stage, *args], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=120)

    first = run("first")
    assert first.returncode == 0, first.stderr
    again = run("again")
    assert again.returncode == 0, again.stderr
    assert again.stderr.count(": cached") == 10
    assert again.stdout.splitlines()[-1] == "False", "a re-run with every chapter cached imported Manim"
