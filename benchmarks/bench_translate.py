"""Training and decoding time of the translation model.

    python benchmarks/bench_translate.py [--runs 200]

Prints: training time (wall and CPU) of the default settings (target < 60 s on 2 cores)
with the held-out figures; load time of the shipped file; greedy decode and full run
(every intermediate) time of "The ball is blue" (median of --runs); batched greedy
decoding of the 500 test pairs.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from attention_video.attncore.translate import TrainConfig, default_corpus, encode_pairs, evaluate  # noqa: E402
from attention_video.attncore.translate.store import default_bytes, from_bytes  # noqa: E402
from attention_video.attncore.translate.train import train  # noqa: E402

SENTENCE = "The ball is blue"
TARGET_TRAIN_S = 60.0


def median_us(fn, runs: int) -> float:
    fn()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e6


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--no-train", action="store_true")
    args = ap.parse_args()
    if not args.no_train:
        wall, cpu = time.perf_counter(), time.process_time()
        model = train(TrainConfig())
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        s = model.scores
        met = "met" if wall < TARGET_TRAIN_S else "MISSED"
        print(f"train default {wall:6.1f} s wall, {cpu:6.1f} s CPU (target < 60 s: {met})")
        print(f"      test exact match {s['test_exact_match']:.3f}, alignment "
              f"{s['test_alignment']:.3f}, crossing {s['test_crossing']:.3f}")
    t = time.perf_counter()
    model = from_bytes(default_bytes())
    print(f"load default.safetensors {(time.perf_counter() - t) * 1000:6.2f} ms "
          f"({len(default_bytes())} bytes)")
    print(f"decode {SENTENCE!r}: {median_us(lambda: model.decode(SENTENCE), args.runs):.0f} µs "
          f"median of {args.runs}")
    print(f"run {SENTENCE!r} (greedy + every intermediate): "
          f"{median_us(lambda: model.run(SENTENCE), args.runs):.0f} µs")
    c = model.train_config
    test = default_corpus().splits(c.seed, c.train_sentences, c.validation_sentences,
                                   c.test_sentences).test
    data = encode_pairs(test, model.src_vocab, model.tgt_vocab)
    t = time.perf_counter()
    s = evaluate(model.params, data)
    print(f"evaluate {len(test)} test pairs (batched greedy): "
          f"{(time.perf_counter() - t) * 1000:.0f} ms, exact match {s.exact_match:.3f}")


if __name__ == "__main__":
    main()
