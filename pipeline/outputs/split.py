"""--split: the video as one short file per chapter, with a playlist and an index page.

Attention drops after about six minutes of video; a chapter is one to two. The files go
into `<stem>-chapters/` beside the video: `01-input.mp4`, … (each the chapter's own clip,
joined alone: the same frames, its captions track and narration as the whole video has
them, and one chapter mark), `playlist.m3u` (VLC, mpv and most players play it in order)
and `index.html` (each chapter's title and length, a player for each, nothing fetched).
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path

from attention_video.attncore.chapters import number
from attention_video.attncore.settings import Settings
from attention_video.pipeline.outputs.chapters import chapter_title
from attention_video.pipeline.outputs.files import atomic_output, write_text_atomic
from attention_video.pipeline.outputs.subtitles import SOFT_CAPTIONS
from attention_video.pipeline.outputs.video import join
from attention_video.pipeline.records import ChapterResult, OutputError

MOST_SECONDS = 6 * 60  # a file longer than this is said in the progress line


def split_folder(video: Path) -> Path:
    video = Path(video)
    return video.with_name(video.stem + "-chapters")


def chapter_file(folder: Path, r: ChapterResult) -> Path:
    return folder / f"{number(r.chapter):02d}-{r.chapter}.mp4"


def write_split(video: Path, chapters: Sequence[ChapterResult], settings: Settings
                ) -> list[Path]:
    """Every chapter's file, the playlist and the index page; returns their paths."""
    folder = split_folder(video)
    folder.mkdir(parents=True, exist_ok=True)
    made, language = [], settings.language
    for r in chapters:
        if r.clip is None or not Path(r.clip).is_file():
            raise OutputError(f"--split: the clip of {chapter_title(r, language)} is no longer in the cache "
                              "folder; run the command again to render it")
        out = chapter_file(folder, r)
        with atomic_output(out) as tmp:
            cues = r.subtitles if settings.captions in SOFT_CAPTIONS else None
            join([Path(r.clip)], tmp, keep_track=False, cues=cues,
                 cues_on=settings.captions == "soft", language=settings.language,
                 marks=[(0.0, r.duration, chapter_title(r, language))])
        made.append(out)
    playlist, index = folder / "playlist.m3u", folder / "index.html"
    write_text_atomic(playlist, m3u(chapters, language))
    write_text_atomic(index, index_page(chapters, settings.sentence, settings.language))
    return [*made, playlist, index]


def m3u(chapters: Sequence[ChapterResult], language: str) -> str:
    """An extended M3U playlist: each file with its length and title, in playing order."""
    lines = ["#EXTM3U"]
    for r in chapters:
        lines += [f"#EXTINF:{round(r.duration)},{chapter_title(r, language)}", chapter_file(Path(), r).name]
    return "\n".join(lines) + "\n"


def minutes(seconds: float) -> str:
    whole = round(seconds)
    return f"{whole // 60}:{whole % 60:02d}"


def index_page(chapters: Sequence[ChapterResult], sentence: str, language: str) -> str:
    """One offline page: the sentence, then each chapter's title, length and player."""
    items = "\n".join(
        f'<li><h2><a href="{html.escape(chapter_file(Path(), r).name)}">'
        f"{html.escape(chapter_title(r, language))}</a> <span>{minutes(r.duration)}</span></h2>\n"
        f'<video controls preload="metadata" src="{html.escape(chapter_file(Path(), r).name)}">'
        f"</video></li>" for r in chapters)
    return f"""<!doctype html>
<html lang="{html.escape(language)}">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(sentence)}</title>
<style>
body {{ font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem;
       background: #14161c; color: #e8e8ea; }}
a {{ color: #ffd166; }} h2 {{ font-size: 1.2rem; }} h2 span {{ color: #b8bcc8; font-weight: normal; }}
video {{ width: 100%; max-width: 48rem; }} ol {{ padding-left: 1.2rem; }}
</style></head>
<body>
<h1>{html.escape(sentence)}</h1>
<p><a href="playlist.m3u">playlist.m3u</a>: every chapter in order, in a player.</p>
<ol>
{items}
</ol>
</body></html>
"""
