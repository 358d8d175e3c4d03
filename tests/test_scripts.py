"""Every script a lecturer might type draws as itself: a label per script rendered to a
real frame has ink; a word with no visible glyph is drawn as its code points; every
chapter builds for Arabic, Hebrew and Devanagari sentences (right to left, shaped)."""

from __future__ import annotations

import numpy as np
import pytest
from manim import BLACK, Scene, tempconfig
from scene_truth import check_drawn

from attncore import Settings, build_trace
from attncore.chapters import LEARNING_CHAPTER, NUMBERS
from pipeline.chapter import ChapterJob, render_chapter
from scenes.text import code_points, is_stand_in, make_text

WORDS = {
    "Arabic": "القط",
    "Hebrew": "שלום",
    "Devanagari": "नमस्ते",
    "Thai": "แมว",
    "Korean": "고양이",
    "CJK": "猫",
    "Latin": "cat",
}
INVISIBLE = {"zero-width joiner": "\u200d", "cat emoji": "🐈", "thumbs up, skin tone": "👍🏽"}


def ink(label) -> int:
    """Pixels of a frame, with `label` alone on a black background, that are not black."""
    with tempconfig({"pixel_height": 120, "pixel_width": 320, "frame_rate": 1,
                     "background_color": BLACK, "verbosity": "ERROR", "dry_run": True,
                     "write_to_movie": False, "disable_caching": True}):
        scene = Scene()
        scene.add(label.move_to((0, 0, 0)))
        scene.renderer.update_frame(scene)
        frame = np.asarray(scene.renderer.get_frame())  # (h, w, 4)
    return int((frame[..., :3].max(axis=-1) > 60).sum())


@pytest.mark.parametrize("script", list(WORDS))
def test_a_word_of_every_script_draws_ink(script):
    label = make_text(WORDS[script], 28, "#ffffff")
    assert label.width > 0.1
    assert ink(label) > 30, f"{script} word {WORDS[script]!r} drew nothing"


@pytest.mark.parametrize("name", list(INVISIBLE))
def test_a_word_without_visible_glyphs_is_drawn_as_its_code_points(name):
    text = INVISIBLE[name]
    label = make_text(text, 28, "#ffffff", muted="#808080")
    assert is_stand_in(text, 28) and ink(label) > 10  # thin grey strokes at 320 px
    assert label.get_color().to_hex().upper() == "#808080"


def test_code_points_spell_every_character():
    assert code_points("\u200d") == "U+200D"
    assert code_points("👍🏽") == "U+1F44D U+1F3FD"


def test_markup_characters_in_a_right_to_left_word_are_drawn_not_parsed():
    label = make_text("שלום <b>&amp;", 28, "#ffffff")
    assert ink(label) > 30 and label.width > 1.0


RTL = {
    "arabic": dict(sentence="القط يشرب الحليب", weights="random"),
    "hebrew": dict(sentence="החתול שותה חלב", weights="random"),
    "devanagari": dict(sentence="बिल्ली दूध पीती है", weights="random"),
    "arabic-one-word": dict(sentence="القط", weights="random"),
    "invisible-words": dict(sentence="cat \u200d 🐈 \ufe0f milk", weights="random", query="cat"),
}


@pytest.mark.slow
@pytest.mark.parametrize("case, chapter", [(c, ch) for c in RTL for ch in NUMBERS
                                           if ch != LEARNING_CHAPTER])
def test_every_chapter_builds_for_other_scripts(case, chapter):
    s = Settings(**RTL[case])
    trace = build_trace(s)
    r = render_chapter(ChapterJob(chapter, trace, s, clip=None))
    assert r.off_frame == [], f"objects left the frame: {r.off_frame[:3]}"
    assert check_drawn(trace, r.drawn) == []


@pytest.mark.parametrize("chapter", [3, 6])
def test_the_chapters_that_crashed_on_hebrew_build(chapter):
    s = Settings(sentence="החתול שותה חלב", weights="random")
    trace = build_trace(s)
    r = render_chapter(ChapterJob(chapter, trace, s, clip=None))
    assert r.off_frame == [] and check_drawn(trace, r.drawn) == []
