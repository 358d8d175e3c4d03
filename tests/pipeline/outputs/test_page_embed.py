"""The page's poster frame and --page-embed, the page with its video inside (issue 41).

The poster is the video's first captioned picture, written beside the page as PNG and
named by the player's `poster`; with --page-embed the video and the poster are inside the
page as data URIs, so the one file plays alone (copied to another folder, nothing beside
it), and a video too large to travel that way is refused in one line.
"""

from __future__ import annotations

import base64
import io
import json
import shutil

import numpy as np
import pytest
from attention_video.pipeline.commands.app import (
    Request,
    make_settings,
    make_trace,
    planned_outputs,
)
from attention_video.pipeline.commands.modes import refused
from attention_video.pipeline.outputs import page as page_module
from attention_video.pipeline.outputs.files import OutputError, poster_path
from attention_video.pipeline.outputs.page import poster_seconds, write_page
from attention_video.pipeline.outputs.video import frame_at
from attention_video.pipeline.records import ChapterResult
from PIL import Image

from tests.pipeline.outputs.test_page import blank_video, build, open_page

pytestmark = pytest.mark.xdist_group("page")  # one worker: its one browser (tests/conftest.py)


def data_of(tab) -> dict:
    return json.loads(tab.text_content("#page-data"))


def test_the_poster_is_the_first_captioned_picture_once_complete():
    chapters = [ChapterResult("input", 4.0, [], holds=[]),
                 ChapterResult("linear", 5.0, [(1.0, 3.0, "a"), (3.5, 4.5, "b")], holds=[2.2, 4.0])]
    assert poster_seconds(chapters) == 4.0 + 2.2  # the second chapter's first caption, held
    chapters[1].holds = []
    assert poster_seconds(chapters) == 4.0 + 1.0  # no hold recorded: the caption's start


def test_the_page_shows_its_poster_frame_written_beside_it(browser, tmp_path):
    page, _, chapters, _ = build(tmp_path)
    still = poster_path(page)
    assert still == tmp_path / "video.poster.png" and still.exists()
    want = frame_at(tmp_path / "video.mp4", poster_seconds(chapters))
    assert np.array_equal(np.asarray(Image.open(still).convert("RGB")), want)
    tab = open_page(browser, page)
    assert data_of(tab)["poster"] == "video.poster.png"
    assert tab.get_attribute("#video", "poster") == "video.poster.png"
    loaded = tab.evaluate("""() => new Promise(done => { const i = new Image();
        i.onload = () => done(i.naturalWidth); i.onerror = () => done(0);
        i.src = document.getElementById('video').poster; })""")
    assert loaded == want.shape[1]  # the page's own policy lets the poster load
    tab.context.close()


def test_page_embed_plays_alone_with_its_video_and_poster_inside(browser, tmp_path):
    made = tmp_path / "made"
    page, _, chapters, settings = build(made)
    video = made / "video.mp4"
    embedded = write_page(make_trace(settings, lambda m: None), chapters, video, settings,
                          dest=made / "one.page.html", embed=True)
    assert not poster_path(embedded).exists()  # the poster is inside, not beside it
    alone = tmp_path / "elsewhere" / "one.page.html"  # nothing beside it
    alone.parent.mkdir()
    shutil.copy(embedded, alone)
    html = alone.read_text(encoding="utf-8")
    assert 'src="data:video/mp4;base64,' in html and 'poster="data:image/png;base64,' in html
    assert alone.stat().st_size > video.stat().st_size  # the video's every byte, in base64
    tab = open_page(browser, alone)
    tab.wait_for_function("document.getElementById('video').readyState >= 1")
    duration = tab.evaluate("document.getElementById('video').duration")
    assert abs(duration - sum(r.duration for r in chapters)) < 1.0
    assert all(u.startswith("file://") for u in tab.requests) and tab.errors == []
    poster = tab.get_attribute("#video", "poster")
    png = Image.open(io.BytesIO(base64.b64decode(poster.split(",", 1)[1])))
    assert png.size == (64, 36)
    tab.context.close()


def test_page_embed_refuses_a_video_too_large_to_travel_in_one_line(tmp_path, monkeypatch):
    page, _, chapters, settings = build(tmp_path)
    monkeypatch.setattr(page_module, "EMBED_LIMIT", 1000)
    with pytest.raises(OutputError) as e:
        write_page(make_trace(settings, lambda m: None), chapters, tmp_path / "video.mp4",
                   settings, dest=tmp_path / "big.page.html", embed=True)
    assert "\n" not in str(e.value) and "--page" in str(e.value) and "MB" in str(e.value)
    assert not (tmp_path / "big.page.html").exists()


def test_page_embed_is_an_output_row_refused_with_page_and_without_a_video(tmp_path):
    assert "--page-embed" in refused({"page_embed": True, "page": True})
    assert "\n" not in refused({"page_embed": True, "page": True})
    assert "--page-embed" in refused({"storyboard": True, "page_embed": True})
    assert "--page-embed" in refused({"batch": "m.toml", "page_embed": True})
    settings = make_settings(None, "a b", None, {"output": str(tmp_path / "cat.mp4")})
    files, _ = planned_outputs(settings, Request(page_embed=True, slides=True))
    assert files["the companion page"] == tmp_path / "cat.page.html"
    files, _ = planned_outputs(settings, Request(page=True))
    assert files["its poster frame"] == tmp_path / "cat.poster.png"


def test_a_video_without_captions_gets_its_first_frame_as_poster(tmp_path):
    video = blank_video(tmp_path / "v.mp4", 2.0)
    assert poster_seconds([ChapterResult("input", 2.0, [])]) == 0.0
    assert Image.open(io.BytesIO(page_module.poster_png(video, 0.0))).size == (64, 36)
