"""Training the tiny model on replaced-object detection, in numpy, deterministically.

    python -m attncore.tiny.train --seed 0 --out attncore/tiny/default.safetensors

made the shipped default (d_model 4, one head). Objective (ELECTRA-style): an object is
sometimes swapped for one its verb does not take and every word says whether it was
swapped; the object can only tell by looking at its verb, so its query learns to find the
verb's key. Adam on minibatches, warm-up then cosine decay, then a rounding-aware phase
(the forward pass uses E, W_Q, W_K, W_V, W_O rounded to 0.1, the gradient updates the
unrounded copy: a straight-through estimator), so the model still works with the weights
the video shows.

One d = 4 head lands in a good solution from only some initialisations (others hide a
category in "looks elsewhere", or judge the pair by looking away when it fits), so
`restarts` initialisations are trained for `probe_steps`, the `finalists` best on the
validation set go on to the end, and the best of those is kept. "Best" is the mean of the
detection accuracy and the share of objects (of verbs that choose them) whose largest
attention weight is on their verb. The test split is never used for choosing.

Same TrainConfig → bit-identical weights (one BLAS thread, every draw from a seeded
np.random.default_rng), on the same numpy build and CPU.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from attncore.tiny.config import TrainConfig
from attncore.tiny.corpus import default_corpus
from attncore.tiny.evaluate import Encoded, Scores, encode, evaluate
from attncore.tiny.history import History, Snapshot
from attncore.tiny.model import GridParams, Params, TinyModel, init_params, loss_and_grads


@dataclass(frozen=True)
class TrainInfo:
    """What the progress callback is told."""

    restart: int  # 0-based
    restarts: int
    step: int  # step within this restart
    phase: str  # "float" or "rounded" (straight-through through the 0.1 grid)
    loss: float  # mean training loss since the last report
    accuracy: float  # validation accuracy now
    best_accuracy: float | None  # best finished restart so far


Progress = Callable[[int, int, TrainInfo], None]


class Adam:
    """Adam with bias correction; decoupled weight decay (AdamW) on the grid arrays."""

    def __init__(self, p: GridParams, weight_decay: float,
                 beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-8):
        self.m = {k: np.zeros_like(a) for k, a in p.arrays().items()}
        self.v = {k: np.zeros_like(a) for k, a in p.arrays().items()}
        self.beta1, self.beta2, self.eps, self.wd = beta1, beta2, eps, weight_decay
        self.t = 0

    def step(self, p: GridParams, grads: GridParams, lr: float) -> None:
        """θ ← θ − lr·m̂/(√v̂ + ε) − lr·λ·θ, in place;  m̂, v̂ the bias-corrected moments."""
        self.t += 1
        c1, c2 = 1.0 - self.beta1 ** self.t, 1.0 - self.beta2 ** self.t
        for name, theta in p.arrays().items():
            g = getattr(grads, name)
            m, v = self.m[name], self.v[name]
            m *= self.beta1
            m += (1.0 - self.beta1) * g
            v *= self.beta2
            v += (1.0 - self.beta2) * g * g
            if name in p.GRID:
                theta -= lr * self.wd * theta
            theta -= lr * (m / c1) / (np.sqrt(v / c2) + self.eps)


def learning_rate(step: int, c: TrainConfig) -> float:
    """Linear warm-up to c.lr, then cosine decay to c.final_lr·c.lr at the last step."""
    if step < c.warmup:
        return c.lr * (step + 1) / c.warmup
    t = (step - c.warmup) / max(1, c.total_steps - c.warmup)
    return c.lr * (c.final_lr + (1.0 - c.final_lr) * 0.5 * (1.0 + math.cos(math.pi * t)))


def snapshot_steps(c: TrainConfig) -> tuple[int, ...]:
    """Step 0, then `snapshots` steps spaced geometrically up to the end: most of the
    alignment happens early, so early steps are sampled more densely."""
    T = c.total_steps
    ks = [round(T / 2 ** (c.snapshots - 1 - i)) for i in range(c.snapshots)]
    return tuple(sorted({0, *ks}))


def one_blas_thread() -> contextlib.AbstractContextManager:
    """Products of a few hundred rows are fastest on one thread, and bit-reproducible."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return contextlib.nullcontext()
    return threadpool_limits(1, user_api="blas")


def held_out_score(s: Scores) -> float:
    """What restarts are ranked by: detection accuracy and how often an object its verb
    takes attends most to that verb, equally. Both are needed: the model can also judge
    the pair by looking elsewhere when they fit (and at the verb when they do not)."""
    return 0.5 * (s.accuracy + s.object_to_verb)


class Restart:
    """One initialisation, trained step by step; stopping and going on changes nothing."""

    def __init__(self, c: TrainConfig, index: int, vocab_size: int):
        self.c, self.index = c, index
        self.rng = np.random.default_rng([c.seed, 3, index])
        self.p = init_params(c.model, vocab_size, self.rng)
        self.adam = Adam(self.p, c.weight_decay)
        self.step = 0
        self.keep = set(snapshot_steps(c))
        self.snapshots = [Snapshot.of(0, self.p)]
        self.curve: list[tuple[int, float, float]] = []  # (step, training loss, val accuracy)
        self.order = np.empty(0, dtype=np.int64)
        self.losses: list[float] = []
        self.validation: Scores | None = None

    @property
    def rounded(self) -> bool:
        """Past the float phase: the forward pass uses the 0.1-grid weights."""
        return self.step >= self.c.steps

    def current(self) -> Params:
        """The weights the forward pass uses now."""
        return self.p.rounded() if self.rounded else self.p

    def advance(self, until: int, train: Encoded, val: Encoded,
                report: Callable[[Restart], None] | None = None) -> None:
        """Train up to step `until`; `report(self)` at every point of the curves."""
        c = self.c
        while self.step < until:
            if len(self.order) < c.batch:  # a new epoch: a fresh permutation
                self.order = np.concatenate([self.order, self.rng.permutation(len(train))])
            rows, self.order = self.order[:c.batch], self.order[c.batch:]
            b = train.take(rows)
            # in the rounded phase, straight-through: the loss and gradient of the rounded
            # weights, applied to the unrounded ones
            loss, grads, _ = loss_and_grads(self.current(), b.ids, b.mask, b.labels)
            self.adam.step(self.p, grads, learning_rate(self.step, c))
            self.losses.append(loss)
            self.step += 1
            if self.step in self.keep:
                self.snapshots.append(Snapshot.of(self.step, self.p))
            if self.step % c.curve_every == 0 or self.step == c.total_steps:
                self.validation = evaluate(self.current(), val)
                self.curve.append((self.step, float(np.mean(self.losses)),
                                   self.validation.accuracy))
                self.losses = []
                if report is not None:
                    report(self)
        if self.validation is None or self.curve[-1][0] != self.step:
            self.validation = evaluate(self.current(), val)  # stopped between curve points

    def score(self) -> tuple[float, float]:
        """Higher is better: the held-out score, then the lower validation loss."""
        assert self.validation is not None
        return (held_out_score(self.validation), -self.validation.loss)

    def history(self) -> History:
        step, loss, acc = (np.array(a) for a in zip(*self.curve))
        return History(self.index, tuple(self.snapshots), step, loss, acc)


def train(config: TrainConfig | None = None, progress: Progress | None = None) -> TinyModel:
    """Train the tiny model: `restarts` initialisations each trained for `probe_steps`, the
    `finalists` best on validation trained to the end, the best of those kept.

    A restart that stops and goes on ends exactly where an uninterrupted one would, so the
    kept model is simply that restart trained for all its steps. `progress(step, total,
    info)` is called every `curve_every` steps (step counts all the work, over every
    restart), e.g. to draw a progress bar. Returns the model with its 0.1-grid weights, its
    history and its validation and test scores.
    """
    c = config or TrainConfig()
    corpus = default_corpus()
    vocab = tuple(corpus.vocabulary())
    splits = corpus.splits(c.seed, c.train_sentences, c.validation_sentences, c.test_sentences)
    train_set, val = encode(splits.train, vocab), encode(splits.validation, vocab)
    probe = min(c.probe_steps, c.total_steps)
    finalists = min(c.finalists, c.restarts)
    total = c.restarts * probe + finalists * (c.total_steps - probe)
    done, best_acc = [0], [None]

    def report(r: Restart) -> None:
        done[0] = min(done[0] + c.curve_every, total)
        if progress is not None:
            step, loss, acc = r.curve[-1]
            progress(done[0], total, TrainInfo(r.index, c.restarts, step,
                                               "rounded" if r.rounded else "float",
                                               loss, acc, best_acc[0]))

    with one_blas_thread():
        restarts = [Restart(c, i, len(vocab)) for i in range(c.restarts)]
        for r in restarts:
            r.advance(probe, train_set, val, report)
        ranked = sorted(restarts, key=Restart.score, reverse=True)[:finalists]
        for r in ranked:
            r.advance(c.total_steps, train_set, val, report)
            best_acc[0] = max(best_acc[0] or 0.0, r.validation.accuracy)
        best = max(ranked, key=Restart.score)
        final = best.p.rounded()
        validation = evaluate(final, val)
        test = evaluate(final, encode(splits.test, vocab))
    scores = {f"validation_{k}": v for k, v in validation.to_dict().items()}
    scores |= {f"test_{k}": v for k, v in test.to_dict().items()}
    return TinyModel(c.model, vocab, final.frozen(), c, best.history(), scores)


# ---------------------------------------------------------------- command line

def _bar(step: int, total: int, info: TrainInfo, started: float) -> str:
    width = 30
    filled = round(width * step / total)
    return (f"\r[{'#' * filled}{'.' * (width - filled)}] {step}/{total}  restart "
            f"{info.restart + 1}/{info.restarts} {info.phase:7s} loss {info.loss:.3f}  "
            f"held-out accuracy {info.accuracy:.3f}  {time.perf_counter() - started:5.1f} s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m attncore.tiny.train",
        description="Train the tiny attention model and save it as safetensors.")
    defaults = TrainConfig()
    parser.add_argument("--seed", type=int, default=defaults.seed,
                        help="corpus split, initialisation and minibatch order")
    parser.add_argument("--d-model", type=int, default=defaults.d_model,
                        help=f"width of E, P, X (2 to 16; default {defaults.d_model})")
    parser.add_argument("--heads", type=int, default=defaults.heads,
                        help=f"attention heads (1 to 4; default {defaults.heads})")
    parser.add_argument("--restarts", type=int, default=defaults.restarts,
                        help=f"initialisations to try (default {defaults.restarts})")
    parser.add_argument("--out", required=True, help="the .safetensors file to write")
    args = parser.parse_args(argv)
    from attncore.tiny.store import save

    try:
        config = TrainConfig(seed=args.seed, d_model=args.d_model, heads=args.heads,
                             restarts=args.restarts)
    except ValueError as e:
        parser.error(str(e))
    started = time.perf_counter()
    interactive = sys.stderr.isatty()
    last = [-1]

    def progress(step: int, total: int, info: TrainInfo) -> None:
        if interactive:
            print(_bar(step, total, info, started), end="", file=sys.stderr, flush=True)
        elif step * 10 // total != last[0]:  # a line every 10% in logs
            last[0] = step * 10 // total
            print(_bar(step, total, info, started).lstrip("\r"), file=sys.stderr, flush=True)

    model = train(config, progress)
    if interactive:
        print(file=sys.stderr)
    save(model, args.out)
    s = model.scores
    print(f"trained in {time.perf_counter() - started:.1f} s; kept restart "
          f"{model.history.restart + 1} of {config.restarts}")
    for split in ("validation", "test"):
        print(f"{split:10s} ({s[f'{split}_sentences']} sentences): replaced-object accuracy "
              f"{s[f'{split}_accuracy']:.3f}, object attends most to its verb "
              f"{s[f'{split}_object_to_verb']:.3f} (head {s[f'{split}_head']}), "
              f"loss {s[f'{split}_loss']:.4f}")
    for sentence in ("The black cat drank the milk", "黑猫喝了牛奶"):
        r = model.run(sentence)
        focus = len(r.tokens) - 1
        row = r.heads[s["test_head"]].weights[focus]
        ranked = sorted(range(len(row)), key=lambda j: -row[j])
        print(f"{sentence}: {r.tokens[focus].text} → " + ", ".join(
            f"{r.tokens[j].text} {row[j]:.2f}" for j in ranked[:3]))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
