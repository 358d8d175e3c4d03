"""Tiny models on disk: the shipped one, and other sizes and seeds trained on first use
(seconds, with a progress bar) and kept in the cache folder like chapter clips."""

from __future__ import annotations

import hashlib
import sys
import time
from collections.abc import Callable
from pathlib import Path

from attention_video.attncore.settings import Settings
from attention_video.attncore.tiny.config import TrainConfig
from attention_video.attncore.tiny.model import TinyModel
from attention_video.attncore.tiny.store import load, load_default, save
from attention_video.attncore.tiny.trace import train_config
from attention_video.attncore.tiny.train import train
from attention_video.pipeline.cache.paths import cache_dir, ensure_cache_dir

Say = Callable[[str], None]


def model_path(config: TrainConfig, root: Path | None = None) -> Path:
    """Where a trained model of these training settings is kept."""
    key = hashlib.sha256(repr(config).encode()).hexdigest()[:16]
    return (root or cache_dir()) / "tiny" / f"d{config.d_model}-h{config.heads}-s{config.seed}-{key}.safetensors"


def tiny_model(settings: Settings, say: Say | None = None, root: Path | None = None) -> TinyModel:
    """The tiny model these settings ask for: shipped, cached, or trained now and kept."""
    config = train_config(settings)
    shipped = load_default()
    if shipped.train_config == config:
        return shipped
    path = model_path(config, root)
    try:
        return load(path)
    except (OSError, ValueError):
        pass  # not trained yet (or damaged): train it
    return train_and_keep(config, path, say)


def train_and_keep(config: TrainConfig, path: Path, say: Say | None = None) -> TinyModel:
    say = say or (lambda s: print(s, file=sys.stderr, flush=True))
    say(f"training the tiny model (d_model {config.d_model}, {config.heads} head"
        f"{'s' if config.heads > 1 else ''}, seed {config.seed}) on first use; it is kept for "
        "next time")
    started = time.perf_counter()
    model = train(config, progress_bar(started))
    if sys.stderr.isatty():
        print(file=sys.stderr)
    ensure_cache_dir(path.parent)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        save(model, path)
    except OSError as e:  # the video can still be made; only the next run trains again
        say(f"note: could not keep the trained model in {path.parent} ({e.strerror}); "
            "set ATTENTION_CACHE_DIR to a writable folder to keep it")
    s = model.scores
    say(f"trained in {time.perf_counter() - started:.1f} s: replaced-object accuracy "
        f"{s.get('test_accuracy', float('nan')):.3f}, object attends most to its verb "
        f"{s.get('test_object_to_verb', float('nan')):.3f} (held out)")
    return model


def progress_bar(started: float):
    """A one-line bar on a terminal; a line every 10% in a log."""
    interactive = sys.stderr.isatty()
    last = [-1]

    def progress(step: int, total: int, info) -> None:
        frac = step / max(total, 1)
        text = (f"  [{'#' * int(30 * frac):<30}] {frac:4.0%}  loss {info.loss:.3f}  "
                f"held-out accuracy {info.accuracy:.3f}  {time.perf_counter() - started:4.1f} s")
        if interactive:
            print("\r" + text, end="", file=sys.stderr, flush=True)
        elif int(frac * 10) != last[0]:
            last[0] = int(frac * 10)
            print(text, file=sys.stderr, flush=True)

    return progress
