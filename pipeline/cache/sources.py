"""The project's own source files a module runs: itself, and every project module it
imports, directly or through other modules (read from the import statements with `ast`,
without importing anything), and the data files a module declares it reads (CACHE_DATA).
The chapter cache hashes these files, so a clip is drawn again whenever any code that
draws it, or data it draws from (the caption catalogues), changes.
"""

from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

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


@lru_cache(maxsize=512)
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


def source_files(modules: list[str], root: Path | None = None) -> list[Path]:
    """The files of `modules` and of every project module they import, transitively,
    including the packages' __init__.py files; sorted by path."""
    root = root or PROJECT_ROOT
    seen: dict[str, Path | None] = {}  # module name → its file; None: not a project module
    todo = list(modules)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        path = seen[name] = module_file(name, root)
        if path is None:
            continue
        source = path.read_bytes()
        todo += _packages_of(name)
        todo += _imported_names(source, name, path.name == "__init__.py")
    files = {p for p in seen.values() if p is not None}
    files |= {d for p in list(files) for d in data_files(p.read_bytes(), root)}
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
