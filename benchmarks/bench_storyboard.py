"""Storyboard speed (issue 13): the default sentence's storyboard against a `-q l` render of
the same sentence, both cold (no chapter cache), measured in the same run.

    .venv/bin/python benchmarks/bench_storyboard.py [-j JOBS]

Targets: the storyboard in at most 5 s on 2 cores, and at most 0.35 × the -q l render.
The storyboard is made --runs times (each with new worker processes and nothing kept from
the run before but the built-text cache, as for a user's second sentence); the median is
compared with the targets, because the same run varies by ±25% on a shared VM.

It also makes, --runs times, the storyboard of a sentence never drawn before with an empty
built-text cache: what a lecturer waits the first time a new sentence is checked, when
every number and caption is typeset (fastmanim.glyphs) and kept."""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

SENTENCE = "The black cat drank the milk"
NEW_SENTENCES = ("The old farmer planted the green tree", "The thin girl read the story",
                 "The fat boy chased the small bird")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    from attention_video.attncore.settings import build_settings
    from attention_video.pipeline.cache.paths import CACHE_ENV
    from attention_video.pipeline.cache.store import ChapterCache
    from attention_video.pipeline.commands.app import make_trace
    from attention_video.pipeline.run.render import render_video
    from attention_video.pipeline.run.stills import make_storyboard

    with tempfile.TemporaryDirectory(prefix="bench-storyboard-") as tmp:
        folder = Path(tmp)
        settings = build_settings(None, sentence=SENTENCE, quality="l",
                                  output=str(folder / "video.mp4"))
        trace = make_trace(settings, say=lambda s: None)

        runs = []
        for _ in range(args.runs):
            start = time.perf_counter()
            board = make_storyboard(settings, trace, folder / "board.png", jobs=args.jobs)
            runs.append(time.perf_counter() - start)
        storyboard = statistics.median(runs)

        start = time.perf_counter()
        render_video(settings, jobs=args.jobs, use_cache=False, trace=trace,
                     cache=ChapterCache(folder / "cache"))
        render = time.perf_counter() - start

        cold, before = [], os.environ.get(CACHE_ENV)
        for i in range(args.runs):
            os.environ[CACHE_ENV] = str(folder / f"empty-cache-{i}")  # the workers read it
            new = build_settings(None, sentence=NEW_SENTENCES[i % len(NEW_SENTENCES)],
                                 quality="l", output=str(folder / "new.mp4"))
            new_trace = make_trace(new, say=lambda s: None)
            start = time.perf_counter()
            make_storyboard(new, new_trace, folder / "new.png", jobs=args.jobs)
            cold.append(time.perf_counter() - start)
        if before is None:
            os.environ.pop(CACHE_ENV)
        else:
            os.environ[CACHE_ENV] = before

    print(f"cores {os.cpu_count()}, jobs {args.jobs}, load average {os.getloadavg()[0]:.1f}")
    print(f"storyboard:      {storyboard:6.1f} s  median of {', '.join(f'{r:.1f}' for r in runs)} "
          f"({len(board.stills)} stills, {board.pages} PDF pages)   target <= 5 s")
    print(f"-q l render:     {render:6.1f} s  (cold, no chapter cache)")
    print(f"ratio:           {storyboard / render:6.2f}           target <= 0.35")
    print(f"new sentence:    {statistics.median(cold):6.1f} s  median of "
          f"{', '.join(f'{r:.1f}' for r in cold)} (empty text cache: every text typeset)")


if __name__ == "__main__":
    main()
