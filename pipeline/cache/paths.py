"""Where the pipeline keeps its files between runs."""

from __future__ import annotations

import os
from pathlib import Path

from attention_video.pipeline.records import OutputError

CACHE_ENV = "ATTENTION_CACHE_DIR"  # the one way to choose another cache folder


def cache_dir() -> Path:
    """$ATTENTION_CACHE_DIR, else $XDG_CACHE_HOME/attention-explainer, else ~/.cache/…,
    as an absolute path."""
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(os.path.abspath(env))
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(os.path.abspath(base)) / "attention-explainer"


def models_dir() -> Path:
    """Where real models' dequantised weights are kept between runs (attncore.decoder.store)."""
    return cache_dir() / "models"


def settle_cache_dir() -> None:
    """Make a relative $ATTENTION_CACHE_DIR absolute, once, at start-up: relative to the
    folder the command was started in, for every process it starts and whatever folder
    a render works in. (A relative one failed every render: 'No such file or directory:
    rel-cache/tmp/render-…'.)"""
    env = os.environ.get(CACHE_ENV)
    if env and not os.path.isabs(env):
        os.environ[CACHE_ENV] = os.path.abspath(env)


class CacheDirError(OutputError):
    """The cache folder cannot be created or written: says so, and how to choose another."""


def ensure_cache_dir(folder: Path | None = None) -> Path:
    """Create `folder` (default: the cache folder) if needed; a one-line CacheDirError
    naming the cache folder and $ATTENTION_CACHE_DIR when that is impossible."""
    root = cache_dir()
    folder = Path(folder) if folder is not None else root
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if not os.access(folder, os.W_OK | os.X_OK):
            raise PermissionError(13, "Permission denied")
    except OSError as e:
        raise CacheDirError(
            f"the cache folder {root} cannot be created or written ({e.strerror or e}); "
            f"choose another with the environment variable {CACHE_ENV}=/some/folder") from None
    return folder
