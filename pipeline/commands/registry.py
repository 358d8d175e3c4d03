"""The outputs a run can make besides the video, or instead of it: one row each.

A row declares the output's option, the files it writes, what it cannot be combined with
and how it is written. The command line (pipeline.commands.cli) makes its options from
the rows, the path planner (app.planned_outputs) asks each row for its paths before any
work, app writes the exports and the extras through them, pipeline.commands.modes
refuses what they refuse, and attention_video.api.explain takes those a notebook can
make as keywords. A new output is one module that writes it and one row in OUTPUTS.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from attention_video.attncore.settings import Settings
from attention_video.attncore.trace import AttentionTrace
from attention_video.pipeline.cache.limits import human_size
from attention_video.pipeline.outputs.exports import write_csv, write_json
from attention_video.pipeline.outputs.files import deck_path, page_path, poster_path
from attention_video.pipeline.outputs.formats import derive_formats, parse_formats
from attention_video.pipeline.outputs.page import write_page
from attention_video.pipeline.outputs.quiz import quiz_path, write_quiz
from attention_video.pipeline.outputs.slides import write_slides
from attention_video.pipeline.outputs.split import split_folder, write_split
from attention_video.pipeline.outputs.storyboard import storyboard_path
from attention_video.pipeline.outputs.transcript import transcript_path, write_transcript
from attention_video.pipeline.records import ChapterResult
from attention_video.scenes.themes import THEMES

# extra: made from the finished video, beside it; export: written from the trace before
# any chapter is rendered; mode: made instead of the video (app has its function, and
# pipeline.commands.modes says which mode wins when several are given)
Kind = Literal["extra", "export", "mode"]
Say = Callable[[str], None]
Wrote = Callable[[str, Path, str], None]  # (what, path, its size or "") for each file made


@dataclass(frozen=True)
class Option:
    """How an output is asked for on the command line."""

    flags: tuple[str, ...]  # the last names it in messages: ("--format",)
    help: str
    value: Literal["flag", "text", "path"] = "flag"  # on/off; text for `parse`; a path
    metavar: str | None = None
    group: str = "Outputs"  # its section of --help


@dataclass(frozen=True)
class Planned:
    """What an output's paths are planned from, before any work."""

    settings: Settings
    video: Path  # where the video goes
    value: Any  # what its option was given


@dataclass(frozen=True)
class Job:
    """What an output is written from. Exports get no video or chapters yet."""

    settings: Settings
    trace: AttentionTrace
    value: Any  # what its option was given
    say: Say  # a progress line
    wrote: Wrote  # a file made: shown once, as every output's paths are
    video: Path | None = None
    chapters: Sequence[ChapterResult] = ()
    made: frozenset[str] = frozenset()  # the names of the outputs this run makes: the deck
    # and the page link to each other when both are made


def _no_paths(plan: Planned) -> dict[str, Path]:
    return {}


def _flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"must be True or False, not {value!r}")
    return value


@dataclass(frozen=True)
class Output:
    """One output: its option, its paths by role, what it refuses and how it is written."""

    name: str  # its key in a Request, the command's parameter and explain()'s keyword
    kind: Kind
    option: Option
    files: Callable[[Planned], dict[str, Path]] = _no_paths  # role → path
    folders: Callable[[Planned], dict[str, Path]] = _no_paths  # role → a folder it fills
    write: Callable[[Job], None] | None = None  # None for a mode: app has its function
    parse: Callable[[str], Any] | None = None  # text option → value; ValueError: one line
    # the names of the options it cannot be combined with, and the line that says why
    # (given the flags of those that were); `refuses_extras`: every extra too, since it
    # makes no video to make them from
    refuses: tuple[str, ...] = ()
    refuses_extras: bool = False
    refusal: Callable[[list[str]], str] | None = None
    # explain()'s keyword → the value (TypeError/ValueError with the reason); None: a
    # notebook does not make it this way, and `notebook` says what it does instead
    python: Callable[[Any], Any] | None = None
    notebook: str = ""
    takes_output: bool = False  # -o names its file instead of the video's

    @property
    def flag(self) -> str:
        return self.option.flags[-1]


def _format_files(plan: Planned) -> dict[str, Path]:
    return {f"the {kind.upper()}": plan.video.with_suffix(f".{kind}")
            for kind in plan.value if kind != "mp4"}


def _write_formats(job: Job) -> None:
    for made in derive_formats(job.video, job.value):
        job.wrote(made.format, made.path, human_size(made.size))


def _python_formats(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        raise TypeError(f"must be a list such as ['gif'], not the string {value!r}")
    try:
        return parse_formats(",".join(["mp4", *value]))
    except (TypeError, ValueError) as e:
        raise ValueError(str(e)) from None


def _write_slides(job: Job) -> None:
    page = page_path(job.video) if {"page", "page_embed"} & set(job.made) else None
    html, pptx, steps = write_slides(list(job.chapters), job.video, job.settings.sentence,
                                     THEMES[job.settings.theme].background, page,
                                     job.settings.language, job.settings.describe)
    job.say(f"slides:    {steps} steps, one per caption")
    job.wrote("slides", html, "")
    job.wrote("slides", pptx, "")


def _write_page(job: Job) -> None:
    deck = deck_path(job.video) if "slides" in job.made else None
    page = write_page(job.trace, list(job.chapters), job.video, job.settings, deck=deck)
    job.wrote("page", page, human_size(page.stat().st_size))
    job.wrote("poster", poster_path(page), "")


def _write_page_embed(job: Job) -> None:
    deck = deck_path(job.video) if "slides" in job.made else None
    page = write_page(job.trace, list(job.chapters), job.video, job.settings, embed=True,
                      deck=deck)
    job.wrote("page", page, human_size(page.stat().st_size) + ", the video inside it")


def _write_split(job: Job) -> None:
    made = write_split(job.video, list(job.chapters), job.settings)
    longest = max(r.duration for r in job.chapters)
    job.say(f"split:     {len(made) - 2} files, the longest {longest / 60:.1f} min")
    job.wrote("the chapters", made[-1].parent, "")


def _write_transcript(job: Job) -> None:
    path = write_transcript(job.value, job.trace, list(job.chapters), job.settings)
    job.wrote("the transcript", path, "")


def _storyboard_files(plan: Planned) -> dict[str, Path]:
    png = storyboard_path(plan.settings.sentence, given_path(plan.value))
    return {"the storyboard": png, "the PDF handout": png.with_suffix(".pdf")}


def given_path(value: Any) -> str | None:
    """The path an output's option named (-o with `takes_output`), or None: its default."""
    return value if isinstance(value, (str, Path)) else None


def _write_json(job: Job) -> None:
    write_json(job.value, job.trace, job.settings)
    job.say(f"trace:     {job.value}")


def _write_csv(job: Job) -> None:
    write_csv(job.value, job.trace)
    job.say(f"tables:    {job.value}/")


def _write_quiz(job: Job) -> None:
    kind, count = write_quiz(job.value, job.trace, job.settings)
    job.say(f"quiz:      {count} questions, {kind}")
    job.wrote("the quiz bank", Path(job.value), "")


def _needs(given: list[str]) -> str:
    return "needs" if len(given) == 1 else "need"


OUTPUTS: tuple[Output, ...] = (  # in the order of --help, of the paths planned and made
    Output("slides", "extra", Option(
        ("--slides",), "Also write a deck beside the video, one step per caption: "
        "<stem>.html (offline reveal.js) and <stem>.pptx, the captions as speaker notes."),
        files=lambda p: {"the HTML deck": deck_path(p.video),
                         "the PPTX deck": p.video.with_suffix(".pptx")},
        write=_write_slides, python=_flag),
    Output("page", "extra", Option(
        ("--page",), "Also write the companion page beside the video: <stem>.page.html, one "
        "offline file where the video plays beside its caption list and every number of the "
        "trace can be opened to see how it was made and where the video makes it."),
        files=lambda p: {"the companion page": page_path(p.video),
                         "its poster frame": poster_path(page_path(p.video))},
        write=_write_page),
    Output("page_embed", "extra", Option(
        ("--page-embed",), "Also write the companion page as one self-contained file with "
        "the video and its poster frame inside it (<stem>.page.html), to upload alone, "
        "e.g. to an LMS; its size is printed, and a video that would make it over 100 MB "
        "is refused."),
        files=lambda p: {"the companion page": page_path(p.video)}, write=_write_page_embed,
        refuses=("page",),
        refusal=lambda given: "--page-embed writes the companion page with the video inside "
                              "it, where --page writes it beside the video: give one",
        notebook="call .page(embed=True) on its result"),
    Output("split", "extra", Option(
        ("--split",), "Also write one short video per chapter into <stem>-chapters/ beside "
        "it (01-input.mp4, ...), with playlist.m3u and index.html."),
        folders=lambda p: {"the chapters": split_folder(p.video)}, write=_write_split,
        python=_flag),
    Output("transcript", "extra", Option(
        ("--transcript",), "Also write the video as text: every caption at its time under "
        "its chapter's title, then the followed word's numbers as tables; FILE.html (a page "
        "a screen reader reads) or a .md file (Markdown).", "path", "FILE"),
        files=lambda p: {"the transcript": Path(p.value)}, write=_write_transcript,
        parse=transcript_path),
    Output("formats", "extra", Option(
        ("--format",), "Also derive these from the finished MP4, beside it with the same "
        "stem: gif (480p, palette-optimised), webm (VP9).", "text", "mp4,gif,webm"),
        files=_format_files, write=_write_formats, parse=parse_formats,
        python=_python_formats),
    Output("storyboard", "mode", Option(
        ("--storyboard",), "Instead of the video: one still per caption, as a PNG contact "
        "sheet and an A4 PDF handout beside it (-o board.png; default "
        "media/<sentence>-storyboard.png), in seconds, without animating."),
        files=_storyboard_files, refuses_extras=True, takes_output=True,
        refusal=lambda given: f"--storyboard makes stills instead of the video, and "
                              f"{' and '.join(given)} {_needs(given)} the video: make them in "
                              "a run without --storyboard",
        notebook="call .storyboard() on its result"),
    Output("export_json", "export", Option(
        ("--export-json",), "Write the trace the video is made from.", "path"),
        files=lambda p: {"--export-json": Path(p.value)}, write=_write_json),
    Output("export_csv", "export", Option(
        ("--export-csv",), "Write every matrix as CSV into this folder.", "path"),
        folders=lambda p: {"--export-csv": Path(p.value)}, write=_write_csv),
    Output("quiz", "export", Option(
        ("--quiz",), "Write the questions a viewer can answer before each reveal, with "
        "their answers and reasons, as a quiz bank: FILE.xml (Moodle XML) or FILE.zip "
        "(a QTI 1.2 package for Canvas).", "path", "FILE"),
        files=lambda p: {"--quiz": Path(p.value)}, write=_write_quiz, parse=quiz_path),
    Output("lint", "mode", Option(
        ("--lint",), "Instead of the video: check every caption's picture in a dry run "
        "(overlaps, lines across text, safe area, text size, contrast, holds, colour-blind "
        "word colours); one line per problem, exit status 1 if any.",
        group="Files and other modes"),
        refuses=("storyboard", "watch", "scheduler"), refuses_extras=True,
        refusal=lambda given: f"--lint checks one video's pictures instead of making it: not "
                              f"with {', '.join(given)}"),
)


def by_name(name: str, outputs: Sequence[Output] | None = None) -> Output | None:
    """The row of output `name` (None: not an output)."""
    return next((o for o in (OUTPUTS if outputs is None else outputs) if o.name == name),
                None)


def extras() -> tuple[Output, ...]:
    """The outputs made from the finished video."""
    return tuple(o for o in OUTPUTS if o.kind == "extra")
