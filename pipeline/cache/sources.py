"""The project's own source files a module runs: itself, and every project module it
imports, directly or through other modules (read from the import statements with `ast`,
without importing anything), and the data files a module declares it reads (CACHE_DATA).
The chapter cache hashes these files, so a clip is drawn again whenever any code that
draws it, or data it draws from (the caption catalogues), changes.

Parsing the ~140 files of a video's chapters took 0.8 s of every command, before any
chapter could start and in a re-run whose chapters are all cached (half of it). What each
file imports and declares is kept in the cache folder (`SCANS`), by the file's content: a
file changed is parsed again, and a record that cannot be read is only not used.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import tempfile
import threading
from functools import lru_cache
from pathlib import Path

from attention_video.pipeline.cache.paths import cache_dir

PROJECT_ROOT = Path(__file__).resolve().parents[2]
DISTRIBUTION = "attention_video"  # the one installed top-level name
# Its subpackages, each a top-level folder: the folders of its own folder, as imported
# (in a checkout, attention_video/ holds links to them; installed, the folders themselves).
PACKAGES = tuple(sorted(p.name for p in Path(__file__).parents[2].iterdir()
                        if (p / "__init__.py").is_file()))


def module_file(name: str, root: Path) -> Path | None:
    """The file of a project module ('attention_video.scenes.widgets' →
    root/scenes/widgets.py, a package → its __init__.py; 'attention_video.api' →
    root/attention_video/api.py); None for a library module or a name that is not a module."""
    parts = name.split(".")
    if parts[0] != DISTRIBUTION:
        return None
    if len(parts) > 1 and parts[1] in PACKAGES:  # a folder linked into the package
        parts = parts[1:]
    base = root.joinpath(*parts)
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def _packages_of(name: str) -> list[str]:
    """The packages Python runs before a module: 'a.b.c' → ['a', 'a.b'], but the
    distribution's own __init__.py, which runs nothing (it re-exports the notebook API
    lazily) and would otherwise tie every chapter's clip to the whole pipeline."""
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(2 if parts[0] == DISTRIBUTION else 1, len(parts))]


def _imported_names(source: bytes, name: str, is_package: bool) -> tuple[str, ...]:
    """Every module name an import statement in `source` may load, anywhere in the file
    (imports inside functions too). `from a import b` may load a.b: both are listed."""
    out: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: from the module's own package upwards
                package = name.split(".") if is_package else name.split(".")[:-1]
                package = package[: len(package) - (node.level - 1)]
                base = ".".join(package + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            out.append(base)
            out += [f"{base}.{alias.name}" for alias in node.names if alias.name != "*"]
    return tuple(out)


SCANS = "source-scans.json"  # in the cache folder: each file's imports and data globs
SCAN_FORMAT = 1  # part of every record's key: a change to what a scan finds renews them all
KEEP_SCANS = 2000  # records kept at most (the newest): old versions of files go


@lru_cache(maxsize=1)
def _kept_scans() -> dict[str, list[list[str]]]:
    """The scans kept in the cache folder ({} when there are none or they cannot be read)."""
    try:
        kept = json.loads((cache_dir() / SCANS).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return kept if isinstance(kept, dict) else {}


_new_scans: dict[str, list[list[str]]] = {}  # made by this process, not kept yet
_scans_lock = threading.Lock()  # renders in threads of one process (the API, batches)


def _scan(source: bytes, name: str, is_package: bool) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(the module names `source` may import, the data globs it declares), kept by content."""
    key = hashlib.sha256(f"{SCAN_FORMAT} {name} {is_package} ".encode() + source).hexdigest()
    found = _kept_scans().get(key) or _new_scans.get(key)
    if (isinstance(found, list) and len(found) == 2
            and all(isinstance(x, list) and all(isinstance(n, str) for n in x) for x in found)):
        return tuple(found[0]), tuple(found[1])
    with _scans_lock:  # (also CPython 3.11's ast, which two threads parsing at once can
        #                  fail: "AST constructor recursion depth mismatch")
        imports, globs = _imported_names(source, name, is_package), _data_globs(source)
        _new_scans[key] = [list(imports), list(globs)]
    return imports, globs


def _keep_scans() -> None:
    """Add this process's new scans to the kept ones (written whole, atomically; a
    concurrent writer may lose some, which are only parsed again). Never fails."""
    with _scans_lock:
        if not _new_scans:
            return
        kept = {**_kept_scans(), **_new_scans}
        kept = dict(list(kept.items())[-KEEP_SCANS:])
        folder = cache_dir()
        try:
            folder.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{SCANS}.", dir=folder)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    json.dump(kept, f)
                os.replace(tmp, folder / SCANS)
            finally:
                if os.path.exists(tmp):
                    os.unlink(tmp)
        except OSError:
            return
        _kept_scans.cache_clear()
        _new_scans.clear()


def source_files(modules: list[str], root: Path | None = None) -> list[Path]:
    """The files of `modules` and of every project module they import, transitively,
    including the packages' __init__.py files; sorted by path."""
    root = root or PROJECT_ROOT
    seen: dict[str, Path | None] = {}  # module name → its file; None: not a project module
    data: set[Path] = set()  # the data files they declare
    todo = list(modules)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        path = seen[name] = module_file(name, root)
        if path is None:
            continue
        imports, globs = _scan(path.read_bytes(), name, path.name == "__init__.py")
        todo += _packages_of(name)
        todo += imports
        data |= {d for g in globs for d in sorted(root.glob(g)) if d.is_file()}
    _keep_scans()
    files = {p for p in seen.values() if p is not None} | data
    return sorted(files, key=lambda p: p.relative_to(root).as_posix())


@lru_cache(maxsize=512)
def _data_globs(source: bytes) -> tuple[str, ...]:
    """The globs a module declares in `CACHE_DATA = ("locale/*/LC_MESSAGES/*.po", ...)`:
    data files it reads, from the project root (scenes.catalogue's caption catalogues)."""
    for node in ast.parse(source).body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name) and node.targets[0].id == "CACHE_DATA"
                and isinstance(node.value, ast.Tuple)):
            return tuple(e.value for e in node.value.elts
                         if isinstance(e, ast.Constant) and isinstance(e.value, str))
    return ()


def data_files(source: bytes, root: Path) -> list[Path]:
    """The data files a module's CACHE_DATA names, so that the cache keys on them too."""
    return [p for g in _data_globs(source) for p in sorted(root.glob(g)) if p.is_file()]
