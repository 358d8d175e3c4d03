"""The project installs like a library: its wheel holds one top-level package,
attention_video, and the licence; installed into a fresh virtual environment, explain()
renders from a folder that holds a user's own scenes.py, pipeline.py, render.py and
fastmanim.py, and neither side shadows the other."""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
import textwrap
import zipfile
from pathlib import Path

import pytest

from tests.support.paths import ROOT

USER_MODULES = ("scenes", "pipeline", "render", "fastmanim", "attncore")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel built from a copy of the tree without an earlier build's leftovers
    (setuptools reuses build/lib, whose stale modules would hide a package the
    configuration misses)."""
    out, tree = tmp_path_factory.mktemp("wheel"), tmp_path_factory.mktemp("tree") / "src"
    shutil.copytree(ROOT, tree, symlinks=True, ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", "*.egg-info", "__pycache__", "media", ".pytest_cache"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps",
                    "--no-build-isolation", "-w", str(out), str(tree)],
                   check=True, capture_output=True, timeout=300)
    (found,) = out.glob("*.whl")
    return found


@pytest.mark.slow
def test_the_wheel_installs_one_top_level_name_and_carries_the_licence(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    top = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert top == {"attention_video"}
    licences = [n for n in names if ".dist-info/licenses/" in n]
    assert any(n.endswith("/LICENSE") and "revealjs" not in n for n in licences), licences
    assert any("revealjs" in n for n in licences)  # the vendored reveal.js keeps its own
    # the data the package reads at run time travels with it
    assert "attention_video/attncore/tiny/default.safetensors" in names
    assert "attention_video/pipeline/outputs/revealjs/reveal.js" in names
    assert {f"attention_video/pipeline/outputs/page/page.{kind}"  # the companion page's template
            for kind in ("html", "css", "js")} <= set(names)
    assert not any(n.startswith("attention_video/render") for n in names)  # render.py: a script


def linked_folders() -> dict[str, Path]:
    """The folders attention_video/ links to, by the name they install under."""
    return {p.name: p.resolve() for p in (ROOT / "attention_video").iterdir() if p.is_symlink()}


def test_the_wheel_carries_every_file_git_tracks_in_the_package(wheel):
    """The packages are found through attention_video/'s links and the data is given by
    kind: a folder or a kind of file the configuration misses would install without it
    (attncore.decoder once did, when the packages were listed one by one, and import
    failed). Every tracked file of the package and of the folders it links to ships."""
    linked = linked_folders()
    assert linked, "attention_video/ holds no links: run bash scripts/links.sh"
    if shutil.which("git") is None:
        pytest.skip("no git")
    tracked = subprocess.run(["git", "ls-files", "-z", "--", "attention_video",
                              *(str(f.relative_to(ROOT)) for f in linked.values())],
                             cwd=ROOT, capture_output=True, text=True)
    if tracked.returncode != 0:
        pytest.skip("not a git checkout")
    inside = {folder.relative_to(ROOT).as_posix(): name for name, folder in linked.items()}
    expected = set()
    for path in tracked.stdout.split("\0"):
        top, _, rest = path.partition("/")
        if top == "attention_video" and rest not in linked:  # the links themselves: folders
            expected.add(path)
        elif top in inside:
            expected.add(f"attention_video/{inside[top]}/{rest}")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert expected and not expected - names, sorted(expected - names)


@pytest.mark.slow
def test_explain_renders_beside_a_users_modules_of_the_same_names(wheel, tmp_path):
    """A fresh environment with only the wheel installed (the libraries it needs are
    borrowed from this one's site-packages, not its own editable install)."""
    env = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", str(env)], check=True, timeout=300)
    python = env / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                    str(wheel)], check=True, capture_output=True, timeout=300)
    fresh_site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True).stdout.strip()
    # A path line in a .pth adds that folder only; the .pth files inside it (this
    # environment's editable install of the project) are not run.
    Path(fresh_site, "borrowed.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")

    user = tmp_path / "notebook"
    user.mkdir()
    for name in USER_MODULES:
        (user / f"{name}.py").write_text(f"WHOSE = 'the user'  # a user's own {name}.py\n")
    code = textwrap.dedent("""
        import scenes, pipeline, render, fastmanim, attncore
        from attention_video import explain
        v = explain("The black cat drank the milk", chapters=[1], folder="media")
        import attention_video
        assert all(m.WHOSE == "the user" for m in (scenes, pipeline, render, fastmanim, attncore))
        print(v.video)
        print(attention_video.__file__)
    """)
    out = subprocess.run([str(python), "-c", code], cwd=user, capture_output=True, text=True,
                         timeout=600, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
                                           "ATTENTION_CACHE_DIR": str(tmp_path / "cache")})
    assert out.returncode == 0, out.stderr[-3000:]
    video, package = out.stdout.split()
    assert Path(user, video).stat().st_size > 10_000
    assert Path(package).is_relative_to(fresh_site)  # the wheel's copy, not this checkout
