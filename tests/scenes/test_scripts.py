"""Every script a lecturer might type draws as itself: a label per script rendered to a
real frame has ink; emoji draw as themselves (monochrome, from the chain's emoji font); a
word with no visible glyph is drawn as its code points; the font chain is installed and
Pango takes each script from the face the chain names; every chapter builds for Arabic,
Hebrew and Devanagari sentences (right to left, shaped)."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest
from attention_video.attncore import Settings, build_trace
from attention_video.attncore.chapters import LEARNING, SLUGS
from attention_video.pipeline.run.chapter import ChapterJob, render_chapter
from attention_video.scenes.text import (
    FONT,
    FONT_CHAIN,
    code_points,
    drawable,
    emoji_runs,
    is_stand_in,
    make_text,
)
from manim import BLACK, Scene, Text, tempconfig

from tests.support.scene_truth import check_drawn

WORDS = {
    "Arabic": "القط",
    "Hebrew": "שלום",
    "Devanagari": "नमस्ते",
    "Thai": "แมว",
    "Korean": "고양이",
    "CJK": "猫",
    "Latin": "cat",
}
INVISIBLE = {"zero-width joiner": "\u200d", "variation selector": "\ufe0f",
             "joiner and selector": "\u200d\ufe0f",
             "an emoji only the colour font has": "\U0001FAE0"}  # 🫠, Unicode 14
EMOJI = {
    "cat": "🐈", "grinning face": "😀", "red heart with VS16": "❤️", "watch (BMP)": "⌚",
    "thumbs up, skin tone": "👍🏽", "lone skin tone": "🏽", "black cat (ZWJ)": "🐈\u200d⬛",
    "family (ZWJ)": "👨\u200d👩\u200d👧", "flag": "🇫🇷", "keycap": "1️⃣",
    "subdivision flag": "🏴\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F",
    "sparkles": "✨", "exploding head (Unicode 10)": "🤯",
}


def ink(label, pixel_width: int = 320) -> int:
    """Pixels of a frame, with `label` alone on a black background, that are not black."""
    with tempconfig({"pixel_height": pixel_width * 3 // 8, "pixel_width": pixel_width,
                     "frame_rate": 1,
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


@pytest.mark.slow
@pytest.mark.parametrize("name", list(EMOJI))
def test_an_emoji_draws_as_itself(name):
    text = EMOJI[name]
    label = make_text(text, 28, "#ffffff", muted="#808080")
    assert not is_stand_in(text, 28), f"{name} {text!r} fell back to its code points"
    assert "U+" not in drawable(text)
    assert ink(label, 1280) > 100, f"{name} {text!r} drew nothing"  # thin line art: 1280 px
    assert label.get_color().to_hex().upper() == "#FFFFFF"


def test_an_emoji_beside_words_is_drawn_not_dropped():
    assert make_text("cat 🐈", 28).width > make_text("cat", 28).width + 0.2
    cat, cat_emoji = make_text("cat", 28, "#ffffff"), make_text("cat 🐈", 28, "#ffffff")
    assert ink(cat_emoji, 1280) > ink(cat, 1280) + 100


def test_an_emoji_no_outline_font_has_becomes_its_code_points_among_words():
    assert drawable("cat \U0001FAE0 milk") == "cat U+1FAE0 milk"
    assert drawable("cat\U0001FAE0") == "cat U+1FAE0"
    assert not is_stand_in("cat \U0001FAE0")  # the words draw: full colour, not muted


def test_emoji_runs_keep_each_emoji_whole():
    assert emoji_runs("a🐈\u200d⬛b") == [("a", False), ("🐈\u200d⬛", True), ("b", False)]
    assert emoji_runs("🇫🇷🇩🇪") == [("🇫🇷", True), ("🇩🇪", True)]
    assert emoji_runs("1️⃣ 2") == [("1️⃣", True), (" 2", False)]
    assert emoji_runs("© → ☺") == [("© → ☺", False)]  # text-style symbols are left alone
    assert emoji_runs("☺️") == [("☺️", True)]  # …unless asked for as emoji


def test_every_font_of_the_chain_is_installed():
    if shutil.which("fc-list") is None:
        pytest.skip("fc-list (fontconfig) is not installed: cannot list the font families")
    out = subprocess.run(["fc-list", ":", "family"], capture_output=True, text=True,
                         check=True).stdout
    families = {f.strip() for line in out.splitlines() for f in line.split(",")}
    missing = [f for f in FONT_CHAIN if f not in families]
    assert missing == [], f"not installed: {missing}; run scripts/setup.sh"


CHAIN_SAMPLES = {  # a word per script, and the face of the chain that must draw it
    "Noto Sans Arabic": "القط يشرب",
    "Noto Sans Hebrew": "שלום עולם",
    "Noto Sans Devanagari": "नमस्ते दुनिया",
    "Noto Sans Thai": "สวัสดีครับ",
    "Noto Sans": "ₖᵀ",  # sub- and superscript letters: dₖ, Kᵀ in sans, not Symbola's serif
    "Symbola": "🐈\ufe0e",
    "Noto Sans CJK SC": "cat 猫 고양이",
}


@pytest.mark.parametrize("face", list(CHAIN_SAMPLES))
def test_pango_takes_each_script_from_the_face_the_chain_names(face):
    """Pango reads FONT as a family list: a word drawn with the whole chain has the same
    glyphs (the same width) as with its own face named alone."""
    assert set(CHAIN_SAMPLES) == set(FONT_CHAIN)
    word = CHAIN_SAMPLES[face]
    chain = Text(word, font=FONT, warn_missing_font=False)
    alone = Text(word, font=face, warn_missing_font=False)
    assert chain.width > 0.1 and abs(chain.width - alone.width) < 1e-3
    assert ink(make_text(word, 28, "#ffffff"), 1280) > 100


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
@pytest.mark.parametrize("case, chapter", [(c, ch) for c in RTL for ch in SLUGS
                                           if ch != LEARNING])
def test_every_chapter_builds_for_other_scripts(case, chapter):
    s = Settings(**RTL[case])
    trace = build_trace(s)
    r = render_chapter(ChapterJob(chapter, trace, s, clip=None))
    assert r.off_frame == [], f"objects left the frame: {r.off_frame[:3]}"
    assert check_drawn(trace, r.drawn) == []


@pytest.mark.slow
@pytest.mark.parametrize("chapter", ["factor", "weighted_sum"])
def test_the_chapters_that_crashed_on_hebrew_build(chapter):
    s = Settings(sentence="החתול שותה חלב", weights="random")
    trace = build_trace(s)
    r = render_chapter(ChapterJob(chapter, trace, s, clip=None))
    assert r.off_frame == [] and check_drawn(trace, r.drawn) == []
