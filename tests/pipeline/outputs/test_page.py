"""The companion page (pipeline.outputs.page), opened in headless Chromium from file://.

Each number a cell's explanation shows is compared with the trace's JSON export (and the
pair products and the arrows' geometry with numpy and attncore.geometry); "show me in the
video" must seek into a caption of the chapter that makes the quantity; the highlight must
follow playback; no request may leave file://; axe-core must find no violation in either
theme; every matrix must be an ARIA grid the arrow keys walk.

The fast tests build the page from the tiny model's trace and chapter results with cues
of their own (two per chapter) over a blank video of the same length; one slow test
renders two chapters for real with --page.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import av
import numpy as np
import pytest
from attention_video.attncore.chapters import SLUGS
from attention_video.attncore.export import from_json, to_json
from attention_video.pipeline.commands.app import (
    Request,
    make_settings,
    make_trace,
    planned_outputs,
)
from attention_video.pipeline.commands.modes import refused
from attention_video.pipeline.outputs.files import page_path
from attention_video.pipeline.outputs.page import (
    MAX_SHOWN,
    MAX_TERMS,
    QUANTITIES,
    SHOWS,
    made_at,
    made_in,
    page_cues,
    write_page,
)
from attention_video.pipeline.records import ChapterResult
from attention_video.scenes.catalogue import Translate
from attention_video.scenes.page_words import page_words
from attention_video.scenes.precision import SCORES, WEIGHTS, weight_decimals
from attention_video.scenes.text import fmt, typeset
from attention_video.scenes.themes import THEMES, word_color

from tests.support.decoder_traces import decoder_trace
from tests.support.decoder_traces import settings as decoder_settings

pytestmark = pytest.mark.xdist_group("page")  # one worker: its one browser (tests/conftest.py)

CHAPTER_SECONDS = 4.0  # each made-up chapter: two cues, (0, 1.5) and (2, 3.5)

# Where the video makes each quantity, stated here independently of the page's table.
MAKER = {"X": "input", "W_Q": "linear", "W_K": "linear", "W_V": "linear", "Q": "linear",
         "K": "linear", "V": "linear", "scores": "factor", "scaled": "softmax",
         "weights": "softmax", "Z": "weighted_sum"}


def blank_video(path: Path, seconds: float) -> Path:
    """A tiny H.264 clip `seconds` long (2 fps), for the page to play and seek."""
    with av.open(str(path), "w") as c:
        s = c.add_stream("libx264", rate=2)
        s.width, s.height, s.pix_fmt = 64, 36, "yuv420p"
        for k in range(int(seconds * 2) + 1):
            frame = av.VideoFrame.from_ndarray(np.full((36, 64, 3), k % 250, np.uint8),
                                               format="rgb24")
            for packet in s.encode(frame):
                c.mux(packet)
        for packet in s.encode(None):
            c.mux(packet)
    return path


def made_up_chapters(slugs=SLUGS) -> list[ChapterResult]:
    return [ChapterResult(slug, CHAPTER_SECONDS, [(0.0, 1.5, f"{slug}: the first caption"),
                                                  (2.0, 3.5, f"{slug}: the second caption")])
            for slug in slugs]


def build(folder: Path, chapters: list[ChapterResult] | None = None, **flags):
    """The page of `flags`' settings (the default sentence and weights unless given), its
    trace as the JSON export reads it, and its chapter results."""
    folder.mkdir(parents=True, exist_ok=True)
    sentence = flags.pop("sentence", None)
    settings = make_settings(None, sentence, None, flags)
    trace = make_trace(settings, lambda m: None)
    chapters = chapters or made_up_chapters()
    video = blank_video(folder / "video.mp4", sum(r.duration for r in chapters))
    page = write_page(trace, chapters, video, settings)
    return page, json.loads(to_json(trace)), chapters, settings


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return build(tmp_path_factory.mktemp("tiny"))


def open_page(browser, page: Path, **context):
    """A new tab on `page`, every request recorded (those not from file:// refused)."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000}, **context)
    tab = ctx.new_page()
    tab.requests = []
    tab.errors = []
    tab.on("pageerror", lambda e: tab.errors.append(str(e)))

    def route(r):
        tab.requests.append(r.request.url)
        if r.request.url.startswith("file://"):
            r.continue_()
        else:
            r.abort()

    ctx.route("**/*", route)
    tab.goto(page.as_uri())
    tab.wait_for_selector("body[data-ready='1']")
    return tab


def value(trace: dict, head: int, name: str, index: list[int]) -> float:
    """The trace's number `name`[index] (of the head for a head's matrices); rest_K[i, c]:
    the terms of K[i, c] = Σ_m X[i, m]·W_K[m, c] a long sum leaves unwritten, added up."""
    if name.startswith("rest_"):
        return rest(trace, head, name[5:], index)
    top = ("E", "P", "X", "E_q", "P_q", "X_q", "model_weights")
    where = trace if name in top else trace["heads"][head]
    v = where[name]
    for i in index:
        v = v[i]
    return v


def rest(trace: dict, head: int, name: str, index: list[int]) -> float:
    """The middle terms of a sum of more than MAX_TERMS terms: every one but the first
    MAX_TERMS − 1 and the last (the exps: every one the list leaves out, as for a grid)."""
    h = trace["heads"][head]
    if name == "exp_sum":
        row = h["exp_shifted"][index[0]]
        return sum(row[MAX_SHOWN - 2:-1]) if len(row) > MAX_SHOWN else 0.0
    i, c = index
    a, b = {"Q": lambda: (trace["X_q"][i], [r[c] for r in h["W_Q"]]),
            "K": lambda: (trace["X"][i], [r[c] for r in h["W_K"]]),
            "V": lambda: (trace["X"][i], [r[c] for r in h["W_V"]]),
            "scores": lambda: (h["Q"][i], h["K"][c]),
            "Z": lambda: (h["weights"][i], [r[c] for r in h["V"]])}[name]()
    return float(np.dot(a[MAX_TERMS - 1:-1], b[MAX_TERMS - 1:-1]))


def written_with(name: str, normalized: bool = True) -> int:
    """The decimals the video writes the quantity `name` (or rest_ and its name) with
    (scenes.precision): a softmax weight, an exp and their sum 3, the rest 2."""
    name = name.removeprefix("rest_")
    if name in ("weights", "model_weights"):
        return weight_decimals(normalized)
    return WEIGHTS if name in ("exp_shifted", "exp_sum") else SCORES


def as_shown(v: float, exact: float, decimals: int = SCORES) -> bool:
    """A number the page holds is `exact` at display precision: `decimals` decimals."""
    unit = 10 ** decimals
    return abs(v - exact) <= 0.5 / unit + 1e-9 and abs(v * unit - round(v * unit)) < 1e-6


def shown_numbers(tab) -> list[dict]:
    """Every number in the open cell's explanation: its name, index, value and text."""
    return tab.eval_on_selector_all("#detail-body .num[data-name]", """els => els.map(e => ({
        name: e.dataset.name, index: e.dataset.index ? e.dataset.index.split(',').map(Number) : [],
        v: Number(e.dataset.v), text: e.textContent, result: e.classList.contains('result')}))""")


def sample(n_rows: int, n_cols: int, focus: int, rng) -> list[tuple[int, int]]:
    cells = {(0, 0), (n_rows - 1, n_cols - 1), (min(focus, n_rows - 1), n_cols // 2)}
    cells.add((int(rng.integers(n_rows)), int(rng.integers(n_cols))))
    return sorted(cells)


def expected_operands(trace: dict, key: str, i: int, j: int) -> list[tuple[str, list[int]]]:
    """The operands the explanation of cell (i, j) of `key` must show, in order."""
    h = trace["heads"][trace["head_index"]]
    d_model, n_k = len(trace["X"][0]), len(trace["key_tokens"])
    if key == "X":
        if trace["x_from"] != "embedding" or trace["x_label"] not in ("E + P", "E"):
            return []  # a normalised sum or a hidden state: said in words, not summed
        return [("E", [i, j]), ("P", [i, j])] if trace["positional"] else [("E", [i, j])]
    if key in ("Q", "K", "V"):
        x = "X_q" if key == "Q" else "X"
        pairs = [op for m in range(d_model) for op in ((x, [i, m]), (f"W_{key}", [m, j]))]
        return pairs + ([(f"b_{key}", [j])] if any(h[f"b_{key}"]) else [])
    if key == "scores":
        return [op for m in range(len(h["Q"][0])) for op in (("Q", [i, m]), ("K", [j, m]))]
    if key == "scaled":
        return [("scores", [i, j])]
    if key == "weights":
        exps = [op for k in range(n_k) for op in (
            [("scaled", [i, k]), ("row_max", [i])] if h["mask"][i][k] else []) + [("exp_shifted", [i, k])]]
        listed = [("exp_shifted", [i, k]) for k in range(n_k)]  # Σ: the exps again, added
        return exps + listed + [("exp_sum", [i]), ("exp_shifted", [i, j]), ("exp_sum", [i])]
    if key == "Z":
        return [op for k in range(n_k) for op in (("weights", [i, k]), ("V", [k, j]))]
    return []  # W_Q, W_K, W_V: a weight, nothing makes it


# ---- the table and the files ------------------------------------------------------------
def test_every_chapter_says_what_it_shows_and_every_quantity_is_made_somewhere():
    assert set(SHOWS) == set(SLUGS)
    assert made_in(list(SLUGS)) == MAKER
    assert made_in(["dot", "summary"])["scores"] == "dot"  # without chapter 3, chapter 4
    assert made_in(["input"])["Z"] is None  # a quantity no chapter of the video shows


def test_the_page_goes_beside_the_video_and_beside_the_deck(tmp_path):
    video = tmp_path / "cat.mp4"
    assert page_path(video) == tmp_path / "cat.page.html"
    settings = make_settings(None, "a b", None, {"output": str(video)})
    files, _ = planned_outputs(settings, Request(slides=True, page=True))
    assert files["the companion page"] == page_path(video)
    assert len(set(files.values())) == len(files)  # --slides and --page together


def test_page_is_refused_where_there_is_no_video():
    assert "--page" in refused({"storyboard": True, "page": True})
    assert "--page" in refused({"lint": True, "page": True})
    assert "--page" in refused({"batch": "m.toml", "page": True})
    assert refused({"page": True, "slides": True, "formats": "gif"}) is None


def test_cues_keep_their_chapter_and_the_videos_time():
    cues = page_cues(made_up_chapters(["input", "linear"]) +
                     [ChapterResult("dot", 3.0, [(1.0, 1.02, "too short to keep")])])
    assert [(c.start, c.chapter) for c in cues] == [(0.0, "input"), (2.0, "input"),
                                                   (4.0, "linear"), (6.0, "linear")]


@pytest.mark.slow
def test_the_page_is_small_and_holds_the_trace_and_the_catalogues_words(browser, tiny):
    page, trace, _, settings = tiny
    html = page.read_text(encoding="utf-8")
    assert page.stat().st_size < 100_000
    tab = open_page(browser, page)
    held = tab.evaluate("() => T")  # as the script reads it (the parts unpacked)
    tab.context.close()
    for key in ("X", "E", "P"):  # the tiny model's are small: every number, at 2 decimals
        assert all(as_shown(v, w) for r, s in zip(held[key], trace[key]) for v, w in zip(r, s))
    h, g = held["heads"][0], trace["heads"][0]
    for key in ("W_Q", "Q", "scores", "weights", "Z"):
        places = written_with(key, trace["normalized"])
        assert all(as_shown(v, w, places) for r, s in zip(h[key], g[key]) for v, w in zip(r, s)), key
    assert "W_O" not in held and "history" not in held and "output" not in held  # never drawn
    assert '"video":"video.mp4"' in html  # relative to the page
    words = page_words(Translate("en"))
    assert words["show_me"] in html and "http://" not in html.replace(
        "http://www.w3.org/2000/svg", "") and "https://" not in html


# ---- in the browser ---------------------------------------------------------------------
@pytest.mark.parametrize("how", ["hover", pytest.param("focus", marks=pytest.mark.slow)])
@pytest.mark.slow
def test_every_matrix_explains_its_cells_with_the_traces_numbers(browser, tiny, how):
    page, trace, _, _ = tiny
    tab = open_page(browser, page)
    rng = np.random.default_rng(0 if how == "hover" else 1)
    h = trace["heads"][trace["head_index"]]
    core = from_json(json.dumps(trace))  # the geometry, from attncore.geometry
    checked = 0
    for key in QUANTITIES:
        values = trace[key] if key == "X" else h[key]
        for i, j in sample(len(values), len(values[0]), trace["focus"], rng):
            cell = f'td[data-key="{key}"][data-i="{i}"][data-j="{j}"]'
            if how == "hover":
                tab.hover(cell)
            else:
                tab.focus(cell)
            assert tab.get_attribute("#detail-body .cell", "data-key") == key
            numbers = shown_numbers(tab)
            for n in numbers:  # each number is the trace's, at the precision it is written
                places = written_with(n["name"], trace["normalized"])
                assert as_shown(n["v"], value(trace, trace["head_index"], n["name"], n["index"]), places), n
                assert n["text"].strip("()") == fmt(n["v"], places), n
            results = [(n["name"], n["index"]) for n in numbers if n["result"]]
            assert results == [(key, [i, j])]
            operands = [(n["name"], n["index"]) for n in numbers if not n["result"]]
            assert operands == expected_operands(trace, key, i, j), (key, i, j)
            if key == "scores":
                products = tab.eval_on_selector_all(
                    "#detail-body .term", "els => els.map(e => [Number(e.dataset.product), e.className])")
                want = np.round(h["Q"][i], 2) * np.round(h["K"][j], 2)  # as written, pair by pair
                assert np.allclose([p for p, _ in products], want, rtol=0, atol=1e-12)
                assert [c.split()[-1] for _, c in products] == [
                    "agree" if p > 0 else "differ" if p < 0 else "zero" for p in want]
                g = core.head.geometry(i)
                drawn = tab.eval_on_selector("#detail-body .geometry", """e => [
                    e.dataset.angle, e.dataset.shadow, e.dataset.qnorm, e.dataset.knorm].map(Number)""")
                assert np.allclose(drawn, [g.angles[j], g.shadows[j], g.q_norm, g.k_norms[j]],
                                   rtol=0, atol=0.05 + 1e-9)
            if key == "scaled":
                assert as_shown(float(tab.get_attribute("#detail-body .sqrt", "data-v")),
                                math.sqrt(len(h["Q"][0])))
                formula = tab.inner_text("#detail-body .formula")  # scaled = S / √d = S / s = result
                assert f" / √{len(h['Q'][0])} = " in formula and formula.count(" = ") + \
                    formula.count(" ≈ ") == 3
            checked += 1
    assert checked >= 3 * len(QUANTITIES)
    assert tab.errors == []
    tab.context.close()


def seek_chapter(tab, cues) -> str:
    """The chapter of the caption the video is in now."""
    t = tab.evaluate("document.getElementById('video').currentTime")
    inside = [c for c in cues if c.start <= t < c.end]
    assert len(inside) == 1, (t, cues)
    return inside[0].chapter


def test_show_me_seeks_into_the_caption_that_makes_the_number(browser, tiny):
    page, trace, chapters, _ = tiny
    cues = page_cues(chapters)
    tab = open_page(browser, page)
    tab.wait_for_function("document.getElementById('video').readyState >= 1")
    for key in QUANTITIES:
        tab.focus(f'td[data-key="{key}"][data-i="0"][data-j="0"]')
        tab.click("#show-me")
        assert seek_chapter(tab, cues) == MAKER[key], key
    tab.context.close()


def test_made_at_names_the_caption_on_screen_when_the_scene_drew_the_quantity():
    chapters = made_up_chapters(["input", "linear", "factor"])
    chapters[1].made = {"X": 0.0, "Q": 2.0, "K": 2.0, "row_max": 2.0}  # Q, K in its 2nd caption
    chapters[2].made = {"Q": 0.0, "scores": 2.5}
    cues = page_cues(chapters)
    at = made_at(chapters, cues)
    # X is first drawn in chapter 1 (no record there: it was cached) → left to the chapter table
    assert at["X"] == 2 and cues[2].chapter == "linear" and cues[2].start == CHAPTER_SECONDS
    assert at["Q"] == at["K"] == 3 and cues[3].start == CHAPTER_SECONDS + 2.0
    assert at["scores"] == 5 and cues[5].chapter == "factor"
    assert "row_max" not in at and "Z" not in at  # not a page quantity; never drawn


def test_show_me_seeks_into_the_very_caption_the_scene_recorded(browser, tmp_path):
    chapters = made_up_chapters(["input", "linear", "factor"])
    chapters[1].made = {"Q": 2.0}
    page, *_ = build(tmp_path, chapters)
    cues = page_cues(chapters)
    tab = open_page(browser, page)
    tab.wait_for_function("document.getElementById('video').readyState >= 1")
    for key, want in (("Q", cues[3]), ("K", cues[2])):  # K: no record, its chapter's first
        tab.focus(f'td[data-key="{key}"][data-i="0"][data-j="0"]')
        tab.click("#show-me")
        t = tab.evaluate("document.getElementById('video').currentTime")
        assert want.start <= t < want.end, (key, t, want)
    tab.context.close()


def test_show_me_is_off_when_no_chapter_of_the_video_makes_the_number(browser, tmp_path):
    page, *_ = build(tmp_path, made_up_chapters(["input", "linear"]))
    tab = open_page(browser, page)
    tab.focus('td[data-key="Z"][data-i="0"][data-j="0"]')
    assert tab.is_disabled("#show-me")
    tab.focus('td[data-key="Q"][data-i="0"][data-j="0"]')
    assert tab.is_enabled("#show-me")
    tab.context.close()


def test_the_highlight_follows_playback_and_stays_when_paused(browser, tiny):
    page, trace, chapters, _ = tiny
    cues = page_cues(chapters)
    tab = open_page(browser, page)
    tab.wait_for_function("document.getElementById('video').readyState >= 1")
    for k in (0, 7, 8, 10):  # input, dot, softmax (first caption), weighted_sum
        tab.evaluate(f"""() => {{ const v = document.getElementById('video');
            v.currentTime = {(cues[k].start + cues[k].end) / 2};
            v.dispatchEvent(new Event('timeupdate')); }}""")
        current = tab.eval_on_selector_all("#cues li", "els => els.findIndex(e => e.getAttribute('aria-current') === 'true')")
        assert current == k
        talked = tab.eval_on_selector_all(".grid-box.talked", "els => els.map(e => e.dataset.key)")
        assert set(talked) == set(SHOWS[cues[k].chapter])
        rows = tab.eval_on_selector_all('td.now[data-key="weights"]', "els => els.map(e => Number(e.dataset.i))")
        assert set(rows) == ({trace["focus"]} if "weights" in talked else set())
    tab.evaluate("document.getElementById('video').pause()")
    tab.wait_for_timeout(100)
    assert tab.eval_on_selector_all(".grid-box.talked", "els => els.length") == len(SHOWS["weighted_sum"])
    tab.context.close()


def test_no_request_leaves_file(browser, tiny):
    page, *_ = tiny
    tab = open_page(browser, page)
    tab.click('td[data-key="scores"][data-i="1"][data-j="2"]')
    tab.click("#show-me")
    tab.click('[data-theme-choice="light"]')
    tab.wait_for_timeout(300)
    assert tab.requests and all(u.startswith("file://") for u in tab.requests), tab.requests
    tab.context.close()


@pytest.mark.parametrize("theme", ["dark", pytest.param("light", marks=pytest.mark.slow)])
def test_axe_finds_no_violation(browser, tiny, theme):
    axe = pytest.importorskip("axe_playwright_python.sync_playwright")
    page, *_ = tiny
    tab = open_page(browser, page, bypass_csp=True)  # axe is injected into the page
    tab.click(f'[data-theme-choice="{theme}"]')
    tab.click('td[data-key="scores"][data-i="5"][data-j="3"]')  # an open cell too
    results = axe.Axe().run(tab)
    assert results.violations_count == 0, results.generate_report()
    tab.context.close()


def test_a_keyboard_walks_each_grid(browser, tiny):
    page, trace, _, _ = tiny
    tab = open_page(browser, page)
    roles = tab.eval_on_selector_all("#grids table", "els => els.map(e => e.getAttribute('role'))")
    assert roles == ["grid"] * len(QUANTITIES)
    tab.keyboard.press("Tab")  # into the page: Tab reaches the first grid's one stop
    for _ in range(200):
        if tab.evaluate("document.activeElement.getAttribute('role')") == "gridcell":
            break
        tab.keyboard.press("Tab")
    at = lambda: tab.evaluate("[document.activeElement.dataset.key, Number(document.activeElement.dataset.i), Number(document.activeElement.dataset.j)]")  # noqa: E731
    assert at() == ["X", 0, 0]
    d_model, n = len(trace["X"][0]), len(trace["X"])
    for key, want in (("ArrowRight", ["X", 0, 1]), ("ArrowDown", ["X", 1, 1]), ("End", ["X", 1, d_model - 1]),
                      ("Home", ["X", 1, 0]), ("ArrowUp", ["X", 0, 0]), ("ArrowUp", ["X", 0, 0]),
                      ("Control+End", ["X", n - 1, d_model - 1])):
        tab.keyboard.press(key)
        assert at() == want, key
        assert tab.get_attribute("#detail-body .cell", "data-i") == str(want[1])  # opened
    assert tab.eval_on_selector_all('table[data-key="X"] td[tabindex="0"]', "els => els.length") == 1
    tab.keyboard.press("Tab")  # the grid is one stop: Tab goes on to the next grid
    assert at()[0] == "W_Q"
    tab.keyboard.press("Enter")  # Enter opens the cell and moves to its "show me"
    assert tab.evaluate("document.activeElement.id") == "show-me"
    tab.context.close()


def test_both_themes_use_the_videos_colours(browser, tiny):
    page, trace, _, _ = tiny
    tab = open_page(browser, page)
    for name, theme in THEMES.items():
        tab.click(f'[data-theme-choice="{name}"]')
        assert tab.evaluate("getComputedStyle(document.body).backgroundColor") == _css(theme.background)
        labels = tab.eval_on_selector_all('table[data-key="K"] tbody th', "els => els.map(e => getComputedStyle(e).color)")
        assert labels == [_css(word_color(i, theme)) for i in range(len(trace["key_tokens"]))]
        pressed = tab.get_attribute(f'[data-theme-choice="{name}"]', "aria-pressed")
        assert pressed == "true"
    tab.context.close()


def _css(colour: str) -> str:
    r, g, b = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgb({r}, {g}, {b})"


def test_the_word_picker_follows_another_word(browser, tiny):
    page, trace, _, _ = tiny
    tab = open_page(browser, page)
    other = (trace["focus"] + 2) % len(trace["query_tokens"])
    tab.select_option("#word", str(other))
    for key in ("Q", "scores", "weights", "Z"):
        rows = tab.eval_on_selector_all(f'table[data-key="{key}"] tr.followed td', "els => els.map(e => Number(e.dataset.i))")
        assert set(rows) == {other}, key
    tab.context.close()


def test_zh_page_and_captions(browser, tmp_path):
    from attention_video.pipeline.run.render import dry_run  # noqa: PLC0415 (only here)

    settings = make_settings(None, "猫喝了牛奶", "input", {"language": "zh", "weights": "random"})
    trace = make_trace(settings, lambda m: None)
    chapters = dry_run(settings, trace)
    page, *_ = build(tmp_path, chapters, sentence="猫喝了牛奶", language="zh", weights="random")
    tab = open_page(browser, page)
    words = page_words(Translate("zh"))
    assert tab.get_attribute("html", "lang") == "zh"
    assert tab.text_content("#captions-h") == words["captions"] != page_words(Translate("en"))["captions"]
    shown = tab.eval_on_selector_all("#cues li button", "els => els.map(e => e.lastChild.textContent)")
    assert shown == [c.text for c in page_cues(chapters)] and any("\u4e00" <= ch <= "\u9fff" for ch in shown[0])
    tab.focus('td[data-key="X"][data-i="0"][data-j="0"]')
    assert tab.text_content("#show-me") == words["show_me"]
    tab.context.close()


@pytest.mark.slow
def test_many_heads_get_an_overview_that_opens_each_head(browser, tmp_path):
    page, trace, *_ = build(tmp_path, weights="random", heads=2)
    tab = open_page(browser, page)
    assert tab.eval_on_selector_all("#heads button", "els => els.length") == 2
    tab.click('#heads button[data-head="1"]')
    shown = tab.eval_on_selector_all('td[data-key="weights"]', "els => els.map(e => [Number(e.dataset.i), Number(e.dataset.j), Number(e.dataset.v)])")
    assert all(as_shown(v, trace["heads"][1]["weights"][i][j], written_with("weights", trace["normalized"]))
               for i, j, v in shown) and shown
    tab.hover('td[data-key="Q"][data-i="0"][data-j="0"]')
    assert tab.get_attribute("#detail-body .cell", "data-head") == "1"
    assert as_shown(float(tab.get_attribute("#detail-body .result", "data-v")),
                    trace["heads"][1]["Q"][0][0])
    tab.context.close()
    axe = pytest.importorskip("axe_playwright_python.sync_playwright")
    tab = open_page(browser, page, bypass_csp=True)
    results = axe.Axe().run(tab)  # the overview's buttons too
    assert results.violations_count == 0, results.generate_report()
    tab.context.close()


@pytest.mark.slow
def test_a_pretrained_models_overview_opens_every_layers_heads(browser, tmp_path):
    from attention_video.attncore.pretrained import find_model  # noqa: PLC0415 (only here)
    from attention_video.attncore.settings import SettingsError  # noqa: PLC0415

    try:
        find_model()
    except SettingsError as e:
        pytest.skip(e.message)
    page, trace, *_ = build(tmp_path, weights="pretrained")
    layers, heads = len(trace["model_weights"]), len(trace["model_weights"][0])
    tab = open_page(browser, page)
    assert tab.eval_on_selector_all("details.model button", "els => els.length") == layers * heads
    tab.click("details.model summary")
    for layer, n in ((0, 0), (layers - 1, heads - 1), (trace["layer"], (trace["head_index"] + 1) % heads)):
        tab.click(f'details.model button[data-layer="{layer}"][data-head="{n}"]')
        assert tab.get_attribute("#detail-body .pattern", "data-head") == str(n)
        for v in shown_numbers(tab):  # each row's largest weight, the trace's
            true = value(trace, 0, v["name"], v["index"])  # at the precision written
            assert true == max(trace["model_weights"][layer][n][v["index"][2]])
            assert v["v"] == pytest.approx(true, abs=0.0005)
    # the layer shown: its head's numbers fill the grids
    assert tab.get_attribute("#heads .layer-heads button[aria-pressed='true']", "data-head") == str(n)
    q = float(tab.get_attribute('td[data-key="Q"][data-i="0"][data-j="0"]', "data-v"))
    assert q == pytest.approx(trace["heads"][n]["Q"][0][0], abs=0.005)  # as written
    tab.context.close()


@pytest.mark.slow
@pytest.mark.parametrize("layer", [0, 3])
def test_a_real_models_x_is_told_as_what_it_is_not_summed(browser, tmp_path, layer):
    """Layer 0's X is LayerNorm(E + P), a later layer's the hidden state after the layer
    below: neither is E + P, so the page shows X's value and says what it is."""
    from attention_video.attncore.pretrained import find_model  # noqa: PLC0415 (only here)
    from attention_video.attncore.settings import SettingsError  # noqa: PLC0415

    try:
        find_model()
    except SettingsError as e:
        pytest.skip(e.message)
    page, trace, _, settings = build(tmp_path, weights="pretrained", layer=layer, head=0)
    assert trace["layer"] == layer
    words = page_words(Translate(settings.language))
    tab = open_page(browser, page)
    tab.click('td[data-key="X"][data-i="1"][data-j="0"]')
    numbers = shown_numbers(tab)
    assert [(n["name"], n["index"], n["result"]) for n in numbers] == [("X", [1, 0], True)]
    assert as_shown(numbers[0]["v"], trace["X"][1][0])
    said = tab.inner_text("#detail-body")
    if layer == 0:
        assert words["x_norm"].replace("{formula}", "LayerNorm(E + P)") in said
    else:
        assert words["x_hidden"].replace("{layer}", "3").replace("{below}", "2") in said
    assert " + " not in tab.inner_text("#detail-body .formula")  # X[the, 1] = 0.12, no sum
    assert tab.errors == []
    tab.context.close()


@pytest.mark.slow
def test_motion_follows_the_readers_setting_and_captions_show_once(browser, tiny):
    page, *_ = tiny
    for motion, behaviour in (("reduce", "auto"), ("no-preference", "smooth")):
        tab = open_page(browser, page, reduced_motion=motion)
        assert tab.evaluate("getComputedStyle(document.documentElement).scrollBehavior") == behaviour
        # burned captions are in the picture: no track shows them again over it
        assert tab.evaluate("[...document.getElementById('video').textTracks]"
                            ".filter(t => t.kind !== 'chapters').length") == 0
        tab.context.close()


def test_a_sentence_that_looks_like_markup_stays_text(browser, tmp_path):
    sentence = 'a </script><b id="x">b</b> @@TRACE@@ "c"'
    page, trace, *_ = build(tmp_path, sentence=sentence, weights="random")
    tab = open_page(browser, page)
    assert tab.errors == [] and tab.query_selector("#x") is None
    assert sentence in tab.text_content("#title")
    labels = [t.lstrip("▸ ") for t in tab.eval_on_selector_all(
        'table[data-key="Q"] tbody th', "els => els.map(e => e.textContent)")]
    words = [t["text"] for t in trace["query_tokens"]]
    assert len(words) > 16  # a long sentence: its first rows, "…" and its last
    assert labels == words[:14] + ["…", words[-1]]
    tab.context.close()


def test_cross_attention_shows_the_query_words_own_rows(browser, tmp_path):
    page, trace, *_ = build(tmp_path, sentence="The ball is blue", target="La bola es azul",
                            weights="random")
    tab = open_page(browser, page)
    keys = tab.eval_on_selector_all("#grids table", "els => els.map(e => e.dataset.key)")
    assert keys[:2] == ["X", "X_q"]
    for key, i, j in (("X_q", 1, 2), ("Q", 1, 2)):
        tab.hover(f'td[data-key="{key}"][data-i="{i}"][data-j="{j}"]')
        numbers = shown_numbers(tab)
        for n in numbers:
            assert as_shown(n["v"], value(trace, trace["head_index"], n["name"], n["index"]),
                            written_with(n["name"], trace["normalized"])), n
        names = {n["name"] for n in numbers if not n["result"]}
        assert names == ({"E_q", "P_q"} if key == "X_q" else {"X_q", "W_Q"})
    labels = tab.eval_on_selector_all('table[data-key="Q"] tbody th', "els => els.map(e => e.textContent)")
    assert [w.lstrip("▸ ") for w in labels] == [t["text"] for t in trace["query_tokens"]]
    tab.context.close()


def rotary_value(trace: dict, head: int, name: str, index: list[int]) -> float:
    """With RoPE, the page's names: Q and K are X·W_Q and X·W_K (the trace's rows before the
    turn), Q_rot and K_rot the turned rows the scores use (the trace's heads' Q and K)."""
    rope, kv = trace["rope"], trace["kv_heads"][head]
    where = {"Q": rope["Q_before"][head], "K": rope["K_before"][kv], "angles": rope["angles"],
             "Q_rot": trace["heads"][head]["Q"], "K_rot": trace["heads"][head]["K"]}
    if name in ("cos", "sin"):  # of the angle: numpy's, to the last bits JavaScript may differ
        return getattr(np, name)(rope["angles"][index[0]][index[1]])
    if name not in where:
        return value(trace, head, name, index)
    v = where[name]
    for i in index:
        v = v[i]
    return v


@pytest.mark.slow
def test_a_rotary_page_shows_q_and_k_before_their_turn_and_the_turn_as_a_step(browser, tmp_path):
    """Issue 39: every number a cell shows is the trace's under the page's names, and
    equals the sum its operands make: Q = Σ X·W_Q, Q_rot = Q₂ₘ·cos θ − Q₂ₘ₊₁·sin θ (or
    Q₂ₘ·sin θ + Q₂ₘ₊₁·cos θ), the score = Σ Q_rot·K_rot."""
    s = decoder_settings()
    t = decoder_trace(s)
    chapters = made_up_chapters()
    video = blank_video(tmp_path / "video.mp4", sum(r.duration for r in chapters))
    page = write_page(t, chapters, video, s)
    trace = json.loads(to_json(t))
    tab = open_page(browser, page)
    keys = tab.eval_on_selector_all("#grids table", "els => els.map(e => e.dataset.key)")
    assert keys == ["X", "W_Q", "W_K", "W_V", "Q", "K", "V", "Q_rot", "K_rot", "scores",
                    "scaled", "weights", "Z"]
    words = page_words(Translate("en"))
    # (typeset as the video draws them: Q_rot is Qᵣₒₜ)
    assert tab.text_content("#h-Q_rot").startswith(typeset(words["Q_rot"])[0])
    assert tab.text_content("#h-scores").startswith(typeset(words["scores_rot"])[0])
    h, n = trace["head_index"], t.d_k
    head = trace["heads"][h]
    for key, i, j in (("Q", t.focus, 0), ("K", 1, n - 1), ("Q_rot", t.focus, 0),
                      ("Q_rot", t.focus, 3), ("K_rot", 2, n - 1), ("scores", t.focus, 2)):
        tab.hover(f'td[data-key="{key}"][data-i="{i}"][data-j="{j}"]')
        numbers = shown_numbers(tab)
        for v in numbers:
            want = rotary_value(trace, h, v["name"], v["index"])
            places = written_with(v["name"], trace["normalized"])
            assert as_shown(v["v"], want, places), v
            assert v["text"].strip("()") == fmt(v["v"], places), v
        res = [v for v in numbers if v["result"]]
        assert [(v["name"], v["index"]) for v in res] == [(key, [i, j])]
        ops = {(v["name"], tuple(v["index"])): v["v"] for v in numbers if not v["result"]}
        if key in ("Q", "K"):  # Σ X·W_Q: the rows before the turn (a long sum shows some terms)
            x, w = ("X_q" if key == "Q" else "X"), "W_" + key
            made = sum(trace[x][i][m] * head[w][m][j] for m in range(t.d_model)) + head[f"b_{key}"][j]
            assert all(as_shown(ops[(x, (i, m))], trace[x][i][m]) for m in (0, t.d_model - 1))
            error = 0.005  # made from the trace: only the result is rounded
        elif key in ("Q_rot", "K_rot"):
            plain, m = key[0], j // 2
            a, b = ops[(plain, (i, 2 * m))], ops[(plain, (i, 2 * m + 1))]
            cos, sin = ops[("cos", (i, m))], ops[("sin", (i, m))]
            assert ("angles", (i, m)) in ops
            made = a * cos - b * sin if j % 2 == 0 else a * sin + b * cos
            error = 0.005 * (abs(a) + abs(b) + abs(cos) + abs(sin) + 2)  # made as written
        else:  # the score: the turned rows, pair by pair
            made = sum(ops[("Q_rot", (i, m))] * ops[("K_rot", (j, m))] for m in range(n))
            assert not [name for name, _ in ops if name in ("Q", "K")]
            error = 0.005 * (sum(abs(v) for v in ops.values()) + n + 1)
        assert abs(made - res[0]["v"]) <= error + 1e-9, (key, i, j)  # = or ≈: the rounding
    # "show me" for the turned rows seeks into chapter `linear`, where they are made
    tab.click(f'td[data-key="Q_rot"][data-i="{t.focus}"][data-j="0"]')
    cue = int(tab.get_attribute("#show-me", "data-cue"))
    assert page_cues(chapters)[cue].chapter == "linear"
    assert tab.errors == []
    tab.context.close()


def test_with_rope_the_scenes_records_take_the_pages_names():
    """Chapter `linear` records Q and K before the turn as Q_before, K_before, and the turned
    rows as Q, K: the page seeks to them by its own names."""
    chapters = [ChapterResult("linear", 4.0, [(0.0, 1.5, "a"), (2.0, 3.5, "b")],
                              made={"Q_before": 0.5, "K_before": 1.0, "Q": 2.5, "K": 2.6})]
    cues = page_cues(chapters)
    assert made_at(chapters, cues, rotary=True) == {"Q": 0, "K": 0, "Q_rot": 1, "K_rot": 1}
    assert made_at(chapters, cues) == {"Q": 1, "K": 1}


def test_the_notebooks_result_writes_the_same_page(tmp_path):
    from attention_video.api import Explanation, explain  # noqa: PLC0415 (only here)

    page, trace, chapters, settings = build(tmp_path)
    video = tmp_path / "video.mp4"
    result = Explanation(settings, from_json(json.dumps(trace)), video, None, None,
                         [(c.start, c.end, c.text) for c in page_cues(chapters)],
                         chapters=chapters)
    again = result.page(tmp_path / "again.page.html")
    # the same page, its poster frame beside it under its own name
    assert again.read_text(encoding="utf-8").replace("again.poster.png", "video.poster.png") == \
        page.read_text(encoding="utf-8")
    assert (tmp_path / "again.poster.png").read_bytes() == (tmp_path / "video.poster.png").read_bytes()
    with pytest.raises(TypeError, match=r"\.page\(\)"):
        explain("The black cat", page=True, folder=tmp_path)


def test_it_opens_in_under_a_second(browser, tiny):
    page, *_ = tiny
    tab = open_page(browser, page)
    assert int(tab.get_attribute("body", "data-ready-ms")) < 1000
    tab.context.close()


@pytest.mark.slow
def test_render_with_page_writes_a_page_that_seeks_into_the_real_captions(browser, tmp_path, capsys):
    from attention_video.pipeline.commands.cli import main  # noqa: PLC0415 (only here)

    video = tmp_path / "cat.mp4"
    try:
        main(["The black cat drank the milk", "--chapters", "1,2", "-q", "l", "--page", "--slides",
              "-o", str(video)])
    except SystemExit as e:
        assert e.code in (0, None)
    out = capsys.readouterr().out.split()
    page = page_path(video)
    assert str(page) in out and str(video.with_suffix(".html")) in out
    tab = open_page(browser, page)
    tab.wait_for_function("document.getElementById('video').readyState >= 1")
    duration = tab.evaluate("document.getElementById('video').duration")
    cues = json.loads(tab.text_content("#page-data"))["cues"]
    assert cues and abs(duration - cues[-1]["end"]) < 2.0
    tab.focus('td[data-key="Q"][data-i="5"][data-j="0"]')
    tab.click("#show-me")
    t = tab.evaluate("document.getElementById('video').currentTime")
    assert any(c["chapter"] == "linear" and c["start"] <= t < c["end"] for c in cues)
    # the caption the scene had on screen when it first drew Q: it names Q (in any of the
    # caption's forms: "Q", "query")
    k = json.loads(tab.text_content("#page-data"))["made_at"]["Q"]
    assert cues[k]["start"] <= t < cues[k]["end"] and cues[k]["chapter"] == "linear"
    assert "Q" in cues[k]["text"] or "quer" in cues[k]["text"].lower(), cues[k]["text"]
    assert all(u.startswith("file://") for u in tab.requests)
    tab.context.close()


def test_the_arrows_angle_is_written_as_chapter_4_writes_it(browser, tiny):
    """Rounded once from the true angle (11.457° is 11°), not from a stored tenth (11.5 → 12)."""
    from attention_video.attncore import Settings
    from attention_video.attncore.build import build_trace

    page, _, _, settings = tiny
    trace = build_trace(Settings(sentence=settings.sentence))
    i, j = trace.focus, trace.partner
    true = float(trace.head.geometry(i).angles[j])
    tab = open_page(browser, page)
    tab.click(f'#grids td[data-key="scores"][data-i="{i}"][data-j="{j}"]')
    said = tab.inner_text("#detail-body")
    assert f"is {true:.0f}°" in said, (true, said)
    tab.context.close()


def test_the_page_writes_no_plain_text_maths(browser, tmp_path):
    """Issue 40: "W_Q, the query weights", "Q_rot·K_rotᵀ" were written as typed; the page
    typesets them as the video does (Qᵣₒₜ, W with a <sub>Q</sub>)."""
    s = decoder_settings()
    t = decoder_trace(s)
    chapters = [ChapterResult(slug, CHAPTER_SECONDS, [(0.0, 1.5, "Q = X · W_Q, K = X · W_K"),
                                                      (2.0, 3.5, "Q_rot·K_rot^T / √d_k")])
                for slug in SLUGS]  # captions as the catalogue writes them
    video = blank_video(tmp_path / "video.mp4", sum(r.duration for r in chapters))
    tab = open_page(browser, write_page(t, chapters, video, s))
    tab.hover(f'td[data-key="scores"][data-i="{t.focus}"][data-j="0"]')  # a cell's detail too
    text = tab.inner_text("body")
    words = [tok.text for tok in (*t.query_tokens, *t.key_tokens)]
    for w in words:
        text = text.replace(w, " ")
    assert "_" not in text and "^" not in text, [line for line in text.splitlines()
                                                  if "_" in line or "^" in line][:5]
    assert tab.eval_on_selector("#h-W_Q sub", "e => e.textContent") == "Q"
    assert tab.text_content("#h-Q_rot").startswith("Qᵣₒₜ")
    tab.context.close()
