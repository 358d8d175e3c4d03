"""Many videos from one manifest (`render.py --batch course.toml`): every video's settings
are its own keys over the manifest's shared defaults, every chapter of every video goes to
one executor at once (a chapter two videos share is rendered once) through one chapter
cache, and each video is joined as soon as its chapters are ready. A video that fails is
reported and the others go on.

    [defaults]                     # shared by every video: any setting of a config file
    quality = "l"
    chapters = [1, 2]              # or "1-2", as --chapters takes it

    [[video]]
    sentence = "The black cat drank the milk"
    output = "media/course/cat.mp4"

    [[video]]
    config = "translation.toml"    # a config file (relative to the manifest), then the keys
    quality = "m"

Precedence, weakest first: defaults, the defaults' config file, a video's config file, its
own keys, the command-line flags. Keys are the same as in config files.
"""

from __future__ import annotations

import difflib
import os
import stat
import time
import tomllib
import unicodedata
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from attention_video.attncore import AttentionTrace, build_trace
from attention_video.attncore.settings import (
    MAX_CONFIG_BYTES,
    Settings,
    SettingsError,
    check_given,
    check_types,
    parse_chapters,
    read_toml,
)
from attention_video.pipeline.cache.disk import room_to_render
from attention_video.pipeline.cache.paths import ensure_cache_dir, models_dir
from attention_video.pipeline.cache.store import ChapterCache
from attention_video.pipeline.outputs.files import (
    OutputError,
    check_outputs,
    check_writable_folder,
    companions,
)
from attention_video.pipeline.records import ChapterResult
from attention_video.pipeline.run.render import (
    ChapterFailed,
    ChapterTodo,
    chapter_pool,
    look_up,
    named,
    narrator_for,
    output_path,
    plan_chapters,
    render_chapters,
    write_video,
)
from attention_video.pipeline.run.workers import sigterm_as_interrupt

Say = Callable[[str], None]
SECTIONS = ("defaults", "video")  # the manifest's top-level keys
KNOWN_ERRORS = (SettingsError, OutputError)  # their text alone says what is wrong


class BatchFailed(RuntimeError):
    """Some videos of the batch were not made (the summary table says why)."""


@dataclass(frozen=True)
class BatchVideo:
    number: int  # 1-based position in the manifest
    settings: Settings

    @property
    def output(self) -> Path:
        return output_path(self.settings)


@dataclass
class BatchRow:
    """What became of one video: its chapters, the time spent on it, its file or error."""

    video: BatchVideo
    rendered: int = 0  # chapters rendered for it in this batch
    cached: int = 0  # chapters taken from the cache (or from an earlier video of the batch)
    seconds: float = 0.0  # render time of its rendered chapters, plus joining
    output: Path | None = None  # the video, once written
    error: str | None = None  # why it was not made
    chapters: dict[str, ChapterResult] = field(default_factory=dict)
    plan: list[str] = field(default_factory=list)


def _fail(where: str, message: str) -> SettingsError:
    return SettingsError(where, message)


def read_manifest_file(path: Path) -> dict[str, Any]:
    """The manifest's TOML, with the same guards as a config file (size, encoding,
    nesting); every problem is one SettingsError line."""
    where = f"batch {path}"
    try:
        info = path.stat()
        if stat.S_ISDIR(info.st_mode):
            raise _fail(where, "is a folder, not a TOML manifest")
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_CONFIG_BYTES:
            raise _fail(where, f"is not a regular file of at most {MAX_CONFIG_BYTES:,} bytes")
        with open(path, "rb") as f:
            raw = f.read(MAX_CONFIG_BYTES + 1)
        if len(raw) > MAX_CONFIG_BYTES:
            raise _fail(where, f"is over {MAX_CONFIG_BYTES:,} bytes")
        return tomllib.loads(raw.decode("utf-8-sig"))
    except FileNotFoundError:
        raise _fail(where, "does not exist") from None
    except PermissionError:
        raise _fail(where, "cannot be read (permission denied)") from None
    except UnicodeDecodeError:
        raise _fail(where, "is not UTF-8 text") from None
    except OSError as e:
        raise _fail(where, f"cannot be read ({e.strerror or e})") from None
    except tomllib.TOMLDecodeError as e:
        raise _fail(where, f"is not valid TOML: {e}") from None
    except RecursionError:
        raise _fail(where, "nests arrays or tables too deeply to be a manifest") from None


def _layer(values: dict[str, Any], base: Path, where: str) -> dict[str, Any]:
    """One table of settings: its config file's values (if it names one), then its own
    keys; checked as a config file's are."""
    values = dict(values)
    out: dict[str, Any] = {}
    config = values.pop("config", None)
    if config is not None:
        if not isinstance(config, str):
            raise _fail(where, f"config: expected a file path, got {config!r}")
        try:
            out.update(read_toml(base / config))
        except SettingsError as e:
            raise _fail(where, str(e)) from None
    if isinstance(values.get("chapters"), str):  # the --chapters text: "1-2", "1,3,6"
        try:
            values["chapters"] = list(parse_chapters(values["chapters"]))
        except SettingsError as e:
            raise _fail(where, str(e)) from None
    try:
        check_types(values)
    except SettingsError as e:
        raise _fail(where, str(e)) from None
    out.update(values)
    return out


def read_manifest(path: str | Path, flags: dict[str, Any] | None = None) -> list[BatchVideo]:
    """Every video of the manifest with its settings validated (flags, None = not given,
    win over everything). A bad manifest is one SettingsError naming the video and key."""
    path = Path(path)
    data = read_manifest_file(path)
    where = f"batch {path}"
    for key in data:
        if key not in SECTIONS:
            close = difflib.get_close_matches(key, SECTIONS, n=1, cutoff=0.5)
            hint = f"did you mean [{close[0]}]?" if close else "a manifest has"
            raise _fail(where, f"{key!r} is not a section; {hint} [defaults] and [[video]] "
                        "entries (a setting goes inside one of them)")
    defaults = data.get("defaults", {})
    if not isinstance(defaults, dict):
        raise _fail(where, "defaults must be a table: [defaults]")
    entries = data.get("video", [])
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise _fail(where, "each video is a table: write [[video]] above its keys")
    if not entries:
        raise _fail(where, "has no videos; add one [[video]] table per video")
    base = path.parent
    shared = _layer(defaults, base, f"{where}, [defaults]")
    given = {k: v for k, v in (flags or {}).items() if v is not None}
    videos: list[BatchVideo] = []
    for number, entry in enumerate(entries, 1):
        label = f"{where}, video {number}"
        values = shared | _layer(entry, base, label) | given
        if "sentence" not in values:
            raise _fail(label, "sentence: every video needs a sentence")
        if "chapters" in values:
            values["chapters"] = tuple(values["chapters"])
        try:
            check_given(values)
            settings = Settings(**values)
        except SettingsError as e:
            raise _fail(label, str(e)) from None
        videos.append(BatchVideo(number, settings))
    seen: dict[str, tuple[int, str]] = {}
    for v in videos:  # a video's subtitles and captions too: x.mp4 and x.mov share x.srt
        for role, p in companions(v.output, v.settings.describe).items():
            key = os.path.normcase(os.path.realpath(p))
            if key in seen:
                number, other = seen[key]
                raise _fail(f"{where}, video {v.number}",
                            f"output: its {role} {p} would also be video {number}'s "
                            f"{other}; give each video its own `output` (its .srt and "
                            ".vtt go beside it)")
            seen[key] = (v.number, role)
    return videos


def _build_trace(settings: Settings, say: Say) -> AttentionTrace:
    return build_trace(settings, weights_cache=models_dir())


def render_batch(videos: list[BatchVideo], *, executor: Executor | None = None,
                 jobs: int | None = None, use_cache: bool = True,
                 cache: ChapterCache | None = None, say: Say = lambda s: None,
                 make_trace: Callable[[Settings, Say], AttentionTrace] = _build_trace,
                 ) -> list[BatchRow]:
    """Render every video; returns one row per video, in manifest order. Chapters of all
    videos share the executor (local processes by default) and the chapter cache; a
    chapter that several videos need is rendered once. `make_trace` makes a video's trace
    (pipeline.commands.app passes its own, which keeps trained tiny models and says which weights
    were chosen). SIGTERM stops like Ctrl-C: workers stop, and the videos already written
    stay."""
    with sigterm_as_interrupt():
        cache = cache or ChapterCache()
        ensure_cache_dir(cache.root)
        rows = [BatchRow(v) for v in videos]
        waiting: dict[str, list[tuple[BatchRow, int]]] = {}  # key → the videos that need it
        todo: list[ChapterTodo] = []
        for row in rows:
            label = f"[{row.video.number}] "
            try:
                s = row.video.settings
                check_writable_folder(row.video.output, create=True)  # the course's folders
                check_outputs({f"its {role}": p for role, p in
                               companions(row.video.output, s.describe).items()})
                trace = make_trace(s, lambda m, label=label: say(label + m))
                row.plan = plan_chapters(s, trace, lambda m, label=label: say(label + m))
                row.chapters, left = look_up(row.plan, trace, s, cache, use_cache,
                                             lambda m: say("  " + m), label,
                                             narrator=narrator_for(s, keep=use_cache))
            except Exception as e:  # this video's own error; the others go on
                row.error = str(e) if isinstance(e, KNOWN_ERRORS) else f"{type(e).__name__}: {e}"
                say(f"{label}FAILED: {row.error}")
                continue
            row.cached = len(row.chapters)
            for t in left:
                if t.key not in waiting:
                    todo.append(t)
                    waiting[t.key] = []
                waiting[t.key].append((row, t.chapter))

        def finish(row: BatchRow) -> None:
            start = time.perf_counter()
            try:
                made = write_video(row.video.settings, [row.chapters[c] for c in row.plan], start,
                                   use_cache, say)
            except Exception as e:
                row.error = f"joining failed: {type(e).__name__}: {e}"
                say(f"[{row.video.number}] FAILED: {row.error}")
                return
            row.seconds += made.seconds
            row.output = made.video
            say(f"[{row.video.number}] video: {made.video} ({made.duration:.1f} s)")

        def on_done(t: ChapterTodo, outcome: ChapterResult | ChapterFailed) -> None:
            for i, (row, ch) in enumerate(waiting[t.key]):
                if row.error:
                    continue
                if isinstance(outcome, ChapterFailed):
                    row.error = str(outcome)
                    continue
                row.chapters[ch] = outcome
                if i == 0:  # the first video that needs a chapter renders it
                    row.rendered += 1
                    row.seconds += outcome.seconds
                else:
                    row.cached += 1
                if len(row.chapters) == len(row.plan):
                    finish(row)

        for row in rows:  # every chapter cached: join at once
            if not row.error and len(row.chapters) == len(row.plan):
                finish(row)
        if todo:
            workers = min(max(1, jobs or os.cpu_count() or 1), len(todo))
            with (room_to_render(cache, lambda m: say("  " + m)) as store,
                  chapter_pool(executor, workers) as pool):
                render_chapters(todo, store, pool, lambda m: say("  " + m),
                                workers=None if executor is not None else workers,
                                on_done=on_done)
        for row in rows:
            if not row.error and row.output is None:  # pragma: no cover - a guard
                missing = [named(c) for c in row.plan if c not in row.chapters]
                row.error = f"no clip for {', '.join(missing)}"
        return rows


def summary_table(rows: list[BatchRow], wall: float) -> str:
    """One line per video (number, sentence, chapters rendered or cached, time, output or
    the reason it failed) and a closing line with the counts and the wall time."""
    header = ("#", "video", "chapters", "time", "output")
    lines = []
    for r in rows:
        sentence = r.video.settings.sentence
        if len(sentence) > 32:
            sentence = sentence[:31] + "…"
        chapters = f"{r.rendered} rendered, {r.cached} cached"
        lines.append((str(r.video.number), sentence, chapters, f"{r.seconds:.1f} s",
                      str(r.output) if r.error is None else f"FAILED: {r.error}"))
    widths = [max(_width(row[i]) for row in [header, *lines]) for i in range(4)]

    def fmt(cells: tuple[str, ...]) -> str:
        pads = [" " * (w - _width(c)) for c, w in zip(cells, widths)]
        left = "  ".join(p + c if i in (0, 3) else c + p
                         for i, (c, p) in enumerate(zip(cells[:4], pads)))
        return f"{left}  {cells[4]}"

    failed = sum(r.error is not None for r in rows)
    made = len(rows) - failed
    tail = (f"batch: {made} of {len(rows)} video{'s' if len(rows) > 1 else ''} made"
            f"{f', {failed} failed' if failed else ''}; {wall:.0f} s wall time "
            "(time: rendering the video's own chapters, plus joining)")
    return "\n".join([fmt(header), *map(fmt, lines), tail])


def _width(text: str) -> int:
    """Columns a terminal gives the text: two for each wide (CJK) character."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)
