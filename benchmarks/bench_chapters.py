"""Where a cold render's CPU goes, chapter by chapter (issue 45): one cold render of a
sentence (no chapter clips, no kept texts: a fresh cache folder), then per chapter its
CPU-seconds split into the worker's main thread (building the scene, animating, drawing)
and the other threads (RGBA → YUV conversion, x264, muxing), the drawing alone, and the
frame census: frames shown against frames stored (a hold is stored once). CPU-seconds,
not wall time: on a shared machine wall time says little.

    .venv/bin/python benchmarks/bench_chapters.py                 # 1080p30, default sentence
    .venv/bin/python benchmarks/bench_chapters.py -q l --keep out.mp4
    .venv/bin/python benchmarks/bench_chapters.py -q l --weights pretrained   # a large model

The chapter rows' costs (attncore.chapters.Cost) are the CPU column of the two `-q l`
runs: the default sentence with the tiny model (small) and with the pretrained encoder
(large).

Two renders of the same code should give the same video byte for byte; compare two with
scripts/same_frames.py.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from attention_video.attncore import Settings  # noqa: E402
from attention_video.attncore.settings import QUALITIES  # noqa: E402
from attention_video.pipeline.cache.paths import CACHE_ENV  # noqa: E402
from attention_video.pipeline.cache.store import ChapterCache  # noqa: E402
from attention_video.pipeline.run.render import render_video  # noqa: E402

DEFAULT = "The black cat drank the milk"


def children_cpu() -> float:
    """CPU-seconds of this process's finished children (the chapter workers)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("sentence", nargs="?", default=DEFAULT)
    ap.add_argument("-q", "--quality", default="h", choices=list(QUALITIES))
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--weights", default="auto", help="the model (default: auto)")
    ap.add_argument("--keep", metavar="MP4", help="keep the video here (to compare frames)")
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-chapters-"))
    os.environ[CACHE_ENV] = str(root / "cache")  # cold: no clips, no kept texts (workers read it)
    out = Path(args.keep) if args.keep else root / "video.mp4"
    try:
        before = children_cpu()
        r = render_video(Settings(sentence=args.sentence, quality=args.quality, output=str(out),
                                  weights=args.weights),
                         jobs=args.jobs, cache=ChapterCache(root / "clips"))
        workers = children_cpu() - before
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"{args.sentence!r}, --weights {args.weights}, "
          f"{QUALITIES[args.quality][3]}, --jobs {args.jobs}: "
          f"{r.duration:.1f} s of video, load average {os.getloadavg()[0]:.1f}")
    print(f"  {'chapter':13} {'video s':>7} {'CPU s':>6} {'main':>6} {'draw':>6} {'others':>6} "
          f"{'shown':>6} {'stored':>6}")
    total = dict.fromkeys(("cpu", "main_cpu", "draw_cpu", "frames_shown", "frames_stored"), 0.0)
    for c in r.chapters:
        st = c.stages
        for k in total:
            total[k] += st.get(k, 0.0)
        print(f"  {c.chapter:13} {c.duration:7.1f} {st['cpu']:6.1f} {st['main_cpu']:6.1f} "
              f"{st['draw_cpu']:6.1f} {st['cpu'] - st['main_cpu']:6.1f} "
              f"{st['frames_shown']:6.0f} {st['frames_stored']:6.0f}")
    print(f"  {'all':13} {r.duration:7.1f} {total['cpu']:6.1f} {total['main_cpu']:6.1f} "
          f"{total['draw_cpu']:6.1f} {total['cpu'] - total['main_cpu']:6.1f} "
          f"{total['frames_shown']:6.0f} {total['frames_stored']:6.0f}")
    print(f"  worker processes: {workers:.1f} CPU-s (the chapters and the workers' imports); "
          f"wall {r.seconds:.1f} s")


if __name__ == "__main__":
    main()
