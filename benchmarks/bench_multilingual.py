"""Speed and memory of the multilingual (numpy multilingual-e5-small) path, in a fresh process.

    python benchmarks/bench_multilingual.py [--runs 20] [--storyboard]

Prints: import time, model load time (first call in a fresh process: parse the file,
dequantise the 12 layers to float64; the file may be in the OS page cache), forward time of
the Chinese sentence through all 12 layers (median of --runs), a whole trace with --head auto,
peak memory (max RSS). --storyboard also times a cold `render.py SENTENCE -q l --storyboard
--no-cache` in its own process.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SENTENCE = "我昨天在公园里看见了一只小狗"


def measure(runs: int) -> dict[str, float]:
    """Runs inside the child process."""
    import resource
    import statistics

    t0 = time.perf_counter()
    from attention_video.attncore import Settings
    from attention_video.attncore.multilingual import (
        build_multilingual_trace,
        encode,
        find_model,
        load,
    )
    t1 = time.perf_counter()
    m = load(find_model())
    t2 = time.perf_counter()
    ids = m.tokenizer.encode(SENTENCE).ids
    tokenize_ms = (time.perf_counter() - t2) * 1000
    encode(m, ids)  # warm-up
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        encode(m, ids)
        times.append(time.perf_counter() - t)
    s = Settings(sentence=SENTENCE, weights="multilingual", head="auto")
    t = time.perf_counter()
    build_multilingual_trace(s)
    trace_s = time.perf_counter() - t
    return {
        "tokens": len(ids), "import_s": t1 - t0, "load_s": t2 - t1, "tokenize_ms": tokenize_ms,
        "forward_ms": statistics.median(times) * 1000, "forward_min_ms": min(times) * 1000,
        "trace_auto_ms": trace_s * 1000,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def storyboard_seconds() -> float:
    with tempfile.TemporaryDirectory() as d:
        t = time.perf_counter()
        subprocess.run([sys.executable, "render.py", SENTENCE, "-q", "l", "--storyboard",
                        "--no-cache", "-o", str(Path(d) / "board.png")],
                       cwd=ROOT, check=True, capture_output=True)
        return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description="Benchmark the numpy multilingual-e5-small path.")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--storyboard", action="store_true", help="also time a cold storyboard")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(measure(args.runs)))
        return
    out = subprocess.run([sys.executable, __file__, "--child", "--runs", str(args.runs)],
                         cwd=ROOT, capture_output=True, text=True, check=False)
    if out.returncode:
        sys.exit(out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "benchmark failed")
    r = json.loads(out.stdout)
    print(f"multilingual-e5-small in numpy, {os.cpu_count()} CPUs, {r['tokens']} tokens")
    rows = [("import attncore.multilingual", f"{r['import_s']:.3f} s"),
            ("load model (fresh process)", f"{r['load_s']:.3f} s"),
            ("tokenize", f"{r['tokenize_ms']:.1f} ms"),
            ("forward, 12 layers (median)", f"{r['forward_ms']:.1f} ms"),
            ("forward, 12 layers (best)", f"{r['forward_min_ms']:.1f} ms"),
            ("trace with --head auto", f"{r['trace_auto_ms']:.1f} ms"),
            ("peak memory (max RSS)", f"{r['peak_rss_mb']:.0f} MB")]
    if args.storyboard:
        rows.append(("cold storyboard, -q l", f"{storyboard_seconds():.1f} s"))
    for name, value in rows:
        print(f"  {name:<32} {value:>10}")


if __name__ == "__main__":
    main()
