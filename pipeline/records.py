"""What running, the cache and the outputs hand each other: plain records, no behaviour.

A chapter's render gives a ChapterResult (its clip, its cues and holds); the cache keeps
and returns one; the outputs join, caption and deck them. Kept below all three so that
none imports another for a type.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

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
