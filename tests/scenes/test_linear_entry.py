"""Chapter 2 makes one entry of Q before the viewer's eyes: the followed row of X against
column 1 of W_Q, every pair and product drawn (and checked against the trace by
tests/support/scene_truth.py), summing to the entry."""

from __future__ import annotations

from attention_video.attncore import Settings, build_trace
from attention_video.pipeline.run.chapter import ChapterJob, render_chapter

from tests.support.scene_truth import check_drawn


def test_one_entry_of_q_is_made_pair_by_pair():
    s = Settings(weights="random")
    t = build_trace(s)
    r = render_chapter(ChapterJob("linear", t, s, clip=None))
    assert check_drawn(t, r.drawn) == []
    i, d = t.focus, t.d_model
    drawn = {(k, idx) for k, idx, _ in r.drawn}
    assert {("xw_product_Q", (i, m, 0)) for m in range(d)} <= drawn
    assert {("W_Q", (m, 0)) for m in range(d)} <= drawn and ("Q", (i, 0)) in drawn
    captions = " ".join(text for _, _, text in r.subtitles)
    assert f"{t.head.Q[i, 0]:.2f}".replace("-", "−") in captions
    assert "Each entry is made as Q's was" in captions  # K and V: one caption
