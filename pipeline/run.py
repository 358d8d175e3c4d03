"""Plan the chapters, reuse cached clips, render the rest in worker processes, join them
and write the outputs atomically."""

from __future__ import annotations

import multiprocessing
import os
import shutil
import signal
import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

from attncore.settings import Settings, SettingsError
from attncore.trace import AttentionTrace, build_trace
from pipeline.cache import ChapterCache, chapter_key
from pipeline.chapter import ChapterJob, ChapterResult, render_chapter
from pipeline.files import atomic_output, check_writable_folder, default_output
from pipeline.subtitles import to_srt
from pipeline.video import join

Progress = Callable[[str], None]

CHAPTER_NAMES = {1: "input", 2: "linear layers", 3: "factor matrix", 4: "dot product",
                 5: "scale and softmax", 6: "weighted sum", 7: "query, key, value",
                 8: "learning", 9: "summary"}


# Relative render cost of each chapter (seconds measured at 1080p30 on the default
# sentence): the costliest chapters start first, so the workers finish together.
RELATIVE_COST = {1: 43, 2: 78, 3: 52, 4: 40, 5: 42, 6: 55, 7: 37, 8: 40, 9: 20}


class ChapterFailed(RuntimeError):
    """A chapter's render raised: says which chapter and why."""

    def __init__(self, chapter: int, reason: str):
        super().__init__(f"chapter {chapter} ({CHAPTER_NAMES[chapter]}) failed: {reason}")
        self.chapter = chapter


@dataclass
class RunResult:
    video: Path | None
    subtitles: Path | None
    chapters: list[ChapterResult] = field(default_factory=list)
    duration: float = 0.0
    seconds: float = 0.0


def plan_chapters(settings: Settings) -> list[int]:
    """The chapters to play, in order: chapter 5 drops out without softmax, and chapters
    not built yet drop out of the default list (asking for one by name is an error)."""
    from attncore.settings import ALL_CHAPTERS
    from scenes import available_chapters

    have = set(available_chapters())
    asked = list(settings.chapters)
    missing = [c for c in asked if c not in have]
    if missing and tuple(asked) != ALL_CHAPTERS:
        raise SettingsError("chapters", f"chapter {missing[0]} ({CHAPTER_NAMES[missing[0]]}) is not "
                            f"available yet; available: {', '.join(map(str, sorted(have)))}")
    plan = [c for c in asked if c in have and not (c == 5 and not settings.softmax)]
    if not plan:
        raise SettingsError("chapters", "only chapter 5 was chosen, and --no-softmax skips it")
    return plan


def output_path(settings: Settings) -> Path:
    return Path(settings.output) if settings.output else default_output(settings.sentence)


def dry_run(settings: Settings, trace: AttentionTrace | None = None,
            progress: Progress = lambda s: None) -> list[ChapterResult]:
    """Build every planned chapter without writing frames (a fast check of a sentence)."""
    trace = trace or build_trace(settings)
    results = []
    for ch in plan_chapters(settings):
        r = render_chapter(ChapterJob(ch, trace, settings, clip=None))
        progress(f"chapter {ch} ({CHAPTER_NAMES[ch]}): builds, {r.duration:.1f} s of video, "
                 f"{len(r.drawn)} numbers drawn")
        results.append(r)
    return results


class Terminated(BaseException):
    """SIGTERM, turned into an exception so the same clean-up as Ctrl-C runs."""


def _on_sigterm(signum, frame):  # pragma: no cover - exercised by a subprocess test
    raise Terminated()


class InlineExecutor:
    """Runs each job at once in this process (a stand-in for the process pool in tests
    and debugging: same interface, no parallelism)."""

    def __init__(self, *args, **kwargs):
        self._processes: dict = {}

    def submit(self, fn, *args) -> Future:
        fut: Future = Future()
        try:
            fut.set_result(fn(*args))
        except Exception as e:
            fut.set_exception(e)
        return fut

    def shutdown(self, wait: bool = True, cancel_futures: bool = False) -> None:
        pass


def render(settings: Settings, *, jobs: int | None = None, use_cache: bool = True,
           cache: ChapterCache | None = None, trace: AttentionTrace | None = None,
           progress: Progress = lambda s: None, executor=None) -> RunResult:
    """Render the video: cached chapters are reused, the others rendered by `jobs` workers.

    SIGTERM is handled like Ctrl-C for the whole render: workers stop, scratch files go,
    and the earlier output stays as it was.
    """
    if threading.current_thread() is not threading.main_thread():  # signals: main thread only
        return _render(settings, jobs, use_cache, cache, trace, progress, executor)
    old_term = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        return _render(settings, jobs, use_cache, cache, trace, progress, executor)
    finally:
        signal.signal(signal.SIGTERM, old_term)


def _render(settings, jobs, use_cache, cache, trace, progress, executor) -> RunResult:
    t0 = time.perf_counter()
    trace = trace or build_trace(settings)
    plan = plan_chapters(settings)
    video = output_path(settings)
    check_writable_folder(video, create=not settings.output)
    cache = cache or ChapterCache()
    jobs = max(1, jobs or os.cpu_count() or 1)

    results: dict[int, ChapterResult] = {}
    todo: list[tuple[int, str]] = []
    for ch in plan:
        key = chapter_key(ch, trace, settings)
        hit = cache.get(key) if use_cache else None
        if hit is not None:
            results[ch] = hit
            progress(f"chapter {ch} ({CHAPTER_NAMES[ch]}): cached")
        else:
            todo.append((ch, key))

    if todo:
        _render_missing(todo, trace, settings, cache, jobs, results, progress, executor)

    clips = [results[ch].clip for ch in plan]
    srt_path = video.with_suffix(".srt")
    cues, offset = [], 0.0
    for ch in plan:
        r = results[ch]
        cues += [(offset + a, offset + b, text) for a, b, text in r.subtitles]
        offset += r.duration
    with atomic_output(video) as tmp_video, atomic_output(srt_path) as tmp_srt:
        duration = join(clips, tmp_video)
        tmp_srt.write_text(to_srt(cues), encoding="utf-8")
    return RunResult(video, srt_path, [results[c] for c in plan], duration,
                     time.perf_counter() - t0)


def _render_missing(todo, trace, settings, cache, jobs, results, progress, executor) -> None:
    """Render the chapters in `todo` in worker processes; clean up on any interruption."""
    scratch: list[Path] = []
    if executor is None:
        ctx = multiprocessing.get_context("spawn")
        pool = ProcessPoolExecutor(max_workers=min(jobs, len(todo)), mp_context=ctx)
    else:
        pool = executor
    futures: dict[Future, tuple[int, str, Path]] = {}
    failure: ChapterFailed | None = None
    try:
        for ch, key in sorted(todo, key=lambda t: -RELATIVE_COST.get(t[0], 40)):
            work = cache.scratch()
            scratch.append(work)
            clip = work / f"chapter{ch}.mp4"
            job = ChapterJob(ch, trace, settings, clip=clip, work_dir=work / "manim")
            futures[pool.submit(render_chapter, job)] = (ch, key, clip)
        pending = set(futures)
        order = [futures[f][0] for f in futures]
        progress(f"rendering chapter{'s' if len(todo) > 1 else ''} "
                 f"{', '.join(str(c) for c, _ in todo)} with {min(jobs, len(todo))} "
                 f"worker{'s' if min(jobs, len(todo)) > 1 else ''} "
                 f"(longest first: {', '.join(map(str, order[:jobs]))})")
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                ch, key, clip = futures[fut]
                try:
                    r = fut.result()
                except Exception as e:  # the chapter's own error; other chapters go on
                    failure = failure or ChapterFailed(ch, f"{type(e).__name__}: {e}")
                    progress(f"chapter {ch} ({CHAPTER_NAMES[ch]}): FAILED: {e}")
                    continue
                r.clip = cache.put(key, clip, r)
                results[ch] = r
                left = len(pending)
                progress(f"chapter {ch} ({CHAPTER_NAMES[ch]}): rendered in {r.seconds:.1f} s "
                         f"({r.duration:.1f} s of video){f'; {left} to go' if left else ''}")
        if failure:
            raise failure
    except BaseException:
        for p in list(getattr(pool, "_processes", {}).values()):
            p.terminate()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    else:
        pool.shutdown(wait=True)
    finally:
        for d in scratch:
            shutil.rmtree(d, ignore_errors=True)
