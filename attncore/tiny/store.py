"""A tiny model as safetensors bytes: weights, vocabulary, settings, scores and history.

The arrays on the 0.1 grid (E, W_Q, W_K, W_V, W_O and every snapshot of them) are stored
as integer tenths (attncore.trained.store), so they load back exactly; the readout is
float64. The metadata holds the vocabulary, the architecture, the full TrainConfig (seed
included), the command that trains it again, the platform that trained it and the corpus
file's SHA-256, so a stale file is recognisable and the file can be reproduced (bit for bit
on the same platform) with `python -m attention_video.pipeline.commands.train_models tiny`. It is one key,
"attncore.tiny".

Nothing is written unless the caller asks (`save` with a path, or `to_bytes`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
from functools import cache
from pathlib import Path

import numpy as np
from attention_video.attncore.tiny.config import ModelConfig, TrainConfig
from attention_video.attncore.tiny.corpus import CORPUS_FILE
from attention_video.attncore.tiny.history import Snapshot
from attention_video.attncore.tiny.model import GRID_PARAMS, Params, TinyModel
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
from safetensors.numpy import load as st_load

FORMAT = "attncore.tiny/1"
META_KEY = "attncore.tiny"  # the one metadata key
DEFAULT_FILE = "default.safetensors"
READOUT = ("W_1", "b_1", "w_2", "b_2")


def corpus_sha256() -> str:
    """The SHA-256 of the shipped corpus.toml: models trained on another corpus differ."""
    return package_file_sha256(__package__, CORPUS_FILE)


def _arrays(s: Snapshot) -> dict[str, np.ndarray]:
    return {name: getattr(s, name) for name in GRID_PARAMS}


def to_bytes(model: TinyModel) -> bytes:
    """The model as a safetensors file's bytes."""
    p = model.params
    tensors = {name: tenths(getattr(p, name)) for name in GRID_PARAMS}
    for name in READOUT:  # float64; b_2 is 0-d, stored with shape (1,)
        a = np.asarray(getattr(p, name), dtype=np.float64)
        tensors[name] = np.ascontiguousarray(a.reshape(1) if a.ndim == 0 else a)
    meta = {
        "format": FORMAT,
        "vocab": list(model.vocab),
        "model": dataclasses.asdict(model.config),
        "scores": model.scores,
        "corpus_sha256": corpus_sha256(),
        "grid": "E, W_Q, W_K, W_V, W_O and history.* (but history.curve_*) are int tenths",
    }
    if model.train_config is not None:
        meta["train"] = model.train_config.to_dict()
    meta |= model.provenance.to_meta()  # the command that trains it again, its platform
    if model.history is not None:
        history, history_meta = history_parts(model.history, GRID_PARAMS, _arrays)
        tensors |= history
        meta |= history_meta
    return pack(tensors, meta, META_KEY)


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


def from_bytes(data: bytes) -> TinyModel:
    """A TinyModel from `to_bytes` output; ValueError if it is not one."""
    meta = metadata(data, META_KEY)
    if meta.get("format") != FORMAT:
        raise ValueError(f"not a tiny model file (format {meta.get('format')!r}, "
                         f"expected {FORMAT!r})")
    t = st_load(data)
    grid = {name: from_tenths(t[name]) for name in GRID_PARAMS}
    readout = {name: t[name].astype(np.float64) for name in READOUT}
    readout["b_2"] = readout["b_2"].reshape(())
    params = Params(**grid, **readout).frozen()
    config = ModelConfig(**meta["model"])
    train_config = TrainConfig.from_dict(meta["train"]) if "train" in meta else None
    history = read_history(t, meta, GRID_PARAMS, lambda step, a: Snapshot(step, **a))
    vocab = tuple(meta["vocab"])
    if params.E.shape != (len(vocab), config.d_model):
        raise ValueError(f"E has shape {params.E.shape}; the vocabulary and d_model say "
                         f"{(len(vocab), config.d_model)}")
    return TinyModel(config, vocab, params, train_config, history, meta["scores"],
                     Provenance.from_meta(meta))


def fingerprint(model: TinyModel) -> str:
    """SHA-256 of the model's bytes: equal models, equal fingerprints (for cache keys)."""
    return hashlib.sha256(to_bytes(model)).hexdigest()


def corpus_of(data: bytes) -> str | None:
    """The corpus SHA-256 a model file was trained on."""
    return metadata(data, META_KEY).get("corpus_sha256")


def save(model: TinyModel, path: str | os.PathLike) -> Path:
    return write_model_file(to_bytes(model), path)


def load(path: str | os.PathLike) -> TinyModel:
    return from_bytes(Path(path).read_bytes())


def default_bytes() -> bytes:
    """The shipped default model's file (d_model 4, one head)."""
    return package_bytes(__package__, DEFAULT_FILE)


@cache
def load_default() -> TinyModel:
    """The shipped default model (d_model 4, one head), loaded once per process."""
    return from_bytes(default_bytes())
