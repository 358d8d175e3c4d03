"""A checkout without symbolic links (git clone -c core.symlinks=false, as on Windows)
writes each link of attention_video/ as a small file holding its target; lint-imports then
finds no layers below the package. scripts/links.sh, the step of setup.sh that repairs
the links, makes the clone whole: import-linter keeps every contract and every module
imports from the clone. (The clone is of the last commit, not of uncommitted edits.)"""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT = Path(sys.executable).parent / "lint-imports"


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True, timeout=120).stdout


def links(tree: Path) -> list[str]:
    """The paths git records as symbolic links (mode 120000)."""
    return [line.split("\t", 1)[1] for line in git("ls-files", "-s", cwd=tree).splitlines()
            if line.startswith("120000 ")]


def lint(tree: Path) -> subprocess.CompletedProcess:
    """lint-imports in `tree`, which it puts first on sys.path: it reads the tree's own
    attention_video, not this environment's install."""
    return subprocess.run([str(LINT), "--no-cache"], cwd=tree, capture_output=True, text=True,
                          timeout=120)


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    tree = tmp_path_factory.mktemp("clone") / "tree"
    subprocess.run(["git", "clone", "-q", "-c", "core.symlinks=false", str(ROOT), str(tree)],
                   check=True, capture_output=True, timeout=300)
    return tree


def test_setup_makes_the_links_of_a_checkout_without_them_again(clone):
    paths = links(clone)
    assert {f"attention_video/{name}" for name in ("attncore", "scenes")} <= set(paths)
    assert not any((clone / p).is_symlink() for p in paths)  # files holding their targets
    before = lint(clone)
    assert before.returncode != 0 and "Missing layer" in before.stdout + before.stderr

    repair = subprocess.run(["bash", "scripts/links.sh"], cwd=clone, capture_output=True,
                            text=True, timeout=120)
    assert repair.returncode == 0, repair.stderr
    for p in paths:
        assert (clone / p).is_symlink() and (clone / p).resolve().is_dir(), p
    assert git("status", "--porcelain", cwd=clone) == ""  # git sees the links it recorded
    again = subprocess.run(["bash", "scripts/links.sh"], cwd=clone, capture_output=True,
                           text=True, timeout=120)
    assert again.returncode == 0 and again.stdout == ""  # nothing left to repair

    after = lint(clone)
    assert after.returncode == 0, after.stdout + after.stderr
    assert "0 broken" in after.stdout


@pytest.mark.slow
def test_every_module_of_the_repaired_clone_imports_from_it(clone):
    subprocess.run(["bash", "scripts/links.sh"], cwd=clone, check=True, capture_output=True,
                   timeout=120)
    code = textwrap.dedent("""
        import importlib, pkgutil, sys
        from pathlib import Path
        import attention_video
        names = [m.name for m in pkgutil.walk_packages(attention_video.__path__,
                                                       "attention_video.")]
        for name in names:
            module = importlib.import_module(name)
            assert Path(module.__file__).is_relative_to(sys.argv[1]), module.__file__
        print(len(names))
    """)
    out = subprocess.run([sys.executable, "-c", code, str(clone)], cwd=clone,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert int(out.stdout) > 100  # the modules of the linked folders, not the package alone
