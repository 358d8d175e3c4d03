"""A tiny model as safetensors bytes: weights, vocabulary, settings, scores and history.

The file's shared parts (the 0.1-grid arrays as integer tenths, so they load back exactly;
the architecture, the full TrainConfig, the command that trains it again, the platform, the
corpus file's SHA-256, the history) are attncore.trained.store's `ModelFile`; this module
names the tiny model's own: its float64 readout and its vocabulary. The file reproduces
(bit for bit on the same platform) with `python -m
attention_video.pipeline.commands.train_models tiny`. Its one metadata key is
"attncore.tiny".

Nothing is written unless the caller asks (`save` with a path, or `to_bytes`).
"""

from __future__ import annotations

from functools import cache

import numpy as np
from attention_video.attncore.tiny.config import ModelConfig, TrainConfig
from attention_video.attncore.tiny.corpus import CORPUS_FILE
from attention_video.attncore.tiny.model import GRID_PARAMS, Params, TinyModel
from attention_video.attncore.trained.store import ModelFile, Stored

READOUT = ("W_1", "b_1", "w_2", "b_2")


class TinyFile(ModelFile[TinyModel]):
    FORMAT = "attncore.tiny/1"
    KEY = "attncore.tiny"
    WHAT = "tiny model"
    PACKAGE = __package__
    CORPUS_FILE = CORPUS_FILE
    GRID = GRID_PARAMS
    GRID_NOTE = "E, W_Q, W_K, W_V, W_O and history.* (but history.curve_*) are int tenths"
    ModelConfig = ModelConfig
    TrainConfig = TrainConfig

    def readout(self, model: TinyModel) -> dict[str, np.ndarray]:
        out = {}
        for name in READOUT:  # float64; b_2 is 0-d, stored with shape (1,)
            a = np.asarray(getattr(model.params, name), dtype=np.float64)
            out[name] = np.ascontiguousarray(a.reshape(1) if a.ndim == 0 else a)
        return out

    def described(self, model: TinyModel) -> dict:
        return {"vocab": list(model.vocab)}

    def model(self, stored: Stored) -> TinyModel:
        readout = {name: stored.tensors[name].astype(np.float64) for name in READOUT}
        readout["b_2"] = readout["b_2"].reshape(())
        params = Params(**stored.grid, **readout).frozen()
        vocab, config = tuple(stored.meta["vocab"]), stored.config
        if params.E.shape != (len(vocab), config.d_model):
            raise ValueError(f"E has shape {params.E.shape}; the vocabulary and d_model say "
                             f"{(len(vocab), config.d_model)}")
        return TinyModel(config, vocab, params, stored.train_config, stored.history,
                         stored.scores, stored.provenance)


FILE = TinyFile()
to_bytes, from_bytes, fingerprint = FILE.to_bytes, FILE.from_bytes, FILE.fingerprint
save, load, default_bytes = FILE.save, FILE.load, FILE.default_bytes
corpus_sha256, corpus_of = FILE.corpus_sha256, FILE.corpus_of


def command(c: TrainConfig) -> str:
    """How to train this configuration again: the command line when its options cover the
    settings, else the call with the stored TrainConfig."""
    cli = TrainConfig(seed=c.seed, d_model=c.d_model, heads=c.heads, restarts=c.restarts)
    if cli != c:
        return "attncore.tiny.train.train(TrainConfig(**metadata['train']))"
    parts = ["python -m attention_video.pipeline.commands.train_models tiny", f"--seed {c.seed}"]
    if c.d_model != TrainConfig.d_model:
        parts.append(f"--d-model {c.d_model}")
    if c.heads != TrainConfig.heads:
        parts.append(f"--heads {c.heads}")
    if c.restarts != TrainConfig.restarts:
        parts.append(f"--restarts {c.restarts}")
    return " ".join(parts) + " --out PATH"


@cache
def load_default() -> TinyModel:
    """The shipped default model (d_model 4, one head), loaded once per process."""
    return from_bytes(default_bytes())
