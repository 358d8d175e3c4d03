"""A translation model as safetensors bytes: weights, vocabularies, settings, scores, history.

The file's shared parts (the GRID_PARAMS, embeddings and attention weights, as integer
tenths so they load back exactly; the architecture, the full TrainConfig, the retrain
command, the platform, the corpus file's SHA-256, the history) are attncore.trained.store's
`ModelFile`; this module names the translation model's own: its float32 readout (training
ends by casting it, so it too loads back exactly) and its two vocabularies. Its one
metadata key is "attncore.translate".
"""

from __future__ import annotations

from functools import cache

import numpy as np
from attention_video.attncore.trained.store import ModelFile, Stored
from attention_video.attncore.translate.config import ModelConfig, TrainConfig
from attention_video.attncore.translate.corpus import CORPUS_FILE
from attention_video.attncore.translate.model import GRID_PARAMS, READOUT, Params, TranslationModel


class TranslationFile(ModelFile[TranslationModel]):
    FORMAT = "attncore.translate/1"
    KEY = "attncore.translate"
    WHAT = "translation model"
    PACKAGE = __package__
    CORPUS_FILE = CORPUS_FILE
    GRID = GRID_PARAMS
    GRID_NOTE = ("the embeddings, attention weights and history.* (but history.curve_*) "
                 "are int tenths; the readout is float32")
    ModelConfig = ModelConfig
    TrainConfig = TrainConfig

    def readout(self, model: TranslationModel) -> dict[str, np.ndarray]:
        out = {}
        for name in READOUT:
            a = getattr(model.params, name)
            f32 = np.ascontiguousarray(a, dtype=np.float32)
            if not np.array_equal(f32.astype(np.float64), a):
                raise ValueError(f"{name} is not float32-exact; train() casts the readout")
            out[name] = f32
        return out

    def described(self, model: TranslationModel) -> dict:
        return {"src_vocab": list(model.src_vocab), "tgt_vocab": list(model.tgt_vocab)}

    def model(self, stored: Stored) -> TranslationModel:
        readout = {name: stored.tensors[name].astype(np.float64) for name in READOUT}
        params = Params(**stored.grid, **readout).frozen()
        src_vocab, tgt_vocab = tuple(stored.meta["src_vocab"]), tuple(stored.meta["tgt_vocab"])
        d = stored.config.d_model
        if params.E_src.shape != (len(src_vocab), d) or params.E_tgt.shape != (len(tgt_vocab), d):
            raise ValueError("the embeddings do not match the vocabularies and d_model")
        return TranslationModel(stored.config, src_vocab, tgt_vocab, params,
                                stored.train_config, stored.history, stored.scores,
                                stored.provenance)


FILE = TranslationFile()
to_bytes, from_bytes, fingerprint = FILE.to_bytes, FILE.from_bytes, FILE.fingerprint
save, load, default_bytes = FILE.save, FILE.load, FILE.default_bytes
corpus_sha256, corpus_of = FILE.corpus_sha256, FILE.corpus_of


def command(c: TrainConfig) -> str:
    """How to train this configuration again."""
    if TrainConfig(seed=c.seed, restarts=c.restarts) != c:
        return "attncore.translate.train.train(TrainConfig(**metadata['train']))"
    extra = "" if c.restarts == TrainConfig.restarts else f" --restarts {c.restarts}"
    return f"python -m attention_video.pipeline.commands.train_models translate --seed {c.seed}{extra} --out PATH"


@cache
def load_default() -> TranslationModel:
    """The shipped English → Spanish model, loaded once per process."""
    return from_bytes(default_bytes())
