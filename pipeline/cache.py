"""The chapter cache: a clip is stored under a key made of exactly what it depends on.

Key = the chapter, the parts of the trace it draws (all of it, less the followed word
for chapters that do not show it), the settings it reads (theme, language, pace, voice,
quality), the voice file that narrates it (its hash and the piper version),
and the code that draws it: every project file its scene module and the renderer import,
directly or transitively (pipeline.sources), and the Manim version.
A clip is served only if its size and SHA-256 match what was recorded when it was made.

The folder is kept under a size (`ATTENTION_CACHE_LIMIT`, 2 GiB unless told): after a run,
`prune` removes the chapter clips, kept texts and kept speech least recently used, never
one used in the last hour. A hit refreshes an entry's time.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
import time
from dataclasses import asdict, dataclass
from importlib.metadata import version
from pathlib import Path

import numpy as np

from attncore.chapters import chapter as chapter_entry
from attncore.trace import AttentionTrace, HeadTrace, TrainingHistory
from pipeline import sources
from pipeline.chapter import ChapterResult
from pipeline.paths import cache_dir, ensure_cache_dir

RENDERER = "pipeline.chapter"  # the module that turns a scene into a clip
LIMIT_ENV = "ATTENTION_CACHE_LIMIT"
DEFAULT_LIMIT = 2 * 1024 ** 3
RECENT = 3600.0  # seconds: an entry used this recently is never pruned
TEXTS = "text-objects"  # scenes.text's kept texts, inside the cache folder
SPEECH = "speech"  # scenes.voice's kept speech, inside the cache folder


def _update_array(h: hashlib._Hash, name: str, a: np.ndarray) -> None:
    h.update(name.encode())
    h.update(str(a.shape).encode())
    h.update(np.ascontiguousarray(a).tobytes())


def trace_digest(trace: AttentionTrace, with_focus: bool) -> str:
    """Hash of everything in the trace a scene can draw (never the settings dict)."""
    h = hashlib.sha256()
    for side in (trace.query_tokens, trace.key_tokens):
        h.update(json.dumps([(t.text, t.kind) for t in side], ensure_ascii=False).encode())
    for name in AttentionTrace.ARRAYS:
        _update_array(h, name, getattr(trace, name))
    for head in trace.heads:
        h.update(f"head {head.layer} {head.head}".encode())
        for name in HeadTrace.ARRAYS:
            _update_array(h, name, getattr(head, name))
    if trace.history is not None:
        hist = trace.history
        h.update(json.dumps([hist.partner, hist.task_en, hist.task_zh]).encode())
        for name in TrainingHistory.ARRAYS:
            _update_array(h, "history." + name, getattr(hist, name))
    if trace.model_weights is not None:
        _update_array(h, "model_weights", trace.model_weights)
    if trace.query_inputs is not None:
        h.update(json.dumps([(t.text, t.kind) for t in trace.query_inputs],
                            ensure_ascii=False).encode())
    scalars = ["head_index", "source", "model_name", "layer", "causal", "cross", "normalized",
               "seed", "head_reason", "x_label", "source_reason", "x_label_q"] + (["focus"] if with_focus else [])
    h.update(json.dumps({k: getattr(trace, k) for k in scalars}, sort_keys=True).encode())
    h.update(json.dumps({"positional": trace.settings.get("positional", True)}).encode())
    return h.hexdigest()


def code_digest(chapter: int, root: Path | None = None) -> str:
    """Hash of the code that draws this chapter: every project file its scene module and
    the renderer run (found from their imports), and the Manim version."""
    root = root or sources.PROJECT_ROOT
    h = hashlib.sha256(f"manim {version('manim')}".encode())
    for path in sources.source_files([chapter_entry(chapter).module, RENDERER], root):
        h.update(path.relative_to(root).as_posix().encode())
        h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


def chapter_key(chapter: int, trace: AttentionTrace, settings) -> str:
    from scenes import scene_class

    cls = scene_class(chapter)
    reads = {f: getattr(settings, f) for f in cls.reads_settings}
    parts = {
        "chapter": chapter,
        "trace": trace_digest(trace, with_focus=cls.reads_focus),
        "settings": reads,
        "quality": settings.quality,
        "code": code_digest(chapter),
    }
    if getattr(settings, "voice", None) is not None:  # what says it: the file, not its name
        from scenes.voice import resolve

        parts["voice"] = resolve(settings.voice, settings.language).identity
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:32]


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class ChapterCache:
    def __init__(self, root: Path | None = None):
        self.root = Path(root) if root else cache_dir()

    def clip_path(self, key: str) -> Path:
        return self.root / f"{key}.mp4"

    def meta_path(self, key: str) -> Path:
        return self.root / f"{key}.json"

    def scratch(self) -> Path:
        """A fresh scratch folder for one render (inside the cache, same filesystem)."""
        tmp = ensure_cache_dir(self.root / "tmp")
        return Path(tempfile.mkdtemp(prefix="render-", dir=tmp))

    def get(self, key: str) -> ChapterResult | None:
        """The cached result, or None if missing or damaged. A damaged entry is left for
        the next put() to replace, never deleted here: another render may be halfway
        through putting it (clip moved in, record not yet) or reading it."""
        clip, meta = self.clip_path(key), self.meta_path(key)
        try:
            m = json.loads(meta.read_text(encoding="utf-8"))
            ok = clip.stat().st_size == m["size"] and _sha256(clip) == m["sha256"]
        except (OSError, ValueError, KeyError, TypeError):
            ok = False
        if not ok:
            return None
        touch(clip)
        r = m["result"]
        return ChapterResult(r["chapter"], r["duration"], [tuple(s) for s in r["subtitles"]],
                             [], [], 0.0, cached=True, clip=clip, holds=r.get("holds", []))

    def put(self, key: str, rendered: Path, result: ChapterResult) -> Path:
        """Move a finished clip into the cache (atomically) and record its checksum."""
        ensure_cache_dir(self.root)
        clip = self.clip_path(key)
        size, digest = rendered.stat().st_size, _sha256(rendered)
        os.replace(rendered, clip)
        r = asdict(result)
        r.update(drawn=[], off_frame=[], clip=None)
        fd, tmp = tempfile.mkstemp(prefix=f".{key}.", suffix=".json.part", dir=self.root)
        try:  # a unique name, then a rename: readers see the old record or the new one
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump({"size": size, "sha256": digest, "result": r}, f)
            os.replace(tmp, self.meta_path(key))
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return clip


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
    """Every chapter clip (with its record), every kept text and kept speech in the cache
    folder."""
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
    for kept, ext in ((TEXTS, ".pkl"), (SPEECH, ".wav")):
        if (root / kept).is_dir():
            for folder in os.scandir(root / kept):
                if folder.is_dir():
                    for e in os.scandir(folder.path):
                        if e.name.endswith(ext) and e.is_file():
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
