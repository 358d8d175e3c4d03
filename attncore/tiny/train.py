"""Training the tiny model on replaced-object detection, in numpy, deterministically.

    model = train(TrainConfig(seed=0))     # the shipped default (d_model 4, one head)

`python -m attention_video.pipeline.commands.train_models tiny --seed 0 --out attncore/tiny/default.safetensors`
writes it to a file (it made the shipped one). Objective (ELECTRA-style): an object is
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
np.random.default_rng), on the same numpy build, BLAS kernel and CPU: the model records
them (attncore.trained.provenance).
"""

from __future__ import annotations

from operator import attrgetter

from attention_video.attncore.tiny.config import TrainConfig
from attention_video.attncore.tiny.corpus import default_corpus
from attention_video.attncore.tiny.evaluate import Encoded, Scores, encode, evaluate
from attention_video.attncore.tiny.model import Params, TinyModel, init_params, loss_and_grads
from attention_video.attncore.tiny.store import command
from attention_video.attncore.trained import training
from attention_video.attncore.trained.provenance import Platform, Provenance
from attention_video.attncore.trained.training import Progress
from attention_video.attncore.trained.training import TrainInfo as TrainInfo


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
    with training.one_blas_thread():
        restarts = [Restart(c, i, len(vocab)) for i in range(c.restarts)]
        best = training.train_reporting(c, restarts, train_set, val, progress)
        final = best.p.rounded()
        validation = evaluate(final, val)
        test = evaluate(final, encode(splits.test, vocab))
    return TinyModel(c.model, vocab, final.frozen(), c, best.history(),
                     training.held_out_scores(validation, test),
                     Provenance(command(c), Platform.current()))
