"""Every speed target in one run (not a test): the default video against Manim's static
floor, the previews, the warm re-run.

    .venv/bin/python benchmarks/bench_speed.py              # every figure, 3 runs of the ratio
    .venv/bin/python benchmarks/bench_speed.py --runs 1     # quicker
    .venv/bin/python benchmarks/bench_speed.py --only ratio # just the ratio

Each figure is one command run as a user runs it (`python render.py ...`, a new interpreter,
imports included), timed from outside: wall seconds and CPU seconds (user + system of the
command and every process it started). Run it on idle cores: the load average is printed
beside each figure, and a figure measured under load is not the figure.

Figures and targets:
  cold 1080p30 default video ÷ Manim's static floor      ≤ 0.30
      cold: no chapter clip kept (the kept texts stay, as for a user's second video);
      the floor: Manim Community writes one still Scene with a wait of the same duration
      and frame rate, caching off; both files' stored frames are counted with PyAV
  warm re-run (every chapter kept) ÷ cold                  ≤ 0.05
  storyboard of a nine-word sentence ÷ its cold -q l render ≤ 0.35
  lint of that sentence ÷ its storyboard                    ≤ 1
  the decoder's storyboard (default sentence)              ≤ 10 s
  the decoder's lint ÷ its storyboard                       ≤ 1
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = "The black cat drank the milk"
NINE_WORDS = "The old farmer slowly drank a cup of milk"
QUALITY = {"h": (1080, 1920, 30)}


@dataclass(frozen=True)
class Timed:
    wall: float
    cpu: float
    load: float  # the 1-minute load average when the command started


def run(args: list[str], env: dict[str, str]) -> Timed:
    """One command in a new process; CPU counts every process it waited for."""
    load = os.getloadavg()[0]
    before = os.times()
    start = time.perf_counter()
    done = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = os.times()
    if done.returncode != 0:
        sys.exit(f"failed ({done.returncode}): {' '.join(args)}\n{done.stderr[-2000:]}")
    cpu = (after.children_user - before.children_user
           + after.children_system - before.children_system)
    return Timed(wall, cpu, load)


def render(*args: str) -> list[str]:
    return [sys.executable, "render.py", *args]


def forget_clips(cache: Path) -> None:
    """Cold for the chapters: remove the kept clips and their records, keep the texts and
    the source files' scans (pipeline.cache.sources.SCANS), as for a user's second video."""
    from attention_video.pipeline.cache.sources import SCANS

    for path in cache.glob("*"):
        if path.is_file() and path.suffix in (".mp4", ".json") and path.name != SCANS:
            path.unlink()


def stored_frames(video: Path) -> tuple[int, float]:
    """(frames stored in the file, duration in seconds), read with PyAV."""
    import av

    with av.open(str(video)) as container:
        stream = container.streams.video[0]
        frames = sum(1 for _ in container.demux(stream) if _.size)
        duration = float(container.duration or 0) / av.time_base
    return frames, duration


STILL = """
import sys
from manim import Scene, Text, tempconfig
seconds, out = float(sys.argv[1]), sys.argv[2]
class Still(Scene):
    def construct(self):
        self.add(Text("still"))
        self.wait(seconds)
h, w, fps = {quality}
with tempconfig({{"pixel_height": h, "pixel_width": w, "frame_rate": fps,
                 "media_dir": out + ".media", "output_file": out, "disable_caching": True,
                 "verbosity": "ERROR", "progress_bar": "none"}}):
    Still().render()
"""


def static_floor(seconds: float, folder: Path, env: dict[str, str]) -> tuple[Timed, Path]:
    """Manim itself writing a still video of `seconds` at 1080p30, one process."""
    out = folder / "still.mp4"
    timed = run([sys.executable, "-c", STILL.format(quality=QUALITY["h"]), str(seconds),
                 str(out)], env)
    found = next(folder.rglob("still*.mp4"), out)
    return timed, found


def line(name: str, t: Timed, note: str = "") -> None:
    print(f"  {name:<46} {t.wall:7.1f} s wall {t.cpu:7.1f} s CPU  (load {t.load:.1f}){note}",
          flush=True)


def verdict(name: str, value: float, target: str, ok: bool) -> None:
    print(f"  {name:<46} {value:7.3f}   target {target:<8} {'met' if ok else 'NOT MET'}")


def ratio(runs: int, folder: Path, env: dict[str, str]) -> float:
    """The default video, cold at 1080p30, against the static floor, `runs` times."""
    cache = Path(env["ATTENTION_CACHE_DIR"])
    video = folder / "default.mp4"
    # The texts are typeset once and kept (scenes.text): typeset them before the first cold
    # run, as for a user's second video, so every run measures the same thing.
    run(render(DEFAULT, "-q", "h", "-o", str(folder / "warm.png"), "--storyboard"), env)
    ratios = []
    for i in range(runs):
        forget_clips(cache)
        cold = run(render(DEFAULT, "-q", "h", "-j", "2", "-o", str(video)), env)
        frames, seconds = stored_frames(video)
        line(f"run {i + 1}: cold default render, 1080p30", cold,
             f"  {seconds:.1f} s of video, {frames} frames stored")
        floor, still = static_floor(seconds, folder / f"still-{i}", env)
        still_frames, _ = stored_frames(still)
        line(f"run {i + 1}: Manim's static floor, same length", floor,
             f"  {still_frames} frames stored")
        ratios.append(cold.wall / floor.wall)
        print(f"  run {i + 1}: ratio {ratios[-1]:.3f} (CPU ratio {cold.cpu / floor.cpu:.3f})")
    middle = statistics.median(ratios)
    spread = f" (runs: {', '.join(f'{r:.3f}' for r in ratios)})" if runs > 1 else ""
    verdict("cold default ÷ static floor, median" + spread, middle, "≤ 0.30", middle <= 0.30)
    warm = run(render(DEFAULT, "-q", "h", "-j", "2", "-o", str(video)), env)
    line("warm re-run, every chapter kept", warm)
    verdict("warm re-run ÷ cold (last run)", warm.wall / cold.wall, "≤ 0.05",
            warm.wall / cold.wall <= 0.05)
    return middle


def previews(folder: Path, env: dict[str, str]) -> None:
    """The nine-word sentence's storyboard and lint against its cold -q l render, and the
    decoder's storyboard and lint."""
    cache = Path(env["ATTENTION_CACHE_DIR"])
    out = str(folder / "nine.mp4")
    forget_clips(cache)
    low = run(render(NINE_WORDS, "-q", "l", "-j", "2", "-o", out), env)
    line("nine words: cold -q l render", low)
    board = run(render(NINE_WORDS, "-q", "l", "-j", "2", "-o", str(folder / "nine.png"),
                       "--storyboard"), env)
    line("nine words: storyboard", board)
    lint = run(render(NINE_WORDS, "-q", "l", "-j", "2", "--lint"), env)
    line("nine words: lint", lint)
    verdict("storyboard ÷ -q l render", board.wall / low.wall, "≤ 0.35",
            board.wall / low.wall <= 0.35)
    verdict("lint ÷ storyboard", lint.wall / board.wall, "≤ 1", lint.wall <= board.wall)

    decoder = ["--weights", "decoder", "-q", "l", "-j", "2"]
    board_png = ["-o", str(folder / "dec.png"), "--storyboard"]
    run(render(DEFAULT, *decoder, *board_png), env)  # the model's kept copy, made once
    board = run(render(DEFAULT, *decoder, *board_png), env)
    line("decoder: storyboard (model kept)", board)
    lint = run(render(DEFAULT, *decoder, "--lint"), env)
    line("decoder: lint", lint)
    verdict("decoder storyboard, seconds", board.wall, "≤ 10", board.wall <= 10)
    verdict("decoder lint ÷ storyboard", lint.wall / board.wall, "≤ 1", lint.wall <= board.wall)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs of the ratio (default 3)")
    parser.add_argument("--only", choices=["ratio", "previews"], help="one group of figures")
    parser.add_argument("--keep", metavar="DIR", help="work in DIR and keep it (default: a "
                        "temporary folder, removed)")
    args = parser.parse_args()

    folder = Path(args.keep or tempfile.mkdtemp(prefix="bench-speed-"))
    folder.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, ATTENTION_CACHE_DIR=str(folder / "cache"))
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                          capture_output=True, text=True).stdout.strip()
    print(f"commit {head}, {os.cpu_count()} cores, Python {sys.version.split()[0]}, "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    try:
        if args.only in (None, "ratio"):
            ratio(args.runs, folder, env)
        if args.only in (None, "previews"):
            previews(folder, env)
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
