"""attncore.trained, what the two trained models share (that the tiny model and the
translation model never import each other, nor any module one that imports it back, is
import-linter's: tests/tree/test_layers.py); each attncore module imports first in a fresh
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

from tests.support.paths import ROOT

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


@pytest.mark.slow
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
