"""The cache folder stays under its size: the least recently used clips and kept texts go
first, nothing used in the last hour goes, a hit counts as a use, and a bad limit is one
clear line before anything is rendered."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from attention_video.pipeline.cache import limits
from attention_video.pipeline.cache.limits import (
    DEFAULT_LIMIT,
    EVERY,
    LIMIT_ENV,
    STAMP,
    TEXTS,
    cache_limit,
    prune,
    prune_now_and_then,
)
from attention_video.pipeline.cache.store import ChapterCache

from tests.support.paths import ROOT

NOW = 1_000_000_000.0
HOUR = 3600.0


def put(path: Path, size: int, hours_ago: float) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x" * size)
    os.utime(path, (NOW - hours_ago * HOUR, NOW - hours_ago * HOUR))
    return path


@pytest.fixture
def folder(tmp_path) -> Path:
    """Three chapters (clip + record), two kept texts, and files prune must not touch."""
    for key, hours in (("old", 30), ("middle", 20), ("new", 10)):
        put(tmp_path / f"{key}.mp4", 900, hours)
        put(tmp_path / f"{key}.json", 100, hours)
    put(tmp_path / TEXTS / "ab" / "oldest.pkl", 500, 40)
    put(tmp_path / TEXTS / "cd" / "fresh.pkl", 500, 0.5)  # used half an hour ago
    put(tmp_path / "timings.json.bak", 5000, 50)  # not a cache entry: left alone
    put(tmp_path / "tmp" / "render-x" / "part.mp4", 5000, 50)
    return tmp_path


def names(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def test_under_the_limit_nothing_is_removed(folder):
    before = names(folder)
    pruned = prune(folder, 4000, now=NOW)
    assert (pruned.removed, pruned.freed, pruned.size) == (0, 0, 4000)
    assert names(folder) == before


def test_over_the_limit_the_least_recently_used_go_first_down_to_80_percent(folder):
    pruned = prune(folder, 3200, now=NOW)  # 4000 held; 80% of 3200 is 2560
    assert (pruned.removed, pruned.freed, pruned.size) == (2, 1500, 2500)
    gone = {"text-objects/ab/oldest.pkl", "old.mp4", "old.json"}
    assert not gone & names(folder)
    assert {"middle.mp4", "middle.json", "new.mp4", "new.json", "text-objects/cd/fresh.pkl",
            "timings.json.bak", "tmp/render-x/part.mp4"} <= names(folder)


def test_an_entry_used_in_the_last_hour_is_never_removed(folder):
    pruned = prune(folder, 100, now=NOW)  # far over: everything old goes, the fresh text stays
    assert pruned.size == 500 and "text-objects/cd/fresh.pkl" in names(folder)
    assert not any(n.endswith((".mp4", ".json")) for n in names(folder) if "/" not in n)


def test_the_command_walks_the_folder_at_most_every_ten_minutes(folder, monkeypatch):
    """A full cache holds tens of thousands of kept texts: walking them on every run cost
    more than a warm re-run."""
    first = prune_now_and_then(folder, 3200, now=NOW)
    assert first is not None and first.removed == 2
    assert (folder / STAMP).stat().st_mtime == NOW
    put(folder / "late.mp4", 5000, 2)  # written since: over the limit again
    walks = []
    monkeypatch.setattr("attention_video.pipeline.cache.limits._entries",
                        lambda root: walks.append(root) or [])
    assert prune_now_and_then(folder, 3200, now=NOW + EVERY - 1) is None
    assert walks == [] and (folder / "late.mp4").exists()
    monkeypatch.undo()
    later = prune_now_and_then(folder, 3200, now=NOW + EVERY + 1)
    assert later is not None and not (folder / "late.mp4").exists()


def test_a_chapter_hit_counts_as_a_use(tmp_path):
    cache = ChapterCache(tmp_path)
    clip = put(tmp_path / "scratch.mp4", 100, 0)
    from attention_video.pipeline.run.chapter import ChapterResult

    cache.put("k", clip, ChapterResult(3, 1.0, [], [], [], 0.0))
    os.utime(cache.clip_path("k"), (NOW, NOW))
    assert cache.get("k") is not None
    assert cache.clip_path("k").stat().st_mtime > NOW + HOUR  # now, not then


def test_a_kept_text_read_back_counts_as_a_use(tmp_path):
    from attention_video.fastmanim import texts as kept_texts
    from attention_video.scenes import text

    before = kept_texts._folder  # the tests' own (tests/conftest.py), put back after
    text.use_text_cache(tmp_path)
    try:
        text.built_text.cache_clear()
        text.built_text("0.42", 20.0)
        (kept,) = tmp_path.rglob("*.pkl")
        os.utime(kept, (NOW, NOW))
        text.built_text.cache_clear()
        text.built_text("0.42", 20.0)  # from the disk this time
        assert kept.stat().st_mtime > NOW + HOUR
    finally:
        text.use_text_cache(before)
        text.built_text.cache_clear()


@pytest.mark.parametrize("value, expect", [
    ("", DEFAULT_LIMIT), ("500M", 500 * 1024 ** 2), ("2G", 2 * 1024 ** 3),
    ("1.5g", int(1.5 * 1024 ** 3)), ("750MB", 750 * 1024 ** 2), ("4096", 4096), ("0", None),
])
def test_the_limit_is_read_from_the_environment(monkeypatch, value, expect):
    monkeypatch.setenv(LIMIT_ENV, value)
    assert cache_limit() == expect


@pytest.mark.slow
def test_a_limit_that_is_not_a_size_is_one_line_before_any_render(tmp_path):
    env = {**os.environ, LIMIT_ENV: "lots", "ATTENTION_CACHE_DIR": str(tmp_path / "cache")}
    out = subprocess.run([sys.executable, "render.py", "The black cat drank the milk", "-o",
                          str(tmp_path / "v.mp4")], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [
        "Error: ATTENTION_CACHE_LIMIT: 'lots' is not a size; use for example 500M or 2G "
        "(0: no limit)"]
    assert not (tmp_path / "v.mp4").exists()


def test_an_entry_gone_while_the_folder_is_walked_is_no_error(folder, monkeypatch):
    """Another command (or test process) sharing the folder may prune it meanwhile."""
    listed = limits._listing

    def vanishing(path):
        entries = listed(path)
        for e in entries:
            if e.name.endswith(".pkl"):
                os.unlink(e.path)  # listed, then gone before its stat
        return entries
    monkeypatch.setattr(limits, "_listing", vanishing)
    pruned = prune(folder, 3200, now=NOW)
    assert pruned.size <= 3000 and "text-objects/ab/oldest.pkl" not in names(folder)
