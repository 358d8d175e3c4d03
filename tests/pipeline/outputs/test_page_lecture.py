"""The companion page in a lecture hall (issue 41), in headless Chromium from file://.

On a projector (1280×720, and the same at 150% zoom) the video stays whole on screen while
"show me" seeks and a minute plays, in the page and in its presenter view; a keyboard
reaches the first grid in three presses and Escape goes back to the cell; the pointer
previews without losing the open cell; alone, the page names the file it plays and the
command that makes it; printed, it is a handout with every caption; its captions are a
track of its own; another followed word is said, with the command; a long sum says how
many terms it leaves out.

150% zoom is emulated as the browser zooms: the CSS viewport is the screen's divided by
1.5 (853×480 CSS px) and each CSS px is 1.5 device pixels (device_scale_factor), so media
queries, rem and vh see what a zoomed page sees.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess

import pytest
from attention_video.attncore.chapters import SLUGS
from attention_video.attncore.settings import FIELD_NAMES
from attention_video.pipeline.commands import app
from attention_video.pipeline.commands.cli import cli
from attention_video.pipeline.outputs.page import page_cues, remake
from attention_video.pipeline.records import ChapterResult
from attention_video.scenes.catalogue import Translate
from attention_video.scenes.page_words import page_words

from tests.pipeline.outputs.test_page import (
    build,
    expected_operands,
    open_page,
    shown_numbers,
)

pytestmark = pytest.mark.xdist_group("page")  # one worker: its one browser (tests/conftest.py)

SCREENS = {"1280x720": ({"width": 1280, "height": 720}, 1),
           "1280x720 at 150%": ({"width": 853, "height": 480}, 1.5)}
PLAYED = 60.0  # seconds of video played after "show me"


def long_chapters() -> list[ChapterResult]:
    """Chapters of 8 s (two cues each): a video long enough to play a minute past a seek."""
    return [ChapterResult(slug, 8.0, [(0.0, 3.5, f"{slug}: the first caption"),
                                      (4.0, 7.5, f"{slug}: the second caption")])
            for slug in SLUGS]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return build(tmp_path_factory.mktemp("lecture"), long_chapters())


def on_screen(tab, name: str) -> tuple[float, float, float, float, float, float]:
    return tab.eval_on_selector(name, """e => { const r = e.getBoundingClientRect();
        return [r.top, r.left, r.bottom, r.right, innerHeight, innerWidth]; }""")


def assert_whole(rect, when):
    top, left, bottom, right, height, width = rect
    assert top >= -0.5 and left >= -0.5 and bottom <= height + 0.5 and right <= width + 0.5, (when, rect)
    assert bottom - top > 100, (when, rect)  # a video, not a sliver


# ---- the video stays on screen ------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("view", ["page", "presenter"])
@pytest.mark.parametrize("screen", list(SCREENS))
def test_show_me_and_a_minute_of_playing_keep_the_whole_video_on_screen(browser, tiny, screen, view):
    page, trace, _, _ = tiny
    viewport, scale = SCREENS[screen]
    tab = open_page(browser, page, device_scale_factor=scale)
    tab.set_viewport_size(viewport)
    tab.wait_for_function("document.getElementById('video').readyState >= 1")
    if view == "presenter":
        tab.click("#presenter")
        assert tab.evaluate("document.body.classList.contains('presenter')")
    # a lecturer down in the grids (Q: made early on, a minute of video after it)
    tab.click(f'td[data-key="Q"][data-i="{trace["focus"]}"][data-j="0"]')
    assert_whole(on_screen(tab, "#video"), "after opening a cell")
    tab.click("#show-me")
    start = tab.evaluate("document.getElementById('video').currentTime")
    assert_whole(on_screen(tab, "#video"), "after show me")
    # Play a minute of video at 16× speed, the video's box read at every timeupdate (in the
    # page) and at every poll (here), and the caption list followed along the way.
    tab.evaluate("""() => {
        const v = document.getElementById('video');
        window.boxes = [];
        v.addEventListener('timeupdate', () => { const r = v.getBoundingClientRect();
            window.boxes.push([r.top, r.left, r.bottom, r.right, innerHeight, innerWidth]); });
        v.muted = true; v.playbackRate = 16; return v.play(); }""")
    captions = set()
    for _ in range(200):
        tab.wait_for_timeout(100)
        assert_whole(on_screen(tab, "#video"), "while playing")
        captions.add(tab.eval_on_selector_all("#cues li", "els => els.findIndex(e => e.getAttribute('aria-current') === 'true')"))
        if tab.evaluate("document.getElementById('video').currentTime") >= start + PLAYED:
            break
    played = tab.evaluate("document.getElementById('video').currentTime") - start
    assert played >= PLAYED, played
    boxes = tab.evaluate("window.boxes")
    assert len(boxes) >= 10  # timeupdate comes about 4 times a second
    for rect in boxes:
        assert_whole(rect, "at a timeupdate")
    assert len(captions) >= 10  # the list followed the video: it scrolled, the video did not
    assert tab.errors == []
    tab.context.close()


@pytest.mark.slow
@pytest.mark.parametrize("view", ["page", "presenter"])
def test_clicking_captions_down_the_list_moves_the_list_not_the_video(browser, tiny, view):
    page, *_ = tiny
    tab = open_page(browser, page, device_scale_factor=1.5)
    tab.set_viewport_size(SCREENS["1280x720 at 150%"][0])
    if view == "presenter":
        tab.keyboard.press("p")
    n = tab.eval_on_selector_all("#cues li", "els => els.length")
    for k in range(0, n, 3):  # each one scrolled into the list's view by the click itself
        tab.click(f'#cues button[data-cue="{k}"]')
        assert tab.get_attribute(f"#cues li:nth-child({k + 1})", "aria-current") == "true"
        assert_whole(on_screen(tab, "#video"), f"after caption {k}")
    tab.context.close()


def test_full_screen_is_the_pages_in_its_presenter_view(browser, tiny):
    page, *_ = tiny
    tab = open_page(browser, page)
    if not tab.evaluate("document.fullscreenEnabled"):
        pytest.skip("this Chromium has no full screen")
    tab.click("#fullscreen")
    tab.wait_for_function("document.fullscreenElement !== null")
    assert tab.evaluate("document.fullscreenElement === document.documentElement")
    assert tab.evaluate("document.body.classList.contains('presenter')")
    tab.context.close()


# ---- keyboard and pointer -----------------------------------------------------------------
def test_tab_reaches_the_first_grid_in_three_presses(browser, tiny):
    page, *_ = tiny
    tab = open_page(browser, page)
    presses = 0
    while tab.evaluate("document.activeElement.getAttribute('role')") != "gridcell" and presses < 3:
        tab.keyboard.press("Tab")
        presses += 1
        if tab.evaluate("document.activeElement.id") == "skip":  # the skip link: follow it
            assert tab.is_visible("#skip")  # seen when focused
            tab.keyboard.press("Enter")
    assert tab.evaluate("document.activeElement.getAttribute('role')") == "gridcell", presses
    assert tab.evaluate("document.activeElement.dataset.key") == "X"
    tab.context.close()


@pytest.mark.slow
@pytest.mark.parametrize("how", ["click", "Enter"])
def test_escape_goes_back_to_the_cell_that_opened(browser, tiny, how):
    page, *_ = tiny
    tab = open_page(browser, page)
    cell = 'td[data-key="scores"][data-i="2"][data-j="3"]'
    if how == "click":
        tab.click(cell)
        tab.click("#show-me")
    else:
        tab.focus(cell)
        tab.keyboard.press("Enter")  # opens it and moves to its "show me"
        assert tab.evaluate("document.activeElement.id") == "show-me"
    tab.keyboard.press("Escape")
    assert tab.evaluate("[document.activeElement.dataset.key, document.activeElement.dataset.i, "
                        "document.activeElement.dataset.j]") == ["scores", "2", "3"]
    assert tab.get_attribute("#detail-body .cell", "data-key") == "scores"  # still open
    tab.keyboard.press("Escape")  # on the open cell: closes it
    assert tab.query_selector("#detail-body .cell") is None
    assert tab.query_selector("#grids td.open") is None
    tab.context.close()


@pytest.mark.slow
def test_hover_previews_and_never_loses_the_open_cell(browser, tiny):
    page, trace, *_ = tiny
    tab = open_page(browser, page)
    opened = f'td[data-key="Z"][data-i="{trace["focus"]}"][data-j="1"]'
    tab.click(opened)
    want = tab.get_attribute("#show-me", "data-cue")
    button = tab.eval_on_selector("#show-me", "e => { const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; }")
    tab.hover('td[data-key="scores"][data-i="1"][data-j="1"]')  # a preview, not an opening
    preview = tab.eval_on_selector("#detail-body .cell", "e => [e.dataset.key, e.classList.contains('preview')]")
    assert preview == ["scores", True]
    assert tab.eval_on_selector_all("#grids td.open", "els => els.map(e => e.dataset.key)") == ["Z"]
    tab.mouse.move(*button, steps=25)  # across other cells on the way to "show me"
    assert tab.eval_on_selector("#detail-body .cell", "e => [e.dataset.key, e.dataset.j, e.classList.contains('preview')]") == \
        ["Z", "1", False]
    tab.mouse.click(*button)
    cue = int(want)
    t = tab.evaluate("document.getElementById('video').currentTime")
    cues = page_cues(long_chapters())
    assert cues[cue].start <= t < cues[cue].end and cues[cue].chapter == "weighted_sum"
    tab.context.close()


@pytest.mark.slow
@pytest.mark.parametrize("theme", ["dark", "light"])
def test_axe_finds_no_violation_in_the_presenter_view(browser, tiny, theme):
    axe = pytest.importorskip("axe_playwright_python.sync_playwright")
    page, *_ = tiny
    tab = open_page(browser, page, bypass_csp=True)
    tab.click(f'[data-theme-choice="{theme}"]')
    tab.keyboard.press("p")
    tab.click('td[data-key="scores"][data-i="5"][data-j="3"]')
    tab.select_option("#word", "1")  # the word note too
    results = axe.Axe().run(tab)
    assert results.violations_count == 0, results.generate_report()
    tab.context.close()


# ---- a page that travels ------------------------------------------------------------------
@pytest.mark.slow
def test_alone_the_page_names_its_video_and_the_command_that_makes_it(browser, tmp_path):
    page, _, _, settings = build(tmp_path, weights="random", seed=3)
    tab = open_page(browser, page)
    assert tab.is_hidden("#alone")
    tab.context.close()
    (tmp_path / "video.mp4").unlink()
    tab = open_page(browser, page)
    tab.wait_for_selector("#alone", state="visible")
    said = tab.inner_text("#alone")
    assert "video.mp4" in said
    command = tab.inner_text("#alone code")
    assert shlex.split(command) == remake(settings, "video.mp4")
    assert tab.is_hidden("#video")  # no empty player under the line
    tab.context.close()
    axe = pytest.importorskip("axe_playwright_python.sync_playwright")
    tab = open_page(browser, page, bypass_csp=True)
    tab.wait_for_selector("#alone", state="visible")
    results = axe.Axe().run(tab)
    assert results.violations_count == 0, results.generate_report()
    tab.context.close()


def test_the_remake_command_makes_the_same_settings(tmp_path):
    flags = {"weights": "random", "seed": 3, "d_model": 6, "causal": True, "quality": "l",
             "theme": "light", "captions": "soft"}
    settings = app.make_settings(None, "a cat's milk", None, dict(flags))
    args = remake(settings, "my%20video.mp4")
    assert args[:3] == ["python", "render.py", "a cat's milk"] and args[-1] == "--page"
    params = cli.make_context("render.py", args[2:]).params
    sentence, chapters = params["sentence"], params["chapters"]
    assert params["page"] and params["output"] == "my video.mp4"
    flags = {k: v for k, v in params.items() if k in FIELD_NAMES and k not in ("sentence", "chapters")}
    again = app.make_settings(None, sentence, chapters, flags)
    assert again.to_dict() == {**settings.to_dict(), "output": "my video.mp4"}


def test_a_poster_frame_instead_of_a_black_box(browser, tiny):
    """The poster beside the page (pipeline.outputs.page writes it) loads, and the player
    starts at 0:00 on it."""
    page, *_ = tiny
    tab = open_page(browser, page)
    poster = tab.get_attribute("#video", "poster")
    assert poster and (page.parent / poster).is_file()
    loaded = tab.evaluate("""src => new Promise(done => { const im = new Image();
        im.onload = () => done(im.naturalWidth); im.onerror = () => done(0); im.src = src; })""",
                          tab.evaluate("document.getElementById('video').poster"))
    assert loaded > 0
    assert tab.evaluate("document.getElementById('video').currentTime") == 0
    assert tab.query_selector("#cues li[aria-current]") is None  # nothing "playing" yet
    tab.context.close()


# ---- the handout ---------------------------------------------------------------------------
@pytest.mark.slow
def test_printing_gives_a_handout_with_every_caption(browser, tiny, tmp_path):
    if shutil.which("pdftotext") is None:
        pytest.skip("pdftotext (poppler-utils) is not installed")
    page, trace, chapters, settings = tiny
    tab = open_page(browser, page)
    tab.wait_for_selector("body[data-handout='1']", state="attached")
    pdf = tmp_path / "handout.pdf"
    tab.pdf(path=str(pdf), format="A4")
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True,
                          text=True, check=True).stdout
    lines = [" ".join(line.split()) for line in text.splitlines()]
    for c in page_cues(chapters):
        stamp = f"{int(c.start // 60)}:{int(c.start % 60):02d} {c.text}"
        assert any(stamp in line for line in lines), stamp
    words = page_words(Translate(settings.language))
    assert words["nothing_open"] not in text and words["show_me"] not in text
    focus = trace["query_tokens"][trace["focus"]]["text"]
    flat = " ".join(text.split())
    for key in trace["key_tokens"]:  # every score of the followed word, explained
        assert f"scores[{focus}, {key['text']}] =" in flat, key
    assert words["handout_cells"].replace("{word}", focus) in flat
    tab.context.close()


# ---- captions, the followed word, long sums -------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("captions, shown", [("soft", "showing"), ("both", None), ("burned", None)])
def test_captions_are_the_pages_own_track_shown_once(browser, tmp_path, captions, shown):
    page, _, chapters, _ = build(tmp_path, weights="random", captions=captions)
    tab = open_page(browser, page)
    tracks = tab.evaluate("""[...document.getElementById('video').textTracks]
        .filter(t => t.kind === 'captions').map(t =>
        [t.mode, t.cues ? [...t.cues].map(c => [c.startTime, c.endTime, c.text]) : null])""")
    if shown is None:  # burned into the picture: no track over it
        assert tracks == []
    else:
        assert [mode for mode, _ in tracks] == [shown]
        assert tracks[0][1] == [[c.start, c.end, c.text] for c in page_cues(chapters)]
    assert all(u.startswith("file://") and not u.endswith((".vtt", ".srt")) for u in tab.requests)
    tab.context.close()


@pytest.mark.slow
def test_another_word_says_the_video_follows_its_own_and_how_to_render_it(browser, tiny):
    page, trace, _, settings = tiny
    tab = open_page(browser, page)
    assert tab.is_hidden("#word-note")
    words = [t["text"] for t in trace["query_tokens"]]
    other = 2 if words.count(words[2]) == 1 and trace["focus"] != 2 else 1
    tab.select_option("#word", str(other))
    note = tab.inner_text("#word-note")
    assert f"“{words[trace['focus']]}”" in note and f"“{words[other]}”" in note
    args = shlex.split(tab.inner_text("#word-note code"))
    assert args == [*remake(settings, "video.mp4")[:3], "--query", words[other],
                    *remake(settings, "video.mp4")[3:]]
    tab.select_option("#word", str(trace["focus"]))
    assert tab.is_hidden("#word-note")
    tab.context.close()


@pytest.mark.slow
def test_a_long_sum_says_how_many_terms_it_adds_up_as_one(browser, tmp_path):
    """A sum of more than 12 terms writes its first 11, "the other 8 terms, added up:" with
    their sum as one number, and its last: no term is dropped without saying so."""
    page, trace, *_ = build(tmp_path, weights="random", d_model=20, heads=1)
    tab = open_page(browser, page)
    tab.click('td[data-key="Q"][data-i="1"][data-j="2"]')
    text = tab.inner_text("#detail-body")
    words = page_words(Translate("en"))
    assert words["more_terms"].replace("{n}", "8") in text  # 20 − 12 added up
    assert tab.eval_on_selector_all("#detail-body .term", "els => els.length") == 12
    operands = [(n["name"], n["index"]) for n in shown_numbers(tab) if not n["result"]]
    every = expected_operands(trace, "Q", 1, 2)
    assert operands[:22] == every[:22] and operands[-2:] == every[-2:]
    tab.context.close()
