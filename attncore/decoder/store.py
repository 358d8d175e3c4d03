"""The decoder's weights kept on disk, dequantised, between runs.

Reading the GGUF file and dequantising its 210 Q4_1 tensors takes 5-10 s on two shared
cores; the dequantised float32 matrices (425 MB) are written once, one .npy per matrix,
into a folder named for the file's SHA-256, and later runs memory-map them (well under a
second). The token embedding stays quantised (Q8_0, 30 MB): rows are dequantised as needed.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
from attention_video.attncore.decoder import gguf_file
from attention_video.attncore.decoder.gguf_file import Config, LayerWeights, Model, Quantised

FORMAT = 1  # bump when the layout below changes
MATRICES = tuple(f.name for f in dataclasses.fields(LayerWeights))


def file_hash(path: Path) -> str:
    """SHA-256 of the file's bytes (about 0.3 s for 98 MB)."""
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def folder_for(path: Path, cache: Path) -> Path:
    return cache / f"smollm2-{file_hash(path)[:24]}-v{FORMAT}"


def save(model: Model, folder: Path) -> None:
    """Write the model into `folder` atomically (a temporary folder renamed into place)."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=folder.name + ".", dir=folder.parent))
    try:
        meta = {"format": FORMAT, "config": dataclasses.asdict(model.config),
                "tokens": model.tokens, "merges": model.merges,
                "token_types": model.token_types, "pre": model.pre,
                "embedding_type": model._embedding.tensor_type}
        (tmp / "meta.json").write_text(json.dumps(meta, ensure_ascii=False), encoding="utf-8")
        for i, lw in enumerate(model.layers):
            for name in MATRICES:
                np.save(tmp / f"{i}.{name}.npy", getattr(lw, name))
        np.save(tmp / "output_norm.npy", model.output_norm)
        np.save(tmp / "token_embd.npy", model._embedding.data)
        os.replace(tmp, folder)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
        if not folder.is_dir():
            raise


def read(path: Path, folder: Path) -> Model:
    """The model from `folder`, every array memory-mapped."""
    meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    if meta.get("format") != FORMAT:
        raise ValueError(f"{folder} holds format {meta.get('format')}, not {FORMAT}")
    config = Config(**meta["config"])

    def array(name: str) -> np.ndarray:
        return np.load(folder / f"{name}.npy", mmap_mode="r")

    layers = tuple(LayerWeights(**{name: array(f"{i}.{name}") for name in MATRICES})
                   for i in range(config.num_layers))
    return Model(path=path, config=config, tokens=tuple(meta["tokens"]),
                 merges=tuple(meta["merges"]), token_types=tuple(meta["token_types"]),
                 pre=meta["pre"], layers=layers, output_norm=array("output_norm"),
                 _embedding=Quantised(array("token_embd"), int(meta["embedding_type"])))


def load_or_save(path: Path, cache: Path, load_model: Callable[[Path], Model]) -> Model:
    """The kept copy when there is one; else read the file and keep a copy (when the cache
    folder cannot be written, the model read from the file is used as it is)."""
    folder = folder_for(path, cache)
    if (folder / "meta.json").is_file():
        try:
            return read(path, folder)
        except (OSError, ValueError, KeyError, TypeError):
            pass  # a damaged copy: read the file again and replace it
    model = load_model(path)
    try:
        if folder.exists():
            shutil.rmtree(folder, ignore_errors=True)
        save(model, folder)
    except OSError:
        return model
    return read(path, folder)


@functools.lru_cache(maxsize=1)
def _cached(path: Path, mtime: float, cache: Path) -> Model:
    return load_or_save(path, cache, gguf_file.load_model)


def load(cache: Path | None = None) -> Model:
    """The installed model, once per process: from the kept copy in `cache` (written on first
    use), or read from the GGUF file when no cache folder is given."""
    if cache is None:
        return gguf_file.load()
    path = gguf_file.find_gguf()
    return _cached(path, path.stat().st_mtime, Path(cache))
