"""A re-run with nothing changed (issue 20): the command run again on a video whose chapters
are all cached, against the cold `-q l` render of the same video, measured in one run.

    .venv/bin/python benchmarks/bench_rerun.py [--runs 5] [--sentence "..."]

Target: the re-run at most 0.05 × the cold render. Each figure is the wall time of the whole
command in a new interpreter (imports included), as a user sees it; the re-run's median is
used. It also says whether the re-run imported Manim (it should not: every key is made from
the chapter table, and the clips are joined by stream copy with PyAV)."""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SENTENCE = "The black cat drank the milk"
PROBE = ("import runpy, sys; sys.argv = ['render.py'] + sys.argv[1:]\n"
         "try:\n    runpy.run_path('render.py', run_name='__main__')\n"
         "except SystemExit:\n    pass\n"
         "print('MANIM_IMPORTED' if 'manim' in sys.modules else 'MANIM_NOT_IMPORTED', file=sys.stderr)")


def timed(args: list[str], env: dict[str, str]) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", PROBE, *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, check=True)
    return time.perf_counter() - start, done.stderr


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--sentence", default=SENTENCE)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-rerun-") as tmp:
        env = dict(os.environ, ATTENTION_CACHE_DIR=str(Path(tmp) / "cache"))
        command = [args.sentence, "-q", "l", "-o", str(Path(tmp) / "v.mp4")]
        cold, _ = timed(command, env)
        reruns = []
        for _ in range(args.runs):
            seconds, err = timed(command, env)
            reruns.append(seconds)
        rerun = statistics.median(reruns)
        print(f"cold -q l render:  {cold:6.2f} s")
        print(f"re-run, all cached: {rerun:6.2f} s  (median of {args.runs}: "
              f"{', '.join(f'{s:.2f}' for s in reruns)})")
        print(f"ratio:              {rerun / cold:6.3f}  (target <= 0.05)")
        print("manim imported by the re-run: "
              + ("yes" if "MANIM_IMPORTED" in err.splitlines() else "no"))


if __name__ == "__main__":
    main()
