"""The notebook API: explain() returns the video with its captions, trace and subtitles;
in Jupyter it shows as a <video> with a WebVTT track; examples/explain.ipynb runs."""

from __future__ import annotations

import base64

import attention_video
import pytest
from attention_video import Explanation, explain

from tests.support.paths import ROOT

EXAMPLE = ROOT / "examples" / "explain.ipynb"


pytestmark = pytest.mark.xdist_group("notebook")  # one worker renders the module's video


@pytest.fixture(scope="module")
def explained(tmp_path_factory) -> Explanation:
    folder = tmp_path_factory.mktemp("explain")
    return explain("The black cat drank the milk", chapters=[3], folder=folder, captions="soft")


@pytest.mark.slow
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
    again = explain("The black cat drank the milk", chapters=[3], folder=explained.video.parent,
                    captions="soft")
    assert again.video == explained.video  # the same video keeps its name (from the cache)


def test_html_embeds_the_video_and_its_captions(explained):
    page = explained.html(embed=True)
    assert page.startswith("<video") and 'kind="captions"' in page and 'srclang="en"' in page
    assert 'label="English"' in page  # the catalogue's own name for its language
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


@pytest.mark.slow
def test_explain_makes_the_gif_and_the_deck_beside_the_video(explained):
    """slides= and formats= make what --slides and --format make (app.video_extras)."""
    v = explain("The black cat drank the milk", chapters=[3], folder=explained.video.parent,
                formats=["gif"], slides=True)
    for suffix in (".gif", ".html", ".pptx"):
        assert v.video.with_suffix(suffix).stat().st_size > 1000


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
    assert "<video" in page and "data:video/mp4;base64," in page
    assert "<track" not in page  # its captions are burned in: no track to show them twice


def test_a_bad_cache_limit_stops_explain_before_it_renders(tmp_path, monkeypatch):
    from attention_video.attncore.settings import SettingsError

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


@pytest.mark.parametrize("sentence, kwargs, error, words", [
    (None, dict(chapters=[1]), TypeError, "explain(): sentence must be a str"),
    ("The cat sat", dict(chapters="1"), TypeError,
     "explain(): chapters must be a list of chapter numbers or slugs, such as [1, 3] or "
     "['dot'], not the string '1'"),
    ("The cat sat", dict(chapters=[1.5]), TypeError, "explain(): chapters holds 1.5"),
    ("The cat sat", dict(chapters=[True]), TypeError, "explain(): chapters holds True"),
    ("The cat sat", dict(chapters=3), TypeError, "explain(): chapters must be a list"),
    ("The cat sat", dict(chapters=[99]), ValueError, "chapters: 99 is not a chapter"),
    ("The cat sat", dict(quality=480), TypeError, "explain(): quality must be one of"),
    ("The cat sat", dict(quality="x"), ValueError, "quality: 'x' is not allowed"),
    ("The cat sat", dict(jobs=0), ValueError, "explain(): jobs must be 1 or more"),
    ("The cat sat", dict(jobs="2"), TypeError, "explain(): jobs must be a number"),
    ("The cat sat", dict(embed="yes"), TypeError, "explain(): embed must be True, False or None"),
    ("The cat sat", dict(progress="print"), TypeError, "explain(): progress must be a function"),
    ("The cat sat", dict(folder=3), TypeError, "explain(): folder must be a folder path"),
    # The command's modes, refused with the command's own line (pipeline.commands.modes)
    ("The cat sat", dict(storyboard=True, slides=True), ValueError,
     "explain(): --storyboard makes stills instead of the video, and --slides needs the video"),
    ("The cat sat", dict(storyboard=True, formats=["gif"]), ValueError,
     "explain(): --storyboard makes stills instead of the video, and --format needs the video"),
    ("The cat sat", dict(storyboard=True), ValueError,
     "explain() makes the video: --storyboard is the command's (call .storyboard() on its"),
    ("The cat sat", dict(dry_run=True), ValueError,
     "explain() makes the video: --dry-run is the command's"),
    ("The cat sat", dict(formats=["mkv"]), ValueError, "explain(): formats: 'mkv' is not a format"),
    ("The cat sat", dict(formats="gif"), TypeError, "explain(): formats must be a list"),
    ("The cat sat", dict(slides="yes"), TypeError, "explain(): slides must be True or False"),
    ("The cat sat", dict(colour="red"), ValueError, "colour: unknown setting"),
])
def test_explain_checks_its_arguments_before_any_work(tmp_path, monkeypatch, sentence,
                                                      kwargs, error, words):
    """Before, explain(None, chapters=[1]) rendered chapter 1 of the default sentence and
    then raised "normalize() argument 2 must be str, not None"; chapters="1" said "'1' is
    not a chapter"."""
    from attention_video import api

    def no_work(*args, **kw):
        raise AssertionError("explain() started work before checking its arguments")

    monkeypatch.setattr(api, "make_trace", no_work)
    monkeypatch.setattr(api, "render_video", no_work)
    monkeypatch.chdir(tmp_path)
    kwargs.setdefault("folder", tmp_path / "media")
    with pytest.raises(error) as info:
        explain(sentence, **kwargs)
    assert words in str(info.value)
    assert not (tmp_path / "media").exists()


def test_explain_refuses_a_folder_that_is_a_file(tmp_path):
    (tmp_path / "media").write_text("a file")
    with pytest.raises(ValueError, match="explain\\(\\): folder .* is a file, not a folder"):
        explain("The cat sat", chapters=[1], folder=tmp_path / "media")


def test_the_top_level_name_gives_explain_on_first_use_and_nothing_else():
    from attention_video import api  # noqa: PLC0415

    assert attention_video.explain is api.explain
    assert attention_video.Explanation is api.Explanation
    with pytest.raises(AttributeError, match="no attribute 'render'"):
        attention_video.render  # noqa: B018
