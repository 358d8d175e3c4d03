"""The layers of the tree, as import-linter checks them (pyproject.toml [tool.importlinter]):
the whole tree passes, and each kind of contract fails on a tree with one bad import
(at the top of a module or inside a function)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.support.paths import ROOT

LINT = Path(sys.executable).parent / "lint-imports"
FOLDERS = tuple(p.name for p in (ROOT / "attention_video").iterdir() if p.is_symlink())


def contracts() -> list[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return [c["name"] for c in config["tool"]["importlinter"]["contracts"]]


def lint(folder: Path) -> subprocess.CompletedProcess:
    """lint-imports run in `folder`; its report's lines unwrapped (it wraps long names)."""
    out = subprocess.run([str(LINT), "--no-cache"], cwd=folder, capture_output=True,
                         text=True, timeout=120)
    out.stdout = " ".join(out.stdout.split())
    return out


def test_the_tree_keeps_every_contract():
    out = lint(ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
    for name in contracts():
        assert f"{name} KEPT" in out.stdout
    assert "ignore_imports" not in (ROOT / "pyproject.toml").read_text(encoding="utf-8")


@pytest.fixture
def copy(tmp_path) -> Path:
    """The source tree laid out as installed (attention_video/attncore/…, no links), with
    the project's contracts."""
    dest = tmp_path / "attention_video"
    shutil.copytree(ROOT / "attention_video", dest, symlinks=True,
                    ignore=shutil.ignore_patterns("__pycache__", *FOLDERS))
    for folder in FOLDERS:
        shutil.copytree(ROOT / folder, dest / folder,
                        ignore=shutil.ignore_patterns("__pycache__", "*.safetensors", "revealjs"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    return tmp_path


@pytest.mark.slow
@pytest.mark.parametrize("module, bad_import, broken", [
    ("pipeline/cache/keys.py", "from attention_video.pipeline.run import render",
     "The tree is layered"),
    ("pipeline/cache/keys.py", "def later():\n    from attention_video.pipeline.run import render",
     "The tree is layered"),
    ("fastmanim/encoder.py", "from attention_video.pipeline.outputs.video import join",
     "The tree is layered"),
    ("pipeline/commands/app.py", "from attention_video.pipeline.commands import cli",
     "The command line is a layer nothing else depends on"),
    ("attncore/tiny/model.py", "from attention_video.attncore.translate import corpus",
     "Weight sources never import each other"),
    ("attncore/pretrained/run.py", "from attention_video.attncore.tiny import model",
     "Weight sources never import each other"),
    ("scenes/chapters/input.py", "from attention_video.scenes.chapters import dot",
     "No chapter imports another chapter"),
    ("pipeline/cache/paths.py", "from attention_video.pipeline.cache import store",
     "No import cycles between sibling modules"),
    ("attncore/geometry.py", "import manim", "The core is pure numpy: no Manim, click or file formats"),
])
def test_a_contract_catches_a_bad_import(copy, module, bad_import, broken):
    path = copy / "attention_video" / module
    path.write_text(path.read_text(encoding="utf-8") + f"\n\n{bad_import}  # noqa\n",
                    encoding="utf-8")
    out = lint(copy)
    assert out.returncode == 1, out.stdout + out.stderr
    assert f"{broken} BROKEN" in out.stdout
    assert sum(f"{name} BROKEN" in out.stdout for name in contracts()) >= 1
