"""pipeline.cache.sources (the files a module runs, for the cache key) and the shape of the
pipeline package. Which package may import which is import-linter's (tests/tree/test_layers.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from attention_video.pipeline.cache import sources


def write(root: Path, relative: str, text: str = "") -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def names(files: list[Path], root: Path) -> list[str]:
    return [p.relative_to(root).as_posix() for p in files]


def test_source_files_follow_every_kind_of_import_and_skip_libraries(tmp_path):
    write(tmp_path, "scenes/__init__.py", "from attention_video.attncore.chapters import chapter\n")
    write(tmp_path, "scenes/ch1.py", "import numpy as np\nimport attention_video.scenes.a\n"
                                    "from attention_video.scenes.b import helper\nfrom . import c\n"
                                    "def later():\n    from .sub import d\n")
    write(tmp_path, "scenes/a.py", "from manim import *\n")
    write(tmp_path, "scenes/b.py", "from attention_video.attncore import settings\n")
    write(tmp_path, "scenes/c.py")
    write(tmp_path, "scenes/sub/__init__.py", "from .e import f\n")
    write(tmp_path, "scenes/sub/d.py", "from .. import a\n")
    write(tmp_path, "scenes/sub/e.py")
    write(tmp_path, "scenes/unused.py")
    write(tmp_path, "attncore/__init__.py")
    write(tmp_path, "attncore/chapters.py")
    write(tmp_path, "attncore/settings.py", "import tomllib\n")
    files = sources.source_files(["attention_video.scenes.ch1"], tmp_path)
    assert names(files, tmp_path) == [
        "attncore/__init__.py", "attncore/chapters.py", "attncore/settings.py",
        "scenes/__init__.py", "scenes/a.py", "scenes/b.py", "scenes/c.py", "scenes/ch1.py",
        "scenes/sub/__init__.py", "scenes/sub/d.py", "scenes/sub/e.py",
    ]


def test_module_file_knows_only_the_project_packages(tmp_path):
    write(tmp_path, "scenes/widgets.py")
    write(tmp_path, "pipeline/__init__.py")
    write(tmp_path, "attention_video/api.py")
    assert (sources.module_file("attention_video.scenes.widgets", tmp_path)
            == tmp_path / "scenes/widgets.py")
    assert sources.module_file("attention_video.pipeline", tmp_path) == tmp_path / "pipeline/__init__.py"
    assert sources.module_file("attention_video.api", tmp_path) == tmp_path / "attention_video/api.py"
    assert sources.module_file("scenes.widgets", tmp_path) is None  # a user's module, not ours
    assert sources.module_file("attention_video.scenes.widgets.Theme", tmp_path) is None  # a name
    assert sources.module_file("numpy", tmp_path) is None


def test_the_renderer_and_each_chapter_are_in_its_source_files():
    from attention_video.attncore.chapters import CHAPTERS

    root = sources.PROJECT_ROOT
    for c in CHAPTERS:
        files = names(sources.source_files([c.module, "attention_video.pipeline.run.chapter"], root), root)
        assert c.module.removeprefix("attention_video.").replace(".", "/") + ".py" in files
        assert {"pipeline/run/chapter.py", "attncore/chapters.py"} <= set(files)


def test_the_renderer_does_not_set_scene_module_globals():
    chapter_py = (sources.PROJECT_ROOT / "pipeline" / "run" / "chapter.py").read_text(encoding="utf-8")
    assert "TEXT_CACHE" not in chapter_py  # the renderer asks widgets to use a folder
    assert "use_speech_cache" not in chapter_py  # it hands the scene its narrator
    voice_py = (sources.PROJECT_ROOT / "scenes" / "voice.py").read_text(encoding="utf-8")
    assert "global " not in voice_py


def test_the_pipeline_reads_by_role():
    """Every pipeline module lives in the package of its role: the commands, running
    chapters, the cache, the outputs (the package __init__ files say which)."""
    root = sources.PROJECT_ROOT / "pipeline"
    flat = sorted(p.name for p in root.glob("*.py") if p.name != "__init__.py")
    assert flat == ["records.py"]  # what the roles hand each other, below all of them
    assert {p.name for p in root.iterdir() if p.is_dir() and p.name != "__pycache__"} == {
        "commands", "run", "cache", "outputs"}


# ---- the scans kept in the cache folder -------------------------------------------------

def fresh_process(monkeypatch) -> None:
    """As a new command sees the scans: nothing in memory, only what the folder keeps."""
    sources._kept_scans.cache_clear()
    monkeypatch.setattr(sources, "_new_scans", {})


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """A small project (ch1 imports a, which imports b; ch1 declares a data file) and a
    cache folder of its own; returns what a new command finds ch1 runs, by path."""
    monkeypatch.setenv("ATTENTION_CACHE_DIR", str(tmp_path / "cache"))
    src = tmp_path / "src"
    write(src, "scenes/__init__.py")
    write(src, "scenes/ch1.py", "from attention_video.scenes import a\n"
                                'CACHE_DATA = ("data/*.po",)\n')
    write(src, "scenes/a.py", "import attention_video.scenes.b\n")
    write(src, "scenes/b.py")
    write(src, "data/en.po")

    def runs() -> list[str]:
        fresh_process(monkeypatch)
        return names(sources.source_files(["attention_video.scenes.ch1"], src), src)

    runs.src, runs.kept = src, tmp_path / "cache" / sources.SCANS
    return runs


def test_a_second_command_reads_the_kept_scans_instead_of_parsing(tree, monkeypatch):
    first = tree()
    assert tree.kept.is_file()

    def no_parsing(*args, **kwargs):
        raise AssertionError("parsed again")

    monkeypatch.setattr(sources.ast, "parse", no_parsing)
    assert tree() == first == ["data/en.po", "scenes/__init__.py", "scenes/a.py", "scenes/b.py",
                               "scenes/ch1.py"]


def test_a_changed_file_is_parsed_again(tree):
    tree()
    write(tree.src, "scenes/a.py", "import attention_video.scenes.c\n")
    write(tree.src, "scenes/c.py")
    assert tree() == ["data/en.po", "scenes/__init__.py", "scenes/a.py", "scenes/c.py",
                      "scenes/ch1.py"]


def test_an_unreadable_or_wrong_kept_scan_is_not_used(tree):
    expected = tree()
    records = json.loads(tree.kept.read_text())
    for bad in ("not json", "[1, 2]", json.dumps(dict.fromkeys(records, [1, 2]))):
        tree.kept.write_text(bad)
        assert tree() == expected
