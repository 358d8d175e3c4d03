"""The page's predict-first mode (issue: learn by predicting): the questions the video asks,
above the grids; the cells that answer one show "?" and explain nothing until it is
answered, by keyboard alone; the verdict names the right option and the reason; what was
answered stays after a reload; axe finds nothing."""

from __future__ import annotations

import pytest
from attention_video.attncore import questions as qs
from attention_video.attncore.settings import Settings
from attention_video.scenes.catalogue import Translate
from attention_video.scenes.page_words import page_words
from attention_video.scenes.questions import worded

from tests.pipeline.outputs.test_page import build, open_page

pytestmark = pytest.mark.xdist_group("page")

W = page_words(Translate("en"))


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return build(tmp_path_factory.mktemp("predict"))


@pytest.mark.slow
def test_answering_by_keyboard_reveals_the_withheld_cells_and_stays(browser, tiny):
    page, trace, _, settings = tiny
    from tests.support.builds import trace_of

    records = qs.questions(trace_of(Settings(sentence=settings.sentence)))
    words = worded(trace_of(Settings(sentence=settings.sentence)), Translate("en"))
    top = next(n for n, q in enumerate(records) if q.kind == qs.TOP_KEY)
    i, j = records[top].query, records[top].key
    cell = f'#grids td[data-key="scores"][data-i="{i}"][data-j="{j}"]'
    tab = open_page(browser, page)
    assert tab.is_hidden("#predict")
    tab.click("#predict-toggle")
    assert tab.get_attribute("#predict-toggle", "aria-pressed") == "true"
    legends = tab.eval_on_selector_all("#questions legend", "ls => ls.map(l => l.textContent)")
    assert legends == [w.ask for w in words]
    assert tab.inner_text(cell) == "?" and tab.get_attribute(cell, "data-v") is None
    tab.click(cell)
    assert tab.inner_text("#detail-body") == W["answer_first"]
    # answer the top-key question wrongly, by keyboard: focus its first radio, arrow, Check
    wrong = next(k for k in range(len(words[top].options)) if k != words[top].answer)
    tab.focus(f"#q{top}-0")
    tab.keyboard.press("Space")  # a focused radio is checked with Space, then arrows move
    for _ in range(wrong):
        tab.keyboard.press("ArrowDown")
    tab.keyboard.press("Tab")
    tab.keyboard.press("Enter")
    verdict = tab.inner_text(f'#questions fieldset[data-question="{top}"] .verdict')
    right = words[top].options[words[top].answer]
    assert verdict == W["wrong"].replace("{answer}", right) + " " + words[top].reason
    others = [n for n, q in enumerate(records) if n != top and (  # questions it answers too
        q.kind == qs.CLOSEST_ANGLE or (q.kind == qs.SIGN and (q.query, q.key) == (i, j)))]
    assert others, "the closest-angle question withholds the followed word's scores too"
    for n in others:  # the cell stays withheld while a question it answers is open
        assert tab.inner_text(cell) == "?"
        tab.click(f"#q{n}-0")
        tab.click(f'#questions fieldset[data-question="{n}"] button')
    assert tab.inner_text(cell) != "?"
    tab.click(cell)
    assert W["answer_first"] not in tab.inner_text("#detail-body")
    tab.reload()
    tab.wait_for_selector("body[data-ready='1']")
    assert tab.get_attribute("#predict-toggle", "aria-pressed") == "true"  # as left
    assert tab.is_disabled(f"#q{top}-{wrong}") and tab.is_checked(f"#q{top}-{wrong}")
    assert tab.inner_text(cell) != "?"
    tab.context.close()


def test_predict_mode_passes_axe(browser, tiny):
    axe = pytest.importorskip("axe_playwright_python.sync_playwright")
    page, *_ = tiny
    tab = open_page(browser, page, bypass_csp=True)
    tab.evaluate("localStorage.clear()")
    tab.reload()
    tab.wait_for_selector("body[data-ready='1']")
    tab.click("#predict-toggle")
    results = axe.Axe().run(tab)
    assert results.violations_count == 0, results.generate_report()
    tab.context.close()
