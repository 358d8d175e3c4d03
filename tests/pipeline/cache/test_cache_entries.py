"""A chapter cache entry (clip + record) that is damaged in any way is a miss, with one
reason, and the next put() replaces it: a clip or record replaced by a folder, a record
that is not JSON, lacks a field or has `"result": null`, a clip that is not the recorded
one. Before, a folder for the clip failed every render with "Is a directory:
<cache>/tmp/render-…/chapter1.mp4", a folder for the record named ".<key>.….json.part",
and a null result said "this is a bug"."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from attention_video.pipeline.cache.store import ChapterCache
from attention_video.pipeline.run.chapter import ChapterResult

KEY = "0123456789abcdef0123456789abcdef"


def result() -> ChapterResult:
    return ChapterResult("input", 2.5, [(0.0, 2.5, "The sentence is split")], seconds=1.0)


def rendered(tmp_path: Path, data: bytes = b"a clip's bytes") -> Path:
    path = tmp_path / "scratch" / "chapter1.mp4"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def as_folder(path: Path) -> None:
    path.unlink()
    path.mkdir()
    (path / "inside").write_text("x")


def record(cache: ChapterCache, change) -> None:
    meta = cache.meta_path(KEY)
    m = json.loads(meta.read_text())
    change(m)
    meta.write_text(json.dumps(m))


DAMAGE = {
    "clip-is-a-folder": (lambda c: as_folder(c.clip_path(KEY)), "its clip is not a file"),
    "record-is-a-folder": (lambda c: as_folder(c.meta_path(KEY)), "its record is not a file"),
    "record-not-json": (lambda c: c.meta_path(KEY).write_text("{not json"),
                        "its record is not JSON"),
    "record-is-a-list": (lambda c: c.meta_path(KEY).write_text("[1, 2]"),
                         "its record's result is malformed"),
    "result-null": (lambda c: record(c, lambda m: m.update(result=None)),
                    "its record has no result"),
    "result-without-cues": (lambda c: record(c, lambda m: m["result"].pop("subtitles")),
                            "its record has no 'subtitles'"),
    "cues-malformed": (lambda c: record(c, lambda m: m["result"].update(subtitles=[[1]])),
                       "its record's result is malformed"),
    "no-checksum": (lambda c: record(c, lambda m: m.pop("sha256")),
                    "its record has no 'sha256'"),
    "clip-truncated": (lambda c: c.clip_path(KEY).write_bytes(b"a clip"),
                       "its clip is not the one recorded"),
    "clip-missing": (lambda c: c.clip_path(KEY).unlink(), "its clip is not a file"),
    "record-missing": (lambda c: c.meta_path(KEY).unlink(), "its record is not a file"),
}


@pytest.mark.parametrize("name", DAMAGE)
def test_a_damaged_entry_is_a_miss_with_one_reason_and_put_replaces_it(tmp_path, name):
    cache = ChapterCache(tmp_path / "cache")
    cache.put(KEY, rendered(tmp_path), result())
    assert cache.get(KEY) is not None
    damage, reason = DAMAGE[name]
    damage(cache)
    said: list[str] = []
    assert cache.get(KEY, said.append) is None
    assert said == [reason]
    cache.put(KEY, rendered(tmp_path, b"the clip rendered again"), result())
    hit = cache.get(KEY, said.append)
    assert hit is not None and hit.clip.read_bytes() == b"the clip rendered again"
    assert (hit.chapter, hit.duration, hit.subtitles) == ("input", 2.5, result().subtitles)
    assert said == [reason] and [p.name for p in cache.root.glob(".*.part")] == []


def test_an_entry_never_made_is_a_miss_without_a_word(tmp_path):
    said: list[str] = []
    assert ChapterCache(tmp_path).get(KEY, said.append) is None and said == []


def test_a_scratch_area_that_is_a_file_is_made_again(tmp_path):
    cache = ChapterCache(tmp_path / "cache")
    cache.root.mkdir()
    (cache.root / "tmp").write_text("not a folder")
    work = cache.scratch()
    assert work.is_dir() and work.parent == cache.root / "tmp"
    shutil.rmtree(work)


def test_a_kept_clip_keeps_when_its_descriptions_are_said(tmp_path):
    """--describe --voice: a clip from the cache times its descriptions track as rendered
    (when the described narration says each), not with its captions."""
    cache = ChapterCache(tmp_path / "cache")
    cues = [(0.0, 2.5, "The sentence is split"), (2.5, 4.0, "Each word is a row")]
    made = ChapterResult("input", 4.0, cues, descriptions=["A grid.", ""],
                         described_at=[(2.0, 2.4), None])
    cache.put(KEY, rendered(tmp_path), made)
    assert cache.get(KEY).described_at == [(2.0, 2.4), None]
    record(cache, lambda m: m["result"].update(described_at=[[2.0, 2.4]]))
    said: list[str] = []
    assert cache.get(KEY, said.append) is None
    assert said == ["its record's description times are not one per caption"]
