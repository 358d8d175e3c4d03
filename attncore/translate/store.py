"""A translation model as safetensors bytes: weights, vocabularies, settings, scores, history.

The GRID_PARAMS (embeddings, attention weights, and every snapshot of them) are stored as
integer tenths (attncore.trained.store), so they load back exactly; the readout is float32
(training ends by casting it, so it too loads back exactly). The one metadata key
"attncore.translate" holds JSON with sorted keys: the vocabularies, the architecture, the
full TrainConfig, the retrain command, the platform that trained it and the corpus file's
SHA-256.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
from functools import cache
from operator import attrgetter
from pathlib import Path

import numpy as np
from attention_video.attncore.trained.provenance import Provenance
from attention_video.attncore.trained.store import (
    from_tenths,
    history_parts,
    metadata,
    pack,
    package_bytes,
    package_file_sha256,
    read_history,
    tenths,
    write_model_file,
)
from attention_video.attncore.translate.config import ModelConfig, TrainConfig
from attention_video.attncore.translate.corpus import CORPUS_FILE
from attention_video.attncore.translate.history import Snapshot
from attention_video.attncore.translate.model import GRID_PARAMS, READOUT, Params, TranslationModel
from safetensors.numpy import load as st_load

FORMAT = "attncore.translate/1"
META_KEY = "attncore.translate"
DEFAULT_FILE = "default.safetensors"


def corpus_sha256() -> str:
    return package_file_sha256(__package__, CORPUS_FILE)


def command(c: TrainConfig) -> str:
    """How to train this configuration again."""
    if TrainConfig(seed=c.seed, restarts=c.restarts) != c:
        return "attncore.translate.train.train(TrainConfig(**metadata['train']))"
    extra = "" if c.restarts == TrainConfig.restarts else f" --restarts {c.restarts}"
    return f"python -m attention_video.pipeline.commands.train_models translate --seed {c.seed}{extra} --out PATH"


def to_bytes(model: TranslationModel) -> bytes:
    p = model.params
    tensors = {name: tenths(getattr(p, name)) for name in GRID_PARAMS}
    for name in READOUT:
        a = getattr(p, name)
        f32 = np.ascontiguousarray(a, dtype=np.float32)
        if not np.array_equal(f32.astype(np.float64), a):
            raise ValueError(f"{name} is not float32-exact; train() casts the readout")
        tensors[name] = f32
    meta = {"format": FORMAT, "src_vocab": list(model.src_vocab),
            "tgt_vocab": list(model.tgt_vocab), "model": dataclasses.asdict(model.config),
            "scores": model.scores, "corpus_sha256": corpus_sha256(),
            "grid": "the embeddings, attention weights and history.* (but history.curve_*) "
                    "are int tenths; the readout is float32"}
    if model.train_config is not None:
        meta["train"] = model.train_config.to_dict()
    meta |= model.provenance.to_meta()  # the command that trains it again, its platform
    if model.history is not None:
        history, history_meta = history_parts(model.history, GRID_PARAMS, attrgetter("arrays"))
        tensors |= history
        meta |= history_meta
    return pack(tensors, meta, META_KEY)


def from_bytes(data: bytes) -> TranslationModel:
    """A TranslationModel from `to_bytes` output; ValueError if it is not one."""
    meta = metadata(data, META_KEY)
    if meta.get("format") != FORMAT:
        raise ValueError(f"not a translation model file (format {meta.get('format')!r}, "
                         f"expected {FORMAT!r})")
    t = st_load(data)
    arrays = {name: from_tenths(t[name]) for name in GRID_PARAMS}
    arrays |= {name: t[name].astype(np.float64) for name in READOUT}
    params = Params(**arrays).frozen()
    config = ModelConfig(**meta["model"])
    train_config = TrainConfig.from_dict(meta["train"]) if "train" in meta else None
    history = read_history(t, meta, GRID_PARAMS, Snapshot)
    src_vocab, tgt_vocab = tuple(meta["src_vocab"]), tuple(meta["tgt_vocab"])
    if params.E_src.shape != (len(src_vocab), config.d_model) or \
            params.E_tgt.shape != (len(tgt_vocab), config.d_model):
        raise ValueError("the embeddings do not match the vocabularies and d_model")
    return TranslationModel(config, src_vocab, tgt_vocab, params, train_config, history,
                            meta["scores"], Provenance.from_meta(meta))


def corpus_of(data: bytes) -> str | None:
    return metadata(data, META_KEY).get("corpus_sha256")


def fingerprint(model: TranslationModel) -> str:
    """SHA-256 of the model's bytes (for cache keys)."""
    return hashlib.sha256(to_bytes(model)).hexdigest()


def save(model: TranslationModel, path: str | os.PathLike) -> Path:
    return write_model_file(to_bytes(model), path)


def load(path: str | os.PathLike) -> TranslationModel:
    return from_bytes(Path(path).read_bytes())


def default_bytes() -> bytes:
    return package_bytes(__package__, DEFAULT_FILE)


@cache
def load_default() -> TranslationModel:
    """The shipped English → Spanish model, loaded once per process."""
    return from_bytes(default_bytes())
