"""Where the cache lives on disk: a full cache folder (a 600 KiB tmpfs) renders without
caching and says so in one line, or, when the disk runs full during the run, fails with
one line naming the folder; a relative ATTENTION_CACHE_DIR works (resolved at start-up).

Before: the tmpfs failed chapter 1 with "ParseError: no element found: line 1, column 0;
the other chapters are cached, rerun to retry", and a relative folder with "No such file
or directory: rel-cache/tmp/render-…"."""

from __future__ import annotations

import contextlib
import os
import subprocess
import tempfile
from pathlib import Path

import pytest
from attention_video.pipeline.cache.paths import CACHE_ENV, cache_dir, settle_cache_dir
from attention_video.pipeline.run import render as render_mod

from tests.pipeline.commands.test_cli import run_main

RENDER = ["cats drink milk", "--weights", "random", "-q", "l", "--chapters", "1"]


@pytest.fixture
def small_disk(tmp_path):
    """A 600 KiB tmpfs mounted for the test (root only; else the test is skipped)."""
    folder = tmp_path / "small"
    folder.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=600k", "tmpfs", str(folder)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {mounted.stderr.strip() or 'not root'}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def uncached_folders() -> set[str]:
    return {p.name for p in Path(tempfile.gettempdir()).glob("attention-uncached-*")}


@pytest.mark.slow
def test_a_full_cache_folder_renders_without_caching_and_says_so(small_disk, tmp_path,
                                                                 monkeypatch, capsys):
    monkeypatch.setenv(CACHE_ENV, str(small_disk))
    before = uncached_folders()
    out = tmp_path / "v.mp4"
    code, _, err = run_main([*RENDER, "-o", str(out), "--captions", "soft"], capsys)
    assert code == 0 and out.stat().st_size > 0 and out.with_suffix(".vtt").exists(), err
    said = [line for line in err.splitlines() if "is full" in line]
    assert len(said) == 1 and f"the cache folder {small_disk} is full" in said[0]
    assert "rendering without caching" in said[0] and "Error" not in err
    assert uncached_folders() == before  # the temporary cache is gone


@pytest.mark.slow
def test_a_cache_folder_that_runs_full_during_the_run_is_one_line(small_disk, tmp_path,
                                                                  monkeypatch, capsys):
    """The space runs out after the check: the chapter fails, and the line says where."""
    monkeypatch.setenv(CACHE_ENV, str(small_disk))
    monkeypatch.setattr(render_mod, "room_to_render",
                        lambda cache, say: contextlib.nullcontext(cache), raising=False)
    out = tmp_path / "v.mp4"
    code, _, err = run_main([*RENDER, "-o", str(out)], capsys)
    errors = [line for line in err.splitlines() if line.startswith("Error")]
    assert code == 1 and len(errors) == 1, err
    assert f"the cache folder {small_disk} is full" in errors[0]
    assert "ParseError" not in err and "rerun to retry" not in err
    assert not out.exists()


@pytest.mark.slow
def test_a_relative_cache_folder_works(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(CACHE_ENV, "rel-cache")
    code, _, err = run_main([*RENDER, "-o", "r1.mp4"], capsys)
    assert code == 0 and (tmp_path / "r1.mp4").stat().st_size > 0, err
    assert list((tmp_path / "rel-cache").glob("*.mp4"))  # the clip is cached there


def test_a_relative_cache_folder_is_made_absolute_once(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(CACHE_ENV, "rel-cache")
    settle_cache_dir()
    assert os.environ[CACHE_ENV] == str(tmp_path / "rel-cache")
    monkeypatch.chdir(tmp_path.parent)  # a render's working folder: the same cache
    assert cache_dir() == tmp_path / "rel-cache"
