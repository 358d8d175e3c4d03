"""A translation model as safetensors bytes: weights, vocabularies, settings, scores, history.

The GRID_PARAMS (embeddings, attention weights, and every snapshot of them) are stored as
integer tenths (int8, or int16 when a value needs it), so they load back exactly; the
readout is float32 (training ends by casting it, so it too loads back exactly). The one
metadata key "attncore.translate" holds JSON with sorted keys: the vocabularies, the
architecture, the full TrainConfig, the retrain command and the corpus file's SHA-256.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from functools import cache
from importlib import resources
from pathlib import Path

import numpy as np
from safetensors.numpy import load as st_load
from safetensors.numpy import save as st_save

from attncore.tiny.store import _from_tenths, _metadata, _tenths, write_model_file
from attncore.translate.config import ModelConfig, TrainConfig
from attncore.translate.corpus import CORPUS_FILE
from attncore.translate.history import History, Snapshot
from attncore.translate.model import GRID_PARAMS, READOUT, Params, TranslationModel

FORMAT = "attncore.translate/1"
META_KEY = "attncore.translate"
DEFAULT_FILE = "default.safetensors"


def corpus_sha256() -> str:
    data = resources.files(__package__).joinpath(CORPUS_FILE).read_bytes()
    return hashlib.sha256(data).hexdigest()


def command(c: TrainConfig) -> str:
    """How to train this configuration again."""
    if TrainConfig(seed=c.seed, restarts=c.restarts) != c:
        return "attncore.translate.train.train(TrainConfig(**metadata['train']))"
    extra = "" if c.restarts == TrainConfig.restarts else f" --restarts {c.restarts}"
    return f"python -m attncore.translate.train --seed {c.seed}{extra} --out PATH"


def to_bytes(model: TranslationModel) -> bytes:
    p = model.params
    tensors = {name: _tenths(getattr(p, name)) for name in GRID_PARAMS}
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
        meta["command"] = command(model.train_config)
    h = model.history
    if h is not None:
        meta["history_restart"] = h.restart
        tensors["history.step"] = np.array(h.steps, dtype=np.int32)
        for name in GRID_PARAMS:
            tensors[f"history.{name}"] = _tenths(np.stack([s.arrays[name] for s in h.snapshots]))
        tensors["history.curve_step"] = np.asarray(h.curve_step, dtype=np.int32)
        tensors["history.curve_loss"] = np.asarray(h.curve_loss, dtype=np.float64)
        tensors["history.curve_accuracy"] = np.asarray(h.curve_accuracy, dtype=np.float64)
    return st_save(tensors, metadata={META_KEY: json.dumps(meta, sort_keys=True,
                                                           ensure_ascii=False)})


def from_bytes(data: bytes) -> TranslationModel:
    """A TranslationModel from `to_bytes` output; ValueError if it is not one."""
    try:
        header = json.loads(_header_text(data))
        meta = json.loads((header.get("__metadata__") or {}).get(META_KEY, "{}"))
    except (ValueError, AttributeError) as e:
        raise ValueError(f"not a safetensors file: {e}") from None
    if meta.get("format") != FORMAT:
        raise ValueError(f"not a translation model file (format {meta.get('format')!r}, "
                         f"expected {FORMAT!r})")
    t = st_load(data)
    arrays = {name: _from_tenths(t[name]) for name in GRID_PARAMS}
    arrays |= {name: t[name].astype(np.float64) for name in READOUT}
    params = Params(**arrays).frozen()
    config = ModelConfig(**meta["model"])
    train_config = TrainConfig.from_dict(meta["train"]) if "train" in meta else None
    history = None
    if "history.step" in t:
        snaps = tuple(Snapshot(int(step), {name: _from_tenths(t[f"history.{name}"][i])
                                           for name in GRID_PARAMS})
                      for i, step in enumerate(t["history.step"]))
        history = History(int(meta["history_restart"]), snaps,
                          t["history.curve_step"].astype(np.int64),
                          t["history.curve_loss"], t["history.curve_accuracy"])
    src_vocab, tgt_vocab = tuple(meta["src_vocab"]), tuple(meta["tgt_vocab"])
    if params.E_src.shape != (len(src_vocab), config.d_model) or \
            params.E_tgt.shape != (len(tgt_vocab), config.d_model):
        raise ValueError("the embeddings do not match the vocabularies and d_model")
    return TranslationModel(config, src_vocab, tgt_vocab, params, train_config, history,
                            meta["scores"])


def _header_text(data: bytes) -> bytes:
    _metadata(data)  # the tiny store's checks: long enough, header not cut off
    size = int.from_bytes(data[:8], "little")
    return data[8:8 + size]


def corpus_of(data: bytes) -> str | None:
    return json.loads((json.loads(_header_text(data)).get("__metadata__") or {})
                      .get(META_KEY, "{}")).get("corpus_sha256")


def fingerprint(model: TranslationModel) -> str:
    """SHA-256 of the model's bytes (for cache keys)."""
    return hashlib.sha256(to_bytes(model)).hexdigest()


def save(model: TranslationModel, path: str | os.PathLike) -> Path:
    return write_model_file(to_bytes(model), path)


def load(path: str | os.PathLike) -> TranslationModel:
    return from_bytes(Path(path).read_bytes())


def default_bytes() -> bytes:
    return resources.files(__package__).joinpath(DEFAULT_FILE).read_bytes()


@cache
def load_default() -> TranslationModel:
    """The shipped English → Spanish model, loaded once per process."""
    return from_bytes(default_bytes())
