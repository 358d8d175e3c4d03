"""attncore.decoder.store: the decoder's dequantised weights kept between runs are checked
against their record when loaded, made again with one line when damaged, written atomically
and never left half-written.

A made-up two-layer model stands in for SmolLM2 (any file stands in for its GGUF file), so
these run without the model installed and in a fraction of a second each."""

from __future__ import annotations

import dataclasses
import fcntl
import json
import logging
import os
import signal
import subprocess
import sys

import numpy as np
import pytest
from attention_video.attncore.decoder import gguf_file, store
from attention_video.attncore.decoder.gguf_file import Config, LayerWeights, Model, Quantised

CONFIG = Config(num_layers=2, d_model=8, d_ff=16, num_heads=2, num_kv_heads=1,
                rope_base=10000.0, rope_dims=4, eps=1e-5, context_length=64, vocab_size=5)
SHAPES = {"attn_norm": (8,), "W_Q": (8, 8), "W_K": (8, 4), "W_V": (8, 4), "W_O": (8, 8),
          "ffn_norm": (8,), "W_gate": (8, 16), "W_up": (8, 16), "W_down": (16, 8)}


def made_up_model(path, seed: int = 0) -> Model:
    rng = np.random.default_rng(seed)
    layers = tuple(LayerWeights(**{m: rng.normal(size=s).astype(np.float32)
                                   for m, s in SHAPES.items()}) for _ in range(2))
    return Model(path=path, config=CONFIG, tokens=("a", "b", "c", "<s>", "</s>"),
                 merges=("a b",), token_types=(1, 1, 1, 3, 3), pre="default", layers=layers,
                 output_norm=rng.normal(size=8), _embedding=Quantised(
                     rng.integers(0, 255, size=(5, 34), dtype=np.uint8), 8))


@pytest.fixture
def gguf(tmp_path):
    path = tmp_path / "model.gguf"
    path.write_bytes(b"GGUF made up")
    return path


class Calls:
    """A load_model that counts its calls, and a warn that keeps its lines."""

    def __init__(self):
        self.loads, self.lines = 0, []

    def load_model(self, path):
        self.loads += 1
        return made_up_model(path)

    def warn(self, line):
        self.lines.append(line)


def kept(gguf, cache, calls):
    return store.load_or_save(gguf, cache, calls.load_model, calls.warn)


def same_weights(a: Model, b: Model) -> bool:
    return all(np.array_equal(getattr(x, m), getattr(y, m))
               for x, y in zip(a.layers, b.layers, strict=True) for m in SHAPES) and \
        np.array_equal(a.output_norm, b.output_norm) and \
        np.array_equal(a._embedding.data, b._embedding.data) and a.config == b.config


@pytest.fixture
def cache(tmp_path, gguf):
    """A cache folder with a sound kept copy, written by a first run."""
    cache = tmp_path / "models"
    calls = Calls()
    kept(gguf, cache, calls)
    assert calls.loads == 1 and calls.lines == []
    return cache


def folder(gguf, cache):
    return store.folder_for(gguf, cache)


def test_the_record_holds_each_arrays_shape_dtype_and_sha256(gguf, cache):
    f = folder(gguf, cache)
    assert f.name.endswith(f"-v{store.FORMAT}")  # the layout version is in the name
    record = json.loads((f / store.RECORD).read_text(encoding="utf-8"))
    assert set(record["arrays"]) == {p.stem for p in f.glob("*.npy")}
    entry = record["arrays"]["1.W_K"]
    assert entry["shape"] == [8, 4] and entry["dtype"] == "<f4"
    assert entry["sha256"] == store.file_hash(f / "1.W_K.npy")


def test_a_sound_copy_is_read_memory_mapped_without_reading_the_file_again(gguf, cache):
    calls = Calls()
    model = kept(gguf, cache, calls)
    assert calls.loads == 0 and calls.lines == []
    assert isinstance(model.layers[0].W_Q, np.memmap)
    assert same_weights(model, made_up_model(gguf))


def test_a_later_run_samples_the_arrays_instead_of_hashing_them_in_full(gguf, cache,
                                                                        monkeypatch):
    hashed = []
    real = store.file_hash
    monkeypatch.setattr(store, "file_hash", lambda p: hashed.append(p.name) or real(p))
    kept(gguf, cache, Calls())
    assert hashed == [gguf.name]  # the GGUF file names the folder; no array hashed in full


def zero_body(path):
    """Zero every byte after the .npy header, keeping the size and the modification time."""
    st = path.stat()
    data = bytearray(path.read_bytes())
    start = data.index(b"\n") + 1
    data[start:] = bytes(len(data) - start)
    path.write_bytes(bytes(data))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def edit_record(f, change):
    path = f / store.RECORD
    record = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps(change(record)), encoding="utf-8")


def replace_with_wrong_shape(f):
    np.save(f / "0.W_Q.npy", np.zeros((8, 4), np.float32))


def twelve_layers(record):
    record["config"]["num_layers"] = 12
    return record


DAMAGE = {
    "zeroed body, time kept": (lambda f: zero_body(f / "1.W_down.npy"), "1.W_down.npy"),
    "zeroed body": (lambda f: (f / "0.W_up.npy").write_bytes(
        (f / "0.W_up.npy").read_bytes()[:128] + bytes(8 * 16 * 4)), "0.W_up.npy"),
    "truncated": (lambda f: os.truncate(f / "0.W_V.npy", 100), "0.W_V.npy"),
    "deleted": (lambda f: (f / "token_embd.npy").unlink(), "token_embd.npy"),
    "wrong shape": (replace_with_wrong_shape, "0.W_Q.npy"),
    "record says 12 layers": (lambda f: edit_record(f, twelve_layers), store.RECORD),
    "record is []": (lambda f: (f / store.RECORD).write_text("[]"), store.RECORD),
    "record is null": (lambda f: (f / store.RECORD).write_text("null"), store.RECORD),
    "record cut": (lambda f: (f / store.RECORD).write_text('{"format": 2, "con'),
                   store.RECORD),
    "record missing": (lambda f: (f / store.RECORD).unlink(), store.RECORD),
}


@pytest.mark.parametrize("how", DAMAGE)
def test_a_damaged_copy_is_made_again_with_one_line_naming_the_file(gguf, cache, how):
    damage, named = DAMAGE[how]
    damage(folder(gguf, cache))
    calls = Calls()
    model = kept(gguf, cache, calls)
    assert calls.loads == 1
    assert len(calls.lines) == 1 and named in calls.lines[0] and "damaged" in calls.lines[0]
    assert same_weights(model, made_up_model(gguf))
    again = Calls()  # and the copy made again is sound
    assert same_weights(kept(gguf, cache, again), made_up_model(gguf))
    assert again.loads == 0 and again.lines == []


def test_an_interrupted_write_leaves_nothing(gguf, tmp_path, monkeypatch):
    cache = tmp_path / "models"
    real, saved = np.save, []

    def stop_after_five(path, a):
        if len(saved) == 5:
            raise KeyboardInterrupt  # Ctrl-C, or SIGTERM turned into it by the pipeline
        saved.append(path)
        real(path, a)

    monkeypatch.setattr(store.np, "save", stop_after_five)
    with pytest.raises(KeyboardInterrupt):
        kept(gguf, cache, Calls())
    assert saved and list(cache.iterdir()) == []


def test_leftovers_of_killed_runs_and_older_layouts_are_removed_on_the_next_start(
        gguf, tmp_path):
    cache = tmp_path / "models"
    cache.mkdir()
    digest = store.file_hash(gguf)[:24]
    old_partial = cache / f"smollm2-{digest}-v1.k3j4h5g6"  # the old layout's mkdtemp name
    killed = cache / f"smollm2-{digest}-v{store.FORMAT}.a1b2c3d4.partial"  # lock released
    older = cache / f"smollm2-{digest}-v1"  # a whole copy nothing reads any more
    writing = cache / f"smollm2-{digest}-v{store.FORMAT}.z9y8x7w6.partial"  # a live writer
    for f in (old_partial, killed, older, writing):
        f.mkdir()
        (f / "0.W_Q.npy").write_bytes(bytes(1_000_000))
    os.utime(old_partial, (0, 0))
    (killed / store.LOCK).touch()
    (writing / store.LOCK).touch()
    unrelated = cache / "other-model"
    unrelated.mkdir()
    with open(writing / store.LOCK) as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        calls = Calls()
        kept(gguf, cache, calls)
        left = sorted(p.name for p in cache.iterdir())
    assert left == sorted(["other-model", writing.name, folder(gguf, cache).name])
    assert len(calls.lines) == 3 and all("removed" in line and "1 MB" in line
                                         for line in calls.lines)


def test_an_unusable_models_folder_is_one_note_and_the_files_model(gguf, tmp_path):
    cache = tmp_path / "models"
    cache.write_text("a file where the folder should be")
    calls = Calls()
    model = kept(gguf, cache, calls)
    assert calls.loads == 1 and same_weights(model, made_up_model(gguf))
    assert len(calls.lines) == 1 and str(cache) in calls.lines[0]
    assert "it is a file" in calls.lines[0] and "every run" in calls.lines[0]


def test_a_read_only_models_folder_is_one_note(gguf, tmp_path, monkeypatch):
    def refused(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(store.tempfile, "mkdtemp", refused)
    calls = Calls()
    kept(gguf, tmp_path / "models", calls)
    assert len(calls.lines) == 1 and "Permission denied" in calls.lines[0]


def test_load_says_an_unusable_folder_once_per_run(gguf, tmp_path, monkeypatch, caplog):
    """Through the logger: unconfigured, Python prints a warning as its one line."""
    cache = tmp_path / "models"
    cache.write_text("")
    monkeypatch.setattr(gguf_file, "find_gguf", lambda: gguf)
    monkeypatch.setattr(gguf_file, "load_model", made_up_model)
    store._cached.cache_clear()
    try:
        with caplog.at_level(logging.WARNING, logger=store.log.name):
            store.load(cache)
            store.load(cache)
    finally:
        store._cached.cache_clear()
    assert [r.getMessage().startswith("the decoder's weights cannot be kept")
            for r in caplog.records] == [True]


def test_a_copy_made_by_another_run_meanwhile_is_used(gguf, tmp_path, monkeypatch):
    """Two first runs at once: the second rename fails and the first one's copy is read."""
    cache = tmp_path / "models"
    calls = Calls()
    real = store.os.replace

    def other_run_first(src, dst):
        if str(dst) == str(folder(gguf, cache)) and not os.path.exists(dst):
            store.save(made_up_model(gguf), folder(gguf, cache).with_name("x"))
            real(folder(gguf, cache).with_name("x"), dst)
        return real(src, dst)

    monkeypatch.setattr(store.os, "replace", other_run_first)
    model = kept(gguf, cache, calls)
    assert calls.lines == [] and same_weights(model, made_up_model(gguf))
    assert sorted(p.name for p in cache.iterdir()) == [folder(gguf, cache).name]


def test_the_record_is_checked_against_the_shapes_it_describes(gguf, cache):
    """A record whose arrays agree with their files but not with its configuration."""
    def narrower(record):
        record["config"]["d_model"] = 4
        record["seal"] = store._seal(record)
        return record

    edit_record(folder(gguf, cache), narrower)
    calls = Calls()
    kept(gguf, cache, calls)
    assert len(calls.lines) == 1 and "does not fit" in calls.lines[0]


def test_the_dataclass_fields_are_all_kept():
    assert set(SHAPES) == {f.name for f in dataclasses.fields(LayerWeights)}


def test_a_write_killed_outright_is_removed_by_the_next_run(gguf, tmp_path):
    """SIGKILL (or a SIGTERM nothing handles) ends the writer with no clean-up: its lock
    dies with it, so the next run knows the folder is a leftover, however new."""
    cache = tmp_path / "models"
    child = subprocess.Popen([sys.executable, "-c", KILLED_WRITER, str(gguf), str(cache)],
                             stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "writing"
    child.send_signal(signal.SIGKILL)
    child.communicate()
    (partial,) = cache.iterdir()
    assert partial.name.endswith(".partial") and (partial / store.LOCK).exists()
    calls = Calls()
    kept(gguf, cache, calls)
    assert [p.name for p in cache.iterdir()] == [folder(gguf, cache).name]
    assert len(calls.lines) == 1 and "interrupted run" in calls.lines[0]


KILLED_WRITER = """
import sys, time
from pathlib import Path
import numpy as np
from attention_video.attncore.decoder import store
from tests.attncore.test_decoder_store import made_up_model
real = np.save
def slow(path, a):
    real(path, a)
    print("writing", flush=True)
    time.sleep(60)
store.np.save = slow
gguf, cache = Path(sys.argv[1]), Path(sys.argv[2])
store.save(made_up_model(gguf), store.folder_for(gguf, cache))
"""
