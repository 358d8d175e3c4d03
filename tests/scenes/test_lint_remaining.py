"""The last problems the lint corpus accepted (issue 40), each checked where it broke:
chapter 8's keys a few degrees apart drawn on each other, a column's word broken in two,
and "^" or "_" written on screen."""

from __future__ import annotations

import numpy as np
import pytest
from attention_video.attncore import Settings, build_trace
from attention_video.attncore.geometry import query_geometry
from attention_video.scenes import arrows

pytestmark = pytest.mark.xdist_group("lint")


def chapter_findings(settings: Settings, slug: str, rules: tuple[str, ...]) -> list[str]:
    """The lint's problems of one chapter under `rules`."""
    from attention_video.pipeline.run.lint import lint_chapter
    from attention_video.pipeline.run.render import plan_chapters

    trace = build_trace(settings)
    got = lint_chapter(slug, trace, settings, tuple(plan_chapters(settings, trace, lambda s: None)))
    return [str(p) for p in got.problems if p.finding.rule in rules]


def turned(degrees: float, length: float = 1.0) -> np.ndarray:
    """A key `degrees` from the query (1, 0)."""
    a = np.radians(degrees)
    return length * np.array([np.cos(a), np.sin(a)])


# ---- chapter 8: keys a few degrees apart ---------------------------------------------------
def test_a_key_two_degrees_from_another_is_drawn_under_the_query_line():
    q = np.array([1.0, 0.0])
    g = query_geometry(q, np.stack([turned(83, 1.84), turned(85, 1.89), turned(30, 1.0)]))
    plane = arrows.Plane(np.zeros(3), 1.0)
    assert arrows.crowded_pairs([g], [0, 1, 2], frozenset(), [1.0]) == 1  # 0 and 1
    under = arrows.keys_under([g], [0, 1, 2], {0}, [1.0])
    assert under == {1}  # the fewest moved: key 2 stays over the line, clear of both
    assert arrows.crowded_pairs([g], [0, 1, 2], under, [1.0]) == 0
    picture = arrows.make_arrow_picture(g, [0, 1, 2], plane, "q", {0: "a", 1: "b", 2: "c"},
                                        dict.fromkeys(range(3), "#ffffff"),
                                        arrows_theme(), shadows=[0], arcs=[0], under=under)
    tip = picture.arrows[1].get_end()
    assert tip[1] < 0  # under the line, at its true angle to q and its true length
    assert np.degrees(np.arctan2(-tip[1], tip[0])) == pytest.approx(85, abs=1e-6)
    assert np.hypot(tip[0], tip[1]) == pytest.approx(1.89, abs=1e-6)


def test_three_keys_within_a_few_degrees_cannot_be_kept_apart_on_two_sides():
    q = np.array([1.0, 0.0])
    g = query_geometry(q, np.stack([turned(111), turned(112), turned(105)]))
    under = arrows.keys_under([g], [0, 1, 2], {0}, [1.0])
    assert arrows.crowded_pairs([g], [0, 1, 2], under, [1.0]) > 0  # chapter 8 draws panels


def test_keys_too_short_to_run_along_each_other_are_not_crowded():
    q = np.array([1.0, 0.0])
    g = query_geometry(q, np.stack([turned(54.5, 0.17), turned(58.7, 0.31)]))
    assert arrows.crowded_pairs([g], [0, 1], frozenset(), [0.7]) == 0  # 0.12 long: a dot
    assert arrows.crowded_pairs([g], [0, 1], frozenset(), [4.0]) == 1  # drawn larger: a line


def arrows_theme():
    from attention_video.scenes.themes import THEMES

    return THEMES["dark"]


@pytest.mark.parametrize("settings", [
    Settings(sentence="the blue ball", target="la bola azul", quality="l"),  # two keys 2° apart
    pytest.param(Settings(sentence="the big dogs eat the red apples", translate=True,
                          theme="light", quality="l"),  # three within 7°
                 marks=pytest.mark.slow)])
@pytest.mark.slow
def test_chapter_eight_draws_no_arrow_on_another(settings):
    # "the head of arrow at (-4.6, 0.6) lies under the head of arrow at (-4.6, 0.7)": blue
    # at 83° and the at 85°, |k| 1.84 and 1.89, at step 0
    assert chapter_findings(settings, "learning", ("lines",)) == []


# ---- a column's word is never broken ---------------------------------------------------------
def test_a_word_too_wide_for_its_column_stands_upright_whole_and_so_do_the_others():
    from attention_video.scenes.layout import MIN_FONT
    from attention_video.scenes.themes import THEMES
    from attention_video.scenes.widgets import fits_across, make_col_texts

    words = ["The", "old", "fisherman", "who"]
    room, size = 0.3, 18.0
    assert not fits_across("fisherman", size, room)  # "fishe" over "rman" on main
    texts = make_col_texts(words, ["#ffffff"] * 4, size, THEMES["light"], room)
    assert [t.text for t in texts] == words  # one text per word, whole
    for t in texts:
        assert t.width <= room + 1e-6  # its line's height across the column
        assert t.height > t.width or len(t.text) < 3  # standing up
        assert t.font_size >= MIN_FONT - 0.05 or t.height >= t.width  # legible
    across = make_col_texts(["a", "b"], ["#ffffff"] * 2, size, THEMES["light"], room)
    assert all(t.width >= t.height * 0.5 for t in across)  # short words stay across


@pytest.mark.slow
def test_chapter_five_of_the_long_decoder_sentence_breaks_no_word():
    # "fisherman" was drawn as "fishe" over "rman": two texts that are no word, and a colour
    # without its word under deuteranopia
    s = Settings(sentence="The old fisherman who lived by the river caught a large silver fish",
                 weights="decoder", theme="light", quality="l")
    assert chapter_findings(s, "softmax", ("colour", "size", "safe-area", "overlap")) == []


# ---- no "^" or "_" on screen -------------------------------------------------------------------
def test_plain_text_maths_is_typeset():
    from attention_video.scenes.text import typeset

    assert typeset("Q_rot·K_rot^T") == ("Qᵣₒₜ·Kᵣₒₜᵀ", None)  # Unicode has every letter
    assert typeset("d_k and K^T") == ("dₖ and Kᵀ", None)
    assert typeset("X·W_Q + b_Q") == ("X·WQ + bQ", "X·W<sub>Q</sub> + b<sub>Q</sub>")
    assert typeset("a < d_model") == ("a < dmodel", "a &lt; d<sub>model</sub>")
    assert typeset("snake_case") == ("snake_case", None)  # a word, not a name and its index


def test_the_lint_flags_maths_written_as_plain_text_and_not_once_typeset():
    from attention_video.scenes import lint
    from attention_video.scenes.text import make_text
    from manim import Text

    raw = lint.marks_of([Text("Q_rot·K_rot^T"), Text("W_Q")])  # as main drew them
    assert [f.rule for f in lint.raw_notation(raw)] == ["notation", "notation"]
    drawn = lint.marks_of([make_text("Q_rot·K_rot^T", 24), make_text("X·W_Q", 24)])
    assert lint.raw_notation(drawn) == []
    token = lint.marks_of([Text("my_var")])
    assert lint.raw_notation(token, ["my_var"]) == []  # the sentence's own word
    assert lint.raw_notation(token) != []


@pytest.mark.parametrize("chapter", ["linear", pytest.param("heads", marks=pytest.mark.slow)])
def test_the_default_video_writes_no_plain_text_maths(chapter):
    # "W_Q", "d_model 4", "W_O" were drawn as typed
    assert chapter_findings(Settings(quality="l"), chapter, ("notation",)) == []


def test_an_upright_word_is_measured_by_its_line_not_by_its_length():
    # Manim sizes a text by its height: "il" standing up measured 10 px, "fisherman" 60
    from attention_video.scenes import lint
    from attention_video.scenes.text import make_text
    from manim import PI

    for word in ("il", "fisherman"):
        across = lint.marks_of([make_text(word, 16)])[0].font_px
        upright = lint.marks_of([make_text(word, 16).rotate(PI / 2)])[0].font_px
        assert upright == pytest.approx(across, rel=1e-3), word


def test_a_vowel_sign_over_its_letter_is_not_read_as_an_upright_line():
    # "ने" (न and the sign े over it) measured 16 px when taken for a word standing up
    from attention_video.scenes import lint
    from attention_video.scenes.text import make_text

    mark = lint.marks_of([make_text("ने", 24)])[0]
    assert mark.font_px == pytest.approx(lint.marks_of([make_text("न", 24)])[0].font_px)
