"""The decoder's weights kept on disk, dequantised, between runs: a kept file like the others.

Reading the GGUF file and dequantising its 210 Q4_1 tensors takes 5-10 s on two shared
cores; the dequantised float32 matrices (425 MB) are written once, one .npy per matrix,
into a folder named for the file's SHA-256 and the store's layout version, and later runs
memory-map them. The token embedding stays quantised (Q8_0, 30 MB): rows are dequantised as
needed.

The folder holds record.json: the model's configuration and tokenizer tables, and for each
array its shape, dtype, size, SHA-256 and a sampled digest (the header and 8 spread-out
4 KiB blocks), sealed by the SHA-256 of the record itself, so that an edited record is damage
too. Loading checks every array against the record without reading 437 MB each time: the
size, the header (shape, dtype) and the sampled digest always; the full SHA-256 only when a
file's size or modification time differs from the one checked.json noted the last time it
was hashed. A copy that fails any check is made again from the GGUF file with one line
saying which file was wrong and why.

Writing is atomic as a whole: a temporary folder (holding a lock while it is written) is
renamed into place, and removed if the write is interrupted; a leftover of an interrupted or
killed run (no live writer holds its lock), or a copy in an older layout, is removed on the
next start. When the cache folder cannot be written, the model read from the file is used as
it is, with one note for the run.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import json
import logging
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
from attention_video.attncore.decoder import gguf_file
from attention_video.attncore.decoder.gguf_file import (
    MODEL_NAME,
    Config,
    LayerWeights,
    Model,
    Quantised,
)

try:
    import fcntl
except ImportError:  # not on Windows: a leftover there is removed by its age alone
    fcntl = None

FORMAT = 2  # the store's layout version, part of the folder name; bump when the layout changes
MATRICES = tuple(f.name for f in dataclasses.fields(LayerWeights))
RECORD = "record.json"
CHECKED = "checked.json"  # name → [size, mtime_ns] of each file when its SHA-256 last matched
LOCK = ".writing"  # held (flock) by the process writing a temporary folder
SAMPLES, SAMPLE_BYTES = 8, 4096  # the sampled digest: 8 blocks of 4 KiB, header first
LEFTOVER_AGE = 60.0  # seconds: a temporary folder without a lock is a leftover once this old
FOLDER = re.compile(r"smollm2-[0-9a-f]{24}-v(\d+)")  # a kept copy, any layout
TEMPORARY = re.compile(r"smollm2-[0-9a-f]{24}-v\d+\..+")  # one being written, or left over

Warn = Callable[[str], None]
log = logging.getLogger(__name__)  # unconfigured, a warning is printed as its one line


class Damaged(Exception):
    """What is wrong with a kept copy, naming the file: one phrase for the warning line."""


def file_hash(path: Path) -> str:
    """SHA-256 of the file's bytes (about 0.3 s for 98 MB)."""
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def sampled_digest(path: Path, size: int) -> str:
    """SHA-256 of the first 4 KiB (the .npy header) and 7 more blocks spread evenly to the
    end: the whole file when it is smaller than the 8 blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        if size <= SAMPLES * SAMPLE_BYTES:
            h.update(f.read())
        else:
            for k in range(SAMPLES):
                f.seek((size - SAMPLE_BYTES) * k // (SAMPLES - 1))
                h.update(f.read(SAMPLE_BYTES))
    return h.hexdigest()


def folder_for(path: Path, cache: Path) -> Path:
    return cache / f"smollm2-{file_hash(path)[:24]}-v{FORMAT}"


def array_names(num_layers: int) -> list[str]:
    """Every kept array: each layer's matrices, the final norm, the quantised embedding."""
    return [f"{i}.{m}" for i in range(num_layers) for m in MATRICES] + ["output_norm",
                                                                         "token_embd"]


def _arrays(model: Model) -> Iterator[tuple[str, np.ndarray]]:
    for i, lw in enumerate(model.layers):
        for m in MATRICES:
            yield f"{i}.{m}", getattr(lw, m)
    yield "output_norm", model.output_norm
    yield "token_embd", model._embedding.data


def _seal(record: dict[str, Any]) -> str:
    """SHA-256 of the record without its seal, keys sorted."""
    body = {k: v for k, v in record.items() if k != "seal"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False)
                          .encode("utf-8")).hexdigest()


def _write_json(path: Path, value: Any) -> None:
    """Atomically: a temporary file beside `path` renamed over it."""
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(value, f, ensure_ascii=False)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@contextlib.contextmanager
def _writing(tmp: Path) -> Iterator[None]:
    """Hold the lock that tells another run's clean-up this folder is being written."""
    with open(tmp / LOCK, "w") as f:
        if fcntl is not None:
            fcntl.flock(f, fcntl.LOCK_EX)
        yield
        (tmp / LOCK).unlink()


def save(model: Model, folder: Path) -> None:
    """Write the model and its record into `folder` atomically: a temporary folder renamed
    into place, removed if anything (an error, Ctrl-C, SIGTERM) stops the write."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=folder.name + ".", suffix=".partial", dir=folder.parent))
    try:
        with _writing(tmp):
            arrays, checked = {}, {}
            for name, a in _arrays(model):
                file = tmp / f"{name}.npy"
                np.save(file, a)
                st = file.stat()
                arrays[name] = {"shape": list(a.shape), "dtype": a.dtype.str,
                                "bytes": st.st_size, "sha256": file_hash(file),
                                "sample": sampled_digest(file, st.st_size)}
                checked[name] = [st.st_size, st.st_mtime_ns]
            record = {"format": FORMAT, "model": MODEL_NAME,
                      "config": dataclasses.asdict(model.config),
                      "tokens": model.tokens, "merges": model.merges,
                      "token_types": model.token_types, "pre": model.pre,
                      "embedding_type": model._embedding.tensor_type, "arrays": arrays}
            record["seal"] = _seal(record)
            _write_json(tmp / RECORD, record)
            _write_json(tmp / CHECKED, checked)
        os.replace(tmp, folder)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
        if not folder.is_dir():  # else another run has just put its copy in place
            raise
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _record(folder: Path) -> dict[str, Any]:
    """record.json, parsed and its seal checked; Damaged for anything else."""
    try:
        record = json.loads((folder / RECORD).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise Damaged(f"{RECORD} is missing") from None
    except OSError as e:
        raise Damaged(f"{RECORD} cannot be read ({e.strerror or e})") from None
    except (ValueError, RecursionError):  # bad UTF-8 or JSON
        raise Damaged(f"{RECORD} does not parse") from None
    if not isinstance(record, dict):
        raise Damaged(f"{RECORD} holds a JSON {type(record).__name__}, not the record")
    if record.get("format") != FORMAT:
        raise Damaged(f"{RECORD} says layout {_short(record.get('format'))}, not {FORMAT}")
    if record.get("seal") != _seal(record):
        raise Damaged(f"{RECORD} was changed after it was written (its seal does not match)")
    return record


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:40] + "…"


def _config(record: dict[str, Any]) -> Config:
    raw = record.get("config")
    types = {f.name: (float if f.type in ("float", float) else int)
             for f in dataclasses.fields(Config)}
    if not isinstance(raw, dict) or set(raw) != set(types) or not all(
            isinstance(raw[k], (int, float) if t is float else int)
            and not isinstance(raw[k], bool) and raw[k] > 0 for k, t in types.items()):
        raise Damaged(f"{RECORD}: its config is not {MODEL_NAME}'s numbers")
    return Config(**raw)


def _check_shapes(config: Config, arrays: dict[str, np.ndarray]) -> None:
    """The arrays are the shapes the record's configuration needs."""
    d, hd = config.d_model, config.head_dim
    want = {"attn_norm": (d,), "ffn_norm": (d,), "W_Q": (d, config.num_heads * hd),
            "W_K": (d, config.num_kv_heads * hd), "W_V": (d, config.num_kv_heads * hd),
            "W_O": (config.num_heads * hd, d), "W_gate": (d, config.d_ff),
            "W_up": (d, config.d_ff), "W_down": (config.d_ff, d)}
    for name, a in arrays.items():
        m = name.split(".", 1)[-1]
        shape = want.get(m, (d,) if name == "output_norm" else None)
        if name == "token_embd":
            ok = a.ndim == 2 and a.shape[0] == config.vocab_size
        else:
            ok = a.shape == shape
        if not ok:
            raise Damaged(f"{name}.npy holds {a.shape}, which does not fit the configuration")


def _checked(folder: Path) -> dict[str, Any]:
    """checked.json, or nothing (every file is then hashed in full, once)."""
    try:
        checked = json.loads((folder / CHECKED).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    return checked if isinstance(checked, dict) else {}


def _array(folder: Path, name: str, want: Any, checked: dict[str, Any],
           hashed: dict[str, list[int]]) -> np.ndarray:
    """One kept array, memory-mapped, after its checks (see the module's docstring)."""
    file = folder / f"{name}.npy"
    if not isinstance(want, dict) or not {"shape", "dtype", "bytes", "sha256", "sample"} <= set(want):
        raise Damaged(f"{RECORD} does not describe {name}.npy")
    try:
        st = file.stat()
        if st.st_size != want["bytes"]:
            raise Damaged(f"{name}.npy has {st.st_size:,} bytes; the record says "
                          f"{want['bytes']:,}")
        if checked.get(name) == [st.st_size, st.st_mtime_ns]:
            if sampled_digest(file, st.st_size) != want["sample"]:
                raise Damaged(f"{name}.npy's bytes are not the recorded ones")
        else:
            if file_hash(file) != want["sha256"]:
                raise Damaged(f"{name}.npy's SHA-256 is not the recorded one")
            hashed[name] = [st.st_size, st.st_mtime_ns]
        a = np.load(file, mmap_mode="r")
    except FileNotFoundError:
        raise Damaged(f"{name}.npy is missing") from None
    except OSError as e:
        raise Damaged(f"{name}.npy cannot be read ({e.strerror or e})") from None
    except ValueError as e:  # a header numpy cannot read
        raise Damaged(f"{name}.npy is not an array file ({e})") from None
    if list(a.shape) != want["shape"] or a.dtype.str != want["dtype"]:
        raise Damaged(f"{name}.npy holds {a.dtype.str} {a.shape}; the record says "
                      f"{want['dtype']} {tuple(want['shape'])}")
    return a


def read(path: Path, folder: Path) -> Model:
    """The model from `folder`, every array memory-mapped and checked against the record;
    Damaged (naming the file and what is wrong) when anything does not match."""
    record = _record(folder)
    config = _config(record)
    described = record.get("arrays")
    names = array_names(config.num_layers)
    if not isinstance(described, dict) or set(described) != set(names):
        raise Damaged(f"{RECORD}'s arrays are not the {config.num_layers} layers' weights")
    checked, hashed = _checked(folder), {}
    arrays = {name: _array(folder, name, described[name], checked, hashed) for name in names}
    _check_shapes(config, arrays)
    tokens, merges, types = (record.get(k) for k in ("tokens", "merges", "token_types"))
    if not (isinstance(tokens, list) and isinstance(merges, list) and isinstance(types, list)
            and len(tokens) == len(types) == config.vocab_size
            and isinstance(record.get("pre"), str)
            and isinstance(record.get("embedding_type"), int)):
        raise Damaged(f"{RECORD}'s tokenizer tables do not fit the configuration")
    if hashed:  # note the files just hashed in full, so that the next run samples them
        with contextlib.suppress(OSError):
            _write_json(folder / CHECKED, {**checked, **hashed})
    layers = tuple(LayerWeights(**{m: arrays[f"{i}.{m}"] for m in MATRICES})
                   for i in range(config.num_layers))
    return Model(path=path, config=config, tokens=tuple(tokens), merges=tuple(merges),
                 token_types=tuple(types), pre=record["pre"], layers=layers,
                 output_norm=arrays["output_norm"],
                 _embedding=Quantised(arrays["token_embd"], int(record["embedding_type"])))


def _size(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())


def _in_use(folder: Path) -> bool:
    """A live process is writing `folder` (it holds the lock); or, without a lock file,
    the folder is too new to tell."""
    lock = folder / LOCK
    try:
        f = open(lock)
    except OSError:
        try:
            return time.time() - folder.stat().st_mtime < LEFTOVER_AGE
        except OSError:
            return False
    with f:
        if fcntl is None:
            return time.time() - lock.stat().st_mtime < LEFTOVER_AGE
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return True
        return False


def remove_leftovers(cache: Path, warn: Warn) -> None:
    """Remove what no run will read: temporary folders of interrupted or killed writes and
    copies kept in an older layout; one line each, with the space freed."""
    try:
        entries = list(cache.iterdir())
    except OSError:
        return
    for entry in entries:
        old = FOLDER.fullmatch(entry.name)
        if TEMPORARY.fullmatch(entry.name) and entry.is_dir() and not _in_use(entry):
            what = "an unfinished copy of the decoder's weights, left by an interrupted run"
        elif old and int(old.group(1)) < FORMAT and entry.is_dir():
            what = f"the decoder's weights kept in an older layout (v{old.group(1)})"
        else:
            continue
        size = _size(entry)
        shutil.rmtree(entry, ignore_errors=True)
        if not entry.exists():
            warn(f"removed {what}: {entry} ({size / 1e6:,.0f} MB)")


def _discard(folder: Path) -> None:
    """Remove a damaged copy: renamed aside first, so that no run reads half of it."""
    if folder.is_dir() and not folder.is_symlink():
        aside = Path(tempfile.mkdtemp(prefix=folder.name + ".", suffix=".damaged",
                                      dir=folder.parent))
        os.replace(folder, aside / folder.name)
        shutil.rmtree(aside, ignore_errors=True)
    elif folder.exists() or folder.is_symlink():
        folder.unlink()


def load_or_save(path: Path, cache: Path, load_model: Callable[[Path], Model],
                 warn: Warn = log.warning) -> Model:
    """The kept copy when there is a sound one; else read the file and keep a copy, saying
    in one line why a kept copy was made again. When the cache folder cannot be written,
    the model read from the file is used as it is, with one line saying so."""
    folder = folder_for(path, cache)
    remove_leftovers(cache, warn)
    damage = None
    if folder.exists() or folder.is_symlink():
        try:
            return read(path, folder)
        except Damaged as e:
            damage = str(e)
    model = load_model(path)
    try:
        if damage is not None:
            _discard(folder)
        save(model, folder)
    except OSError as e:
        why = "it is a file, not a folder" if cache.is_file() else e.strerror or str(e)
        warn(f"the decoder's weights cannot be kept in {cache} ({why}); they are read from "
             "the GGUF file again on every run (6-12 s) until it is a writable folder")
        return model
    if damage is not None:
        warn(f"the kept copy of {MODEL_NAME}'s weights was damaged ({damage}); made again "
             f"in {folder}")
    try:
        return read(path, folder)
    except Damaged:  # another run replaced it meanwhile: use what was read
        return model


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
