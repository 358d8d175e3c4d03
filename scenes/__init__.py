"""One Manim scene per chapter of the video, reading only the trace and the settings.

Which chapters exist, and where their scenes live, is attncore.chapters' table; scene
modules are imported lazily so `import scenes` stays cheap.
"""

from __future__ import annotations

import importlib

from attention_video.attncore.chapters import chapter


def scene_class(slug: str):
    """The scene class that draws chapter `slug`."""
    entry = chapter(slug)
    return getattr(importlib.import_module(entry.module), entry.scene)
