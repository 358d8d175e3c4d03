"""Training and forward time of the tiny model.

    python benchmarks/bench_tiny.py [--runs 200] [--no-large]

Prints: training time (wall and CPU) of the default size (d_model 4, one head; target
< 30 s on 2 cores) and of d_model 8 with 2 heads, each with its held-out figures; load time
of the shipped file; forward time of "The black cat drank the milk" (median of --runs).
Wall time counts other processes sharing the cores; CPU time does not.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from attention_video.attncore.tiny import TrainConfig, load_default  # noqa: E402
from attention_video.attncore.tiny.store import default_bytes, from_bytes  # noqa: E402
from attention_video.attncore.tiny.train import train  # noqa: E402

SENTENCE = "The black cat drank the milk"
TARGET_TRAIN_S = 30.0


def bench_train(config: TrainConfig, label: str) -> None:
    wall, cpu = time.perf_counter(), time.process_time()
    model = train(config)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    s = model.scores
    verdict = "" if label != "default" else (
        "  (target < 30 s: " + ("met" if wall < TARGET_TRAIN_S else "MISSED") + ")")
    print(f"train {label:22s} {wall:6.1f} s wall, {cpu:6.1f} s CPU{verdict}")
    print(f"      test accuracy {s['test_accuracy']:.3f}, object → verb "
          f"{s['test_object_to_verb']:.3f} (head {s['test_head']}), kept restart "
          f"{model.history.restart}")


def bench_forward(runs: int) -> None:
    t = time.perf_counter()
    from_bytes(default_bytes())
    load_ms = (time.perf_counter() - t) * 1000
    model = load_default()
    tokens = model.tokenize(SENTENCE)
    model.run(tokens)  # warm-up
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        model.run(tokens)
        times.append(time.perf_counter() - t)
    t = time.perf_counter()
    for _ in range(runs):
        model.tokenize(SENTENCE)
    tok_us = (time.perf_counter() - t) / runs * 1e6
    print(f"load default.safetensors {load_ms:6.2f} ms")
    print(f"forward {SENTENCE!r}: {statistics.median(times) * 1e6:.0f} µs median of {runs} "
          f"(tokenize {tok_us:.0f} µs)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--no-large", action="store_true", help="skip d_model 8, 2 heads")
    args = parser.parse_args()
    bench_forward(args.runs)
    bench_train(TrainConfig(), "default")
    if not args.no_large:
        bench_train(TrainConfig(d_model=8, heads=2), "d_model 8, 2 heads")
    return 0


if __name__ == "__main__":
    sys.exit(main())
