"""What running, the cache and the outputs hand each other: plain records, no behaviour.

A chapter's render gives a ChapterResult (its clip, its cues and holds); the cache keeps
and returns one; the outputs join, caption and deck them. The storyboard's stills go the
same way: taken by run.stills, laid out by outputs.storyboard. Kept below all three so
that none imports another for a type.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

Cue = tuple[float, float, str]  # (start, end, text) in seconds


class OutputError(OSError):
    """An output cannot be written: says where and why, in one line."""


@dataclass
class ChapterResult:
    chapter: str
    duration: float  # seconds of video
    subtitles: list[Cue]  # chapter-relative
    drawn: list[tuple[str, tuple, str]] = field(default_factory=list)
    off_frame: list[tuple] = field(default_factory=list)
    seconds: float = 0.0  # wall time spent
    cached: bool = False
    clip: Path | None = None
    stages: dict[str, float] = field(default_factory=dict)  # seconds per stage (fastmanim.encoder)
    holds: list[float] = field(default_factory=list)  # per subtitle: its picture complete (s)
    # Each trace key the chapter makes (ChapterScene.makes) → the start of the caption on
    # screen while it is drawn being made, chapter-relative seconds.
    made: dict[str, float] = field(default_factory=dict)
    title: str = ""  # the chapter's title as its scene showed it (the video's chapter marks)
    # Per subtitle, what its picture shows that it does not say (scenes.describe): the
    # descriptions track and the transcript read it
    descriptions: list[str] = field(default_factory=list)
    # ... and the records they were made from, with the numbers each states (not cached)
    described: list = field(default_factory=list)
    # Per subtitle, when the described narration (--describe --voice) says its description,
    # (start, end) chapter-relative, None where it says none: the descriptions track's times
    described_at: list[tuple[float, float] | None] = field(default_factory=list)


@dataclass(frozen=True)
class Still:
    """One caption's still, for the storyboard."""

    chapter: str
    title: str  # the chapter's title, as its scene showed it
    caption: str  # the caption on screen, as the subtitles have it
    image: np.ndarray  # (H, W, 3) uint8, the frame when the caption was about to leave
    # (width, height) → the image resized for a sheet, made by the worker that drew it
    # (in parallel, rather than one after another once every still is back)
    resized: dict[tuple[int, int], np.ndarray] = field(default_factory=dict, compare=False)
    # the same frame as Cairo drawing calls (pipeline.outputs.storyboard.VectorStill), for
    # the PDF handout to draw as vectors; None: the handout pastes the image
    vector: object = field(default=None, compare=False)


@dataclass
class ChapterStills:
    chapter: str
    stills: list[Still]
    subtitles: list[Cue]  # as the dry run records them
    seconds: float = 0.0  # wall time spent


@dataclass
class StoryboardResult:
    png: Path
    pdf: Path
    stills: list[Still] = field(default_factory=list)
    pages: int = 0  # of the PDF
    seconds: float = 0.0
