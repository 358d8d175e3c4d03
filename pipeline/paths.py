"""Where the pipeline keeps its files between runs."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """$ATTENTION_CACHE_DIR, else $XDG_CACHE_HOME/attention-explainer, else ~/.cache/…"""
    env = os.environ.get("ATTENTION_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "attention-explainer"
