"""A full disk: when the cache folder's disk has too little room for a render, chapters
are rendered without caching in a temporary folder elsewhere, and failures say so."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from attention_video.pipeline.cache.limits import human_size
from attention_video.pipeline.cache.paths import CACHE_ENV, CacheDirError
from attention_video.pipeline.cache.store import ChapterCache

MIN_FREE = 64 * 1024 ** 2  # bytes: less free beside the cache and a render cannot count on
# finishing (a chapter's scratch holds Manim's partial movies and texts; a 1080p one, tens of MB)


def free_space(folder: Path) -> int | None:
    """Bytes free on the disk of `folder` (or of its nearest existing parent); None if
    that cannot be told."""
    folder = Path(folder)
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    try:
        return shutil.disk_usage(folder).free
    except OSError:
        return None


def is_full(folder: Path) -> bool:
    free = free_space(folder)
    return free is not None and free < MIN_FREE


def full_message(cache: ChapterCache) -> str:
    """'the cache folder /x is full (12 KB free; a render needs 67.1 MB)'."""
    free = human_size(free_space(cache.root) or 0)
    return f"{cache.name} {cache.root} is full ({free} free; a render needs {human_size(MIN_FREE)})"


class CacheFull(CacheDirError):
    """The cache folder's disk is full, and so is the temporary folder's."""


@contextmanager
def room_to_render(cache: ChapterCache, say: Callable[[str], None]) -> Iterator[ChapterCache]:
    """The cache to render chapters into: `cache` itself, or when its disk has less than
    MIN_FREE bytes free, a temporary folder elsewhere that is removed afterwards: the
    chapters are rendered without caching (the clips already cached are still read),
    and `say` hears so in one line. A CacheFull error when the temporary folder's disk is
    full too."""
    if not is_full(cache.root):
        yield cache
        return
    full = full_message(cache)
    spare = Path(tempfile.gettempdir())
    if is_full(spare):
        raise CacheFull(f"{full}, and so is the temporary folder {spare}; free some space, or "
                        f"choose another cache folder with {CACHE_ENV}=/some/folder")
    say(f"{full}: rendering without caching, in {spare} (free some space, or choose "
        f"another cache folder with {CACHE_ENV}=/some/folder)")
    root = Path(tempfile.mkdtemp(prefix="attention-uncached-", dir=spare))
    try:
        yield ChapterCache(root, name="the temporary folder")
    finally:
        shutil.rmtree(root, ignore_errors=True)
