"""What a chapter draws with, held once: its theme, its words (the caption language's
catalogue), the recorder every drawn number goes through, and the pace of its captions.

The chapter scene makes it and hands it to the builders that need more than one of these,
instead of threading a theme, a translator and a recorder through each signature."""

from __future__ import annotations

from dataclasses import dataclass

from attention_video.scenes.catalogue import Translate
from attention_video.scenes.themes import THEMES, Theme
from attention_video.scenes.widgets import Recorder


@dataclass(frozen=True)
class ChapterContext:
    theme: Theme
    tr: Translate  # the caption language's words
    record: Recorder  # every number drawn, for the truth check
    pace: float = 1.0  # how long captions stay up (scenes.pacing)

    @property
    def language(self) -> str:
        return self.tr.language

    @classmethod
    def of(cls, theme: str, language: str, pace: float = 1.0) -> ChapterContext:
        """A context by name: THEMES[theme], the catalogue of `language`, a new recorder."""
        return cls(THEMES[theme], Translate(language), Recorder(), pace)
