"""The chapter cache: a clip is stored under a key made of exactly what it depends on.

Key = the chapter, the parts of the trace it draws (all of it, less the followed word
for chapters that do not show it), the settings it reads (theme, language, quality),
and the code that draws it: every project file its scene module and the renderer import,
directly or transitively (pipeline.sources), and the Manim version.
A clip is served only if its size and SHA-256 match what was recorded when it was made.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import asdict
from importlib.metadata import version
from pathlib import Path

import numpy as np

from attncore.chapters import chapter as chapter_entry
from attncore.trace import AttentionTrace, HeadTrace, TrainingHistory
from pipeline import sources
from pipeline.chapter import ChapterResult
from pipeline.paths import cache_dir, ensure_cache_dir

RENDERER = "pipeline.chapter"  # the module that turns a scene into a clip


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
        r = m["result"]
        return ChapterResult(r["chapter"], r["duration"], [tuple(s) for s in r["subtitles"]],
                             [], [], 0.0, cached=True, clip=clip)

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
