"""The companion page's chapters: the video's chapter marks (pipeline.outputs.chapters) as a
chapters track of the page's own, a menu under the video and the [ and ] keys, each seeking
the video to a chapter's start; the caption list and the menu follow. Headless Chromium over
file://, the page built as tests/pipeline/outputs/test_page.py builds it. PAGE_SHOTS=folder
keeps a screenshot to look at."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from attention_video.pipeline.outputs.chapters import chapter_marks

from tests.pipeline.outputs.test_page import build, open_page

pytestmark = pytest.mark.xdist_group("page")  # one worker: its one browser (tests/conftest.py)

SLUGS = ("input", "linear", "factor")


@pytest.fixture(scope="module")
def three(tmp_path_factory):
    """A page of three chapters of different lengths, titled as scenes title them, each
    chapter's first caption half a second after its start."""
    from tests.pipeline.outputs.test_page import made_up_chapters

    chapters = made_up_chapters(SLUGS)
    for r, seconds in zip(chapters, (4.0, 6.0, 5.0)):
        r.duration = seconds
        # a chapter's first caption comes a moment after its title, as in the video
        r.subtitles = [(a + 0.5, b + 0.5, text) for a, b, text in r.subtitles]
        r.title = f"{SLUGS.index(r.chapter) + 1} · <{r.chapter}> & more"
    page, _, chapters, settings = build(tmp_path_factory.mktemp("three"), chapters)
    return page, chapters, chapter_marks(chapters, settings.language)


def wait_until(tab, expression: str, seconds: float = 10.0) -> None:
    """Poll `expression` until it is true: Playwright's wait_for_function would evaluate it
    with eval(), which the page's Content-Security-Policy refuses."""
    end = time.monotonic() + seconds
    while not tab.evaluate(expression):
        assert time.monotonic() < end, f"still false after {seconds} s: {expression}"
        tab.wait_for_timeout(50)


def at(start: float) -> str:
    return f"Math.abs(document.getElementById('video').currentTime - {start}) < 0.05"


def now(tab) -> dict:
    return tab.evaluate("""(() => { const v = document.getElementById('video');
        const li = document.querySelector('#cues li[aria-current="true"]');
        return {t: v.currentTime, menu: document.getElementById('chapter').value,
                cue: li ? li.dataset.chapter : null}; })()""")


def test_the_chapters_track_holds_the_videos_chapter_marks(browser, three):
    page, chapters, marks = three
    tab = open_page(browser, page)
    tracks = tab.evaluate("""[...document.getElementById('video').textTracks]
        .filter(t => t.kind === 'chapters').map(t => [t.mode, t.language,
            [...t.cues].map(c => [c.id, c.startTime, c.endTime, c.text])])""")
    assert len(tracks) == 1
    mode, language, cues = tracks[0]
    assert mode == "hidden" and language == "en"
    assert cues == [[r.chapter, a, b, title] for r, (a, b, title) in zip(chapters, marks)]
    assert not tab.errors
    tab.context.close()


def test_the_menu_lists_each_chapter_and_seeks_to_its_start(browser, three):
    page, chapters, marks = three
    tab = open_page(browser, page)
    options = tab.eval_on_selector_all("#chapter option", "os => os.map(o => o.textContent)")
    assert options == [f"{title} (0:{int(a):02d})" for a, _, title in marks]
    tab.focus("#chapter")  # by keyboard: the closed menu's arrow picks the next chapter
    tab.keyboard.press("ArrowDown")
    wait_until(tab, at(marks[1][0]))
    assert now(tab)["cue"] == chapters[1].chapter and now(tab)["menu"] == "1"
    assert not tab.errors
    tab.context.close()


def test_brackets_jump_to_the_next_and_the_previous_chapter(browser, three):
    page, chapters, marks = three
    tab = open_page(browser, page)
    tab.click("#numbers-h")  # the page has the keyboard, not a control
    for key, expected in (("]", 1), ("]", 2), ("]", 2), ("[", 1), ("[", 0), ("[", 0)):
        tab.keyboard.press(key)
        start = marks[expected][0]
        wait_until(tab, at(start))
        state = now(tab)
        assert state["menu"] == str(expected), (key, state)
        assert state["cue"] == chapters[expected].chapter, (key, state)
    # well into a chapter, [ goes back to its start first (as a player's key does)
    tab.evaluate(f"document.getElementById('video').currentTime = {marks[1][0] + 5.5}")
    wait_until(tab, "!document.getElementById('video').seeking")
    tab.keyboard.press("[")
    wait_until(tab, at(marks[1][0]))
    assert now(tab)["menu"] == "1"
    if os.environ.get("PAGE_SHOTS"):
        tab.screenshot(path=str(Path(os.environ["PAGE_SHOTS"]) / "page-chapters.png"))
    assert not tab.errors
    tab.context.close()


def test_one_chapter_has_no_menu(browser, tmp_path):
    from tests.pipeline.outputs.test_page import made_up_chapters

    page, *_ = build(tmp_path, made_up_chapters(("input",)))
    tab = open_page(browser, page)
    assert tab.evaluate("document.getElementById('chapter-bar').hidden")
    tab.context.close()
