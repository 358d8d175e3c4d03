"""Render one chapter to a clip (or build it under dry run) from Python, not by shelling out."""

from __future__ import annotations

import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from attention_video.attncore.chapters import SLUGS
from attention_video.attncore.settings import QUALITIES, Settings
from attention_video.attncore.trace import AttentionTrace
from attention_video.pipeline.cache.limits import TEXTS
from attention_video.pipeline.cache.paths import cache_dir
from attention_video.pipeline.outputs.audio import add_tracks, mix
from attention_video.pipeline.outputs.video import join
from attention_video.pipeline.records import ChapterResult
from attention_video.scenes.voice import Narrator


@dataclass(frozen=True)
class ChapterJob:
    chapter: str  # its slug (attncore.chapters)
    trace: AttentionTrace
    settings: Settings
    clip: Path | None  # where the finished clip goes; None: dry run (no frames written)
    work_dir: Path | None = None  # Manim's scratch folder, removed afterwards
    plan: tuple[str, ...] = SLUGS  # every chapter the video plays (a scene may state some)
    narrator: Narrator | None = None  # who says the captions (scenes.voice); None: silent


def manim_config(settings: Settings, work_dir: Path | None, clip: Path | None,
                 text_dir: Path) -> dict:
    height, width, fps, _ = QUALITIES[settings.quality]
    cfg = {
        "pixel_height": height, "pixel_width": width, "frame_rate": fps,
        "disable_caching": True, "verbosity": "ERROR", "progress_bar": "none",
        "write_to_movie": clip is not None, "dry_run": clip is None,
        "format": "mp4",
        # x264's "veryfast" preset: ~20% quicker renders than the default "medium" and a
        # slightly smaller file, with no visible difference on flat-colour text frames.
        # crf 25: a chapter is one stream (fastmanim.encoder.ChapterStream), whose frames
        # come out about 1 dB closer to the drawn ones than Manim's one encoder per
        # animation at crf 23, for a file about 5% larger (docs/performance.md).
        "video_encoder_options": {"crf": "25", "preset": "veryfast"},
    }
    if work_dir is not None:
        cfg["media_dir"] = str(work_dir)
    # Manim's own SVGs of Pango's text go to a folder of this render alone: Manim deletes
    # and rewrites them in place, so a shared folder breaks concurrent renders. The kept
    # texts that matter are scenes.text's (cache_dir()/text-objects, written atomically).
    cfg["text_dir"] = str(text_dir)
    if clip is not None:
        cfg["output_file"] = str(clip)
    return cfg


def render_chapter(job: ChapterJob) -> ChapterResult:
    """Build the chapter's scene from the trace and render it (dry run: build only)."""
    # Lazy on purpose: these import Manim (~2 s), which a run whose chapters are all cached
    # never needs.
    from attention_video.fastmanim.encoder import CLOCK, TimedRenderer
    from attention_video.fastmanim.texts import use_text_cache
    from attention_video.scenes import scene_class
    from manim import tempconfig

    use_text_cache(cache_dir() / TEXTS)
    start, cpu, main_cpu = time.perf_counter(), time.process_time(), time.thread_time()
    CLOCK.reset()  # this chapter's stages alone
    cls = scene_class(job.chapter)
    text_dir = Path(tempfile.mkdtemp(prefix="manim-texts-", dir=job.work_dir and _made(job.work_dir)))
    try:
        with tempconfig(manim_config(job.settings, job.work_dir, job.clip, text_dir)):
            # Held frames are encoded once (fastmanim.encoder); dry run skips every frame.
            skip = job.clip is None
            renderer = TimedRenderer(join=join, skip_animations=skip)
            scene = cls(job.trace, job.settings, job.plan, narrator=job.narrator,
                        renderer=renderer, skip_animations=skip)
            scene.render()
            duration = float(scene.renderer.time)
        if job.clip is not None and scene.narrator is not None:  # the narration goes in the clip
            add_tracks(job.clip, narrations(scene.speech, scene.described_speech, duration))
    finally:
        shutil.rmtree(text_dir, ignore_errors=True)
        if job.work_dir is not None:
            shutil.rmtree(job.work_dir, ignore_errors=True)
    seconds = time.perf_counter() - start
    stages = dict(CLOCK.seconds, wall=seconds, cpu=time.process_time() - cpu,
                  main_cpu=time.thread_time() - main_cpu,
                  **{f"{k}_cpu": v for k, v in CLOCK.cpu.items()},
                  frames_shown=CLOCK.frames_shown, frames_stored=CLOCK.frames_stored)
    return ChapterResult(job.chapter, duration, scene.subtitles, scene.drawn.entries,
                         scene.off_frame, seconds, clip=job.clip, stages=stages,
                         holds=scene.holds, made=dict(scene.drawn.made),
                         title=getattr(scene, "title_text", ""),
                         descriptions=[d.text for d in scene.descriptions],
                         described=list(scene.descriptions),
                         described_at=list(scene.described_at))


def narrations(speech: list, described: list, duration: float) -> list:
    """The clip's sound tracks: the narration, and with descriptions said (--describe) the
    described narration too, the captions' speech and the descriptions' on one timeline.
    The plain narration is silent while the picture holds for a description."""
    plain = [(t, s.samples, s.rate) for t, s in speech]
    if not described:
        return [mix(plain, duration)]
    return [mix(plain, duration),
            mix(plain + [(t, s.samples, s.rate) for t, s in described], duration)]


def _made(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return folder
