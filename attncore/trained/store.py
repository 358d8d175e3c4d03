"""A model trained here as a file: what the tiny model's and the translation model's stores
share. Safetensors bytes whose metadata is one key of JSON, the 0.1-grid arrays as integer
tenths, the training history's tensors, the atomic write; `ModelFile` does all of it, and a
model's store module only names what its file holds of its own (its readout, its
vocabularies, how its model is made from them).

The arrays on the 0.1 grid (a model's GRID arrays and every snapshot of them) are stored as
integer counts of tenths (int8, or int16 when a value needs it), so they load back
exactly. The metadata is one key holding JSON with sorted keys: safetensors writes several
metadata keys in a random order, and the same model must give the same bytes. It holds the
format, the architecture, the full TrainConfig (seed included), the held-out scores, the
command that trains it again, the platform that trained it and the corpus file's SHA-256,
so a stale file is recognisable and the file can be reproduced (bit for bit on the same
platform).

Nothing is written unless the caller asks (`write_model_file`, `ModelFile.save`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import struct
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, ClassVar, Generic, Protocol, TypeVar

import numpy as np
from attention_video.attncore.trained.history import History, Snapshot
from attention_video.attncore.trained.params import GridParams
from attention_video.attncore.trained.provenance import Provenance
from attention_video.attncore.trained.training import TrainSettings
from safetensors.numpy import load as st_load
from safetensors.numpy import save as st_save


def tenths(a: np.ndarray) -> np.ndarray:
    """An array on the 0.1 grid as integer tenths (exact)."""
    t = np.round(np.asarray(a, dtype=np.float64) * 10.0)
    if not np.array_equal(t / 10.0, np.asarray(a)):
        raise ValueError("an array meant for the 0.1 grid has values off it")
    info = np.iinfo(np.int8)
    dtype = np.int8 if info.min <= t.min(initial=0) and t.max(initial=0) <= info.max else np.int16
    return np.ascontiguousarray(t.astype(dtype))


def from_tenths(t: np.ndarray) -> np.ndarray:
    return t.astype(np.float64) / 10.0 + 0.0


def package_bytes(package: str, name: str) -> bytes:
    """A data file shipped inside a package (a corpus, the default model)."""
    return resources.files(package).joinpath(name).read_bytes()


def package_file_sha256(package: str, name: str) -> str:
    """The SHA-256 of a shipped file: models trained on another corpus differ."""
    return hashlib.sha256(package_bytes(package, name)).hexdigest()


def pack(tensors: Mapping[str, np.ndarray], meta: Mapping, key: str) -> bytes:
    """The safetensors bytes of `tensors`, with `meta` as sorted JSON under one key."""
    return st_save(dict(tensors), metadata={key: json.dumps(meta, sort_keys=True,
                                                           ensure_ascii=False)})


def metadata(data: bytes, key: str) -> dict:
    """The JSON under `key`, from the safetensors header (8-byte little-endian length, then
    JSON); {} when the file has none. ValueError when it is not a safetensors file."""
    if len(data) < 8:
        raise ValueError("not a safetensors file: too short")
    (size,) = struct.unpack("<Q", data[:8])
    if size > len(data) - 8:
        raise ValueError("not a safetensors file: the header is cut off")
    try:
        header = json.loads(data[8:8 + size])
        return json.loads((header.get("__metadata__") or {}).get(key, "{}"))
    except (ValueError, AttributeError) as e:
        raise ValueError(f"not a safetensors file: {e}") from None


def history_parts(h: History, names: Sequence[str]) -> tuple[dict[str, np.ndarray], dict]:
    """The tensors and the metadata that store a training history: history.step, one
    history.<name> stack of tenths per GRID array, the curves; the kept restart's index."""
    tensors = {"history.step": np.array(h.steps, dtype=np.int32)}
    for name in names:
        tensors[f"history.{name}"] = tenths(np.stack([s.arrays[name] for s in h.snapshots]))
    tensors["history.curve_step"] = np.asarray(h.curve_step, dtype=np.int32)
    tensors["history.curve_loss"] = np.asarray(h.curve_loss, dtype=np.float64)
    tensors["history.curve_accuracy"] = np.asarray(h.curve_accuracy, dtype=np.float64)
    return tensors, {"history_restart": h.restart}


def read_history(t: Mapping[str, np.ndarray], meta: Mapping,
                 names: Sequence[str]) -> History | None:
    """The history `history_parts` stored, or None when the file has none."""
    if "history.step" not in t:
        return None
    snaps = tuple(Snapshot(int(step), {name: from_tenths(t[f"history.{name}"][i])
                                       for name in names})
                  for i, step in enumerate(t["history.step"]))
    return History(int(meta["history_restart"]), snaps,
                   t["history.curve_step"].astype(np.int64),
                   t["history.curve_loss"], t["history.curve_accuracy"])


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


class TrainedModel(Protocol):
    """What a model trained here keeps besides its own parts (attncore.tiny.TinyModel,
    attncore.translate.TranslationModel)."""

    config: Any  # its ModelConfig, a dataclass
    params: GridParams
    train_config: TrainSettings | None
    history: History | None
    scores: dict[str, float]
    provenance: Provenance


M = TypeVar("M", bound=TrainedModel)


@dataclass(frozen=True, eq=False)
class Stored:
    """A model file's shared parts, read back; `ModelFile.model` makes the model of them."""

    meta: dict  # the metadata key's JSON (vocabularies, scores, provenance among it)
    tensors: Mapping[str, np.ndarray]  # every tensor, as stored (the readout among them)
    grid: dict[str, np.ndarray]  # the GRID arrays, back from tenths
    config: Any  # the ModelConfig
    train_config: TrainSettings | None
    history: History | None

    @property
    def scores(self) -> dict[str, float]:
        return self.meta["scores"]

    @property
    def provenance(self) -> Provenance:
        return Provenance.from_meta(self.meta)


class ModelFile(Generic[M]):
    """One kind of model file and what is done with it. A model's store subclasses it with
    its constants and its three own parts (`readout`, `described`, `model`), and makes one
    instance; its module's functions are that instance's methods."""

    FORMAT: ClassVar[str]  # "attncore.tiny/1": a file of another format is refused
    KEY: ClassVar[str]  # the one metadata key
    WHAT: ClassVar[str]  # what the file holds, for its error: "tiny model"
    PACKAGE: ClassVar[str]  # the package that ships the corpus and the default model
    CORPUS_FILE: ClassVar[str]
    DEFAULT_FILE: ClassVar[str] = "default.safetensors"
    GRID: ClassVar[tuple[str, ...]]  # the model's arrays on the 0.1 grid
    GRID_NOTE: ClassVar[str]  # the metadata's "grid": which tensors are tenths
    ModelConfig: ClassVar[type]
    TrainConfig: ClassVar[type[TrainSettings]]

    # ---- what the model's file holds of its own --------------------------------------------
    def readout(self, model: M) -> dict[str, np.ndarray]:
        """Its tensors besides the GRID arrays and the history."""
        raise NotImplementedError

    def described(self, model: M) -> dict:
        """Its metadata besides the shared (its vocabularies)."""
        raise NotImplementedError

    def model(self, stored: Stored) -> M:
        """The model of a file's parts; ValueError if they do not fit together."""
        raise NotImplementedError

    # ---- shared ------------------------------------------------------------------------------
    def corpus_sha256(self) -> str:
        """The SHA-256 of the shipped corpus: models trained on another corpus differ."""
        return package_file_sha256(self.PACKAGE, self.CORPUS_FILE)

    def to_bytes(self, model: M) -> bytes:
        """The model as a safetensors file's bytes."""
        tensors = {name: tenths(getattr(model.params, name)) for name in self.GRID}
        tensors |= self.readout(model)
        meta = {"format": self.FORMAT, **self.described(model),
                "model": dataclasses.asdict(model.config), "scores": model.scores,
                "corpus_sha256": self.corpus_sha256(), "grid": self.GRID_NOTE}
        if model.train_config is not None:
            meta["train"] = model.train_config.to_dict()
        meta |= model.provenance.to_meta()  # the command that trains it again, its platform
        if model.history is not None:
            history, history_meta = history_parts(model.history, self.GRID)
            tensors |= history
            meta |= history_meta
        return pack(tensors, meta, self.KEY)

    def from_bytes(self, data: bytes) -> M:
        """The model of `to_bytes` output; ValueError if it is not one."""
        meta = metadata(data, self.KEY)
        if meta.get("format") != self.FORMAT:
            raise ValueError(f"not a {self.WHAT} file (format {meta.get('format')!r}, "
                             f"expected {self.FORMAT!r})")
        t = st_load(data)
        grid = {name: from_tenths(t[name]) for name in self.GRID}
        train = self.TrainConfig.from_dict(meta["train"]) if "train" in meta else None
        return self.model(Stored(meta, t, grid, self.ModelConfig(**meta["model"]), train,
                                 read_history(t, meta, self.GRID)))

    def fingerprint(self, model: M) -> str:
        """SHA-256 of the model's bytes: equal models, equal fingerprints (for cache keys)."""
        return hashlib.sha256(self.to_bytes(model)).hexdigest()

    def corpus_of(self, data: bytes) -> str | None:
        """The corpus SHA-256 a model file was trained on."""
        return metadata(data, self.KEY).get("corpus_sha256")

    def save(self, model: M, path: str | os.PathLike) -> Path:
        return write_model_file(self.to_bytes(model), path)

    def load(self, path: str | os.PathLike) -> M:
        return self.from_bytes(Path(path).read_bytes())

    def default_bytes(self) -> bytes:
        """The shipped default model's file."""
        return package_bytes(self.PACKAGE, self.DEFAULT_FILE)
