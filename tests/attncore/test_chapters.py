"""attncore.chapters: a chapter is a slug, its number its place in the story; what a scene
states about the plan comes from the plan it is given, and it reads only what its clip is
keyed on."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from attention_video.attncore import Settings, build_trace
from attention_video.attncore.chapters import (
    BY_SLUG,
    CHAPTERS,
    DESCRIBE_SETTINGS,
    QUESTION_SETTINGS,
    SCENE_SETTINGS,
    SLUGS,
    number,
)
from attention_video.attncore.settings import FIELD_NAMES
from attention_video.pipeline.run.chapter import ChapterJob, render_chapter
from attention_video.pipeline.run.render import plan_chapters
from attention_video.scenes import scene_class
from attention_video.scenes.base import SceneSettings

S = Settings(sentence="The black cat drank the milk", weights="tiny")


@pytest.fixture(scope="module")
def trace():
    return build_trace(S)


def said(result) -> str:
    return " ".join(text for _, _, text in result.subtitles)


def test_the_numbers_on_screen_count_up_in_playing_order():
    assert [c.number for c in CHAPTERS] == list(range(1, len(CHAPTERS) + 1))
    assert (number("heads"), number("summary")) == (9, 10)  # heads plays before the summary
    assert set(BY_SLUG) == set(SLUGS)
    for c in CHAPTERS:  # files named by slug, scene classes with no number in them
        assert c.module == f"attention_video.scenes.chapters.{c.slug}"
        assert not any(ch.isdigit() for ch in c.scene)
        assert scene_class(c.slug).slug == c.slug


def test_a_subset_keeps_its_numbers_and_plays_in_story_order():
    s = Settings(chapters=("summary", "heads"))
    assert plan_chapters(s) == ["heads", "summary"]
    assert [number(c) for c in plan_chapters(s)] == [9, 10]


@pytest.mark.slow
def test_the_summary_cites_only_the_chapters_the_video_plays(trace):
    """It hard-coded "ch. 2/3/5/6" and cited them even when --chapters 1-4,10 left out
    chapters 5 and 6."""
    whole = render_chapter(ChapterJob("summary", trace, S, clip=None, plan=SLUGS))
    for ref in ("ch. 2", "ch. 3", "ch. 5", "ch. 6"):
        assert ref in said(whole)
    plan = ("input", "linear", "factor", "dot", "summary")
    cut = render_chapter(ChapterJob("summary", trace, S, clip=None, plan=plan))
    assert "ch. 2" in said(cut) and "ch. 3" in said(cut)
    assert "ch. 5" not in said(cut) and "ch. 6" not in said(cut)
    alone = render_chapter(ChapterJob("summary", trace, S, clip=None, plan=("summary",)))
    assert "ch. " not in said(alone) and "a step we took" not in said(alone)


def test_a_scene_may_read_only_the_settings_its_clip_is_keyed_on():
    view = SceneSettings(S)
    keyed = SCENE_SETTINGS + QUESTION_SETTINGS + DESCRIBE_SETTINGS  # the latter two keyed
    for name in keyed:  # only where they change the clip (asked; narrated)
        assert getattr(view, name) == getattr(S, name)
    for name in set(FIELD_NAMES) - set(keyed):
        with pytest.raises(AttributeError, match="may not read the setting"):
            getattr(view, name)


def test_a_scene_may_ask_only_about_the_chapters_it_declares(trace):
    from manim import tempconfig

    cls = scene_class("qkv")
    with tempconfig({"dry_run": True, "verbosity": "ERROR"}):
        scene = cls(trace, S, SLUGS)
        assert scene.in_plan("learning") is True
        with pytest.raises(KeyError, match="does not declare"):
            scene.in_plan("softmax")


# ---- "the signs agree": one definition, for the caption and the colours ---------------------
def test_agreement_is_strict_and_a_zero_agrees_with_nothing():
    from attention_video.attncore.attention import agreement

    products = np.array([0.0, -0.0, 0.5, -0.2, 1e-300])
    assert agreement(products).tolist() == [0, 0, 1, -1, 1]


def family(colour: str, theme) -> str:
    """Which sign colour a drawn number's ink is (the number is drawn in its sign colour,
    lightened or darkened until it reads on its box): the nearest of the three."""
    def rgb(c: str) -> np.ndarray:
        return np.array([int(c[i:i + 2], 16) for i in (1, 3, 5)], float)

    names = {"positive": theme.positive, "negative": theme.negative, "muted": theme.muted}
    return min(names, key=lambda n: float(np.abs(rgb(names[n]) - rgb(colour)).sum()))


def test_the_learning_table_colours_exactly_the_pairs_its_caption_counts(trace):
    """The default video's step-0 row had products 0.00 and −0.00 drawn green while the
    caption said "0 of 4 pairs agree" (colours used ≥ 0, the caption > 0)."""
    from attention_video.scenes.chapters.learning import make_pairs_table
    from attention_video.scenes.context import ChapterContext
    from attention_video.scenes.themes import THEMES

    theme, h = THEMES["dark"], trace.history
    table = make_pairs_table(h, "milk", "drank", ChapterContext.of("dark", "en"), 10, 4)
    for s in range(len(h.steps)):
        colours = [family(table.view.numbers[(s, c)].get_color().to_hex(), theme)
                   for c in range(h.products.shape[1])]
        assert colours.count("positive") == h.agreeing(s), s
        assert colours.count("negative") == int((h.products[s] < 0).sum()), s
    assert np.any(h.products[0] == 0)  # the case that was wrong: zeros at step 0


def test_the_dot_chapter_counts_agreeing_pairs_as_it_colours_them():
    from attention_video.scenes.chapters.dot import make_pair_table
    from attention_video.scenes.context import ChapterContext
    from attention_video.scenes.themes import THEMES

    s = Settings(sentence="a b c", weights="random", seed=3)
    t = build_trace(s)
    h, theme = t.head, THEMES["dark"]
    q = np.array(h.Q)
    q[0, 0] = 0.0  # one pair with a zero in it
    zeroed = dataclasses.replace(h, Q=q)
    table = make_pair_table(zeroed, 0, 1, "a", "b", "#fff", "#fff", ChapterContext.of("dark", "en"),
                            4, 10)
    colours = [family(p.get_color().to_hex(), theme) for p in table.p_row]
    assert table.zero >= 1 and colours[0] == "muted"
    assert colours.count("positive") == table.agree == zeroed.agreement(0, 1).tolist().count(1)


def test_a_product_drawn_as_zero_is_grey_and_counted_with_the_zeros():
    # −0.000001 is drawn "0.0000": red beside it would tell a sign the number does not show
    from attention_video.scenes.chapters.dot import make_pair_table
    from attention_video.scenes.context import ChapterContext
    from attention_video.scenes.themes import THEMES

    t = build_trace(Settings(sentence="a b c", weights="random", seed=3))
    h, theme = t.head, THEMES["dark"]
    q, k = np.array(h.Q), np.array(h.K)
    q[0, 0], k[1, 0] = 1.0, -1e-6
    tiny = dataclasses.replace(h, Q=q, K=k)
    assert tiny.agreement(0, 1)[0] == -1  # the trace keeps its true sign
    table = make_pair_table(tiny, 0, 1, "a", "b", "#fff", "#fff", ChapterContext.of("dark", "en"),
                            4, 10)
    assert table.p_row[0].text == "0.0000"
    assert family(table.p_row[0].get_color().to_hex(), theme) == "muted"
    assert table.zero >= 1 and table.differ == int((tiny.agreement(0, 1) < 0).sum()) - 1
