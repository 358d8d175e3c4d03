"""What both model files share: safetensors bytes whose metadata is one key of JSON, the
0.1-grid arrays as integer tenths, the training history's tensors, the atomic write.

The arrays on the 0.1 grid (a model's GRID arrays and every snapshot of them) are stored as
integer counts of tenths (int8, or int16 when a value needs it), so they load back
exactly. The metadata is one key holding JSON with sorted keys: safetensors writes several
metadata keys in a random order, and the same model must give the same bytes.

Nothing is written unless the caller asks (`write_model_file`).
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import tempfile
from collections.abc import Callable, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import TypeVar

import numpy as np
from attention_video.attncore.trained.history import History
from safetensors.numpy import save as st_save

S = TypeVar("S")  # a model's snapshot type


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


def history_parts(h: History[S], names: Sequence[str],
                  arrays_of: Callable[[S], Mapping[str, np.ndarray]]
                  ) -> tuple[dict[str, np.ndarray], dict]:
    """The tensors and the metadata that store a training history: history.step, one
    history.<name> stack of tenths per GRID array, the curves; the kept restart's index."""
    tensors = {"history.step": np.array(h.steps, dtype=np.int32)}
    for name in names:
        tensors[f"history.{name}"] = tenths(np.stack([arrays_of(s)[name] for s in h.snapshots]))
    tensors["history.curve_step"] = np.asarray(h.curve_step, dtype=np.int32)
    tensors["history.curve_loss"] = np.asarray(h.curve_loss, dtype=np.float64)
    tensors["history.curve_accuracy"] = np.asarray(h.curve_accuracy, dtype=np.float64)
    return tensors, {"history_restart": h.restart}


def read_history(t: Mapping[str, np.ndarray], meta: Mapping, names: Sequence[str],
                 snapshot: Callable[[int, dict[str, np.ndarray]], S]) -> History[S] | None:
    """The history `history_parts` stored, or None when the file has none."""
    if "history.step" not in t:
        return None
    snaps = tuple(snapshot(int(step), {name: from_tenths(t[f"history.{name}"][i])
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
