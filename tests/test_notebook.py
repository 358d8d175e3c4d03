"""The notebook API: explain() returns the video with its captions, trace and subtitles;
in Jupyter it shows as a <video> with a WebVTT track; examples/explain.ipynb runs."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

import attention_video
from attention_video import Explanation, explain

EXAMPLE = Path(__file__).parent.parent / "examples" / "explain.ipynb"


@pytest.fixture(scope="module")
def explained(tmp_path_factory) -> Explanation:
    folder = tmp_path_factory.mktemp("explain")
    return explain("The black cat drank the milk", chapters=[3], folder=folder)


def test_explain_returns_video_trace_and_subtitles(explained):
    e = explained
    assert e.video.is_file() and e.subtitles.suffix == ".srt" and e.captions.suffix == ".vtt"
    assert e.captions.read_text(encoding="utf-8").startswith("WEBVTT")
    assert [t.text for t in e.trace.key_tokens] == "The black cat drank the milk".split()
    assert e.cues and e.duration > 0 and e.settings.chapters == ("factor",)


def test_file_name_is_unique_to_the_video(explained):
    import hashlib

    digest = hashlib.sha256(explained.video.read_bytes()).hexdigest()[:10]
    assert explained.video.name == f"the-black-cat-drank-the-milk-{digest}.mp4"
    again = explain("The black cat drank the milk", chapters=[3], folder=explained.video.parent)
    assert again.video == explained.video  # the same video keeps its name (from the cache)


def test_html_embeds_the_video_and_its_captions(explained):
    page = explained.html(embed=True)
    assert page.startswith("<video") and 'kind="captions"' in page and 'srclang="en"' in page
    video = page.split('src="data:video/mp4;base64,', 1)[1].split('"', 1)[0]
    assert base64.b64decode(video) == explained.video.read_bytes()
    assert "data:text/vtt;base64," in page


def test_html_links_files_when_not_embedded(explained, monkeypatch):
    monkeypatch.chdir(explained.video.parent)
    page = explained.html(embed=False)
    assert f'src="{explained.video.name}"' in page and f'src="{explained.captions.name}"' in page


def test_embedded_automatically_in_colab(explained, monkeypatch):
    import sys
    import types

    assert "base64" not in explained._repr_html_()
    monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    assert "data:video/mp4;base64," in explained._repr_html_()


@pytest.mark.slow
def test_storyboard_of_the_same_settings(explained):
    board = explained.storyboard()
    assert board.png == explained.video.with_name(explained.video.stem + "-storyboard.png")
    assert board.pdf.is_file() and len(board.stills) == len(explained.cues)
    assert board._repr_png_().startswith(b"\x89PNG")


def test_one_documented_entry_point():
    assert attention_video.__all__ == ["Explanation", "explain"] and explain.__doc__


@pytest.mark.slow
def test_example_notebook_runs_and_holds_the_video(tmp_path):
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(EXAMPLE, as_version=4)
    NotebookClient(nb, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    shown = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs
             if o.output_type == "execute_result"]
    page = shown[0]["data"]["text/html"]
    assert "<video" in page and "data:video/mp4;base64," in page and "text/vtt" in page


def test_a_bad_cache_limit_stops_explain_before_it_renders(tmp_path, monkeypatch):
    from attncore.settings import SettingsError

    monkeypatch.setenv("ATTENTION_CACHE_LIMIT", "big")
    with pytest.raises(SettingsError, match="ATTENTION_CACHE_LIMIT: 'big' is not a size"):
        explain("The black cat drank the milk", chapters=[3], folder=tmp_path)
    assert not list(tmp_path.glob("*.mp4"))


@pytest.mark.slow
def test_explain_keeps_the_cache_under_its_limit(tmp_path, monkeypatch):
    """As the command does: an old entry over the limit goes once the video is made."""
    import os

    cache = tmp_path / "cache"
    old = cache / "text-objects" / "zz" / "old.pkl"
    old.parent.mkdir(parents=True)
    old.write_bytes(b"x" * 3_000_000)
    os.utime(old, (1e9, 1e9))
    monkeypatch.setenv("ATTENTION_CACHE_DIR", str(cache))
    monkeypatch.setenv("ATTENTION_CACHE_LIMIT", "2M")
    said: list[str] = []
    v = explain("The black cat drank the milk", chapters=[3], folder=tmp_path / "out",
                progress=said.append)
    assert v.video.exists() and not old.exists()
    assert any(line.startswith("cache:     removed the 1 least recently used entry") for line in said), said
