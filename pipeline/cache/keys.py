"""The key a chapter's clip is kept under: exactly what the clip depends on.

Key = the chapter, the parts of the trace it draws (all of it, less the followed word
for chapters that do not show it), the settings its scene may read
(attncore.chapters.SCENE_SETTINGS: theme, language, pace, voice) and the quality, the voice
that narrates it (the narrator's identity: its file's hash and the piper version), the
chapters of the plan whose presence it states (its `reads_plan`), and the code that draws
it: every project file its scene module and the renderer import, directly or transitively
(pipeline.cache.sources), and the Manim version. All of it is read from the chapter table,
so a key is made without importing a scene (or Manim).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from importlib.metadata import version
from pathlib import Path

import numpy as np
from attention_video.attncore.chapters import DESCRIBE_SETTINGS, QUESTION_SETTINGS, SCENE_SETTINGS
from attention_video.attncore.chapters import chapter as chapter_entry
from attention_video.attncore.questions import questions
from attention_video.attncore.settings import Settings
from attention_video.attncore.trace import AttentionTrace, HeadTrace, RotaryTrace, TrainingHistory
from attention_video.pipeline.cache import sources
from attention_video.scenes.voice import Narrator

RENDERER = "attention_video.pipeline.run.chapter"  # the module that turns a scene into a clip


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
    if trace.rope is not None:
        h.update(f"rope {trace.rope.base!r}".encode())
        for name in RotaryTrace.ARRAYS:
            _update_array(h, "rope." + name, getattr(trace.rope, name))
    if trace.kv_heads is not None:
        h.update(json.dumps({"kv_heads": list(trace.kv_heads)}).encode())
    if trace.query_inputs is not None:
        h.update(json.dumps([(t.text, t.kind) for t in trace.query_inputs],
                            ensure_ascii=False).encode())
    scalars = ["head_index", "source", "model_name", "layer", "causal", "cross", "normalized",
               "seed", "x_label", "x_from", "source_reason", "x_label_q",
               "positional"] + (["focus"] if with_focus else [])
    h.update(json.dumps({k: getattr(trace, k) for k in scalars}, sort_keys=True).encode())
    h.update(json.dumps(asdict(trace.can), sort_keys=True).encode())
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


def asks_in(chapter: str, trace: AttentionTrace) -> bool:
    """Whether chapter `chapter` opens with a question (attncore.questions)."""
    return any(q.before == chapter for q in questions(trace))


def chapter_key(chapter: str, trace: AttentionTrace, settings: Settings,
                plan: tuple[str, ...], narrator: Narrator | None = None) -> str:
    """The key of chapter `chapter`'s clip in a video that plays `plan`, said by
    `narrator` (None: silent)."""
    entry = chapter_entry(chapter)
    parts = {
        "chapter": chapter,
        "trace": trace_digest(trace, with_focus=entry.reads_focus),
        "settings": {f: getattr(settings, f) for f in SCENE_SETTINGS},
        "quality": settings.quality,
        "plan": {c: c in plan for c in entry.reads_plan},
        "code": code_digest(chapter),
    }
    if narrator is not None:  # what says it: the file, not its name
        parts["voice"] = narrator.identity
    if settings.questions and asks_in(chapter, trace):  # a variant of the chapters that ask
        parts["questions"] = {f: getattr(settings, f) for f in QUESTION_SETTINGS}
    if settings.describe and narrator is not None:  # a described narration: longer holds
        parts["describe"] = {f: getattr(settings, f) for f in DESCRIBE_SETTINGS}
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:32]
