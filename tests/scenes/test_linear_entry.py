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


def test_cross_attention_shows_the_keys_sentence_before_its_rows_are_used():
    # chapter 2 draws "X (source)"; chapter 1 used to embed the target alone, so the
    # source's rows came from nowhere on screen
    import tempfile
    from pathlib import Path

    from attention_video.attncore.chapters import SLUGS
    from attention_video.fastmanim.encoder import TimedRenderer
    from attention_video.pipeline.run.chapter import manim_config
    from attention_video.scenes import scene_class
    from manim import Text, tempconfig

    class Watched(scene_class("input")):
        def play(self, *args, **kwargs):  # every text on screen after each play
            super().play(*args, **kwargs)
            self.seen += [m.text for top in self.mobjects for m in top.get_family()
                          if isinstance(m, Text)]

    s = Settings(sentence="The old man the boat", target="Le vieil homme", weights="random")
    t = build_trace(s)
    with tempfile.TemporaryDirectory() as texts, \
            tempconfig(manim_config(s, None, None, Path(texts))):
        scene = Watched(t, s, SLUGS, skip_animations=True,
                        renderer=TimedRenderer(skip_animations=True))
        scene.seen = []
        scene.render()
    assert all(label in scene.seen for label in scene.k_labels)  # The₁ old man the₂ boat
    said = scene.subtitles[-1][2]
    assert "other sentence: its 5 tokens become the rows of X (source)" in said
