"""The --slides deck says where it is: a step number, a progress bar and the arrows on
screen, the step kept in the URL (a reload resumes there), no "Unmute video" button when
the deck has no sound, with --page, a link to the companion page and back, and a chapter
menu and [ ] to go from chapter to chapter.

The decks are made from synthetic clips (test_slides.make_clip); the links are made
through the outputs' rows (app.video_extras), as the command line makes them. Chromium
(Playwright, Debian's /usr/bin/chromium) at 1280×720 over file://. SLIDES_SHOTS=folder
keeps the screenshots to look at."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from urllib.parse import unquote

import pytest
from attention_video.pipeline.commands.app import Request, make_settings, make_trace, video_extras
from attention_video.pipeline.outputs.files import deck_path, page_path
from attention_video.pipeline.outputs.slides import deck_chapters, plan_steps, write_slides
from attention_video.pipeline.records import ChapterResult

from tests.pipeline.outputs.test_slides import make_clip

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run",
        # Chromium's default outside headless mode: no sound before the first click or key
        # (reveal.js then shows its "Unmute video" button on a step it had to mute)
        "--autoplay-policy=document-user-activation-required"]
VIEWPORT = {"width": 1280, "height": 720}
READY = "typeof Reveal !== 'undefined' && Reveal.isReady()"
# the share of the page's width the progress bar fills
FILLED = "document.querySelector('.progress span').getBoundingClientRect().width / innerWidth"
PLAYING = ("(() => { const v = document.querySelector("
           "'.backgrounds .slide-background.present video'); return !!v && v.currentTime > 0; })()")


def three_steps(folder: Path) -> list[ChapterResult]:
    """Two chapters (slugs the page knows) with two and one captions: three steps."""
    a = make_clip(folder / "a.mp4", 3.0, keyframes=(0.0, 1.5))
    b = make_clip(folder / "b.mp4", 2.0, keyframes=(0.0,))
    return [ChapterResult("input", 3.0, [(0.2, 1.5, "First"), (1.5, 3.0, "Second")], clip=a),
            ChapterResult("linear", 2.0, [(0.0, 2.0, "Third")], clip=b)]


@pytest.fixture(scope="module")
def silent_deck(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("silent-deck")
    return write_slides(three_steps(folder), folder / "talk.mp4", "The cat", "#000000")[0]


@pytest.fixture(scope="module")
def both(tmp_path_factory) -> tuple[Path, Path]:
    """--slides --page for one video, through the outputs' rows: (the deck, the page)."""
    folder = tmp_path_factory.mktemp("both")
    chapters = three_steps(folder)
    video = make_clip(folder / "talk.mp4", 5.0)
    settings = make_settings(None, None, None, {})
    trace = make_trace(settings, lambda m: None)
    video_extras(settings, Request(slides=True, page=True), chapters, video,
                 say=lambda m: None, show=lambda m: None, trace=trace)
    return deck_path(video), page_path(video)


def deck_link(deck: Path) -> str | None:
    """The href of the deck's link to the companion page, read from its HTML."""
    found = re.search(r'<a class="companion" href="([^"]*)"', deck.read_text(encoding="utf-8"))
    return found and found.group(1)


def page_link(page: Path) -> str | None:
    """The `deck` of the page's data: the href of its link to the deck."""
    data = re.search(r'<script type="application/json" id="page-data">(.*?)</script>',
                     page.read_text(encoding="utf-8"), re.S).group(1)
    return json.loads(data)["deck"]


def test_deck_and_page_link_to_each_other_when_both_are_made(both):
    deck, page = both
    assert (deck_link(deck), page_link(page)) == (page.name, deck.name)
    assert (deck.parent / unquote(deck_link(deck))).is_file()
    assert (page.parent / unquote(page_link(page))).is_file()


def test_a_deck_alone_links_to_no_page(silent_deck):
    assert deck_link(silent_deck) is None and "companion" not in silent_deck.read_text(
        encoding="utf-8").split("<script")[0].split("</style>")[1]


@pytest.fixture(scope="module")
def browser(playwright):
    """Its own Chromium (the autoplay policy differs from the page tests' browser), from
    the test process's one Playwright (tests/conftest.py)."""
    if not Path(CHROMIUM).exists():
        pytest.skip("Chromium is not installed (bash scripts/setup.sh --test installs it)")
    b = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
    yield b
    b.close()


def open_deck(browser, url: str):
    tab = browser.new_context(viewport=VIEWPORT).new_page()
    tab.goto(url)
    tab.wait_for_function(READY)
    return tab


def shot(tab, name: str) -> None:
    if os.environ.get("SLIDES_SHOTS"):  # a folder to look at them in
        tab.screenshot(path=str(Path(os.environ["SLIDES_SHOTS"]) / name))


def press_right(tab) -> None:
    tab.keyboard.press("ArrowRight")


@pytest.mark.slow
def test_the_deck_shows_its_step_progress_and_arrows_and_a_reload_resumes(browser, silent_deck):
    tab = open_deck(browser, silent_deck.as_uri())
    try:
        number, bar = tab.locator(".slide-number"), tab.locator(".progress")
        assert number.is_visible() and number.inner_text().replace(" ", "") == "1/3"
        assert bar.is_visible() and bar.bounding_box()["width"] >= 0.99 * VIEWPORT["width"]
        right = tab.locator(".controls .navigate-right")
        assert right.is_visible() and right.is_enabled()
        shot(tab, "deck-step1.png")
        right.click()  # the arrow on screen goes on, as → does
        tab.wait_for_function("Reveal.getIndices().h === 1")
        tab.wait_for_function(f"{FILLED} >= 0.49 && {FILLED} <= 0.51")  # halfway (its transition run)
        press_right(tab)
        tab.wait_for_function("Reveal.getIndices().h === 2")
        assert number.inner_text().replace(" ", "") == "3/3"
        tab.wait_for_function("location.hash === '#/3'")  # (reveal.js writes it a moment later)
        tab.wait_for_function(f"{FILLED} >= 0.99")  # the last step: the whole width
        tab.reload()
        tab.wait_for_function(READY)
        assert tab.evaluate("Reveal.getIndices().h") == 2  # where it was, not step 1
        assert number.inner_text().replace(" ", "") == "3/3"
        shot(tab, "deck-reloaded.png")
    finally:
        tab.context.close()


@pytest.mark.slow
def test_a_silent_deck_plays_without_an_unmute_button(browser, silent_deck):
    """No click or key yet, so no sound may play: a deck with no sound plays at once,
    muted, and offers nothing to unmute."""
    tab = open_deck(browser, silent_deck.as_uri())
    try:
        tab.wait_for_function(PLAYING)
        tab.wait_for_timeout(500)  # the button comes when a play() is refused
        assert tab.locator(".r-media-play-button").count() == 0
    finally:
        tab.context.close()


@pytest.mark.slow
def test_the_links_go_from_the_deck_to_the_page_and_back(browser, both):
    deck, page = both
    tab = open_deck(browser, deck.as_uri())
    try:
        link = tab.locator("a.companion")
        assert link.is_visible()
        shot(tab, "deck-with-link.png")
        link.click()
        tab.wait_for_selector("body[data-ready='1']")
        assert Path(unquote(tab.url.split("#")[0].removeprefix("file://"))) == page
        back = tab.locator("#deck-link")
        assert back.is_visible() and back.inner_text()
        shot(tab, "page-with-link.png")
        back.click()
        tab.wait_for_function(READY)
        assert Path(unquote(tab.url.split("#")[0].removeprefix("file://"))) == deck
    finally:
        tab.context.close()



@pytest.mark.slow
@pytest.mark.parametrize("theme", ["dark", "light"])
def test_the_pages_link_to_the_deck_keeps_axe_clean(browser, both, theme):
    axe = pytest.importorskip("axe_playwright_python.sync_playwright")
    tab = browser.new_context(viewport=VIEWPORT, bypass_csp=True).new_page()  # axe is injected
    try:
        tab.goto(both[1].as_uri())
        tab.wait_for_selector("body[data-ready='1']")
        tab.click(f'[data-theme-choice="{theme}"]')
        assert tab.locator("#deck-link").is_visible()
        results = axe.Axe().run(tab)
        assert results.violations_count == 0, results.generate_report()
        shot(tab, f"page-link-{theme}.png")
    finally:
        tab.context.close()


# ---- chapters: a menu of each chapter's first step, [ and ] --------------------------------
def three_chapters(folder: Path) -> list[ChapterResult]:
    """Three chapters of two, one and two captions: steps 1-2, 3 and 4-5, titled as scenes
    title them (one title holding markup characters)."""
    a = make_clip(folder / "a.mp4", 3.0, keyframes=(0.0, 1.5))
    b = make_clip(folder / "b.mp4", 2.0, keyframes=(0.0,))
    c = make_clip(folder / "c.mp4", 3.0, keyframes=(0.0, 1.5))
    return [ChapterResult("input", 3.0, [(0.2, 1.5, "First"), (1.5, 3.0, "Second")], clip=a,
                          title="1 · Input <x> & y"),
            ChapterResult("linear", 2.0, [(0.0, 2.0, "Third")], clip=b, title="2 · Linear"),
            ChapterResult("factor", 3.0, [(0.0, 1.5, "Fourth"), (1.5, 3.0, "Fifth")], clip=c,
                          title="3 · Factor")]


def test_deck_chapters_are_each_chapters_first_step_and_its_marks_title(tmp_path):
    chapters = three_chapters(tmp_path)
    assert deck_chapters(plan_steps(chapters), chapters, "en") == [
        (1, "1 · Input <x> & y"), (3, "2 · Linear"), (4, "3 · Factor")]


@pytest.fixture(scope="module")
def chapter_deck(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("chapter-deck")
    return write_slides(three_chapters(folder), folder / "talk.mp4", "The cat", "#000000")[0]


def test_a_deck_of_one_chapter_has_no_chapter_menu(tmp_path, silent_deck):
    clip = make_clip(tmp_path / "a.mp4", 2.0, keyframes=(0.0,))
    one = write_slides([ChapterResult("input", 2.0, [(0.0, 2.0, "First")], clip=clip)],
                       tmp_path / "one.mp4", "The cat", "#000000")[0]
    assert '<nav class="chapter-menu"' not in one.read_text(encoding="utf-8")
    assert '<nav class="chapter-menu"' in silent_deck.read_text(encoding="utf-8")  # two


@pytest.mark.slow
def test_the_deck_jumps_by_chapter_with_its_menu_and_brackets(browser, chapter_deck):
    tab = open_deck(browser, chapter_deck.as_uri())
    try:
        links = tab.locator(".chapter-menu a")
        assert links.all_text_contents() == ["1 · Input <x> & y", "2 · Linear", "3 · Factor"]
        assert not links.first.is_visible()  # closed until opened
        at = "Reveal.getIndices().h === {}"
        for key, step in (("]", 2), ("]", 3), ("]", 3), ("[", 2), ("[", 0), ("[", 0)):
            tab.keyboard.press(key)
            tab.wait_for_function(at.format(step))
        press_right(tab)  # into chapter 1's second step: [ goes to its first step first
        tab.wait_for_function(at.format(1))
        tab.keyboard.press("[")
        tab.wait_for_function(at.format(0))
        tab.locator(".chapter-menu summary").click()
        assert links.nth(2).is_visible()
        assert links.nth(0).get_attribute("aria-current") == "true"
        shot(tab, "deck-chapters-open.png")
        links.nth(2).click()
        tab.wait_for_function(at.format(3))
        tab.wait_for_function("location.hash === '#/4'")
        assert links.nth(2).get_attribute("aria-current") == "true"
        assert not links.first.is_visible()  # closed again once one is picked
        tab.keyboard.press("Shift+Slash")  # ?: reveal.js's help lists the keys
        help_text = tab.locator(".r-overlay-help").inner_text()
        assert "Previous chapter" in help_text and "Next chapter" in help_text
        shot(tab, "deck-chapters-help.png")
    finally:
        tab.context.close()
