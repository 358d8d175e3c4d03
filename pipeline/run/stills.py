"""The storyboard's stills: one per caption, taken without animating, and the storyboard
made from them (its pages are pipeline.outputs.storyboard's).

Each chapter scene is built as in a dry run, but every play() jumps straight to the
animations' final state (no in-between frames, no copies of the animated objects for the
common fades), and the Cairo camera draws one frame, at a small size, for each caption:
at the end of its animations, the moment before the next caption replaces it, the stage
is cleared or anything shown under it starts to fade out (ChapterScene.caption_ends).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import as_completed
from pathlib import Path
from typing import Any

import numpy as np
from attention_video.attncore.chapters import chapter, number
from attention_video.attncore.settings import Settings
from attention_video.attncore.trace import AttentionTrace
from attention_video.pipeline.cache.limits import TEXTS
from attention_video.pipeline.cache.paths import cache_dir
from attention_video.pipeline.outputs.files import check_writable_folder
from attention_video.pipeline.outputs.storyboard import (
    STILL_SIZE,
    CairoRecorder,
    Composer,
    VectorStill,
    storyboard_path,
)
from attention_video.pipeline.records import ChapterStills, Still, StoryboardResult
from attention_video.pipeline.run.chapter import manim_config
from attention_video.pipeline.run.fastforward import play_at_once, wait_at_once
from attention_video.pipeline.run.render import plan_chapters
from attention_video.pipeline.run.schedule import longest_first
from attention_video.pipeline.run.workers import LocalPool

Progress = Callable[[str], None]


class _FastForward:
    """Mixed into a chapter scene: every play() ends at once in its final state, and the
    frame is drawn only when a caption ends (under skip_animations nothing else is).
    A voice setting is not said: stills need no speech."""

    speaks = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.stills: list[tuple[str, np.ndarray, VectorStill]] = []
        self._still_of: object = None  # the caption whose still was taken
        super().__init__(*args, **kwargs)

    def play(self, *args: Any, **kwargs: Any) -> None:
        play_at_once(self, *args, **kwargs)

    def wait(self, duration: float = 1.0, *args: Any, **kwargs: Any) -> None:
        wait_at_once(self, duration)

    def caption_ends(self) -> None:
        if self._caption is self._still_of:  # taken already (the stage was cleared)
            return
        self._still_of = self._caption
        self.stills.append((self._caption_text, *draw_still(self)))


def draw_still(scene: Any) -> tuple[np.ndarray, VectorStill]:
    """The scene's frame, drawn once by its camera (a fastmanim.camera.RecordingCamera):
    its pixels, (H, W, 3), and the Cairo calls that drew them, to be drawn again into the
    PDF handout as paths (sharp at any zoom). An image mobject (chapter `heads`'s model
    overview) is kept as its pixels in its box."""
    camera = scene.renderer.camera
    scene.renderer.static_image = None
    with camera.recording(CairoRecorder()) as recorder:
        scene.renderer.update_frame(scene)
    background = camera.background_color
    return scene.renderer.get_frame()[:, :, :3].copy(), VectorStill(
        str(background.to_hex()) if hasattr(background, "to_hex") else str(background),
        camera.frame_width, camera.frame_height, tuple(recorder.ops))


def chapter_stills(slug: str, trace: AttentionTrace, settings: Settings,
                   plan: tuple[str, ...]) -> ChapterStills:
    """Build chapter `slug` of a video that plays `plan` without animating and take one
    still per caption."""
    # Lazy on purpose: these import Manim (~2 s), loaded by the process that builds scenes.
    from attention_video.fastmanim.camera import RecordingCamera
    from attention_video.fastmanim.texts import use_text_cache
    from attention_video.scenes import scene_class
    from manim import tempconfig

    use_text_cache(cache_dir() / TEXTS)
    start = time.perf_counter()
    base = scene_class(slug)
    cls = type(base.__name__, (_FastForward, base), {})
    text_dir = Path(tempfile.mkdtemp(prefix="manim-texts-"))
    cfg = manim_config(settings, None, None, text_dir)
    cfg["pixel_width"], cfg["pixel_height"] = STILL_SIZE
    try:
        with tempconfig(cfg):
            scene = cls(trace, settings, plan, skip_animations=True,
                        camera_class=RecordingCamera)
            scene.render()
    finally:
        shutil.rmtree(text_dir, ignore_errors=True)
    # Drawn at the contact sheet's size (Cairo's cost here is per path, not per pixel);
    # the handout draws each still again from its vector copy.
    stills = [Still(slug, scene.title_text, text, image, {}, vector)
              for text, image, vector in scene.stills]
    return ChapterStills(slug, stills, scene.subtitles, time.perf_counter() - start)


def take_stills(plan: list[str], trace: AttentionTrace, settings: Settings, *,
                jobs: int | None = None, progress: Progress = lambda s: None,
                executor=None,
                on_chapter: Callable[[ChapterStills], None] = lambda c: None
                ) -> list[ChapterStills]:
    """Every planned chapter's stills, built by `jobs` worker processes (1: here).
    `on_chapter` is called with each chapter's stills as soon as they are back."""
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(plan)))
    results: dict[str, ChapterStills] = {}
    whole = tuple(plan)
    if jobs == 1 and executor is None:
        for ch in plan:
            results[ch] = chapter_stills(ch, trace, settings, whole)
            on_chapter(results[ch])
    else:
        pool = executor or LocalPool(jobs)
        try:
            order = longest_first(plan, trace, settings)
            futures = [pool.submit(chapter_stills, ch, trace, settings, whole) for ch in order]
            for done in as_completed(futures):
                got = done.result()
                results[got.chapter] = got
                on_chapter(got)
        except BaseException:
            if isinstance(pool, LocalPool):
                pool.stop()
            else:
                pool.shutdown(wait=False, cancel_futures=True)
            raise
        # Every result is in: the workers tear down (~0.3 s of Python's clean-up) while
        # the sheets are finished, not before.
        pool.shutdown(wait=False)
    for ch in plan:
        progress(f"chapter {number(ch)} ({chapter(ch).name}): {len(results[ch].stills)} stills")
    return [results[ch] for ch in plan]


def make_storyboard(settings: Settings, trace: AttentionTrace, output: str | Path | None = None,
                    *, jobs: int | None = None, progress: Progress = lambda s: None,
                    executor=None) -> StoryboardResult:
    """The storyboard of the planned chapters: stills, contact sheet and handout."""
    start = time.perf_counter()
    png = storyboard_path(settings.sentence, output)
    check_writable_folder(png, create=output is None)
    plan = plan_chapters(settings, trace, progress)
    composer = Composer(plan)
    try:
        chapters = take_stills(plan, trace, settings, jobs=jobs, progress=progress,
                               executor=executor, on_chapter=composer.add)
    except BaseException:
        composer.close()
        raise
    pdf, pages = composer.write(png)
    stills = [s for c in chapters for s in c.stills]
    return StoryboardResult(png, pdf, stills, pages, time.perf_counter() - start)
