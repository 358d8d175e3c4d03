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
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from operator import attrgetter

from attncore.tiny.config import TrainConfig
from attncore.tiny.corpus import default_corpus
from attncore.tiny.evaluate import Encoded, Scores, encode, evaluate
from attncore.tiny.history import Snapshot
from attncore.tiny.model import Params, TinyModel, init_params, loss_and_grads
from attncore.tiny.store import command
from attncore.trained import training
from attncore.trained.history import History
from attncore.trained.provenance import Platform, Provenance


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


def held_out_score(s: Scores) -> float:
    """What restarts are ranked by: detection accuracy and how often an object its verb
    takes attends most to that verb, equally. Both are needed: the model can also judge
    the pair by looking elsewhere when they fit (and at the verb when they do not)."""
    return 0.5 * (s.accuracy + s.object_to_verb)


class Restart(training.Restart[Params, Scores]):
    """One initialisation of the tiny model (see attncore.trained.training)."""

    def __init__(self, c: TrainConfig, index: int, vocab_size: int):
        super().__init__(c, index, lambda rng: init_params(c.model, vocab_size, rng))

    def loss_and_grads(self, p: Params, b: Encoded) -> tuple[float, Params]:
        loss, grads, _ = loss_and_grads(p, b.ids, b.mask, b.labels)
        return loss, grads

    evaluate = staticmethod(evaluate)
    curve_accuracy = staticmethod(attrgetter("accuracy"))
    held_out_score = staticmethod(held_out_score)
    snapshot = staticmethod(Snapshot.of)

    def history(self) -> History:
        return History(self.index, tuple(self.snapshots), *self.curves())


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
    total = training.total_work(c)
    done, best_acc = [0], [None]

    def report(r: Restart) -> None:
        done[0] = min(done[0] + c.curve_every, total)
        if progress is not None:
            step, loss, acc = r.curve[-1]
            progress(done[0], total, TrainInfo(r.index, c.restarts, step,
                                               "rounded" if r.rounded else "float",
                                               loss, acc, best_acc[0]))

    def finished(r: Restart) -> None:
        best_acc[0] = max(best_acc[0] or 0.0, r.validation.accuracy)

    with training.one_blas_thread():
        restarts = [Restart(c, i, len(vocab)) for i in range(c.restarts)]
        best = training.train_restarts(c, restarts, train_set, val, report, finished)
        final = best.p.rounded()
        validation = evaluate(final, val)
        test = evaluate(final, encode(splits.test, vocab))
    scores = {f"validation_{k}": v for k, v in validation.to_dict().items()}
    scores |= {f"test_{k}": v for k, v in test.to_dict().items()}
    return TinyModel(c.model, vocab, final.frozen(), c, best.history(), scores,
                     Provenance(command(c), Platform.current()))


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
