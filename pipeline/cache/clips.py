"""The chapter cache: a clip is stored under a key made of exactly what it depends on.

Key = the chapter, the parts of the trace it draws (all of it, less the followed word
for chapters that do not show it), the settings its scene may read
(attncore.chapters.SCENE_SETTINGS: theme, language, pace, voice) and the quality, the voice
file that narrates it (its hash and the piper version), the chapters of the plan whose
presence it states (its `reads_plan`), and the code that draws it: every project file
its scene module and the renderer import, directly or transitively (pipeline.cache.sources),
and the Manim version. All of it is read from the chapter table, so a key is made
without importing a scene (or Manim).
A clip is served only if its size and SHA-256 match what was recorded when it was made.

The folder is kept under a size (`ATTENTION_CACHE_LIMIT`, 2 GiB unless told): after a run,
`prune` removes the chapter clips, kept texts and kept speech least recently used, never
one used in the last hour. A hit refreshes an entry's time.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

import numpy as np
from attention_video.attncore.chapters import SCENE_SETTINGS
from attention_video.attncore.chapters import chapter as chapter_entry
from attention_video.attncore.trace import AttentionTrace, HeadTrace, TrainingHistory
from attention_video.pipeline.cache import sources
from attention_video.pipeline.cache.paths import (
    CACHE_ENV,
    CacheDirError,
    cache_dir,
    ensure_cache_dir,
)
from attention_video.pipeline.run.chapter import ChapterResult

RENDERER = "attention_video.pipeline.run.chapter"  # the module that turns a scene into a clip
LIMIT_ENV = "ATTENTION_CACHE_LIMIT"
DEFAULT_LIMIT = 2 * 1024 ** 3
RECENT = 3600.0  # seconds: an entry used this recently is never pruned
TEXTS = "text-objects"  # scenes.text's kept texts, inside the cache folder
SPEECH = "speech"  # scenes.voice's kept speech, inside the cache folder
TRACKS = "audio-tracks"  # pipeline.outputs.audio's kept AAC tracks of whole videos


def _update_array(h: hashlib._Hash, name: str, a: np.ndarray) -> None:
    h.update(name.encode())
    h.update(str(a.shape).encode())
    h.update(np.ascontiguousarray(a).tobytes())


def trace_digest(trace: AttentionTrace, with_focus: bool) -> str:
    """Hash of everything in the trace a scene can draw."""
    h = hashlib.sha256()
    for side in (trace.query_tokens, trace.key_tokens):
        h.update(json.dumps([(t.text, t.kind) for t in side], ensure_ascii=False).encode())
    for name in AttentionTrace.ARRAYS:
        _update_array(h, name, getattr(trace, name))
    for head in trace.heads:
        h.update(f"head {head.layer} {head.head} {head.pattern}".encode())
        for name in HeadTrace.ARRAYS:
            _update_array(h, name, getattr(head, name))
    if trace.history is not None:
        hist = trace.history
        h.update(json.dumps([hist.partner, hist.task, hist.examples], ensure_ascii=False).encode())
        for name in TrainingHistory.ARRAYS:
            _update_array(h, "history." + name, getattr(hist, name))
    if trace.model_weights is not None:
        _update_array(h, "model_weights", trace.model_weights)
    if trace.query_inputs is not None:
        h.update(json.dumps([(t.text, t.kind) for t in trace.query_inputs],
                            ensure_ascii=False).encode())
    scalars = ["head_index", "source", "model_name", "layer", "causal", "cross", "normalized",
               "seed", "x_label", "source_reason", "x_label_q",
               "positional"] + (["focus"] if with_focus else [])
    h.update(json.dumps({k: getattr(trace, k) for k in scalars}, sort_keys=True).encode())
    choice = trace.head_choice
    h.update(json.dumps(None if choice is None else asdict(choice)).encode())
    return h.hexdigest()


def code_digest(chapter: str, root: Path | None = None) -> str:
    """Hash of the code that draws this chapter: every project file its scene module and
    the renderer run (found from their imports), and the Manim version."""
    root = root or sources.PROJECT_ROOT
    h = hashlib.sha256(f"manim {version('manim')}".encode())
    for path in sources.source_files([chapter_entry(chapter).module, RENDERER], root):
        h.update(path.relative_to(root).as_posix().encode())
        h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


def chapter_key(chapter: str, trace: AttentionTrace, settings, plan: tuple[str, ...]) -> str:
    """The key of chapter `chapter`'s clip in a video that plays `plan`."""
    entry = chapter_entry(chapter)
    parts = {
        "chapter": chapter,
        "trace": trace_digest(trace, with_focus=entry.reads_focus),
        "settings": {f: getattr(settings, f) for f in SCENE_SETTINGS},
        "quality": settings.quality,
        "plan": {c: c in plan for c in entry.reads_plan},
        "code": code_digest(chapter),
    }
    if getattr(settings, "voice", None) is not None:  # what says it: the file, not its name
        from attention_video.scenes.voice import resolve

        parts["voice"] = resolve(settings.voice, settings.language).identity
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:32]


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class ChapterCache:
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
            if clip.stat().st_size != m["size"] or _sha256(clip) != m["sha256"]:
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
        size, digest = rendered.stat().st_size, _sha256(rendered)
        for path in (clip, meta):
            if path.is_symlink() or (path.exists() and not path.is_file()):
                _remove(path)
        os.replace(rendered, clip)
        r = asdict(result)
        r.update(drawn=[], off_frame=[], clip=None)
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
    return ChapterResult(chapter, duration, cues, [], [], 0.0, cached=True, clip=clip,
                         holds=holds)


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


# ---- a full disk ------------------------------------------------------------------------
MIN_FREE = 64 * 1024 ** 2  # bytes: less free beside the cache and a render cannot count on
# finishing (a chapter's scratch holds Manim's partial movies and texts; a 1080p one, tens of MB)


def free_space(folder: Path) -> int | None:
    """Bytes free on the disk of `folder` (or of its nearest existing parent); None if
    that cannot be told."""
    folder = Path(folder)
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    try:
        return shutil.disk_usage(folder).free
    except OSError:
        return None


def is_full(folder: Path) -> bool:
    free = free_space(folder)
    return free is not None and free < MIN_FREE


def full_message(cache: ChapterCache) -> str:
    """'the cache folder /x is full (12 KB free; a render needs 67.1 MB)'."""
    from attention_video.pipeline.outputs.formats import human_size

    free = human_size(free_space(cache.root) or 0)
    return f"{cache.name} {cache.root} is full ({free} free; a render needs {human_size(MIN_FREE)})"


class CacheFull(CacheDirError):
    """The cache folder's disk is full, and so is the temporary folder's."""


@contextmanager
def room_to_render(cache: ChapterCache, say: Callable[[str], None]) -> Iterator[ChapterCache]:
    """The cache to render chapters into: `cache` itself, or when its disk has less than
    MIN_FREE bytes free, a temporary folder elsewhere that is removed afterwards: the
    chapters are rendered without caching (the clips already cached are still read),
    and `say` hears so in one line. A CacheFull error when the temporary folder's disk is
    full too."""
    if not is_full(cache.root):
        yield cache
        return
    full = full_message(cache)
    spare = Path(tempfile.gettempdir())
    if is_full(spare):
        raise CacheFull(f"{full}, and so is the temporary folder {spare}; free some space, or "
                        f"choose another cache folder with {CACHE_ENV}=/some/folder")
    say(f"{full}: rendering without caching, in {spare} (free some space, or choose "
        f"another cache folder with {CACHE_ENV}=/some/folder)")
    root = Path(tempfile.mkdtemp(prefix="attention-uncached-", dir=spare))
    try:
        yield ChapterCache(root, name="the temporary folder")
    finally:
        shutil.rmtree(root, ignore_errors=True)


# ---- keeping the folder under its size -------------------------------------------------
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


def _entries(root: Path) -> list[_Entry]:
    """Every chapter clip (with its record), every kept text, speech and audio track in the
    cache folder."""
    out: dict[str, _Entry] = {}
    with os.scandir(root) as it:
        for e in it:
            stem, ext = os.path.splitext(e.name)
            if ext not in (".mp4", ".json") or e.name.startswith(".") or not e.is_file():
                continue
            st = e.stat()
            entry = out.setdefault(stem, _Entry([], 0, 0.0))
            entry.paths.insert(0 if ext == ".json" else len(entry.paths), Path(e.path))
            entry.size += st.st_size  # the record first: without it the clip is not served
            entry.used = max(entry.used, st.st_mtime)
    entries = list(out.values())
    for kept, ext in ((TEXTS, ".pkl"), (SPEECH, ".wav"), (TRACKS, ".m4a")):
        if (root / kept).is_dir():
            folders = [root / kept] + [Path(f.path) for f in os.scandir(root / kept) if f.is_dir()]
            for folder in folders:
                for e in os.scandir(folder):
                    if e.name.endswith(ext) and not e.name.startswith(".") and e.is_file():
                        st = e.stat()
                        entries.append(_Entry([Path(e.path)], st.st_size, st.st_mtime))
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
