"""Does a listener understand the narration? Says every caption of a video through its
Narrator and has Whisper tiny.en (tests/support/listener.py, offline) hear each one back, without
rendering a frame (the captions come from each chapter's dry run):

    python scripts/hear_back.py [--sentence "..."] [--chapters 1 3] [--pace 1.0] [--all]
                                [--describe]

Prints each cue's word error (reference: its spoken form, normalised as the narration test
does) with what was said and what was heard, worst first (the cues over --over, or every
cue with --all), then the median and the worst. Speech is kept in the cache folder, so a
second run only listens. Exits 1 when a cue is over --over or the median over --median.
With --describe, the described narration: every caption and, after it, its description
(scenes.describe), each heard back as one cue.
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository: tests.support.listener


def captions(settings) -> list[str]:
    """Every caption of the video `settings` make, in order, from dry runs (no frames);
    described, each followed by its description (where it has one)."""
    from attention_video.attncore import build_trace
    from attention_video.pipeline.run.chapter import ChapterJob, render_chapter

    trace = build_trace(settings)
    texts = []
    for slug in settings.chapters:
        r = render_chapter(ChapterJob(slug, trace, settings, clip=None, plan=settings.chapters))
        described = r.descriptions if settings.describe else [""] * len(r.subtitles)
        for (_, _, text), description in zip(r.subtitles, described):
            texts += [text] + ([description] if description else [])
    return texts


def main(argv: list[str] | None = None) -> int:
    from attention_video.attncore import Settings
    from attention_video.attncore.settings import SettingsError
    from attention_video.pipeline.cache.paths import cache_dir
    from attention_video.scenes.voice import Narrator

    from tests.support.listener import hear_back

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sentence", help="the sentence (default: the video's default)")
    p.add_argument("--chapters", nargs="+", help="chapter numbers or slugs (default: all)")
    p.add_argument("--voice", default="joe", help="a voice setting (default: joe)")
    p.add_argument("--pace", type=float, default=1.0, help="the narration's pace (default: 1)")
    p.add_argument("--over", type=float, default=0.15, help="a cue's worst word error (0.15)")
    p.add_argument("--median", type=float, default=0.08, help="the median's limit (0.08)")
    p.add_argument("--all", action="store_true", help="print every cue, not only those over")
    p.add_argument("--describe", action="store_true",
                   help="the described narration: each caption's description too")
    p.add_argument("--no-keep", action="store_true", help="keep no speech in the cache folder")
    args = p.parse_args(argv)
    logging.getLogger("faster_whisper").setLevel(logging.WARNING)  # one line per cue
    fields = {"voice": args.voice, "pace": args.pace, "quality": "l", "describe": args.describe}
    if args.sentence is not None:
        fields["sentence"] = args.sentence
    if args.chapters:
        fields["chapters"] = [int(c) if c.isdigit() else c for c in args.chapters]
    try:
        settings = Settings(**fields)
        narrator = Narrator.from_settings(settings, None if args.no_keep else cache_dir())
    except SettingsError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    start = time.perf_counter()
    texts = captions(settings)
    print(f"{len(texts)} cues from {len(settings.chapters)} chapters "
          f"({time.perf_counter() - start:.0f} s)", file=sys.stderr)
    report = [(*hear_back(narrator, text), n) for n, text in enumerate(texts, 1)]
    report.sort(key=lambda r: -r[0])
    over = [r for r in report if r[0] > args.over]
    for wer, said, heard, n in report if args.all else over:
        print(f"{wer:6.1%}  cue {n}\n   said: {said}\n  heard: {heard}")
    errors = [r[0] for r in report]
    median = statistics.median(errors)
    print(f"median {median:.1%}, worst {max(errors):.1%}, {len(over)} of {len(report)} cues "
          f"over {args.over:.0%} ({time.perf_counter() - start:.0f} s)")
    return 1 if over or median > args.median else 0


if __name__ == "__main__":
    sys.exit(main())
