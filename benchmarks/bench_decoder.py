"""Speed and memory of the decoder (SmolLM2-135M-Instruct in numpy), each case in a fresh
process.

    python benchmarks/bench_decoder.py [--runs 10]

Cases: reading the GGUF file (no kept copy: reader + dequantising), the first run with an
empty cache folder (reading + writing the kept copy and its record of SHA-256s), a later run
(the kept copy checked against its record by size, header and a sampled digest, then
memory-mapped), and a later run after every kept file's modification time changed (each
file's full SHA-256 checked once, as after a copy or a restore). Each prints the load time, the forward time of 7 and 12 tokens through all 30
layers (median of --runs), a whole trace with --head auto, and peak memory (max RSS).
Targets (issue 31): a later run loads in < 1 s; 12 tokens forward < 2 s.
--load-only measures the loads alone (no forward passes).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGETS = {"load_s": 1.0, "forward_12_ms": 2000.0}
SEVEN = "The black cat drank the milk ."  # 7 tokens
TWELVE = "The black cat drank the warm milk and slept on the mat"  # 12 tokens


def measure(runs: int, cache: str | None) -> dict[str, float]:
    """Runs inside the child process."""
    import resource
    import statistics
    import time

    t0 = time.perf_counter()
    from attention_video.attncore import Settings
    from attention_video.attncore.decoder import build_decoder_trace
    from attention_video.attncore.decoder.forward import run_layers
    from attention_video.attncore.decoder.run import tokenizer
    from attention_video.attncore.decoder.store import load
    t1 = time.perf_counter()
    model = load(Path(cache) if cache else None)
    t2 = time.perf_counter()
    out = {"import_s": t1 - t0, "load_s": t2 - t1}
    if runs == 0:
        return out
    for name, text, n in (("7", SEVEN, 7), ("12", TWELVE, 12)):
        ids = tokenizer(model).encode(text).ids
        assert len(ids) == n, (text, len(ids))
        run_layers(model, ids)  # warm-up
        times = []
        for _ in range(runs):
            t = time.perf_counter()
            run_layers(model, ids)
            times.append(time.perf_counter() - t)
        out[f"forward_{name}_ms"] = statistics.median(times) * 1000
    t = time.perf_counter()
    build_decoder_trace(Settings(sentence=SEVEN, weights="decoder"), Path(cache) if cache else None)
    out["trace_auto_ms"] = (time.perf_counter() - t) * 1000
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def touch_kept_files(cache: str) -> None:
    """Change every kept file's modification time (its bytes stay): the next load hashes
    each one in full."""
    for f in Path(cache).glob("*/*.npy"):
        os.utime(f)


def child(runs: int, cache: str | None) -> dict[str, float]:
    cmd = [sys.executable, __file__, "--child", "--runs", str(runs)] + (["--cache", cache] if cache else [])
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
    if out.returncode:
        sys.exit(out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "benchmark failed")
    return json.loads(out.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description="Benchmark the numpy SmolLM2 decoder.")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--load-only", action="store_true", help="time the loads alone")
    ap.add_argument("--cache", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(measure(args.runs, args.cache)))
        return
    print(f"SmolLM2-135M-Instruct in numpy, {os.cpu_count()} CPUs")
    runs = 0 if args.load_only else args.runs
    with tempfile.TemporaryDirectory() as cache:  # (title, result, loads the kept copy)
        cases = [("GGUF file, no kept copy", child(runs, None), False),
                 ("first run, empty cache folder", child(runs, cache), False),
                 ("later run, kept copy", child(runs, cache), True)]
        touch_kept_files(cache)
        cases += [("later run, kept files touched: each hashed in full once", child(0, cache),
                   False),
                  ("the run after that, kept copy", child(0, cache), True)]
    for title, r, from_kept in cases:
        print(f"{title}:")
        rows = [("load model (kept copy checked, mapped)" if from_kept else "load model",
                 f"{r['load_s']:.2f} s", "load_s" if from_kept else "")]
        if "forward_7_ms" in r:
            rows += [
                ("forward, 7 tokens, 30 layers (median)", f"{r['forward_7_ms']:.0f} ms", ""),
                ("forward, 12 tokens, 30 layers (median)", f"{r['forward_12_ms']:.0f} ms",
                 "forward_12_ms"),
                ("trace with --head auto, 7 tokens", f"{r['trace_auto_ms']:.0f} ms", ""),
                ("peak memory (max RSS)", f"{r['peak_rss_mb']:.0f} MB", "")]
        for name, value, key in rows:
            verdict = ""
            if key:
                ok = r[key] < TARGETS[key]
                verdict = f"{'ok' if ok else 'OVER'} (target < {TARGETS[key]:g})"
            print(f"  {name:<40} {value:>9}  {verdict}")


if __name__ == "__main__":
    main()
