"""Batch benchmark: a 6-video batch rendered three ways, figures side by side (not a test).

    .venv/bin/python benchmarks/bench_batch.py                  # -q l, chapters input and summary
    .venv/bin/python benchmarks/bench_batch.py --chapters 1-3   # longer

Figures (every run starts from an empty chapter cache, so every chapter is rendered):
  local pool (-j 2) ÷ serial (-j 1)                               (reported)
  Dask LocalCluster (2 workers × 1 thread) ÷ local pool           (target ≤ 1.15)
Before timing, every video is built once without frames (a dry run) so that every run
finds the same texts already kept on disk; the cluster is started (and its workers have
imported nothing yet) before its run is timed, as a running cluster would be.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from attention_video.attncore.settings import parse_chapters  # noqa: E402
from attention_video.pipeline.cache.store import ChapterCache  # noqa: E402
from attention_video.pipeline.commands.batch import BatchVideo, render_batch, summary_table  # noqa: E402

SENTENCES = ["The black cat drank the milk", "A dog ate the bone", "The ball is blue",
             "Birds sing in the morning", "She reads a long book", "We walked to the old bridge"]


def videos(out: Path, quality: str, chapters: tuple[str, ...]) -> list[BatchVideo]:
    from attention_video.attncore import Settings

    return [BatchVideo(i + 1, Settings(sentence=s, weights="random", quality=quality,
                                       chapters=chapters, output=str(out / f"v{i + 1}.mp4")))
            for i, s in enumerate(SENTENCES)]


def timed(label: str, fn) -> float:
    t0 = time.perf_counter()
    rows = fn()
    dt = time.perf_counter() - t0
    bad = [r for r in rows if r.error]
    if bad:
        print(summary_table(rows, dt))
        raise SystemExit(f"{label}: {len(bad)} videos failed")
    print(f"  {label:<44} {dt:8.1f} s", flush=True)
    return dt


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("-q", "--quality", default="l", choices=["l", "m", "h", "k"])
    ap.add_argument("--chapters", default="input,summary")
    args = ap.parse_args()
    chapters = parse_chapters(args.chapters)
    warnings.filterwarnings("ignore", "'audioop' is deprecated", DeprecationWarning)

    with tempfile.TemporaryDirectory(prefix="bench-batch-") as tmp:
        root = Path(tmp)
        os.environ["ATTENTION_CACHE_DIR"] = str(root / "texts")  # kept texts, shared by all
        print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores; "
              f"{len(SENTENCES)} videos, chapters {args.chapters}, -q {args.quality}")
        from attention_video.pipeline.run.render import dry_run

        for v in videos(root, args.quality, chapters):
            dry_run(v.settings)

        def run(name: str, **kw):
            out = root / name
            out.mkdir()
            return lambda: render_batch(videos(out, args.quality, chapters),
                                        cache=ChapterCache(root / f"cache-{name}"), **kw)

        serial = timed("serial (-j 1)", run("serial", jobs=1))
        pool = timed("local pool (-j 2)", run("pool", jobs=2))
        import logging

        from distributed import LocalCluster

        logging.getLogger("distributed").setLevel(logging.ERROR)  # its INFO lines: not figures

        from attention_video.pipeline.run.executors import DaskExecutor

        t0 = time.perf_counter()
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                          dashboard_address=None) as cluster:
            with DaskExecutor(cluster.scheduler_address) as executor:
                started = time.perf_counter() - t0
                cluster_time = timed("Dask LocalCluster, 2 workers", run("cluster", executor=executor))
                warm = timed("Dask LocalCluster again (warm workers)",
                             run("cluster-warm", executor=executor))
        print(f"  {'(starting the cluster and connecting)':<44} {started:8.1f} s")
        print()
        print(f"  local pool ÷ serial                {pool / serial:6.2f}")
        print(f"  LocalCluster ÷ local pool          {cluster_time / pool:6.2f}   (target ≤ 1.15)")
        print(f"  LocalCluster, warm ÷ local pool    {warm / pool:6.2f}")


if __name__ == "__main__":
    main()
