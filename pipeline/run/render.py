"""Render a whole video: plan the chapters, reuse cached clips, render the rest on an
executor (local worker processes by default), join them and write the outputs atomically.
pipeline.commands.batch renders many videos through the same steps."""

from __future__ import annotations

import errno
import os
import shutil
import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Executor, Future, wait
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from attention_video.attncore import AttentionTrace, build_trace
from attention_video.attncore.chapters import LEARNING, SOFTMAX, chapter, number
from attention_video.attncore.settings import Settings, SettingsError
from attention_video.pipeline.cache.disk import full_message, is_full, room_to_render
from attention_video.pipeline.cache.keys import chapter_key
from attention_video.pipeline.cache.paths import CACHE_ENV, cache_dir, models_dir
from attention_video.pipeline.cache.store import ChapterCache
from attention_video.pipeline.outputs.chapters import chapter_marks, to_chapters_vtt
from attention_video.pipeline.outputs.files import (
    atomic_output,
    chapters_track_path,
    check_writable_folder,
    default_output,
    descriptions_path,
)
from attention_video.pipeline.outputs.subtitles import (
    SOFT_CAPTIONS,
    description_cues,
    to_srt,
    to_vtt,
    writes_sidecars,
)
from attention_video.pipeline.outputs.video import join
from attention_video.pipeline.records import ChapterResult, Cue
from attention_video.pipeline.run.chapter import ChapterJob, render_chapter
from attention_video.pipeline.run.executors import (
    ShippedChapter,
    cancel,
    render_shipped,
    shares_files,
)
from attention_video.pipeline.run.schedule import Timings, expected_seconds
from attention_video.pipeline.run.workers import LocalPool, sigterm_as_interrupt
from attention_video.scenes.voice import Narrator

Progress = Callable[[str], None]


def named(slug: str) -> str:
    """'chapter 3 (factor matrix)', for progress lines and errors."""
    return f"chapter {number(slug)} ({chapter(slug).name})"


class ChapterFailed(RuntimeError):
    """A chapter's render raised: says which chapter and why."""

    def __init__(self, slug: str, reason: str, disk_full: bool = False):
        super().__init__(f"{named(slug)} failed: {reason}")
        self.chapter = slug
        self.reason = reason
        self.disk_full = disk_full  # the reason is the folder it renders in: rerunning won't do


@dataclass
class VideoResult:
    video: Path | None
    subtitles: Path | None
    chapters: list[ChapterResult] = field(default_factory=list)
    duration: float = 0.0  # seconds of video
    seconds: float = 0.0  # wall time spent
    captions: Path | None = None  # the same subtitles as WebVTT, for browsers
    chapter_track: Path | None = None  # each chapter's title and span as WebVTT chapters
    descriptions: Path | None = None  # --describe: the descriptions track (WebVTT)
    # .srt/.vtt beside a video with burned captions, from before: a player would add them
    stale_sidecars: list[Path] = field(default_factory=list)


def plan_chapters(settings: Settings, trace: AttentionTrace | None = None,
                  progress: Progress = lambda s: None) -> list[str]:
    """The chapters to play, in order. The softmax chapter drops out without softmax; the
    learning chapter drops out when the weights have no training history to show (only
    the tiny model is trained here), and `progress` is told why, never silently."""
    plan = [c for c in settings.chapters if not (c == SOFTMAX and not settings.softmax)]
    if not plan:
        raise SettingsError("chapters", f"only {named(SOFTMAX)} was chosen, and "
                            "--no-softmax skips it")
    if LEARNING in plan and trace is not None and trace.history is None:
        why = (f"{trace.model_name} was trained elsewhere: there is no training history to show"
               if trace.trained else "untrained random weights have no training to show")
        plan.remove(LEARNING)
        if not plan:
            raise SettingsError("chapters", f"{named(LEARNING)} needs the tiny model's "
                                f"training history, and {why}; use --weights tiny")
        progress(f"{named(LEARNING)} left out: {why} (--weights tiny shows it)")
    return plan


def output_path(settings: Settings) -> Path:
    return Path(settings.output) if settings.output else default_output(settings.sentence)


def narrator_for(settings: Settings, keep: bool = True) -> Narrator | None:
    """The one narrator of a video (None: silent), its speech kept in the cache folder
    (`keep` False, --no-cache: kept nowhere), its voice tried before any work (one
    SettingsError line naming the file if it cannot speak)."""
    narrator = Narrator.from_settings(settings, cache_dir() if keep else None, cache_dir())
    if narrator is not None:
        narrator.check()
    return narrator


def dry_run(settings: Settings, trace: AttentionTrace | None = None,
            progress: Progress = lambda s: None,
            narrator: Narrator | None = None) -> list[ChapterResult]:
    """Build every planned chapter without writing frames (a fast check of a sentence);
    narrated, each caption is said, as it paces the chapter."""
    trace = trace or build_trace(settings, weights_cache=models_dir())
    narrator = narrator or narrator_for(settings)
    results = []
    plan = plan_chapters(settings, trace, progress)
    for ch in plan:
        r = render_chapter(ChapterJob(ch, trace, settings, clip=None, plan=tuple(plan),
                                      narrator=narrator))
        progress(f"{named(ch)}: builds, {r.duration:.1f} s of video, "
                 f"{len(r.drawn)} numbers drawn")
        results.append(r)
    return results


def render_video(settings: Settings, *, jobs: int | None = None, use_cache: bool = True,
                 cache: ChapterCache | None = None, trace: AttentionTrace | None = None,
                 progress: Progress = lambda s: None, executor: Executor | None = None,
                 narrator: Narrator | None = None) -> VideoResult:
    """Render the video: cached chapters are reused, the others rendered by `jobs` local
    worker processes, or by `executor`: any concurrent.futures.Executor (an InlineExecutor
    in tests, a Dask cluster's with --scheduler), which its owner shuts down. `narrator`
    says the captions (default: the one the settings ask for).

    SIGTERM is handled like Ctrl-C for the whole render: workers stop, scratch files go,
    and the earlier output stays as it was.
    """
    with sigterm_as_interrupt():
        t0 = time.perf_counter()
        trace = trace or build_trace(settings, weights_cache=models_dir())
        plan = plan_chapters(settings, trace, progress)
        video = output_path(settings)
        check_writable_folder(video, create=not settings.output)
        cache = cache or ChapterCache()
        narrator = narrator or narrator_for(settings, keep=use_cache)
        results, todo = look_up(plan, trace, settings, cache, use_cache, progress,
                                narrator=narrator)
        if not todo:
            return write_video(settings, [results[ch] for ch in plan], t0, use_cache, progress)
        with room_to_render(cache, progress) as store:  # a full cache: a temporary one
            workers = min(max(1, jobs or os.cpu_count() or 1), len(todo))
            with chapter_pool(executor, workers) as pool:
                outcomes = render_chapters(todo, store, pool, progress,
                                           workers=workers if executor is None else None)
            failed = [o for o in outcomes.values() if isinstance(o, ChapterFailed)]
            if failed:
                raise failed[0]
            results |= {t.chapter: outcomes[t.key] for t in todo}
            return write_video(settings, [results[ch] for ch in plan], t0,
                               use_cache and store is cache, progress)


@dataclass(frozen=True)
class ChapterTodo:
    """A chapter to render: its cache key and what draws it. `label` names the video in
    progress lines when several are rendered at once."""

    chapter: str
    key: str
    trace: AttentionTrace
    settings: Settings
    label: str = ""
    plan: tuple[str, ...] = ()  # every chapter of its video
    narrator: Narrator | None = None  # who says its captions (None: silent)


def look_up(plan: list[str], trace: AttentionTrace, settings: Settings, cache: ChapterCache,
            use_cache: bool, progress: Progress = lambda s: None, label: str = "", *,
            narrator: Narrator | None = None
            ) -> tuple[dict[str, ChapterResult], list[ChapterTodo]]:
    """The planned chapters the cache already has, and those left to render (said by
    `narrator`, None: silent)."""
    results: dict[str, ChapterResult] = {}
    todo: list[ChapterTodo] = []
    for ch in plan:
        key = chapter_key(ch, trace, settings, tuple(plan), narrator)
        hit = cache.get(key, lambda why, ch=ch: progress(
            f"{label}{named(ch)}: the cached copy is unusable ({why}); rendering it again "
            "and replacing it")) if use_cache else None
        if hit is not None:
            results[ch] = hit
            progress(f"{label}{named(ch)}: cached")
        else:
            todo.append(ChapterTodo(ch, key, trace, settings, label, tuple(plan), narrator))
    return results, todo


def write_video(settings: Settings, chapters: list[ChapterResult], t0: float,
                use_cache: bool = True, progress: Progress = lambda s: None) -> VideoResult:
    """Join the chapter clips into the video and write its subtitles, all atomically.

    --captions soft or both: the captions also go into the video as a subtitle track (on
    by default only for soft: with both, the picture shows them). The .srt and .vtt go
    beside it only for soft (pipeline.outputs.subtitles.writes_sidecars): a player loads
    them on its own, and over burned captions every caption would show twice. So does the
    WebVTT chapters track (<stem>.chapters.vtt): VLC and mpv load it as a subtitle file too
    (its name starts with the video's) and would write the chapter's title over the
    picture's captions; with soft captions they pick the .srt, named exactly like the
    video. The MP4's own chapter marks are written always. The audio
    track is kept in the cache folder only with `use_cache` and room there (else it is made
    beside the video: pipeline.outputs.audio.aac_track)."""
    video = output_path(settings)
    srt_path, vtt_path = video.with_suffix(".srt"), video.with_suffix(".vtt")
    chapters_path = chapters_track_path(video)
    cues = _subtitle_cues(chapters)
    track = settings.captions in SOFT_CAPTIONS
    sidecars = writes_sidecars(settings.captions)
    with atomic_output(video) as tmp_video:
        duration = join([r.clip for r in chapters], tmp_video, container=video.suffix[1:].lower(),
                        keep_track=use_cache, warn=progress,
                        cues=cues if track else None, cues_on=settings.captions == "soft",
                        language=settings.language,
                        marks=chapter_marks(chapters, settings.language))
        if sidecars:
            with (atomic_output(srt_path) as tmp_srt, atomic_output(vtt_path) as tmp_vtt,
                  atomic_output(chapters_path) as tmp_chapters):
                tmp_srt.write_text(to_srt(cues), encoding="utf-8")
                tmp_vtt.write_text(to_vtt(cues), encoding="utf-8")
                tmp_chapters.write_text(to_chapters_vtt(chapters, settings.language),
                                        encoding="utf-8")
    described = write_descriptions(settings, chapters, video)
    if not sidecars:  # one already there (an earlier soft render's, or hand-made) is kept,
        # and named, since a player would show it over the picture's captions
        stale = [p for p in (srt_path, vtt_path, chapters_path) if p.is_file()]
        return VideoResult(video, None, chapters, duration, time.perf_counter() - t0,
                           stale_sidecars=stale, descriptions=described)
    return VideoResult(video, srt_path, chapters, duration, time.perf_counter() - t0,
                       captions=vtt_path, chapter_track=chapters_path,
                       descriptions=described)


def write_descriptions(settings: Settings, chapters: list[ChapterResult], video: Path
                       ) -> Path | None:
    """--describe: each caption's description (scenes.describe) as a WebVTT track beside
    the video, timed with the captions, or with --voice while the described narration says
    it; written atomically (None: not asked for)."""
    if not settings.describe:
        return None
    path = descriptions_path(video)
    cues = description_cues(_subtitle_cues(chapters),
                            [d for r in chapters for d in _descriptions_of(r)],
                            _described_at(chapters))
    with atomic_output(path) as tmp:
        tmp.write_text(to_vtt(cues), encoding="utf-8")
    return path


def _descriptions_of(r: ChapterResult) -> list[str]:
    """A chapter's descriptions, one per caption (a clip kept before they were recorded:
    none, each caption undescribed)."""
    return r.descriptions if len(r.descriptions) == len(r.subtitles) else [""] * len(r.subtitles)


def _described_at(chapters: list[ChapterResult]) -> list[tuple[float, float] | None]:
    """When the described narration says each caption's description, in video time (None:
    not said; a chapter that recorded no times: none said)."""
    out, offset = [], 0.0
    for r in chapters:
        said = r.described_at if len(r.described_at) == len(r.subtitles) else [None] * len(r.subtitles)
        out += [None if t is None else (offset + t[0], offset + t[1]) for t in said]
        offset += r.duration
    return out


def _subtitle_cues(chapters: list[ChapterResult]) -> list[Cue]:
    """Each chapter's cues, shifted by the length of the chapters before it."""
    cues, offset = [], 0.0
    for r in chapters:
        cues += [(offset + a, offset + b, text) for a, b, text in r.subtitles]
        offset += r.duration
    return cues


@contextmanager
def chapter_pool(executor: Executor | None, workers: int) -> Iterator[Executor]:
    """The executor chapters render on. Given one, it is used as it is (its owner shuts it
    down). Else a local pool of `workers` processes: on any exception, Ctrl-C or SIGTERM
    its workers are terminated (an unfinished chapter is thrown away); else it is shut
    down when the block ends, without waiting for the workers to exit (half a second of
    tearing down Manim in each, while the video is joined: every job is done by then)."""
    if executor is not None:
        yield executor
        return
    pool = LocalPool(workers)
    try:
        yield pool
    except BaseException:
        pool.stop()
        raise
    else:
        pool.shutdown(wait=False)


def _failure(slug: str, error: Exception, cache: ChapterCache) -> ChapterFailed:
    """Why a chapter has no clip: its own error, or, when the disk it renders on has run
    full (the error is then a truncated file: 'ParseError: no element found'), that."""
    if is_full(cache.root) or getattr(error, "errno", None) == errno.ENOSPC:
        return ChapterFailed(slug, f"{full_message(cache)}; free some space, or choose "
                             f"another cache folder with {CACHE_ENV}=/some/folder",
                             disk_full=True)
    return ChapterFailed(slug, f"{type(error).__name__}: {error}")


OnDone = Callable[[ChapterTodo, "ChapterResult | ChapterFailed"], None]


def render_chapters(todo: list[ChapterTodo], cache: ChapterCache, pool: Executor,
                    progress: Progress = lambda s: None, *, workers: int | None = None,
                    on_done: OnDone = lambda t, outcome: None) -> dict[str, ChapterResult | ChapterFailed]:
    """Render `todo` on `pool`, costliest first so the workers finish together; each
    finished clip goes into the cache at once and `on_done` hears of it. Returns each
    key's result, or the ChapterFailed that says why it has none (the other chapters go
    on). Workers that share this machine's files write the clip into a scratch folder;
    others send it back (pipeline.run.executors). `workers` is the local pool's size, for the
    progress line. On an interruption the chapters not yet started are cancelled; scratch
    files always go."""
    shipped = not shares_files(pool)
    scratch: list[Path] = []
    futures: dict[Future, tuple[ChapterTodo, Path]] = {}
    outcomes: dict[str, ChapterResult | ChapterFailed] = {}
    timings = Timings(cache.root)
    try:
        for t in sorted(todo, key=lambda t: -expected_seconds(t.chapter, t.trace, t.settings,
                                                               timings)):
            work = cache.scratch()
            scratch.append(work)
            clip = work / f"chapter-{t.chapter}.mp4"
            job = ChapterJob(t.chapter, t.trace, t.settings, clip=clip, work_dir=work / "manim",
                             plan=t.plan, narrator=t.narrator)
            fut = (pool.submit(render_shipped, job, render_chapter) if shipped
                   else pool.submit(render_chapter, job))
            futures[fut] = (t, clip)
        order = [number(t.chapter) for t, _ in futures.values()]
        remote = getattr(pool, "workers", None)  # a Dask executor knows its cluster's size
        where = (f" with {workers} worker{'s' if workers > 1 else ''}" if workers
                 else f" on {remote} remote worker{'s' if remote != 1 else ''}" if remote
                 else "")
        videos = len({t.label for t in todo})
        if videos > 1:  # a batch: the chapters of several videos at once
            progress(f"rendering {len(todo)} chapters of {videos} videos{where}")
        else:
            progress(f"rendering chapter{'s' if len(todo) > 1 else ''} "
                     f"{', '.join(str(number(t.chapter)) for t in todo)}{where} "
                     f"(longest first: {', '.join(map(str, order[:workers or len(order)]))})")
        pending = set(futures)
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                t, clip = futures[fut]
                try:
                    r = fut.result()
                    if isinstance(r, ShippedChapter):
                        clip.write_bytes(r.clip)
                        r = r.result
                    r.clip = cache.put(t.key, clip, r)
                except Exception as e:  # the chapter's own error; other chapters go on
                    failure = _failure(t.chapter, e, cache)
                    outcomes[t.key] = failure
                    progress(f"{t.label}{named(t.chapter)}: FAILED: "
                             f"{failure.reason if failure.disk_full else e}")
                    on_done(t, failure)
                    continue
                timings.record(t.chapter, t.trace, t.settings, r.seconds)
                outcomes[t.key] = r
                left = len(pending)
                progress(f"{t.label}{named(t.chapter)}: rendered in {r.seconds:.1f} s "
                         f"({r.duration:.1f} s of video){f'; {left} to go' if left else ''}")
                on_done(t, r)
    except BaseException:
        if isinstance(pool, LocalPool):
            pool.stop()  # before the scratch goes: a running worker would write into it
        else:
            cancel(list(futures))
        raise
    finally:
        for d in scratch:
            shutil.rmtree(d, ignore_errors=True)
        timings.save()
    return outcomes
