"""One Manim scene per chapter of the video, reading only the trace and the settings."""

from __future__ import annotations

import importlib

# chapter → (module, scene class); imported lazily so `import scenes` stays cheap.
CHAPTERS: dict[int, tuple[str, str]] = {
    1: ("scenes.ch1_input", "InputScene"),
    2: ("scenes.ch2_linear", "LinearScene"),
    3: ("scenes.ch3_factor", "FactorScene"),
    4: ("scenes.ch4_dot", "DotProductScene"),
    5: ("scenes.ch5_softmax", "SoftmaxScene"),
    6: ("scenes.ch6_weighted_sum", "WeightedSumScene"),
    7: ("scenes.ch7_qkv", "QKVScene"),
    8: ("scenes.ch8_learning", "LearningScene"),
    9: ("scenes.ch9_summary", "SummaryScene"),
}


def scene_class(chapter: int):
    module, name = CHAPTERS[chapter]
    return getattr(importlib.import_module(module), name)


def available_chapters() -> tuple[int, ...]:
    """Chapters whose scene module exists in this installation."""
    out = []
    for ch, (module, _) in CHAPTERS.items():
        try:
            importlib.util.find_spec(module)
        except ModuleNotFoundError:
            continue
        if importlib.util.find_spec(module) is not None:
            out.append(ch)
    return tuple(out)
