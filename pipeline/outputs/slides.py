"""A lecture deck from the chapter clips: one step per caption, as one self-contained HTML
file (reveal.js, played offline) and a PPTX (one slide per step, the caption as notes;
described, its description too).

A step holds on its caption's whole picture: it is cut where that picture is complete
(ChapterScene.caption_ends: before the next caption replaces it, the stage is cleared or
the chapter fades out), and the next step starts there. The clips are cut by stream copy
(Manim writes every animation as its own segment, so each starts on a keyframe; a cut
that is not on one is re-encoded, that step alone). manim-slides' converters make both
files from its JSON description of the steps; its Qt player is never imported.
"""

from __future__ import annotations

import functools
import tempfile
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any
from unittest.mock import patch

import av
import numpy as np
from attention_video.pipeline.outputs.audio import RATE, add_track, fit, normalise, read_track
from attention_video.pipeline.outputs.chapters import chapter_marks
from attention_video.pipeline.outputs.files import atomic_output, deck_path, relative_href
from attention_video.pipeline.records import ChapterResult
from attention_video.scenes.catalogue import Translate
from attention_video.scenes.deck_words import deck_words
from attention_video.scenes.typeset import unicode_text
from PIL import Image

REVEAL_DIR = Path(__file__).parent / "revealjs"  # vendored reveal.js 6.0.1 (MIT, LICENSE there)
# The deck's page, rendered by manim-slides: its template with reveal.js from REVEAL_DIR (the
# converter's `assets_dir`, which a one-file deck does not write to) and no step muted.
TEMPLATE = REVEAL_DIR / "deck.html"


@dataclass(frozen=True)
class Step:
    """One press of →: a clip that plays once and holds on its last frame (its picture)."""

    chapter: str  # its slug
    start: float  # seconds into the chapter's clip
    end: float
    notes: str  # the caption shown during the step
    clip: Path | None = None
    sound: bool = False  # its clip carries a stretch of the narration


def plan_steps(chapters: list[ChapterResult], picture: str = "") -> list[Step]:
    """One step per caption, ending where the caption's picture is complete (its hold) and
    the next starting there: what comes between (a stage being cleared, the next caption
    coming in) opens the next step, and a chapter's closing fade is left out. A chapter's
    first step starts at the chapter's start (its title comes with the first caption).
    Without holds (a result that has none), a step runs to the next caption's start.
    Its notes are its caption, and with `picture` (the catalogue's "The picture:", for a
    described video) its description after it (step_notes)."""
    steps = []
    for r in chapters:
        holds = r.holds if len(r.holds) == len(r.subtitles) else [None] * len(r.subtitles)
        described = (r.descriptions if picture and len(r.descriptions) == len(r.subtitles)
                     else [""] * len(r.subtitles))
        kept = [(c, h, d) for c, h, d in zip(r.subtitles, holds, described) if c[1] - c[0] >= 0.05]
        kept = kept or [((0.0, r.duration, ""), None, "")]
        start = 0.0
        for k, (cue, hold, description) in enumerate(kept):
            end = hold if hold is not None and hold > start else (
                kept[k + 1][0][0] if k + 1 < len(kept) else r.duration)
            steps.append(Step(r.chapter, start, end, step_notes(cue[2], description, picture)))
            start = end
    return steps


def step_notes(caption: str, description: str, picture: str) -> str:
    """A step's speaker notes, plain text (PPTX notes; reveal.js's): its caption and, when
    described, what its picture shows that the caption does not say, for a lecturer to
    read out to someone who cannot see the screen; maths in Unicode's small letters."""
    notes = caption if not description else f"{caption}\n\n{picture} {description}"
    return unicode_text(notes)


def cut_steps(chapters: list[ChapterResult], folder: Path, picture: str = "") -> list[Step]:
    """Write each step's clip into `folder` (step01.mp4, ...). A narrated chapter's steps
    each carry their own stretch of its sound (deck_sound), as AAC at the online loudness
    standard (pipeline.outputs.audio.normalise: −16 LUFS, true peak under −1 dBTP)."""
    clips = {r.chapter: r.clip for r in chapters}
    sounds = {r.chapter: deck_sound(r.clip) for r in chapters}
    steps = []
    for i, s in enumerate(plan_steps(chapters, picture), 1):
        out = folder / f"step{i:02d}.mp4"
        cut(clips[s.chapter], s.start, s.end, out)
        sound = sounds[s.chapter]
        if sound is not None:
            stretch = fit(sound[round(s.start * RATE):], s.end - s.start)
            add_track(out, normalise(stretch), codec="aac")
        steps.append(Step(s.chapter, s.start, s.end, s.notes, out, sound is not None))
    return steps


def deck_sound(clip: Path) -> np.ndarray | None:
    """The sound a deck's steps play: the described narration where the clip has one
    (--describe --voice), else the narration (None: silent). A lecturer who asked for
    descriptions has a listener who cannot see the screen, and a room hears one sound:
    the steps are already held for the descriptions, where the plain narration is silent,
    and a class that sees the picture loses only those seconds."""
    described = read_track(clip, index=1)
    return described if described is not None else read_track(clip)


def cut(src: Path, start: float, end: float, out: Path) -> None:
    """The frames of `src` from `start` to `end` (seconds) as a clip of their own: by
    stream copy when `start` is on a keyframe (within half a frame), else re-encoded."""
    with av.open(str(src)) as c:
        s = c.streams.video[0]
        tb, half = s.time_base, 1 / (2 * float(s.average_rate or 30))
        keys = [p.pts for p in c.demux(s) if p.is_keyframe and p.pts is not None]
    a = next((k for k in keys if abs(float(k * tb) - start) <= half), None)
    b = next((k for k in keys if abs(float(k * tb) - end) <= half), None)
    if a is None:
        _reencode(src, start, end, out)
        return
    with av.open(str(src)) as c, av.open(str(out), "w", format="mp4",
                                         options={"movflags": "+faststart"}) as dst:
        s = c.streams.video[0]
        ostream = dst.add_stream_from_template(s)
        stop = b if b is not None else round(Fraction(end) / tb)  # later frames go
        for pkt in c.demux(s):
            if pkt.pts is None or not a <= pkt.pts < stop:
                continue
            pkt.pts -= a
            pkt.dts -= a
            pkt.stream = ostream
            dst.mux(pkt)


def _reencode(src: Path, start: float, end: float, out: Path) -> None:
    """Decode `src` and encode what is shown from `start` to `end` (H.264 as Manim's), each
    frame at its own time: a held frame (stored once, shown for a whole hold) stays held,
    and a hold that began before `start` is what the step opens on."""
    with av.open(str(src)) as c, av.open(str(out), "w", format="mp4",
                                         options={"movflags": "+faststart"}) as dst:
        s = c.streams.video[0]
        rate = s.base_rate or s.average_rate or Fraction(30)  # the timestamps' grid
        o = dst.add_stream("libx264", rate=rate, options={"crf": "23", "preset": "veryfast"})
        o.width, o.height, o.pix_fmt = s.codec_context.width, s.codec_context.height, "yuv420p"
        half = 1 / (2 * float(rate))

        def put(frame: av.VideoFrame, t: float) -> None:
            frame.pts, frame.time_base = round((t - start) * rate), Fraction(1) / rate
            dst.mux(o.encode(frame.reformat(format="yuv420p")))

        before = None  # the last frame shown before `start`
        for frame in c.decode(s):
            t = float(frame.pts * s.time_base)
            if t < start - half:
                before = frame
                continue
            if t >= end - half:
                break
            if before is not None and t > start + half:
                put(before, start)  # on screen at `start`: a hold that began earlier
            before = None
            put(frame, t)
        if before is not None:  # nothing new from `start` to `end`: one held frame
            put(before, start)
        dst.mux(o.encode(None))


def write_description(steps: list[Step], path: Path, background: str,
                      resolution: tuple[int, int]) -> None:
    """manim-slides' JSON description of the presentation (its `PresentationConfig`):
    one slide per step, played once, no auto-advance, the caption as notes."""
    # Lazy on purpose: manim-slides (Manim's slides: pydantic, ~1 s to load) only for --slides.
    from manim_slides.config import PresentationConfig, SlideConfig

    config = PresentationConfig(
        slides=[SlideConfig(file=s.clip, rev_file=s.clip, notes=s.notes, loop=False,
                            auto_next=False, dedent_notes=False) for s in steps],
        resolution=resolution, background_color=background)
    path.write_text(config.model_dump_json(indent=2), encoding="utf-8")


# reveal.js's options for the deck (manim-slides' names; its defaults hide all of these):
# the arrows on screen (at the sides, clear of the captions and the corners), a progress
# bar, "step / steps", and the step in the URL (#/step, from 1 as the number shown) so
# that a reload resumes where the deck was.
DECK_OPTIONS = {"controls": "true", "controls_layout": "edges", "progress": "true",
                "slide_number": "c/t",
                "hash": "true", "hash_one_based_index": "true",
                "respond_to_hash_changes": "true"}


def deck_chapters(steps: list[Step], chapters: list[ChapterResult], language: str
                  ) -> list[tuple[int, str]]:
    """Each chapter as (its first step, from 1 as the deck's URL counts: #/step, its title
    as the video's chapter marks name it): the deck's chapter menu and its [ ] keys."""
    first: dict[str, int] = {}
    for n, step in enumerate(steps, 1):
        first.setdefault(step.chapter, n)
    return [(first[r.chapter], title) for r, (_, _, title) in
            zip(chapters, chapter_marks(chapters, language)) if r.chapter in first]


def write_html(description: Path, dest: Path, title: str, steps: list[Step],
               page: Path | None = None, language: str = "en",
               chapters: list[tuple[int, str]] | None = None) -> None:
    """The deck as one HTML file (clips as data URIs, reveal.js inlined: it works offline),
    rendered by manim-slides' converter from the project's template (revealjs/deck.html).
    A step with sound is not muted, so a narrated deck speaks from its first step; a silent
    step is, so the browser plays it without asking for sound (no "Unmute video" button).
    `page`: the companion page the deck links to, when it is made too; `chapters`: each
    chapter's first step and title (deck_chapters), for the chapter menu and the [ ] keys
    (none, or one: no menu)."""
    # Lazy on purpose: manim-slides (Manim's slides: pydantic, ~1 s to load) only for --slides.
    from manim_slides.config import PresentationConfig

    config = PresentationConfig.from_file(description)
    words = deck_words(Translate(language))
    converter = deck_converter()(
        presentation_configs=[config], template=TEMPLATE, one_file=True,
        assets_dir=str(REVEAL_DIR), title=title, **DECK_OPTIONS,
        silent=[not s.sound for s in steps], language=language,
        page_href=relative_href(page, dest) if page is not None else None,
        page_text=words["page"], page_hint=words["page_hint"],
        chapters=chapters or [], chapters_text=words["chapters"],
        chapter_keys=words["chapter_keys"], previous_chapter=words["previous_chapter"],
        next_chapter=words["next_chapter"])
    with atomic_output(dest) as tmp:
        converter.convert_to(tmp)


@functools.cache
def deck_converter() -> type:
    """manim-slides' RevealJS converter with what the project's template reads besides its
    options: which steps are silent, the language, the link to the companion page and the
    chapter menu."""
    # Lazy on purpose: manim-slides (Manim's slides: pydantic, ~1 s to load) only for --slides.
    from manim_slides.convert import RevealJS

    class Deck(RevealJS):
        silent: list[bool] = []  # per step: no sound, so it plays muted
        language: str = "en"
        page_href: str | None = None
        page_text: str = ""
        page_hint: str = ""
        chapters: list[tuple[int, str]] = []  # (first step from 1, title): the chapter menu
        chapters_text: str = ""
        chapter_keys: str = ""
        previous_chapter: str = ""
        next_chapter: str = ""

    return Deck


def held_frame(clip: Path, frame_index: Any = None) -> Image.Image:
    """The last frame of `clip`: the picture its step holds on (`frame_index`: the
    converter's argument, which this ignores)."""
    with av.open(str(clip)) as c:
        (frame,) = deque(c.decode(video=0), maxlen=1)
        return frame.to_image()


def _quietly(items: Iterable, **_: Any) -> Iterable:
    return items


def write_pptx(description: Path, dest: Path) -> None:
    """The deck as PPTX: one slide per step, the clip as a movie that plays on entry, its
    preview (poster frame) the step's held picture. The converter would take each clip's
    first frame (the step before's picture, or a chapter's blank opening) and draw a tqdm
    bar (tqdm reads TQDM_DISABLE once, on import): both are replaced in its module."""
    # Lazy on purpose: manim-slides (Manim's slides: pydantic, ~1 s to load) only for --slides.
    from manim_slides.config import PresentationConfig
    from manim_slides.convert import PowerPoint

    config = PresentationConfig.from_file(description)
    with (atomic_output(dest) as tmp,
          patch("manim_slides.convert.read_image_from_video_file", held_frame),
          patch("manim_slides.convert.tqdm", _quietly)):
        PowerPoint(presentation_configs=[config]).convert_to(tmp)
        fit_notes_pages(tmp)


NOTES_GAP = 457_200  # EMU (0.5 in): between a notes page's picture and its notes


def fit_notes_pages(pptx: Path) -> None:
    """Give the notes pages' picture the slides' own shape (16:9): python-pptx's notes
    master has a 4:3 box, in which the slide was letterboxed. The box is made as wide as the
    notes text and as tall as the slides' aspect asks, the notes text starts below it; every
    notes page takes both from the master."""
    from pptx import Presentation
    from pptx.enum.shapes import PP_PLACEHOLDER

    deck = Presentation(str(pptx))
    boxes = {p.placeholder_format.type: p for p in deck.notes_master.placeholders}
    picture, notes = boxes[PP_PLACEHOLDER.SLIDE_IMAGE], boxes[PP_PLACEHOLDER.BODY]
    bottom = notes.top + notes.height
    picture.left, picture.width = notes.left, notes.width
    picture.height = round(notes.width * deck.slide_height / deck.slide_width)
    notes.top = picture.top + picture.height + NOTES_GAP
    notes.height = bottom - notes.top
    deck.save(str(pptx))


def write_slides(chapters: list[ChapterResult], video: Path, title: str, background: str,
                 page: Path | None = None, language: str = "en",
                 describe: bool = False) -> tuple[Path, Path, int]:
    """`video`'s deck beside it with the same stem (.html, .pptx), its words in `language`
    and the HTML deck linking to the companion page `page` when one is made too; returns
    both paths and the number of steps. `describe` (--describe): each step's notes say
    what its picture shows after its caption."""
    html_path, pptx_path = deck_path(video), video.with_suffix(".pptx")
    picture = deck_words(Translate(language))["picture"] if describe else ""
    with tempfile.TemporaryDirectory(prefix="attention-slides-") as tmp:
        folder = Path(tmp)
        steps = cut_steps(chapters, folder, picture)
        with av.open(str(steps[0].clip)) as c:
            cc = c.streams.video[0].codec_context
            resolution = (cc.width, cc.height)
        description = folder / "presentation.json"
        write_description(steps, description, background, resolution)
        write_html(description, html_path, title, steps, page, language,
                   deck_chapters(steps, chapters, language))
        write_pptx(description, pptx_path)
    return html_path, pptx_path, len(steps)
