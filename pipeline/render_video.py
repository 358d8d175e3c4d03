"""Render a whole video: plan the chapters, reuse cached clips, render the rest in worker
processes, join them and write the outputs atomically."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

from attncore import AttentionTrace, build_trace
from attncore.chapters import LEARNING_CHAPTER, SOFTMAX_CHAPTER, chapter
from attncore.settings import Settings, SettingsError
from pipeline.cache import ChapterCache, chapter_key
from pipeline.chapter import ChapterJob, ChapterResult, render_chapter
from pipeline.files import atomic_output, check_writable_folder, default_output
from pipeline.subtitles import to_srt, to_vtt
from pipeline.video import join
from pipeline.workers import WorkerContext, sigterm_as_interrupt

Progress = Callable[[str], None]


def named(number: int) -> str:
    """'chapter 3 (factor matrix)', for progress lines and errors."""
    return f"chapter {number} ({chapter(number).name})"


class ChapterFailed(RuntimeError):
    """A chapter's render raised: says which chapter and why."""

    def __init__(self, number: int, reason: str):
        super().__init__(f"{named(number)} failed: {reason}")
        self.chapter = number


@dataclass
class VideoResult:
    video: Path | None
    subtitles: Path | None
    chapters: list[ChapterResult] = field(default_factory=list)
    duration: float = 0.0  # seconds of video
    seconds: float = 0.0  # wall time spent
    captions: Path | None = None  # the same subtitles as WebVTT, for browsers


def plan_chapters(settings: Settings, trace: AttentionTrace | None = None,
                  progress: Progress = lambda s: None) -> list[int]:
    """The chapters to play, in order. The softmax chapter drops out without softmax; the
    learning chapter drops out when the weights have no training history to show (only
    the tiny model is trained here), and `progress` is told why, never silently."""
    plan = [c for c in settings.chapters if not (c == SOFTMAX_CHAPTER and not settings.softmax)]
    if not plan:
        raise SettingsError("chapters", f"only chapter {SOFTMAX_CHAPTER} was chosen, and "
                            "--no-softmax skips it")
    if LEARNING_CHAPTER in plan and trace is not None and trace.history is None:
        why = ("the pretrained model was trained elsewhere: there is no training history to show"
               if trace.source == "pretrained" else
               "untrained random weights have no training to show")
        plan.remove(LEARNING_CHAPTER)
        if not plan:
            raise SettingsError("chapters", f"{named(LEARNING_CHAPTER)} needs the tiny model's "
                                f"training history, and {why}; use --weights tiny")
        progress(f"{named(LEARNING_CHAPTER)} left out: {why} (--weights tiny shows it)")
    return plan


def output_path(settings: Settings) -> Path:
    return Path(settings.output) if settings.output else default_output(settings.sentence)


def dry_run(settings: Settings, trace: AttentionTrace | None = None,
            progress: Progress = lambda s: None) -> list[ChapterResult]:
    """Build every planned chapter without writing frames (a fast check of a sentence)."""
    trace = trace or build_trace(settings)
    results = []
    for ch in plan_chapters(settings, trace, progress):
        r = render_chapter(ChapterJob(ch, trace, settings, clip=None))
        progress(f"{named(ch)}: builds, {r.duration:.1f} s of video, "
                 f"{len(r.drawn)} numbers drawn")
        results.append(r)
    return results


def render_video(settings: Settings, *, jobs: int | None = None, use_cache: bool = True,
                 cache: ChapterCache | None = None, trace: AttentionTrace | None = None,
                 progress: Progress = lambda s: None, executor=None) -> VideoResult:
    """Render the video: cached chapters are reused, the others rendered by `jobs` workers
    (or by `executor`, e.g. an InlineExecutor in tests).

    SIGTERM is handled like Ctrl-C for the whole render: workers stop, scratch files go,
    and the earlier output stays as it was.
    """
    with sigterm_as_interrupt():
        t0 = time.perf_counter()
        trace = trace or build_trace(settings)
        plan = plan_chapters(settings, trace, progress)
        video = output_path(settings)
        check_writable_folder(video, create=not settings.output)
        cache = cache or ChapterCache()

        results: dict[int, ChapterResult] = {}
        todo: list[tuple[int, str]] = []
        for ch in plan:
            key = chapter_key(ch, trace, settings)
            hit = cache.get(key) if use_cache else None
            if hit is not None:
                results[ch] = hit
                progress(f"{named(ch)}: cached")
            else:
                todo.append((ch, key))
        if todo:
            jobs = max(1, jobs or os.cpu_count() or 1)
            results |= _render_chapters(todo, trace, settings, cache, jobs, progress, executor)

        chapters = [results[ch] for ch in plan]
        srt_path, vtt_path = video.with_suffix(".srt"), video.with_suffix(".vtt")
        cues = _subtitle_cues(chapters)
        with (atomic_output(video) as tmp_video, atomic_output(srt_path) as tmp_srt,
              atomic_output(vtt_path) as tmp_vtt):
            duration = join([r.clip for r in chapters], tmp_video, container=video.suffix[1:].lower())
            tmp_srt.write_text(to_srt(cues), encoding="utf-8")
            tmp_vtt.write_text(to_vtt(cues), encoding="utf-8")
        return VideoResult(video, srt_path, chapters, duration, time.perf_counter() - t0,
                           captions=vtt_path)


def _subtitle_cues(chapters: list[ChapterResult]) -> list[tuple[float, float, str]]:
    """Each chapter's cues, shifted by the length of the chapters before it."""
    cues, offset = [], 0.0
    for r in chapters:
        cues += [(offset + a, offset + b, text) for a, b, text in r.subtitles]
        offset += r.duration
    return cues


def _render_chapters(todo: list[tuple[int, str]], trace: AttentionTrace, settings: Settings,
                     cache: ChapterCache, jobs: int, progress: Progress,
                     executor) -> dict[int, ChapterResult]:
    """Render the chapters in `todo` (chapter, cache key) in worker processes, costliest
    first so the workers finish together; each finished clip goes into the cache at once.
    On any failure or interruption the workers stop and the scratch files go."""
    workers = min(jobs, len(todo))
    context = WorkerContext()
    pool = executor or ProcessPoolExecutor(max_workers=workers, mp_context=context)
    scratch: list[Path] = []
    futures: dict[Future, tuple[int, str, Path]] = {}
    results: dict[int, ChapterResult] = {}
    failure: ChapterFailed | None = None
    try:
        for ch, key in sorted(todo, key=lambda t: -chapter(t[0]).cost):
            work = cache.scratch()
            scratch.append(work)
            clip = work / f"chapter{ch}.mp4"
            job = ChapterJob(ch, trace, settings, clip=clip, work_dir=work / "manim")
            futures[pool.submit(render_chapter, job)] = (ch, key, clip)
        order = [ch for ch, _, _ in futures.values()]
        progress(f"rendering chapter{'s' if len(todo) > 1 else ''} "
                 f"{', '.join(str(c) for c, _ in todo)} with {workers} "
                 f"worker{'s' if workers > 1 else ''} "
                 f"(longest first: {', '.join(map(str, order[:jobs]))})")
        pending = set(futures)
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                ch, key, clip = futures[fut]
                try:
                    r = fut.result()
                except Exception as e:  # the chapter's own error; other chapters go on
                    failure = failure or ChapterFailed(ch, f"{type(e).__name__}: {e}")
                    progress(f"{named(ch)}: FAILED: {e}")
                    continue
                r.clip = cache.put(key, clip, r)
                results[ch] = r
                left = len(pending)
                progress(f"{named(ch)}: rendered in {r.seconds:.1f} s "
                         f"({r.duration:.1f} s of video){f'; {left} to go' if left else ''}")
        if failure:
            raise failure
    except BaseException:
        context.stop()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    else:
        pool.shutdown(wait=True)
    finally:
        for d in scratch:
            shutil.rmtree(d, ignore_errors=True)
    return results
