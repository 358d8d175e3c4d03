"""attncore.trained, what the two trained models share: the tiny model and the translation
model are siblings that never import each other; no attncore module is part of an import
cycle (type-checking and function-level imports included); each imports first in a fresh
interpreter; the store's integer tenths are exact and refuse values off the grid; a model's
platform record, and when a retraining is expected to give the same bytes."""

from __future__ import annotations

import ast
import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from attention_video.attncore.trained.provenance import Platform, Provenance, bit_identical_here
from attention_video.attncore.trained.store import from_tenths, metadata, pack, tenths
from numpy.testing import assert_array_equal

ROOT = Path(__file__).resolve().parents[1]
ATTNCORE = ROOT / "attncore"


def python(code: str) -> str:
    """What `code` prints, run in a fresh interpreter at the project's root."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, check=True, timeout=120).stdout


def module_files() -> dict[str, Path]:
    """attncore's module names → their files (a package is its __init__.py)."""
    out = {}
    for f in sorted(ATTNCORE.rglob("*.py")):
        parts = list(f.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(["attention_video", *parts])] = f
    return out


def imported_modules(name: str, path: Path, known: set[str]) -> set[str]:
    """Every attncore module `path` imports, anywhere in it: at the top, under
    TYPE_CHECKING, inside functions. `from a.b import c` counts as a.b.c when that is a
    module, else as a.b; relative imports are resolved."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name in known}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            for a in node.names:
                full = f"{base}.{a.name}"
                if full in known:
                    out.add(full)
                elif base in known:
                    out.add(base)
    return out


def import_graph() -> dict[str, set[str]]:
    files = module_files()
    return {m: imported_modules(m, f, set(files)) for m, f in files.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the graph as a path (its first module repeated at the end), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(u: str, path: list[str]) -> list[str] | None:
        state[u] = 1
        path.append(u)
        for v in sorted(graph[u]):
            if state.get(v) == 1:
                return path[path.index(v):] + [v]
            if v not in state:
                found = visit(v, path)
                if found:
                    return found
        path.pop()
        state[u] = 2
        return None

    for m in sorted(graph):
        if m not in state:
            found = visit(m, [])
            if found:
                return found
    return None


def test_the_cycle_finder_finds_a_cycle_and_accepts_a_tree():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_the_import_reader_sees_type_checking_function_and_relative_imports(tmp_path):
    f = tmp_path / "mod.py"
    f.write_text("from typing import TYPE_CHECKING\n"
                 "if TYPE_CHECKING:\n    from attention_video.attncore.tiny.model import TinyModel\n"
                 "def f():\n    import attention_video.attncore.translate.store\n"
                 "from . import corpus\nfrom .history import Snapshot\n")
    known = {"attention_video.attncore.tiny.model", "attention_video.attncore.translate.store",
             "attention_video.attncore.trained.corpus", "attention_video.attncore.trained.history"}
    assert imported_modules("attention_video.attncore.trained.mod", f, known) == known


@pytest.mark.parametrize("package, sibling", [("tiny", "translate"), ("translate", "tiny"),
                                              ("trained", "tiny"), ("trained", "translate")])
def test_the_trained_models_never_import_each_other(package, sibling):
    graph = import_graph()
    inside = [m for m in graph if m == f"attention_video.attncore.{package}" or
              m.startswith(f"attention_video.attncore.{package}.")]
    assert inside
    wrong = {m: sorted(v for v in graph[m] if v == f"attention_video.attncore.{sibling}" or
                       v.startswith(f"attention_video.attncore.{sibling}."))
             for m in inside}
    assert not {m: v for m, v in wrong.items() if v}


def test_no_attncore_module_is_part_of_an_import_cycle():
    graph = import_graph()
    assert ("attention_video.attncore.trained.training"
            in graph["attention_video.attncore.tiny.config"])  # the graph is read
    assert find_cycle(graph) is None


def test_no_attncore_module_is_a_command():
    """The training commands live in pipeline/commands/train_models.py: attncore parses no command
    line and runs nothing as __main__ (it writes no file unless a caller asks)."""
    commands = []
    for name, path in module_files().items():
        tree = ast.parse(path.read_text("utf-8"))
        parses = any(isinstance(n, ast.Import | ast.ImportFrom) and "argparse" in
                     ([a.name for a in n.names] if isinstance(n, ast.Import) else [n.module])
                     for n in ast.walk(tree))
        runs = any(isinstance(n, ast.Compare) and isinstance(n.left, ast.Name) and
                   n.left.id == "__name__" for n in ast.walk(tree))
        if parses or runs:
            commands.append(name)
    assert commands == []


def test_every_attncore_module_imports_first_in_a_fresh_interpreter():
    """Each module imported with no attncore module loaded before it: an import cycle
    shows up as an ImportError for whichever module it starts from."""
    names = sorted(module_files())
    code = (
        "import importlib, sys\n"
        f"names = {names!r}\n"
        "failed = []\n"
        "for name in names:\n"
        "    for loaded in [m for m in sys.modules if m.startswith('attention_video')]:\n"
        "        del sys.modules[loaded]\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "    except Exception as e:\n"
        "        failed.append(f'{name}: {type(e).__name__}: {e}')\n"
        "print('\\n'.join(failed) or 'ok')\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'manim', 'click'}))\n")
    assert python(code).splitlines() == ["ok", "[]"]


# ---------------------------------------------------------------- the store

def test_tenths_are_exact_and_widen_only_when_needed():
    small = np.array([[-12.8, 0.1], [12.7, -0.0]])
    t = tenths(small)
    assert t.dtype == np.int8 and t.tolist() == [[-128, 1], [127, 0]]
    assert_array_equal(from_tenths(t), small)
    wide = tenths(np.array([12.8, -300.0]))
    assert wide.dtype == np.int16 and wide.tolist() == [128, -3000]
    with pytest.raises(ValueError, match="off"):
        tenths(np.array([0.15]))


def test_metadata_reads_its_own_key_and_refuses_what_is_not_safetensors():
    data = pack({"x": np.zeros(2)}, {"b": 1, "a": [2]}, "attncore.test")
    assert metadata(data, "attncore.test") == {"a": [2], "b": 1}
    assert metadata(data, "another key") == {}
    for bad in (b"short", (10**6).to_bytes(8, "little") + b"{}", b"\x02" + bytes(7) + b"{]"):
        with pytest.raises(ValueError, match="not a safetensors file"):
            metadata(bad, "attncore.test")


# ---------------------------------------------------------------- provenance


def test_the_platform_round_trips_through_json_and_names_what_differs():
    here = Platform.current()
    assert here.numpy == np.__version__ and here.blas and here.cpu
    meta = json.loads(json.dumps(Provenance("python -m x", here).to_meta()))
    assert Provenance.from_meta(meta) == Provenance("python -m x", here)
    assert Provenance.from_meta({}) == Provenance() and Provenance().to_meta() == {}
    other = dataclasses.replace(here, numpy="1.26.0", blas=("openblas 0.3.20 Haswell",))
    assert other.differences(here) == [f"numpy 1.26.0 (here {here.numpy})",
                                       f"BLAS openblas 0.3.20 Haswell (here {', '.join(here.blas)})"]
    assert here.differences(here) == []


def test_bit_identical_retraining_is_expected_only_on_the_recorded_platform():
    here = Platform.current()
    assert bit_identical_here(Provenance(platform=here)) == (
        True, "trained on this platform (numpy, BLAS kernel, CPU): the same bytes expected")
    same, why = bit_identical_here(Provenance("python -m x"))
    assert not same and "records no platform" in why
    same, why = bit_identical_here(Provenance(platform=dataclasses.replace(here, cpu="arm64")))
    assert not same and f"CPU arm64 (here {here.cpu})" in why


def test_the_platform_is_numpys_own_blas_whatever_else_is_loaded():
    """SciPy (imported by Manim) loads an OpenBLAS of its own: it must not change the
    record, or a model trained in the render process would not match one trained in a test."""
    code = ("from attention_video.attncore.trained.provenance import Platform\n"
            "before = Platform.current()\n"
            "import scipy.linalg\n"
            "from threadpoolctl import threadpool_info\n"
            "print(len([i for i in threadpool_info() if i['user_api'] == 'blas']))\n"
            "print(Platform.current() == before)\n")
    blas_loaded, same = python(code).split()
    assert same == "True"
    if int(blas_loaded) < 2:
        pytest.skip("SciPy shares numpy's BLAS on this machine: there was no other to ignore")
