"""Narration benchmark (issue 22): prints figures side by side, in one run (not a test).

    .venv/bin/python benchmarks/bench_voice.py                    # 1080p30, input, linear, softmax
    .venv/bin/python benchmarks/bench_voice.py --chapters 1-10    # the whole video
    .venv/bin/python benchmarks/bench_voice.py -q l               # quicker, 480p15

Each render is the command itself (`render.py`, a process of its own) with a cache folder
of its own, so "cold" means no clip, text or speech kept. Figures:
  cold narrated render ÷ cold silent render, same pacing  (target ≤ 1.15; synthesis and
                                                           muxing included)
  narrated re-run with nothing changed ÷ cold narrated    (target ≤ 0.05)
  the paced silent render ÷ Manim's static floor of the same length (target ≤ 0.7;
                                                           --floor, one more render)
and where the narrated time goes: the CPU seconds of each render (its processes and their
workers), synthesis (seconds of speech, CPU per second of speech), the final join with its
AAC track. From those, the lowest ratio this machine allows when the render already keeps
every core busy: (silent CPU + synthesis CPU) ÷ silent CPU.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DEFAULT = "The black cat drank the milk"


def children_cpu() -> float:
    """CPU seconds (user + system) of every finished child process and their children."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run(args: list[str], cache: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds of it and its workers) of one `render.py` command with
    `cache` as its cache folder."""
    env = dict(os.environ, ATTENTION_CACHE_DIR=str(cache), ATTENTION_CACHE_LIMIT="0")
    t0, c0 = time.perf_counter(), children_cpu()
    subprocess.run([sys.executable, str(ROOT / "render.py"), DEFAULT, *args], env=env,
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0, children_cpu() - c0


def synthesis(cache: Path, srt: Path) -> tuple[float, float]:
    """(seconds of speech kept in `cache`, CPU seconds to synthesize it again in this
    process, one onnxruntime thread as in a worker)."""
    from attention_video.scenes import voice

    files = sorted((cache / "speech").rglob("*.wav"))
    speech = sum(voice._read_kept(p, print).seconds for p in files)
    piper = voice.Narrator(voice.resolve("joe", "en"), "en")._piper()  # loaded first (0.3 s)
    texts = _spoken_texts(srt)
    t0 = time.process_time()
    for text in texts:
        voice._synthesize(piper, text, voice.synthesis_settings(1.0))
    return speech, time.process_time() - t0


def _spoken_texts(srt: Path) -> list[str]:
    """The spoken form of every cue of a narrated video's subtitles."""
    from attention_video.scenes.spoken import spoken

    blocks = srt.read_text(encoding="utf-8").strip().split("\n\n")
    return [spoken(" ".join(block.splitlines()[2:])) for block in blocks]


def join_seconds(video: Path, clips: list[Path]) -> float:
    from attention_video.pipeline.outputs.video import join

    t0 = time.perf_counter()
    join(clips, video.with_name("rejoined.mp4"))  # (in another order: a new timeline)
    return time.perf_counter() - t0


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-q", "--quality", default="h")
    p.add_argument("--chapters", default="1,2,5")
    p.add_argument("--floor", action="store_true",
                   help="also render Manim's static floor of the silent video's length")
    a = p.parse_args()
    common = ["-q", a.quality, "--chapters", a.chapters, "-j", "2"]
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores; "
          f"-q {a.quality}, chapters {a.chapters}, default sentence")
    with tempfile.TemporaryDirectory(prefix="bench-voice-") as tmp:
        root = Path(tmp)
        silent_cache, voiced_cache, out = root / "silent", root / "voiced", root / "out"
        out.mkdir()
        silent, silent_cpu = run([*common, "-o", str(out / "silent.mp4")], silent_cache)
        voiced_args = [*common, "--voice", "joe", "-o", str(out / "narrated.mp4")]
        cold, cold_cpu = run(voiced_args, voiced_cache)
        rerun, _ = run(voiced_args, voiced_cache)
        speech, synth = synthesis(voiced_cache, out / "narrated.srt")
        clips = sorted(voiced_cache.glob("*.mp4"))
        joined = join_seconds(out / "narrated.mp4", clips)
        from attention_video.pipeline.outputs.video import probe

        info = probe(out / "narrated.mp4")
        quiet = probe(out / "silent.mp4")
        if a.floor:
            from bench_render import static_floor

            floor = static_floor(quiet.duration, a.quality, out / "still.mp4")
    print(f"cold silent render            {silent:7.1f} s  ({quiet.duration:.1f} s of video, "
          f"{quiet.stored} frames stored; CPU {silent_cpu:.1f} s)")
    print(f"cold narrated render          {cold:7.1f} s  ({info.duration:.1f} s of video, "
          f"{info.stored} frames stored; CPU {cold_cpu:.1f} s)")
    print(f"narrated re-run, no change    {rerun:7.1f} s")
    print(f"  narrated ÷ silent           {cold / silent:7.3f}   (target ≤ 1.15)")
    print(f"  re-run ÷ cold narrated      {rerun / cold:7.3f}   (target ≤ 0.05)")
    print(f"synthesis: {speech:.1f} s of speech in {synth:.1f} CPU s, one thread "
          f"({synth / speech:.3f} CPU s per second of speech)")
    print(f"  narrated CPU − silent CPU   {cold_cpu - silent_cpu:7.1f} s")
    print(f"  lowest narrated ÷ silent with every core busy: (silent CPU + synthesis CPU) ÷ "
          f"silent CPU = {(silent_cpu + synth) / silent_cpu:.3f}")
    print(f"a join that encodes a new AAC track of the whole timeline: {joined:.2f} s")
    if a.floor:
        print(f"Manim's static floor, {quiet.duration:.1f} s   {floor:7.1f} s")
        print(f"  paced silent ÷ static floor {silent / floor:7.3f}   (target ≤ 0.7)")


if __name__ == "__main__":
    main()
