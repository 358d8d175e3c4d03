"""What the tiny model and the translation model train with: the same schedule, the same
optimiser, the same restarts, deterministically.

A model's trainer says only what is its own: how its parameters start, its loss on a
minibatch, how it is scored on held-out data, and what a snapshot of it keeps (a
`Restart` subclass). Everything else is here:

- Adam with decoupled weight decay on the arrays the video shows (`GridParams.GRID`);
- linear warm-up, then cosine decay;
- a float phase, then a rounding-aware phase: the forward pass uses the weights rounded to
  the 0.1 grid and the gradient updates the unrounded copy (straight-through), so the model
  still works with the weights on screen;
- `restarts` initialisations trained for `probe_steps`, the `finalists` best on validation
  trained to the end, the best of those kept (`train_restarts`).

Same settings → bit-identical weights: one BLAS thread, every draw from a seeded
np.random.default_rng, on the same numpy build and CPU.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, Self, TypeVar

import numpy as np
from attention_video.attncore.trained.history import History, Snapshot
from attention_video.attncore.trained.params import GridParams

P = TypeVar("P", bound="GridParams")
S = TypeVar("S")  # a model's held-out scores


class Schedule(Protocol):
    """The training settings this module reads (both models' TrainConfig have them)."""

    seed: int
    restarts: int
    probe_steps: int
    finalists: int
    steps: int
    rounded_steps: int
    batch: int
    lr: float
    warmup: int
    final_lr: float
    weight_decay: float
    snapshots: int
    curve_every: int

    @property
    def total_steps(self) -> int: ...


def in_range(config: object, **ranges: tuple[int, int]) -> None:
    """ValueError naming the first of `config`'s fields outside its (low, high) range."""
    for name, (low, high) in ranges.items():
        value = getattr(config, name)
        if not low <= value <= high:
            raise ValueError(f"{name}: {value} is out of range; allowed: {low} to {high}")


def at_least_one(config: object, *names: str) -> None:
    """ValueError naming the first of `config`'s fields `names` under 1."""
    for name in names:
        if getattr(config, name) < 1:
            raise ValueError(f"{name}: {getattr(config, name)} must be at least 1")


class TrainSettings:
    """Shared behaviour of a frozen TrainConfig dataclass: its checks, its length and its
    round trip through a dict (a model file stores it)."""

    COUNTS = ("train_sentences", "validation_sentences", "test_sentences", "restarts",
              "probe_steps", "finalists", "batch", "snapshots", "curve_every")

    def __post_init__(self) -> None:
        _ = self.model  # the ModelConfig validates the sizes
        at_least_one(self, *self.COUNTS)
        if self.steps < 1 or self.rounded_steps < 0:
            raise ValueError("steps must be at least 1 and rounded_steps at least 0")

    @property
    def total_steps(self) -> int:
        """Steps of one restart: the float phase, then the rounded one."""
        return self.steps + self.rounded_steps

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict):
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(d) - known
        if unknown:
            raise ValueError(f"unknown training settings: {', '.join(sorted(unknown))}")
        return cls(**d)


class Rows:
    """A set of sentences as a frozen dataclass of arrays with one row per sentence each:
    what `Restart.advance` trains and evaluates on, `len()` rows and `take(rows)`."""

    def __len__(self) -> int:
        return len(getattr(self, dataclasses.fields(self)[0].name))

    def take(self, rows: np.ndarray) -> Self:
        return dataclasses.replace(self, **{f.name: getattr(self, f.name)[rows]
                                            for f in dataclasses.fields(self)})


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


def learning_rate(step: int, c: Schedule) -> float:
    """Linear warm-up to c.lr, then cosine decay to c.final_lr·c.lr at the last step."""
    if step < c.warmup:
        return c.lr * (step + 1) / c.warmup
    t = (step - c.warmup) / max(1, c.total_steps - c.warmup)
    return c.lr * (c.final_lr + (1.0 - c.final_lr) * 0.5 * (1.0 + math.cos(math.pi * t)))


def snapshot_steps(c: Schedule) -> tuple[int, ...]:
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


class Restart(Generic[P, S]):
    """One initialisation, trained step by step; stopping and going on changes nothing.

    A model's subclass gives `loss_and_grads`, `evaluate`, `curve_accuracy` and
    `held_out_score`. A training set or validation set is anything with
    `len()` and `take(rows)` (`Rows`).
    """

    def __init__(self, c: Schedule, index: int, init: Callable[[np.random.Generator], P]):
        self.c, self.index = c, index
        self.rng = np.random.default_rng([c.seed, 3, index])
        self.p = init(self.rng)
        self.adam = Adam(self.p, c.weight_decay)
        self.step = 0
        self.keep = set(snapshot_steps(c))
        self.snapshots = [self.snapshot(0, self.p)]
        self.curve: list[tuple[int, float, float]] = []  # (step, training loss, val accuracy)
        self.order = np.empty(0, dtype=np.int64)
        self.losses: list[float] = []
        self.validation: S | None = None

    # ------------------------------------------------------------ the model's own part

    def loss_and_grads(self, p: P, batch: Any) -> tuple[float, P]:
        raise NotImplementedError

    def evaluate(self, p: P, val: Any) -> S:
        raise NotImplementedError

    def curve_accuracy(self, s: S) -> float:
        """The accuracy the curves plot."""
        raise NotImplementedError

    def held_out_score(self, s: S) -> float:
        """What restarts are ranked by (higher is better)."""
        raise NotImplementedError

    # ------------------------------------------------------------ shared

    def snapshot(self, step: int, p: P) -> Snapshot:
        return Snapshot.of(step, p)

    @property
    def rounded(self) -> bool:
        """Past the float phase: the forward pass uses the 0.1-grid weights."""
        return self.step >= self.c.steps

    def current(self) -> P:
        """The weights the forward pass uses now."""
        return self.p.rounded() if self.rounded else self.p

    def advance(self, until: int, train: Any, val: Any,
                report: Callable[[Restart], None] | None = None) -> None:
        """Train up to step `until`; `report(self)` at every point of the curves."""
        c = self.c
        while self.step < until:
            if len(self.order) < c.batch:  # a new epoch: a fresh permutation
                self.order = np.concatenate([self.order, self.rng.permutation(len(train))])
            rows, self.order = self.order[:c.batch], self.order[c.batch:]
            # in the rounded phase, straight-through: the loss and gradient of the rounded
            # weights, applied to the unrounded ones
            loss, grads = self.loss_and_grads(self.current(), train.take(rows))
            self.adam.step(self.p, grads, learning_rate(self.step, c))
            self.losses.append(loss)
            self.step += 1
            if self.step in self.keep:
                self.snapshots.append(self.snapshot(self.step, self.p))
            if self.step % c.curve_every == 0 or self.step == c.total_steps:
                self.validation = self.evaluate(self.current(), val)
                self.curve.append((self.step, float(np.mean(self.losses)),
                                   self.curve_accuracy(self.validation)))
                self.losses = []
                if report is not None:
                    report(self)
        if self.validation is None or self.curve[-1][0] != self.step:
            self.validation = self.evaluate(self.current(), val)  # stopped between points

    def score(self) -> tuple[float, float]:
        """Higher is better: the held-out score, then the lower validation loss."""
        assert self.validation is not None
        return (self.held_out_score(self.validation), -self.validation.loss)

    def curves(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(steps, training losses, validation accuracies) at the points of the curves."""
        step, loss, acc = (np.array(a) for a in zip(*self.curve))
        return step.astype(np.int64), loss, acc

    def history(self) -> History:
        """Its snapshots and curves, kept in the model file when it is the best restart."""
        return History(self.index, tuple(self.snapshots), *self.curves())


def train_restarts(c: Schedule, restarts: Sequence[Restart], train: Any, val: Any,
                   report: Callable[[Restart], None] | None = None,
                   finished: Callable[[Restart], None] | None = None) -> Restart:
    """Every restart for `probe_steps`, then the `finalists` best on to the end (each
    `finished` then); returns the best of those. A restart that stops and goes on ends
    exactly where an uninterrupted one would."""
    probe = min(c.probe_steps, c.total_steps)
    for r in restarts:
        r.advance(probe, train, val, report)
    ranked = sorted(restarts, key=Restart.score, reverse=True)[:min(c.finalists, len(restarts))]
    for r in ranked:
        r.advance(c.total_steps, train, val, report)
        if finished is not None:
            finished(r)
    return max(ranked, key=Restart.score)


def total_work(c: Schedule) -> int:
    """Steps `train_restarts` takes, over every restart (for a progress bar)."""
    probe = min(c.probe_steps, c.total_steps)
    return c.restarts * probe + min(c.finalists, c.restarts) * (c.total_steps - probe)


@dataclass(frozen=True)
class TrainInfo:
    """What the progress callback is told."""

    restart: int  # 0-based
    restarts: int
    step: int  # step within this restart
    phase: str  # "float" or "rounded" (straight-through through the 0.1 grid)
    loss: float  # mean training loss since the last report
    accuracy: float  # the held-out accuracy the curves plot, now
    best_accuracy: float | None  # the same, of the best finished restart so far


Progress = Callable[[int, int, TrainInfo], None]


def train_reporting(c: Schedule, restarts: Sequence[Restart], train: Any, val: Any,
                    progress: Progress | None) -> Restart:
    """`train_restarts`, calling `progress(step, total, info)` at every point of the curves
    (step counts all the work, over every restart), e.g. to draw a progress bar."""
    total = total_work(c)
    done, best_acc = [0], [None]

    def report(r: Restart) -> None:
        done[0] = min(done[0] + c.curve_every, total)
        if progress is not None:
            step, loss, acc = r.curve[-1]
            progress(done[0], total, TrainInfo(r.index, c.restarts, step,
                                               "rounded" if r.rounded else "float",
                                               loss, acc, best_acc[0]))

    def finished(r: Restart) -> None:
        best_acc[0] = max(best_acc[0] or 0.0, r.curve_accuracy(r.validation))

    return train_restarts(c, restarts, train, val, report, finished)


def held_out_scores(validation: Any, test: Any) -> dict[str, float]:
    """A model's `scores`: its validation and test figures (each a `to_dict()`), prefixed."""
    scores = {f"validation_{k}": v for k, v in validation.to_dict().items()}
    return scores | {f"test_{k}": v for k, v in test.to_dict().items()}
