"""Training the translation model in numpy, deterministically: teacher forcing, cross-entropy.

    model = train(TrainConfig(seed=0))     # the shipped default

`python -m attention_video.pipeline.commands.train_models translate --seed 0 --out
attncore/translate/default.safetensors` writes it to a file (it made the shipped one). Adam on minibatches, warm-up then cosine decay (the tiny model's
schedule), then a rounding-aware phase: the forward pass uses the embeddings and attention
weights rounded to 0.1, the gradient updates the unrounded copy (straight-through), so the
model still translates with the weights the video shows.

`restarts` initialisations are trained for `probe_steps`; the `finalists` best on the
validation set go on to the end; the best of those is kept. "Best" is the mean of greedy
exact match and the cross-attention alignment (content words looking at the English word
they translate). The test split is never used for choosing.
"""

from __future__ import annotations

from operator import attrgetter

import numpy as np
from attention_video.attncore.trained import training
from attention_video.attncore.trained.provenance import Platform, Provenance
from attention_video.attncore.trained.training import Progress
from attention_video.attncore.trained.training import TrainInfo as TrainInfo
from attention_video.attncore.translate.config import TrainConfig
from attention_video.attncore.translate.corpus import default_corpus
from attention_video.attncore.translate.evaluate import Batch, Scores, encode_pairs, evaluate
from attention_video.attncore.translate.model import (
    READOUT,
    Params,
    TranslationModel,
    init_params,
    loss_and_grads,
)
from attention_video.attncore.translate.store import command


def float32_readout(p: Params) -> Params:
    """The readout as float32 values (how it is stored), so the saved file is exact."""
    return p.replace(**{name: getattr(p, name).astype(np.float32).astype(np.float64)
                        for name in READOUT})


def held_out_score(s: Scores) -> float:
    """What restarts are ranked by: translating right and aligning right, equally."""
    return 0.5 * (s.exact_match + s.alignment)


class Restart(training.Restart[Params, Scores]):
    """One initialisation of the translation model (see attncore.trained.training)."""

    def __init__(self, c: TrainConfig, index: int, n_src: int, n_tgt: int):
        super().__init__(c, index, lambda rng: init_params(c.model, n_src, n_tgt, rng))

    def loss_and_grads(self, p: Params, b: Batch) -> tuple[float, Params]:
        loss, grads, _ = loss_and_grads(p, b.src, b.src_mask, b.tgt_in, b.tgt_out, b.tgt_mask)
        return loss, grads

    evaluate = staticmethod(evaluate)
    curve_accuracy = staticmethod(attrgetter("token_accuracy"))
    held_out_score = staticmethod(held_out_score)


def train(config: TrainConfig | None = None, progress: Progress | None = None
          ) -> TranslationModel:
    """Train the translation model (restarts, finalists, best on validation kept) and
    return it with its 0.1-grid weights, its history and its validation and test scores."""
    c = config or TrainConfig()
    corpus = default_corpus()
    src_vocab = tuple(corpus.vocabulary("en"))
    tgt_vocab = tuple(corpus.vocabulary("es"))
    splits = corpus.splits(c.seed, c.train_sentences, c.validation_sentences, c.test_sentences)
    train_set = encode_pairs(splits.train, src_vocab, tgt_vocab)
    val = encode_pairs(splits.validation, src_vocab, tgt_vocab)
    with training.one_blas_thread():
        restarts = [Restart(c, i, len(src_vocab), len(tgt_vocab)) for i in range(c.restarts)]
        best = training.train_reporting(c, restarts, train_set, val, progress)
        final = float32_readout(best.p.rounded())
        validation = evaluate(final, val)
        test = evaluate(final, encode_pairs(splits.test, src_vocab, tgt_vocab))
    return TranslationModel(c.model, src_vocab, tgt_vocab, final.frozen(), c, best.history(),
                            training.held_out_scores(validation, test),
                            Provenance(command(c), Platform.current()))
