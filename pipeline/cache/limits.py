"""Keeping the cache folder under its size (`ATTENTION_CACHE_LIMIT`, 2 GiB unless told):
after a run, `prune` removes the chapter clips, kept texts, kept speech and kept audio
tracks least recently used, never one used in the last hour. A hit refreshes an entry's
time (`touch`). The command walks the folder at most every ten minutes (`prune_now_and_then`):
a full folder holds some 80,000 kept texts, and walking them costs about 3 CPU-seconds, more
than a warm re-run itself."""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

from attention_video.pipeline.cache.paths import cache_dir
from attention_video.scenes.voice import SPEECH  # the narrator's kept speech

LIMIT_ENV = "ATTENTION_CACHE_LIMIT"
DEFAULT_LIMIT = 2 * 1024 ** 3
RECENT = 3600.0  # seconds: an entry used this recently is never pruned
EVERY = 600.0  # seconds: the command walks the folder no more often than this
STAMP = ".walked"  # in the cache folder: its time is the last walk's (a dot file: no entry)
TEXTS = "text-objects"  # scenes.text's kept texts, inside the cache folder
TRACKS = "audio-tracks"  # pipeline.outputs.audio's kept AAC tracks of whole videos


def touch(path: Path) -> None:
    """Mark a cache entry as just used (what `prune` goes by)."""
    try:
        os.utime(path)
    except OSError:
        pass  # read-only, or removed meanwhile: it is only a hint


def cache_limit() -> int | None:
    """The cache folder's size limit in bytes from $ATTENTION_CACHE_LIMIT (500M, 2G, 1.5G;
    a plain number is bytes; 0 means no limit), 2 GiB when unset."""
    raw = os.environ.get(LIMIT_ENV, "").strip()
    if not raw:
        return DEFAULT_LIMIT
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?", raw, re.IGNORECASE)
    if m is None:
        raise ValueError(f"{raw!r} is not a size; use for example 500M or 2G (0: no limit)")
    size = int(float(m[1]) * 1024 ** " kmgt".index(m[2].lower() or " "))
    return size or None


@dataclass(frozen=True)
class Pruned:
    removed: int  # entries removed (a chapter's clip and record count as one)
    freed: int  # bytes
    size: int  # bytes left


@dataclass
class _Entry:
    paths: list[Path]
    size: int
    used: float  # the latest mtime among its files


def _stat(entry: os.DirEntry) -> os.stat_result | None:
    """The entry's stat, or None when it went since it was listed (another command, or a
    test process sharing the folder, pruned it meanwhile): a cache that changes while it
    is walked is no error."""
    try:
        return entry.stat()
    except FileNotFoundError:
        return None


def _listing(folder: Path) -> list[os.DirEntry]:
    """The folder's entries, or none when it went since it was listed."""
    try:
        with os.scandir(folder) as it:
            return list(it)
    except FileNotFoundError:
        return []


def _entries(root: Path) -> list[_Entry]:
    """Every chapter clip (with its record), every kept text, speech and audio track in the
    cache folder."""
    out: dict[str, _Entry] = {}
    with os.scandir(root) as it:
        for e in it:
            stem, ext = os.path.splitext(e.name)
            if ext not in (".mp4", ".json") or e.name.startswith(".") or not e.is_file():
                continue
            st = _stat(e)
            if st is None:
                continue
            entry = out.setdefault(stem, _Entry([], 0, 0.0))
            entry.paths.insert(0 if ext == ".json" else len(entry.paths), Path(e.path))
            entry.size += st.st_size  # the record first: without it the clip is not served
            entry.used = max(entry.used, st.st_mtime)
    entries = list(out.values())
    for kept, ext in ((TEXTS, ".pkl"), (SPEECH, ".wav"), (TRACKS, ".m4a")):
        if (root / kept).is_dir():
            folders = [root / kept] + [Path(f.path) for f in os.scandir(root / kept) if f.is_dir()]
            for folder in folders:
                for e in _listing(folder):
                    if e.name.endswith(ext) and not e.name.startswith(".") and e.is_file():
                        st = _stat(e)
                        if st is None:
                            continue
                        record = Path(e.path).with_suffix(".json")  # speech and tracks have one
                        paths = [Path(e.path)] + ([record] if kept != TEXTS else [])
                        entries.append(_Entry(paths, st.st_size, st.st_mtime))
    return entries


def prune(root: Path | None = None, limit: int | None = DEFAULT_LIMIT, *,
          now: float | None = None, recent: float = RECENT) -> Pruned:
    """Keep the cache folder's clips, kept texts and speech under `limit` bytes: when they are over
    it, remove the least recently used down to 80% of it (so the next runs need not prune
    again), never an entry used in the last `recent` seconds. Other files are left alone."""
    root = Path(root) if root else cache_dir()
    if limit is None or not root.is_dir():
        return Pruned(0, 0, 0)
    entries = _entries(root)
    size = sum(e.size for e in entries)
    if size <= limit:
        return Pruned(0, 0, size)
    now = time.time() if now is None else now
    removed = freed = 0
    for entry in sorted(entries, key=lambda e: e.used):
        if size <= 0.8 * limit or now - entry.used < recent:
            break
        try:  # used since it was listed (another render): keep it
            if any(now - p.stat().st_mtime < recent for p in entry.paths):
                continue
        except OSError:
            pass
        for path in entry.paths:
            path.unlink(missing_ok=True)
        removed, freed, size = removed + 1, freed + entry.size, size - entry.size
    return Pruned(removed, freed, size)


def prune_now_and_then(root: Path | None = None, limit: int | None = DEFAULT_LIMIT, *,
                       every: float = EVERY, now: float | None = None) -> Pruned | None:
    """`prune`, unless the folder was walked less than `every` seconds ago (None then). A
    folder filled faster than that goes over its limit by at most what was written in
    between, and comes back under it at the next walk."""
    root = Path(root) if root else cache_dir()
    stamp = root / STAMP
    now = time.time() if now is None else now
    try:
        if now - stamp.stat().st_mtime < every:
            return None
    except OSError:
        pass  # never walked, or the stamp is gone: walk
    pruned = prune(root, limit, now=now)
    if root.is_dir():
        stamp.touch()
        os.utime(stamp, (now, now))
    return pruned


def human_size(size: int) -> str:
    """Bytes as a person writes them: '512 B', '2.3 MB'."""
    for unit in ("B", "KB", "MB"):
        if size < 1000 or unit == "MB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1000
    return f"{size:.1f} MB"
