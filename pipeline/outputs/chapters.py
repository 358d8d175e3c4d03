"""The video's chapters as a player sees them: each chapter's title and its span in the whole
video, from one record (`chapter_marks`). The MP4's and WebM's chapter marks, the WebVTT
chapters track beside the video (`<stem>.chapters.vtt`), the companion page's chapter menu
and its chapters track, the deck's chapter menu, the --split files and the transcript's
headings all read it, so a title or a time cannot differ between them.
"""

from __future__ import annotations

from collections.abc import Sequence

from attention_video.attncore.chapters import chapter, number
from attention_video.pipeline.outputs.subtitles import vtt_text, vtt_time
from attention_video.pipeline.records import ChapterResult, Cue
from attention_video.scenes.catalogue import Translate


def chapter_title(r: ChapterResult, language: str) -> str:
    """The chapter's title as its scene showed it (in the caption language), else, for a
    clip kept before titles were recorded, its number and its title's message translated
    into `language`."""
    if r.title:
        return r.title
    return f"{number(r.chapter)} · {Translate(language)(chapter(r.chapter).title)}"


def chapter_marks(chapters: Sequence[ChapterResult], language: str) -> list[Cue]:
    """Each chapter as (start, end, its title) in seconds of the whole video, in playing
    order: one chapter starts where the one before it ends."""
    marks, offset = [], 0.0
    for r in chapters:
        marks.append((offset, offset + r.duration, chapter_title(r, language)))
        offset += r.duration
    return marks


def to_chapters_vtt(chapters: Sequence[ChapterResult], language: str) -> str:
    """A WebVTT chapters track (what `<track kind="chapters">` and web players read): one
    cue per chapter, identified by its slug, spanning the chapter, its text the title."""
    out = ["WEBVTT\n"]
    for r, (start, end, title) in zip(chapters, chapter_marks(chapters, language)):
        out.append(f"{r.chapter}\n{vtt_time(start)} --> {vtt_time(end)}\n{vtt_text(title)}\n")
    return "\n".join(out)
