"""The chapter store: a finished clip kept under its key with a record of its result,
served only if its size and SHA-256 match what was recorded when it was made."""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from attention_video.pipeline.cache.limits import touch
from attention_video.pipeline.cache.paths import cache_dir, ensure_cache_dir
from attention_video.pipeline.records import ChapterResult


def sha256_of(path: Path) -> str:
    """A kept file's checksum, as its record holds it."""
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


class ChapterCache:
    """The cache folder's chapter clips, by key."""

    def __init__(self, root: Path | None = None, name: str = "the cache folder"):
        self.root = Path(root) if root else cache_dir()
        self.name = name  # what the folder is, in messages

    def clip_path(self, key: str) -> Path:
        return self.root / f"{key}.mp4"

    def meta_path(self, key: str) -> Path:
        return self.root / f"{key}.json"

    def scratch(self) -> Path:
        """A fresh scratch folder for one render (inside the cache, same filesystem)."""
        tmp = self.root / "tmp"
        if tmp.is_symlink() or (tmp.exists() and not tmp.is_dir()):
            _remove(tmp)  # not our folder (a file, a link): the scratch area is ours to make
        tmp = ensure_cache_dir(tmp)
        return Path(tempfile.mkdtemp(prefix="render-", dir=tmp))

    def get(self, key: str, damaged: Callable[[str], None] = lambda why: None
            ) -> ChapterResult | None:
        """The cached result, or None if missing or unusable: a clip or record that is not a
        file or cannot be read, a clip whose size or SHA-256 is not the recorded one, a
        record without a well-formed result. `damaged` hears why an entry that is there is
        unusable. Such an entry is left for the next put() to replace, never deleted here:
        another render may be halfway through putting it (clip moved in, record not yet)
        or reading it."""
        clip, meta = self.clip_path(key), self.meta_path(key)
        if not (os.path.lexists(clip) or os.path.lexists(meta)):
            return None
        try:
            if not (meta.is_file() and clip.is_file()):
                raise ValueError(f"its {'record' if not meta.is_file() else 'clip'} is not a file")
            m = json.loads(meta.read_text(encoding="utf-8"))
            if clip.stat().st_size != m["size"] or sha256_of(clip) != m["sha256"]:
                raise ValueError("its clip is not the one recorded")
            result = _cached_result(m["result"], clip)
        except (OSError, ValueError, KeyError, TypeError, IndexError) as e:
            damaged(_why(e))
            return None
        touch(clip)
        return result

    def put(self, key: str, rendered: Path, result: ChapterResult) -> Path:
        """Move a finished clip into the cache (atomically) and record its checksum. An
        entry there that is not a pair of files (a folder, a link) is replaced."""
        ensure_cache_dir(self.root)
        clip, meta = self.clip_path(key), self.meta_path(key)
        size, digest = rendered.stat().st_size, sha256_of(rendered)
        for path in (clip, meta):
            if path.is_symlink() or (path.exists() and not path.is_file()):
                _remove(path)
        os.replace(rendered, clip)
        r = asdict(result)
        r.update(drawn=[], off_frame=[], clip=None, described=[])
        fd, tmp = tempfile.mkstemp(prefix=f".{key}.", suffix=".json.part", dir=self.root)
        try:  # a unique name, then a rename: readers see the old record or the new one
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump({"size": size, "sha256": digest, "result": r}, f)
            os.replace(tmp, meta)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return clip


def _cached_result(r: Any, clip: Path) -> ChapterResult:
    """A recorded result, checked field by field (TypeError/ValueError when malformed)."""
    if not isinstance(r, dict):
        raise TypeError("its record has no result")
    chapter, duration = r["chapter"], float(r["duration"])
    if (isinstance(chapter, bool) or not isinstance(chapter, (str, int))
            or not math.isfinite(duration) or duration < 0):
        raise ValueError("its record's result is malformed")
    cues = [(float(a), float(b), str(text)) for a, b, text in r["subtitles"]]
    holds = [float(h) for h in r.get("holds", [])]  # a record made before holds: the old cuts
    made = {str(k): float(t) for k, t in r.get("made", {}).items()}  # likewise: none
    title = str(r.get("title", ""))  # likewise: the chapter table's title stands in
    descriptions = [str(d) for d in r.get("descriptions", [])]  # likewise: none
    if descriptions and len(descriptions) != len(cues):
        raise ValueError("its record's descriptions are not one per caption")
    # likewise (or not described aloud): none, the descriptions track timed with the captions
    said = [None if t is None else (float(t[0]), float(t[1])) for t in r.get("described_at", [])]
    if said and len(said) != len(cues):
        raise ValueError("its record's description times are not one per caption")
    return ChapterResult(chapter, duration, cues, [], [], 0.0, cached=True, clip=clip,
                         holds=holds, made=made, title=title, descriptions=descriptions,
                         described_at=said)


def _why(e: BaseException) -> str:
    """Why an entry is unusable, for the one warning line."""
    if isinstance(e, OSError):
        return f"it cannot be read: {e.strerror or e}"
    if isinstance(e, json.JSONDecodeError):
        return "its record is not JSON"
    if isinstance(e, KeyError):
        return f"its record has no {e.args[0]!r}"
    text = str(e)
    return text if text.startswith("its ") else "its record's result is malformed"


def _remove(path: Path) -> None:
    """Remove what is at `path`, a folder and its contents included (missing: nothing)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)
