"""Speed and memory of the pretrained (numpy BERT) path, measured in a fresh process.

    python benchmarks/bench_pretrained.py [--runs 20] [--blas-threads N]

Prints: import time, model load time (first call in a fresh process; the file may be in the
OS page cache), forward time of 32 tokens (median of --runs), a whole trace with --head auto,
and peak memory (max RSS of the process). Targets: load < 0.5 s, forward < 100 ms, < 400 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGETS = {"load_s": 0.5, "forward_32_ms": 100.0, "peak_rss_mb": 400.0}
SENTENCE = ("the quick brown fox jumps over the lazy dog while the black cat drank the warm "
            "milk and the children watched it from the old wooden bench near the house")


def measure(runs: int) -> dict[str, float]:
    """Runs inside the child process."""
    import resource
    import statistics
    import time

    t0 = time.perf_counter()
    from attention_video.attncore import Settings
    from attention_video.attncore.pretrained import build_pretrained_trace, encode, find_model, load
    t1 = time.perf_counter()
    ck = load(find_model())
    t2 = time.perf_counter()
    ids = ck.tokenizer.encode(SENTENCE).ids
    assert len(ids) == 32, len(ids)
    encode(ck, ids)  # warm-up
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        encode(ck, ids)
        times.append(time.perf_counter() - t)
    s = Settings(sentence=SENTENCE, weights="pretrained", head="auto")
    t = time.perf_counter()
    build_pretrained_trace(s)
    trace_s = time.perf_counter() - t
    return {
        "import_s": t1 - t0, "load_s": t2 - t1,
        "forward_32_ms": statistics.median(times) * 1000, "forward_32_min_ms": min(times) * 1000,
        "trace_auto_ms": trace_s * 1000,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description="Benchmark the pretrained numpy BERT path.")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--blas-threads", type=int, default=None,
                    help="set OPENBLAS_NUM_THREADS/OMP_NUM_THREADS in the measured process")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(measure(args.runs)))
        return
    env = dict(os.environ)
    if args.blas_threads:
        env["OPENBLAS_NUM_THREADS"] = env["OMP_NUM_THREADS"] = str(args.blas_threads)
    out = subprocess.run([sys.executable, __file__, "--child", "--runs", str(args.runs)],
                         cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    if out.returncode:
        sys.exit(out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "benchmark failed")
    r = json.loads(out.stdout)
    threads = args.blas_threads or "default"
    print(f"pretrained numpy BERT, {os.cpu_count()} CPUs, BLAS threads: {threads}")
    rows = [("import attncore.pretrained", f"{r['import_s']:.3f} s", ""),
            ("load model (fresh process)", f"{r['load_s']:.3f} s", "load_s"),
            ("forward, 32 tokens (median)", f"{r['forward_32_ms']:.1f} ms", "forward_32_ms"),
            ("forward, 32 tokens (best)", f"{r['forward_32_min_ms']:.1f} ms", ""),
            ("trace with --head auto, 32 tokens", f"{r['trace_auto_ms']:.1f} ms", ""),
            ("peak memory (max RSS)", f"{r['peak_rss_mb']:.0f} MB", "peak_rss_mb")]
    for name, value, key in rows:
        verdict = ""
        if key:
            ok = r[key] < TARGETS[key]
            verdict = f"{'ok' if ok else 'OVER'} (target < {TARGETS[key]:g})"
        print(f"  {name:<36} {value:>10}  {verdict}")


if __name__ == "__main__":
    main()
