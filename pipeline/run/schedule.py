"""The order chapters go to the workers: longest first, so that the workers finish
together. A chapter started last that takes three times as long as the others leaves
one worker idle for most of it (the pretrained model's `heads` chapter, with 12 heads and
the 6 × 12 overview, used to be sent eighth and cost a `-q l` render a quarter of its
time).

How long a chapter takes depends on the model far more than on anything else: the
estimate is the time it took the last time a video of the same kind was rendered with
this cache (`Timings`), or else what it took on the development machine (its row's
`cost` in attncore.chapters, for a small or a large model: `cost_profile`).
Only the order matters, never the figures themselves.
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
from pathlib import Path
from typing import Literal

from attention_video.attncore.chapters import CHAPTERS
from attention_video.attncore.settings import Settings
from attention_video.attncore.trace import AttentionTrace

TIMINGS_FILE = "timings.json"


def kind(trace: AttentionTrace, settings: Settings) -> str:
    """What a chapter's render time depends on, besides the chapter: the model, the
    number of heads and of words, and the quality."""
    return f"{trace.source}/{len(trace.heads)}h/{trace.n_q}x{trace.n_k}/{settings.quality}"


class Timings:
    """Seconds each chapter took, by kind of video, kept in the chapter cache's folder."""

    def __init__(self, folder: Path):
        self.path = Path(folder) / TIMINGS_FILE
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            self.seconds: dict[str, float] = {k: float(v) for k, v in data.items()}
        except (OSError, ValueError, TypeError, AttributeError):
            self.seconds = {}  # none yet, or unreadable: the measured figures order them
        self._changed = False

    def get(self, chapter: str, trace: AttentionTrace, settings: Settings) -> float | None:
        return self.seconds.get(f"{kind(trace, settings)}/{chapter}")

    def record(self, chapter: str, trace: AttentionTrace, settings: Settings,
               seconds: float) -> None:
        self.seconds[f"{kind(trace, settings)}/{chapter}"] = round(seconds, 2)
        self._changed = True

    def save(self) -> None:
        """Written whole and renamed into place; a failure to write costs only the order."""
        if not self._changed:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".timings.", suffix=".part", dir=self.path.parent)
        except OSError:
            return
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(self.seconds, f, indent=0, sort_keys=True)
            os.replace(tmp, self.path)
        except OSError:
            Path(tmp).unlink(missing_ok=True)
            return
        self._changed = False


def cost_profile(trace: AttentionTrace) -> Literal["small", "large"]:
    """Which of a chapter row's measured costs fits this trace's model: "large" for a real
    model with layers of its own (the costs were measured on the pretrained encoder),
    "small" for the models sized by the settings."""
    return "large" if trace.can.layered else "small"


def measured(trace: AttentionTrace) -> dict[str, float]:
    """Each chapter's measured seconds for this trace's kind of model (the chapter rows'
    costs); a chapter never measured for it is left out."""
    profile = cost_profile(trace)
    return {c.slug: seconds for c in CHAPTERS
            if (seconds := getattr(c.cost, profile)) is not None}


def expected_seconds(chapter: str, trace: AttentionTrace, settings: Settings,
                     timings: Timings | None = None) -> float:
    """How long chapter `chapter` should take, for ordering (larger: sent earlier): the
    time recorded for it, or the measured figure scaled as the chapters recorded for the
    same kind of video compare with theirs (the machine, the quality). A chapter with no
    measured figure for the model is counted as its longest."""
    table = measured(trace)
    static = table.get(chapter, max(table.values()))
    if timings is None:
        return static
    known = timings.get(chapter, trace, settings)
    if known is not None:
        return known
    ratios = [seconds / table[c] for c in table
              if (seconds := timings.get(c, trace, settings)) is not None]
    return static * (statistics.median(ratios) if ratios else 1.0)


def longest_first(chapters: list[str], trace: AttentionTrace, settings: Settings,
                  timings: Timings | None = None) -> list[int]:
    return sorted(chapters, key=lambda c: -expected_seconds(c, trace, settings, timings))
