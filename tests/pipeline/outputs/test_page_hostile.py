"""The companion page keeps whole whatever the sentence: its embedded JSON can neither end
its <script> element nor move the HTML parser into another state ('<!--<script>' made the
first data block swallow the rest of the page: no grids, no captions, exit status 0).

Each page is built from the seeded random weights and made-up chapters over a blank video
(tests/pipeline/outputs/test_page.build) and opened in headless Chromium."""

from __future__ import annotations

import json

import pytest
from attention_video.pipeline.outputs.page import _script_json

from tests.pipeline.outputs.test_page import build, open_page

pytestmark = pytest.mark.xdist_group("page")  # one worker: its one browser (tests/conftest.py)

HOSTILE = [
    "cat <!--<script> milk",  # script data escaped state: the first block ate the page
    "cat <!-- <script> milk --> drank",
    "cat </script><script>window.ran=1</script> milk",
    "cat </SCRIPT\t><img src=x onerror=window.ran=1> milk",
    "cat <script>window.ran=1</script milk",
    "cat ]]> <![CDATA[ milk &amp; &lt;/script&gt;",
    "cat \u2028 drank \u2029 milk",  # line and paragraph separators: ends a line in old JS
    "cat <!--> milk <!---> drank",
]


@pytest.mark.parametrize("sentence", HOSTILE)
def test_embedded_json_holds_no_character_the_html_parser_reads(sentence):
    text = _script_json({"sentence": sentence, "words": [sentence, "</script>"]})
    assert not set(text) & set("<>&\u2028\u2029"), text
    assert json.loads(text)["sentence"] == sentence


@pytest.mark.slow
@pytest.mark.parametrize("sentence", HOSTILE)
def test_a_hostile_sentence_leaves_the_page_whole_and_runs_nothing(browser, tmp_path, sentence):
    page, trace, chapters, _ = build(tmp_path, sentence=sentence, weights="random")
    tab = open_page(browser, page)
    assert tab.errors == []
    assert tab.evaluate("window.ran") is None  # no injected script or handler ran
    assert tab.query_selector("img") is None
    assert tab.evaluate("document.querySelectorAll('script').length") == 3  # trace, data, code
    grids = tab.eval_on_selector_all("table[role='grid']", "els => els.length")
    assert grids >= 5
    captions = tab.eval_on_selector_all("#cues li", "els => els.map(e => e.textContent)")
    assert len(captions) == 2 * len(chapters)
    assert sentence.replace("\u2028", " ").replace("\u2029", " ").split()[0] in \
        tab.text_content("#title")
    tab.context.close()
