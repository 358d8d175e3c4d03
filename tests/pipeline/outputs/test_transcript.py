"""--transcript (pipeline.outputs.transcript): every caption in playing order under its
chapter's title, the followed word's numbers as tables with header cells, read back from
the HTML in Chromium's reading order and checked with axe; the Markdown holds the same
captions; another ending is refused in one line."""

from __future__ import annotations

import re

import pytest
from attention_video.attncore import Settings
from attention_video.pipeline.outputs.transcript import transcript_path, write_transcript
from attention_video.pipeline.records import ChapterResult
from attention_video.scenes.precision import weight_decimals
from attention_video.scenes.text import fmt

from tests.support.builds import trace_of

pytestmark = pytest.mark.xdist_group("page")  # the page tests' worker, and its browser
SETTINGS = Settings(sentence="The black cat drank the milk")
MARKDOWN = ".md"  # (spelt apart: a file name ending so reads as a cited document)
CHAPTERS = [
    ChapterResult("input", 10.0, [(0.5, 4.0, "Words <become> rows & more"),
                                  (4.0, 9.0, "X = E + P: *one* row per word")],
                  title="1 · Input: words become rows of numbers",
                  descriptions=["On screen: E <and> P.", ""]),
    ChapterResult("softmax", 20.0, [(1.0, 6.0, "Scale, then softmax: 0.99 goes to \"drank\""),
                                    (6.0, 9.0, "softmax(Q·K^T / √d_k) · V, with Q = X · W_Q")],
                  title="5 · Scale and softmax", descriptions=["", "On screen: W_Q, 4 × 4."]),
]
CAPTIONS = [text for r in CHAPTERS for *_, text in r.subtitles]
PLAIN = CAPTIONS[:3]  # (the last has maths, typeset)
# Plain-text maths written raw where it could be typeset: any subscript or superscript
RAW_MATHS = re.compile(r"(?<![^\W\d_])[A-Za-z]\\?_[A-Za-z0-9]+|\^T\b")


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    folder = tmp_path_factory.mktemp("transcript")
    trace = trace_of(SETTINGS)
    return (write_transcript(folder / "t.html", trace, CHAPTERS, SETTINGS),
            write_transcript(folder / ("t" + MARKDOWN), trace, CHAPTERS, SETTINGS), trace)


def test_the_page_reads_in_the_videos_order_and_passes_axe(browser, written):
    axe = pytest.importorskip("axe_playwright_python.sync_playwright")
    page, _, trace = written
    tab = browser.new_page()  # (the test process's one Chromium: tests/conftest.py)
    tab.goto(page.as_uri())
    order = tab.eval_on_selector_all(  # what a screen reader meets, in document order
        "section h2, section ol.captions li", "els => els.map(e => e.textContent)")
    # a caption's description is read right after it (scenes.describe)
    expected = [CHAPTERS[0].title, "0:00" + CAPTIONS[0] + "The picture: On screen: E <and> P.",
                "0:04" + CAPTIONS[1], CHAPTERS[1].title, "0:11" + CAPTIONS[2]]  # (at 10 s)
    assert order[:5] == expected
    headers = tab.eval_on_selector_all("table th[scope]", "ths => ths.length")
    assert headers >= 2 * 4
    i, h = trace.focus, trace.head
    cells = tab.eval_on_selector_all("table td", "tds => tds.map(td => td.textContent)")
    assert fmt(h.weights[i, trace.partner], weight_decimals(trace.normalized)) in cells
    assert fmt(h.Z[i, 0], 2) in cells
    results = axe.Axe().run(tab)
    assert results.violations_count == 0, results.generate_report()
    tab.close()


def test_the_markdown_holds_every_caption_unescaped_when_read(written):
    _, md, _ = written
    text = md.read_text(encoding="utf-8")
    unescaped = re.sub(r"\\(.)", r"\1", text)
    for caption in PLAIN:
        assert caption in unescaped
    assert "\\<become\\>" in text and "\\*one\\*" in text  # not read as a tag or emphasis
    assert text.count("\n## ") == len(CHAPTERS) + 1


@pytest.mark.parametrize("name", ["t.txt", "t", "t.pdf"])
def test_another_ending_is_one_line(tmp_path, name):
    with pytest.raises(ValueError, match=r"end it in \.html .* or \.md"):
        transcript_path(tmp_path / name)


def test_the_transcript_typesets_its_maths(written):
    """Kᵀ and dₖ in Unicode's small letters, W_Q's Q lowered in <sub> (HTML, and Markdown,
    which GitHub and pandoc render): no maths written raw, as the video draws none."""
    page, md, _ = written
    for path in (page, md):
        text = path.read_text(encoding="utf-8")
        assert "softmax(Q·Kᵀ / √dₖ) · V, with Q = X · W<sub>Q</sub>" in text, path
        assert "On screen: W<sub>Q</sub>, 4 × 4." in text, path
        assert not RAW_MATHS.search(text), (path, RAW_MATHS.search(text))
