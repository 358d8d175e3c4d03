"""Render benchmarks: prints figures side by side, in one run (not a test).

    .venv/bin/python benchmarks/bench_render.py            # 1080p30, the issue's settings
    .venv/bin/python benchmarks/bench_render.py -q l       # quicker, 480p15
    .venv/bin/python benchmarks/bench_render.py --held     # issue 14: held frames (~5 min)
    .venv/bin/python benchmarks/bench_render.py --holds summary  # how holds are written, one chapter

--held prints, in one run: the default 1080p30 cold render against Manim's static floor
of the same length (target ≤ 0.7), the `-q l` preview of the default sentence (target
≤ 0.5 × 19.7 s), a re-render that changes only the caption language, and where each
render's time goes, stage by stage (fastmanim.encoder.StageClock).

Figures (default sentence unless stated):
  warm re-run with nothing changed ÷ cold render          (target < 0.05)
  re-run after changing only the followed word ÷ cold      (reported)
  --jobs 2 ÷ --jobs 1 wall time                            (target < 0.65)
  full video ÷ a static Manim video of the same length     (target < 3, at 1080p30)
  24-token sentence ÷ 6-token sentence                     (target < 2.5)
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from attention_video.attncore import Settings  # noqa: E402
from attention_video.attncore.settings import (
    QUALITIES,  # noqa: E402
    parse_chapters,  # noqa: E402
)
from attention_video.pipeline.cache.store import ChapterCache  # noqa: E402
from attention_video.pipeline.run.render import render_video  # noqa: E402

DEFAULT = "The black cat drank the milk"
LONG = ("After a long day in the fields the old farmer finally sat down by the warm fire "
        "and slowly drank a big cup of fresh cold milk with honey")


def sentence_of(n_tokens: int, base: dict) -> str:
    """The longest prefix of LONG with at most n_tokens tokens (special tokens count)."""
    from attention_video.attncore import build_trace

    words = LONG.split()
    for k in range(len(words), 0, -1):
        text = " ".join(words[:k])
        if build_trace(Settings(sentence=text, **base)).n_k <= n_tokens:
            return text
    return words[0]


def timed(label: str, fn) -> tuple[float, object]:
    t0 = time.perf_counter()
    out = fn()
    dt = time.perf_counter() - t0
    print(f"  {label:<44} {dt:8.1f} s", flush=True)
    return dt, out


def static_floor(seconds: float, quality: str, out: Path) -> float:
    """Wall time for Manim to encode a still frame for `seconds` (self.wait), one process."""
    import subprocess

    code = f"""
import time
from manim import Scene, Text, tempconfig
class Still(Scene):
    def construct(self):
        self.add(Text("still"))
        self.wait({seconds})
h, w, fps, _ = {QUALITIES[quality]!r}
with tempconfig({{"pixel_height": h, "pixel_width": w, "frame_rate": fps, "media_dir": {str(out.parent)!r},
                 "output_file": {str(out)!r}, "disable_caching": True, "verbosity": "ERROR",
                 "progress_bar": "none"}}):
    Still().render()
"""
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.perf_counter() - t0


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def print_stages(label: str, chapters: list) -> None:
    """Seconds per stage summed over the chapters rendered (cached ones count nothing).
    scene = the rest of each worker's main thread: building the scene, animating
    (interpolating) its objects, and waiting for the encoder threads."""
    rendered = [c for c in chapters if c.stages]
    if not rendered:
        print(f"  {label}: every chapter came from the cache")
        return
    total = {k: sum(c.stages.get(k, 0.0) for c in rendered) for k in rendered[0].stages}
    total["scene"] = total["wall"] - total["draw"] - total["join"]
    order = ["scene", "draw", "convert", "encode", "segments", "join"]
    parts = ", ".join(f"{k} {total[k]:.1f}" for k in order)
    print(f"  {label}: {len(rendered)} chapters, worker wall {total['wall']:.1f} s, "
          f"CPU {total['cpu']:.1f} s; {parts} s; frames shown {total['frames_shown']:.0f}, "
          f"stored {total['frames_stored']:.0f}")


def held(args: argparse.Namespace, root: Path) -> None:
    """Issue 14's figures, all in one run."""
    base = dict(weights=args.weights, head="auto" if args.weights == "pretrained" else 0)

    def run(quality: str, cache_name: str, **kw):
        s = Settings(sentence=DEFAULT, quality=quality,
                     output=str(root / "out" / f"{cache_name}.mp4"), **base, **kw)
        return render_video(s, jobs=2, cache=ChapterCache(root / cache_name))

    print(f"  ({load()})")
    cold, r = timed("cold render 1080p30, --jobs 2", lambda: run("h", "h"))
    print(f"  ({load()})")
    floor = static_floor(r.duration, "h", root / "still" / "still.mp4")
    print(f"  {'static Manim video of the same length':<44} {floor:8.1f} s  ({load()})")
    preview, rl = timed("-q l preview, --jobs 2, cold", lambda: run("l", "l"))
    print(f"  ({load()})")
    zh, rz = timed("-q l, only the caption language changed", lambda: run("l", "l", language="zh"))
    again = [c.chapter for c in rz.chapters if not c.cached]
    print(f"  ({load()})")
    print()
    print(f"video length: {r.duration:.1f} s at 1080p30")
    print_stages("1080p30 cold", r.chapters)
    print_stages("-q l cold", rl.chapters)
    print_stages("-q l, language changed", rz.chapters)
    rows = [
        ("cold 1080p30 ÷ static floor", cold / floor, "≤ 0.7"),
        ("-q l preview ÷ 19.7 s (before issue 14)", preview / 19.7, "≤ 0.5"),
        ("language changed ÷ -q l cold", zh / preview, "report"),
    ]
    for name, value, target in rows:
        print(f"  {name:<40} {value:6.3f}   target {target}")
    print(f"  chapters drawn again for the language change: {again or 'none'}")


def holds(args: argparse.Namespace, root: Path) -> None:
    """One chapter rendered in this process with each way of writing held frames, and
    with Manim's full redraw against the parked static objects (fastmanim.encoder)."""
    from attention_video.attncore import build_trace
    from attention_video.fastmanim import encoder
    from attention_video.pipeline.run.chapter import ChapterJob, render_chapter

    s = Settings(sentence=DEFAULT, quality=args.quality, weights=args.weights,
                 head="auto" if args.weights == "pretrained" else 0)
    trace = build_trace(s)
    chapter = parse_chapters(args.holds)[0]
    render_chapter(ChapterJob(chapter, trace, s, clip=None))  # imports, kept texts
    ways = [("each", False, False), ("reuse", False, False), ("once", False, False),
            ("once", True, False), ("once", True, True)]
    for mode, park, one_stream in ways:
        encoder.HeldFrameEncoder.holds, encoder.TimedRenderer.park = mode, park
        encoder.HeldFrameWriter.one_stream = one_stream
        clip = root / f"{mode}-{park}-{one_stream}.mp4"
        r = render_chapter(ChapterJob(chapter, trace, s, clip=clip, work_dir=root / "w"))
        st = r.stages
        print(f"  holds={mode:<5} park={park!s:<5} one stream={one_stream!s:<5} wall {st['wall']:5.1f} s  CPU {st['cpu']:5.1f} s  "
              + " ".join(f"{k} {st[k]:.2f}" for k in encoder.STAGES)
              + f"  stored {st['frames_stored']}/{st['frames_shown']}  {clip.stat().st_size / 1e6:.2f} MB"
              + f"  ({load()})", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("-q", "--quality", default="h", choices=list(QUALITIES))
    ap.add_argument("--weights", default="pretrained", choices=["pretrained", "random"])
    ap.add_argument("--held", action="store_true", help="issue 14's figures only")
    ap.add_argument("--holds", metavar="CHAPTER",
                    help="compare ways of writing held frames on one chapter")
    args = ap.parse_args()
    if args.held or args.holds:
        root = Path(tempfile.mkdtemp(prefix="bench-"))
        (root / "out").mkdir()
        print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
              f"Python {platform.python_version()}; weights {args.weights}")
        try:
            held(args, root) if args.held else holds(args, root)
        finally:
            shutil.rmtree(root, ignore_errors=True)
        return
    q = args.quality
    base = dict(quality=q, weights=args.weights,
                head="auto" if args.weights == "pretrained" else 0)
    root = Path(tempfile.mkdtemp(prefix="bench-"))
    (root / "out").mkdir()
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}; quality {QUALITIES[q][3]}; weights {args.weights}")
    try:
        def run(sentence, cache_name, jobs=2, **kw):
            s = Settings(sentence=sentence, output=str(root / "out" / f"{cache_name}.mp4"),
                         **base, **kw)
            return render_video(s, jobs=jobs, cache=ChapterCache(root / cache_name))

        cold, r = timed("cold render, --jobs 2", lambda: run(DEFAULT, "a"))
        video_len = r.duration
        warm, _ = timed("warm re-run, nothing changed", lambda: run(DEFAULT, "a"))
        focus, _ = timed("re-run, followed word changed", lambda: run(DEFAULT, "a", query="cat"))
        one, _ = timed("cold render, --jobs 1", lambda: run(DEFAULT, "b", jobs=1))
        floor = static_floor(video_len, q, root / "still" / "still.mp4")
        print(f"  {'static video of the same length (floor)':<44} {floor:8.1f} s")
        short = cold  # the default sentence has 6 words
        from attention_video.attncore import build_trace

        long_text = sentence_of(24, base)
        n_long = build_trace(Settings(sentence=long_text, **base)).n_k
        n_short = build_trace(Settings(sentence=DEFAULT, **base)).n_k
        long_, r_long = timed(f"cold render, {n_long} tokens (--jobs 2)",
                              lambda: run(long_text, "d"))
        print()
        print(f"video length: {video_len:.1f} s")
        rows = [
            ("warm re-run ÷ cold render", warm / cold, "< 0.05"),
            ("followed word changed ÷ cold render", focus / cold, "report"),
            ("--jobs 2 ÷ --jobs 1", cold / one, "< 0.65"),
            ("full video ÷ static floor", cold / floor, "< 3"),
            (f"{n_long}-token ÷ {n_short}-token sentence", long_ / short, "< 2.5"),
        ]
        for name, value, target in rows:
            print(f"  {name:<40} {value:6.3f}   target {target}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
