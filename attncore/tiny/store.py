"""A tiny model as safetensors bytes: weights, vocabulary, settings, scores and history.

The arrays on the 0.1 grid (E, W_Q, W_K, W_V, W_O and every snapshot of them) are stored
as integer counts of tenths (int8, or int16 when a value needs it), so they load back
exactly; the readout is float64. The metadata holds the vocabulary, the architecture,
the full TrainConfig (seed included) and the corpus file's SHA-256, so a stale file is
recognisable and the file can be reproduced with `python -m attncore.tiny.train`.
It is one key, "attncore.tiny", holding JSON with sorted keys: safetensors writes several
metadata keys in a random order, and the same model must give the same bytes.

Nothing is written unless the caller asks (`save` with a path, or `to_bytes`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import struct
import tempfile
from functools import cache
from importlib import resources
from pathlib import Path

import numpy as np
from safetensors.numpy import load as st_load
from safetensors.numpy import save as st_save

from attncore.tiny.config import ModelConfig, TrainConfig
from attncore.tiny.corpus import CORPUS_FILE
from attncore.tiny.history import History, Snapshot
from attncore.tiny.model import GRID_PARAMS, Params, TinyModel

FORMAT = "attncore.tiny/1"
META_KEY = "attncore.tiny"  # the one metadata key
DEFAULT_FILE = "default.safetensors"
READOUT = ("W_1", "b_1", "w_2", "b_2")


def corpus_sha256() -> str:
    """The SHA-256 of the shipped corpus.toml: models trained on another corpus differ."""
    data = resources.files(__package__).joinpath(CORPUS_FILE).read_bytes()
    return hashlib.sha256(data).hexdigest()


def _tenths(a: np.ndarray) -> np.ndarray:
    """An array on the 0.1 grid as integer tenths (exact)."""
    t = np.round(np.asarray(a, dtype=np.float64) * 10.0)
    if not np.array_equal(t / 10.0, np.asarray(a)):
        raise ValueError("an array meant for the 0.1 grid has values off it")
    info = np.iinfo(np.int8)
    dtype = np.int8 if info.min <= t.min(initial=0) and t.max(initial=0) <= info.max else np.int16
    return np.ascontiguousarray(t.astype(dtype))


def _from_tenths(t: np.ndarray) -> np.ndarray:
    return t.astype(np.float64) / 10.0 + 0.0


def to_bytes(model: TinyModel) -> bytes:
    """The model as a safetensors file's bytes."""
    p = model.params
    tensors = {name: _tenths(getattr(p, name)) for name in GRID_PARAMS}
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
        meta["command"] = command(model.train_config)
    h = model.history
    if h is not None:
        meta["history_restart"] = h.restart
        tensors["history.step"] = np.array(h.steps, dtype=np.int32)
        for name in GRID_PARAMS:
            tensors[f"history.{name}"] = _tenths(np.stack([getattr(s, name) for s in h.snapshots]))
        tensors["history.curve_step"] = np.asarray(h.curve_step, dtype=np.int32)
        tensors["history.curve_loss"] = np.asarray(h.curve_loss, dtype=np.float64)
        tensors["history.curve_accuracy"] = np.asarray(h.curve_accuracy, dtype=np.float64)
    return st_save(tensors, metadata={META_KEY: json.dumps(meta, sort_keys=True,
                                                           ensure_ascii=False)})


def command(c: TrainConfig) -> str:
    """How to train this configuration again: the command line when its options cover the
    settings, else the call with the stored TrainConfig."""
    cli = TrainConfig(seed=c.seed, d_model=c.d_model, heads=c.heads, restarts=c.restarts)
    if cli != c:
        return "attncore.tiny.train.train(TrainConfig(**metadata['train']))"
    parts = ["python -m attncore.tiny.train", f"--seed {c.seed}"]
    if c.d_model != TrainConfig.d_model:
        parts.append(f"--d-model {c.d_model}")
    if c.heads != TrainConfig.heads:
        parts.append(f"--heads {c.heads}")
    if c.restarts != TrainConfig.restarts:
        parts.append(f"--restarts {c.restarts}")
    return " ".join(parts) + " --out PATH"


def _metadata(data: bytes) -> dict:
    """Our metadata, from the safetensors header (8-byte little-endian length, then JSON)."""
    if len(data) < 8:
        raise ValueError("not a safetensors file: too short")
    (size,) = struct.unpack("<Q", data[:8])
    if size > len(data) - 8:
        raise ValueError("not a safetensors file: the header is cut off")
    try:
        header = json.loads(data[8:8 + size])
        return json.loads((header.get("__metadata__") or {}).get(META_KEY, "{}"))
    except (ValueError, AttributeError) as e:
        raise ValueError(f"not a safetensors file: {e}") from None


def from_bytes(data: bytes) -> TinyModel:
    """A TinyModel from `to_bytes` output; ValueError if it is not one."""
    meta = _metadata(data)
    if meta.get("format") != FORMAT:
        raise ValueError(f"not a tiny model file (format {meta.get('format')!r}, "
                         f"expected {FORMAT!r})")
    t = st_load(data)
    grid = {name: _from_tenths(t[name]) for name in GRID_PARAMS}
    readout = {name: t[name].astype(np.float64) for name in READOUT}
    readout["b_2"] = readout["b_2"].reshape(())
    params = Params(**grid, **readout).frozen()
    config = ModelConfig(**meta["model"])
    train_config = TrainConfig.from_dict(meta["train"]) if "train" in meta else None
    history = None
    if "history.step" in t:
        snaps = tuple(
            Snapshot(int(step), *(_from_tenths(t[f"history.{name}"][i]) for name in GRID_PARAMS))
            for i, step in enumerate(t["history.step"]))
        history = History(int(meta["history_restart"]), snaps,
                          t["history.curve_step"].astype(np.int64),
                          t["history.curve_loss"], t["history.curve_accuracy"])
    vocab = tuple(meta["vocab"])
    if params.E.shape != (len(vocab), config.d_model):
        raise ValueError(f"E has shape {params.E.shape}; the vocabulary and d_model say "
                         f"{(len(vocab), config.d_model)}")
    return TinyModel(config, vocab, params, train_config, history, meta["scores"])


def fingerprint(model: TinyModel) -> str:
    """SHA-256 of the model's bytes: equal models, equal fingerprints (for cache keys)."""
    return hashlib.sha256(to_bytes(model)).hexdigest()


def corpus_of(data: bytes) -> str | None:
    """The corpus SHA-256 a model file was trained on."""
    return _metadata(data).get("corpus_sha256")


def save(model: TinyModel, path: str | os.PathLike) -> Path:
    return write_model_file(to_bytes(model), path)


def write_model_file(data: bytes, path: str | os.PathLike) -> Path:
    """Write a model file's bytes to `path` atomically (a temporary file, then a rename)."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent or ".")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def load(path: str | os.PathLike) -> TinyModel:
    return from_bytes(Path(path).read_bytes())


def default_bytes() -> bytes:
    """The shipped default model's file (d_model 4, one head)."""
    return resources.files(__package__).joinpath(DEFAULT_FILE).read_bytes()


@cache
def load_default() -> TinyModel:
    """The shipped default model (d_model 4, one head), loaded once per process."""
    return from_bytes(default_bytes())
