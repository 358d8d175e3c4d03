"""Traces, dry runs and lints that several tests read, made once per test process (a build
is deterministic; tests only read what it returns, never change it).

A test module that reads a build another module reads joins that module's xdist group, so
that under `-n 2 --dist loadgroup` (the fast tier) both run on one worker and the build is
made once in the session, not once per module or per worker."""

from __future__ import annotations

import functools

from attention_video.attncore import Settings, build_trace
from attention_video.attncore.trace import AttentionTrace
from attention_video.pipeline.records import ChapterResult
from attention_video.pipeline.run.chapter import ChapterJob, render_chapter
from attention_video.pipeline.run.lint import ChapterLint, LintResult, lint_chapter, lint_video
from attention_video.pipeline.run.render import plan_chapters


@functools.cache
def trace_of(settings: Settings) -> AttentionTrace:
    return build_trace(settings)


@functools.cache
def plan_of(settings: Settings) -> tuple[str, ...]:
    """The chapters the video of `settings` plays, as the command plans them."""
    return tuple(plan_chapters(settings, trace_of(settings), lambda s: None))


@functools.cache
def dry_run(settings: Settings, slug: str) -> ChapterResult:
    """Chapter `slug` built under dry run (no frames), in a video of every chapter."""
    return render_chapter(ChapterJob(slug, trace_of(settings), settings, clip=None))


_VIDEO_LINTS: dict[Settings, LintResult] = {}  # the whole videos linted in this process


def video_lint(settings: Settings) -> LintResult:
    """The planned video of `settings` linted as `--lint` does, in this process."""
    if settings not in _VIDEO_LINTS:
        _VIDEO_LINTS[settings] = lint_video(settings, trace_of(settings), jobs=1)
    return _VIDEO_LINTS[settings]


def chapter_lint(settings: Settings, slug: str) -> ChapterLint:
    """Chapter `slug` of the planned video of `settings` linted: taken from the whole
    video's lint when that has been made in this process, else linted alone."""
    if settings in _VIDEO_LINTS:
        return next(c for c in _VIDEO_LINTS[settings].chapters if c.chapter == slug)
    return _lint_alone(settings, slug)


@functools.cache
def _lint_alone(settings: Settings, slug: str) -> ChapterLint:
    return lint_chapter(slug, trace_of(settings), settings, plan_of(settings))
