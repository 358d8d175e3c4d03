"""Built texts kept on disk: Pango and the SVG reader cost 4-30 ms a text, and a lecture's
texts repeat across runs, so each built Text is pickled once under a key of everything that
made it (the text, its size and weight, the font chain, the installed fonts, the Manim
version and the bytes of the code that builds it) and read back on the next run."""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from collections.abc import Callable, Iterable
from functools import lru_cache
from importlib.metadata import version
from pathlib import Path

from manim import Text

MANIM = version("manim")
_folder: Path | None = None  # where built texts are kept across runs (None: memory only)


def use_text_cache(folder: Path | None) -> None:
    """Keep built texts in `folder` across runs (None: memory only). The renderer calls
    this before a scene is built."""
    global _folder
    _folder = Path(folder) if folder is not None else None


def code_digest(files: Iterable[Path]) -> str:
    """A hash of the files' names and bytes: the code that builds a text."""
    h = hashlib.sha256()
    for f in files:
        h.update(f.name.encode() + b"\0" + f.read_bytes())
    return h.hexdigest()[:16]


@lru_cache(maxsize=1)
def fonts_digest() -> str:
    """A hash of the installed font families: a text built before a font was installed
    (drawn as boxes, or as nothing) is not served after it."""
    import manimpango

    return hashlib.sha256("\n".join(sorted(manimpango.list_fonts())).encode()).hexdigest()[:16]


def kept(key_parts: tuple, build: Callable[[], Text]) -> Text:
    """The Text kept under `key_parts` (with the Manim version and installed fonts), or
    `build()`'s, kept for the next run. A damaged or unreadable entry is built again; a
    folder that cannot be written (full, read-only) only costs the next run the build."""
    if _folder is None:
        return build()
    key = hashlib.sha256(repr((*key_parts, MANIM, fonts_digest())).encode()).hexdigest()
    path = _folder / key[:2] / f"{key[2:24]}.pkl"
    try:
        t = pickle.loads(path.read_bytes())
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ValueError,
            ImportError, IndexError, TypeError):
        pass
    else:
        try:
            os.utime(path)  # just used: the cache's pruning removes the least recently used
        except OSError:
            pass
        return t
    t = build()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=".tmp", dir=path.parent)
        try:  # a unique name, then a rename: a reader never sees half a file
            with os.fdopen(fd, "wb") as f:
                f.write(pickle.dumps(t, protocol=pickle.HIGHEST_PROTOCOL))
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError:
        pass
    return t
