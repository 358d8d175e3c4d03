"""`explain()`: render a video for a sentence and show it in a notebook."""

from __future__ import annotations

import base64
import hashlib
import html
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from attention_video.attncore.settings import Settings, build_settings, shown
from attention_video.attncore.trace import AttentionTrace
from attention_video.pipeline.cache.paths import settle_cache_dir
from attention_video.pipeline.commands import registry
from attention_video.pipeline.commands.app import (
    Request,
    asked_names,
    make_trace,
    read_cache_limit,
    tidy_cache,
    video_extras,
)
from attention_video.pipeline.commands.modes import MODES, refused
from attention_video.pipeline.outputs.files import (
    chapters_track_path,
    check_outputs,
    check_writable_folder,
    companions,
    page_path,
    slug,
)
from attention_video.pipeline.outputs.page import write_page
from attention_video.pipeline.outputs.subtitles import to_vtt
from attention_video.pipeline.records import ChapterResult
from attention_video.pipeline.run.render import _subtitle_cues, narrator_for, render_video
from attention_video.pipeline.run.stills import make_storyboard
from attention_video.scenes.catalogue import Translate, language_name


def in_colab() -> bool:
    """Colab shows no files of the runtime in an output cell: its videos are embedded."""
    return "google.colab" in sys.modules


@dataclass
class Explanation:
    """A rendered video and what it was made from. In Jupyter it shows as the video with
    its captions; `embed` puts the video into the notebook itself (base64), else the cell
    points at the file, whose name is unique to its content (never a stale video)."""

    settings: Settings
    trace: AttentionTrace  # every number the video shows
    video: Path  # the MP4
    subtitles: Path | None  # the SRT beside it (--captions soft only: else none is written)
    captions: Path | None  # the WebVTT beside it, the <track> of the inline player (soft)
    cues: list[tuple[float, float, str]] = field(repr=False)  # (start, end, caption) in seconds
    duration: float = 0.0  # seconds of video
    embed: bool | None = None  # None: embed in Colab only
    chapters: list[ChapterResult] = field(default_factory=list, repr=False)  # each chapter's
    # clip, length and cues: what the companion page (.page()) ties its numbers to

    def page(self, output: str | Path | None = None, embed: bool = False) -> Path:
        """The companion page (pipeline.outputs.page): one offline HTML file where the video
        plays beside its caption list and every number of the trace opens to show how it
        was made and where the video makes it. Default: beside the video,
        `<video stem>.page.html`; it plays the video by its path relative to the page, with
        its poster frame beside it; `embed`: both inside the page (one file to upload)."""
        if not self.chapters:
            raise ValueError("explain(): this result holds no chapters to tie the page to; "
                             "make it with explain(...)")
        dest = page_path(self.video) if output is None else Path(output)
        check_writable_folder(dest)  # the command line's one-line errors, before any work
        check_outputs({"the companion page": dest,
                       **{f"the {role}": p for role, p in
                          companions(self.video, self.settings.describe).items()}})
        return write_page(self.trace, self.chapters, self.video, self.settings, dest,
                          embed=embed).resolve()

    def storyboard(self, output: str | Path | None = None, **kwargs: Any) -> Storyboard:
        """One still per caption of the same settings, as a PNG contact sheet and a PDF
        handout (pipeline.run.stills; no animation is rendered). Default: beside the video,
        `<video stem>-storyboard.png`. Shown as the contact sheet in Jupyter."""
        png = output or self.video.with_name(f"{self.video.stem}-storyboard.png")
        return Storyboard(make_storyboard(self.settings, self.trace, png, **kwargs))

    def _embedded(self) -> bool:
        return in_colab() if self.embed is None else self.embed

    def _repr_html_(self) -> str:
        return self.html(embed=self._embedded())

    def html(self, embed: bool = False) -> str:
        """A <video>, inline data (embed) or a relative file path. With --captions soft, a
        captions track switched on; burned captions get none, so none shows twice."""
        if embed:
            video = "data:video/mp4;base64," + base64.b64encode(self.video.read_bytes()).decode()
        else:
            video = _relative(self.video)
        return (f'<video controls preload="metadata" style="max-width:100%" '
                f'title="{html.escape(self.settings.sentence)}">'
                f'<source src="{html.escape(video)}" type="video/mp4">'
                f'{self._track(embed)}</video>')

    def _track(self, embed: bool) -> str:
        """The <track> of soft captions, `default` (on), and of the chapters track written
        with them (<stem>.chapters.vtt); nothing when none were written."""
        if self.captions is None:
            return ""
        language = self.settings.language
        label = language_name(language)  # from its catalogue (scenes.catalogue)
        tracks = (f'<track kind="captions" src="{html.escape(self._src(self.captions, embed))}" '
                  f'srclang="{language}" label="{label}" default>')
        chapters = chapters_track_path(self.video)
        if chapters.is_file():
            label = html.escape(Translate(language)("Chapters"))
            tracks += (f'<track kind="chapters" src="{html.escape(self._src(chapters, embed))}" '
                       f'srclang="{language}" label="{label}">')
        return tracks

    @staticmethod
    def _src(vtt: Path, embed: bool) -> str:
        """A WebVTT file's address in the cell: inside it (embed), else its relative path."""
        if embed:
            return "data:text/vtt;base64," + base64.b64encode(vtt.read_bytes()).decode()
        return _relative(vtt)


@dataclass(frozen=True)
class Storyboard:
    """A storyboard (pipeline.records.StoryboardResult: .png, .pdf, .stills) that
    Jupyter shows as its contact sheet."""

    result: Any

    def __getattr__(self, name: str) -> Any:  # only names the dataclass does not have
        if name == "result":  # not set yet (copy, pickle): no recursion
            raise AttributeError(name)
        return getattr(self.result, name)

    def _repr_png_(self) -> bytes:
        return self.result.png.read_bytes()


def _relative(path: Path) -> str:
    """The path as Jupyter serves it: relative to the notebook's folder (the kernel's)."""
    try:
        return Path(os.path.relpath(path)).as_posix()
    except ValueError:  # another drive (Windows)
        return path.as_uri()


def explain(sentence: str, *, chapters: Iterable[int | str] | None = None, quality: str = "l",
            folder: str | Path = "media", embed: bool | None = None, jobs: int | None = None,
            progress: Callable[[str], None] | None = None, slides: bool = False,
            formats: Iterable[str] | None = None, **settings: Any) -> Explanation:
    """Render the video of `sentence` (any of the command's settings as keywords:
    query=, weights=, theme=, language=, ...; quality defaults to the quick 480p draft)
    into `folder`, named after the sentence and a hash of the video, and return it.

    `embed`: put the video into the notebook (True), link the file (False), or embed only
    in Colab (None). `slides` and `formats` (such as ["gif"]) make, beside the video, what
    the command's --slides and --format make; so does the keyword of any output of the
    table that a notebook makes (pipeline.commands.registry). A combination the command
    refuses is refused here with the same line (pipeline.commands.modes)."""
    chapters = _check_arguments(sentence, chapters, quality, folder, embed, jobs, progress)
    _check_names(settings)
    extras = _check_outputs(dict(slides=slides, formats=formats), settings)
    values = dict(settings, sentence=sentence, quality=quality, chapters=chapters)
    checked = build_settings(None, **values)  # every setting checked (SettingsError) first
    say = progress or (lambda s: None)
    limit = read_cache_limit()
    settle_cache_dir()
    narrator = narrator_for(checked)  # the voice tried: a SettingsError before any work
    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ValueError(f"explain(): folder {shown(str(folder))} cannot be made "
                         f"({e.strerror or e})") from None
    with tempfile.TemporaryDirectory(prefix=".explain-", dir=folder) as tmp:
        s = build_settings(None, **values, output=str(Path(tmp) / "video.mp4"))
        trace = make_trace(s, say)
        result = render_video(s, trace=trace, jobs=jobs, progress=say, narrator=narrator)
        cues = _subtitle_cues(result.chapters)
        digest = hashlib.sha256(result.video.read_bytes()).hexdigest()[:10]
        video = folder / f"{slug(sentence)}-{digest}.mp4"
        shutil.move(result.video, video)
        subtitles = captions = None
        if result.subtitles is not None:  # --captions soft: the sidecars (write_video)
            subtitles, captions = video.with_suffix(".srt"), video.with_suffix(".vtt")
            shutil.move(result.subtitles, subtitles)
            captions.write_text(to_vtt(cues), encoding="utf-8")
    video_extras(s, Request(**extras), result.chapters, video, say)
    tidy_cache(limit, say)  # as the command does: the cache stays under its size
    return Explanation(s.replace(output=str(video)), trace, video.resolve(),
                       subtitles and subtitles.resolve(), captions and captions.resolve(),
                       cues, result.duration, embed, result.chapters)


OTHER_NAMES = {"output": "folder (the video is named after the sentence and its content)",
               "sentences": "sentence", "chapter": "chapters", "progress_callback": "progress",
               "format": "formats", "page": ".page() on its result"}  # the command's words, and the argument that does it here


def _check_names(settings: dict[str, Any]) -> None:
    """A keyword that is the command's or a near miss of an argument: a TypeError naming it
    (`output` gave "build_settings() got multiple values for keyword argument 'output'")."""
    for name in settings:
        if name in OTHER_NAMES:
            raise TypeError(f"explain(): {name} is not an argument; did you mean "
                            f"{OTHER_NAMES[name]}?")


def _check_outputs(given: dict[str, Any], settings: dict[str, Any]) -> dict[str, Any]:
    """The outputs asked for (`given`, and the keywords in `settings` that name a mode or
    an output of the command, taken out of it) checked before any work: a ValueError with
    the command's own line for a combination it refuses, one that points at the
    notebook's way for what explain() does not make, and each value checked by its row
    (pipeline.commands.registry). Returns the outputs to make beside the video."""
    names = asked_names()
    given = given | {name: settings.pop(name) for name in list(settings) if name in names}
    why = refused({name: value is not None and value is not False
                   for name, value in given.items()})
    if why is not None:
        raise ValueError(f"explain(): {why}")
    flags = {m.option: m.flag for m in MODES if m.option is not None}
    made = {}
    for name, value in given.items():
        output = registry.by_name(name)
        if output is None or output.python is None or output.kind != "extra":
            if value is not None and value is not False:
                flag = output.flag if output is not None else flags[name]
                also = f" ({output.notebook})" if output is not None and output.notebook else ""
                raise ValueError(f"explain() makes the video: {flag} is the command's{also}")
            continue
        if value is None:
            continue
        try:
            made[name] = output.python(value)
        except TypeError as e:
            raise TypeError(f"explain(): {name} {e}") from None
        except ValueError as e:
            raise ValueError(f"explain(): {name}: {e}") from None
    return made


def _check_arguments(sentence: Any, chapters: Any, quality: Any, folder: Any, embed: Any,
                     jobs: Any, progress: Any) -> tuple[int | str, ...] | None:
    """explain()'s own arguments, checked before any work: a TypeError or ValueError that
    names the argument and says what is allowed. Returns `chapters` as a tuple."""
    def wrong(name: str, allowed: str, value: Any) -> TypeError:
        return TypeError(f"explain(): {name} must be {allowed}, not {value!r}")

    if not isinstance(sentence, str):
        raise wrong("sentence", "a str (the sentence to explain)", sentence)
    if isinstance(chapters, (str, bytes)):
        raise TypeError(f"explain(): chapters must be a list of chapter numbers or slugs, "
                        f"such as [1, 3] or ['dot'], not the string {chapters!r}")
    if chapters is not None:
        if not isinstance(chapters, Iterable):
            raise wrong("chapters", "a list of chapter numbers or slugs, such as [1, 3]",
                        chapters)
        chapters = tuple(chapters)
        for c in chapters:
            if isinstance(c, bool) or not isinstance(c, (int, str)):
                raise TypeError(f"explain(): chapters holds {c!r}; each must be a chapter "
                                "number or slug, such as 3 or 'dot'")
    if not isinstance(quality, str):
        raise wrong("quality", "one of 'l', 'm', 'h', 'k'", quality)
    if not isinstance(folder, (str, os.PathLike)):
        raise wrong("folder", "a folder path (str or Path)", folder)
    above = Path(folder)
    while not above.exists() and above != above.parent:  # the nearest folder that is there
        above = above.parent
    if not above.is_dir():
        where = "is a file" if above == Path(folder) else f"is under {shown(str(above))}, a file"
        raise ValueError(f"explain(): folder {shown(str(folder))} {where}, not a folder")
    if embed is not None and not isinstance(embed, bool):
        raise wrong("embed", "True, False or None", embed)
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int)):
        raise wrong("jobs", "a number of chapters rendered at once (int) or None", jobs)
    if jobs is not None and jobs < 1:
        raise ValueError(f"explain(): jobs must be 1 or more, not {jobs}")
    if progress is not None and not callable(progress):
        raise wrong("progress", "a function taking each progress line, or None", progress)
    return chapters
