"""Scene fixes the lint corpus asked for (issue 28), each checked where it broke: a rule
on a small synthetic picture where one will do, a chapter's lint where the layout is the
chapter's own."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from attention_video.attncore import Settings, build_trace
from attention_video.scenes import arrows, lint
from attention_video.scenes.catalogue import Translate
from attention_video.scenes.text import make_text
from attention_video.scenes.themes import THEMES, word_color
from attention_video.scenes.widgets import CellLayout, MatrixView
from manim import DOWN, UP, DashedLine

pytestmark = pytest.mark.xdist_group("lint")

DARK, LIGHT = THEMES["dark"], THEMES["light"]
LOOK_ALIKE = ["#70dbeb", "#70d9eb", "#70d7eb", "#70d5eb", "#70d3eb", "#70d1eb"]  # one hue


# ---- the rule: a dashed line is one line ---------------------------------------------------
def test_a_dashed_line_is_one_mark_named_by_the_word_at_its_end():
    drop = DashedLine(UP * 3, DOWN * 0.5, color=LOOK_ALIKE[0], dash_length=0.06)
    word = make_text("cat", 18, LOOK_ALIKE[0]).next_to(drop, DOWN, buff=0.1)
    marks = lint.marks_of([drop, word])
    lines = [m for m in marks if m.kind == "line"]
    assert len(lines) == 1  # not one mark per dash
    assert lines[0].box[3] - lines[0].box[1] == pytest.approx(3.5, abs=0.01)
    confusions = lint.confusable([("cat", LOOK_ALIKE[0]), ("dog", LOOK_ALIKE[1])])
    assert confusions  # the two colours do look alike
    assert lint.colour_findings(marks, confusions) == []  # its word names the whole line
    far = lint.marks_of([drop, word.copy().shift(DOWN * 2)])
    assert lint.colour_findings(far, confusions)  # a word too far names nothing


# ---- the arrow picture (chapters 4 and 8) ------------------------------------------------
def tiny_picture(colors: list[str]):
    t = build_trace(Settings(sentence="The black cat drank the milk", quality="l"))
    g = t.head.geometry(t.focus)
    drawn, _ = arrows.keys_to_draw(g, t.partner, 6)
    plane = arrows.fit_plane([g], drawn, -6.75, 1.5, -2.8, 2.95, len(drawn), "Q[milk]")
    names = {k: t.key_tokens[k].text for k in drawn}
    picture = arrows.make_arrow_picture(
        g, drawn, plane, "Q[milk]", names, {k: colors[k] for k in drawn}, DARK,
        shadows=drawn, arcs=[t.partner, g.least_aligned()])
    return picture, names


@pytest.mark.slow
def test_every_shadow_bar_carries_its_word_and_the_arcs_wear_no_word_colour():
    # each bar was named by its colour alone, each arc wore its key's colour: under
    # deuteranopia a look-alike pair could not be told apart
    picture, names = tiny_picture(LOOK_ALIKE)
    assert set(picture.bar_labels) == set(names)
    assert all(picture.bar_labels[k].text == names[k] for k in names)
    assert all(arc[0].get_stroke_color().to_hex().lower() == DARK.muted.lower()
               for arc in picture.arcs.values())
    marks = lint.marks_of([picture.group])
    confusions = lint.confusable([(names[k], LOOK_ALIKE[k]) for k in names])
    assert confusions
    assert lint.colour_findings(marks, confusions) == []


@pytest.mark.slow
def test_no_word_or_theta_of_the_arrow_picture_is_crossed_by_an_arc_or_the_axis():
    picture, _ = tiny_picture([word_color(k, DARK) for k in range(6)])
    marks = lint.marks_of([picture.group])
    assert lint.crossings(marks) == []
    assert lint.overlaps(marks) == []


def test_the_not_to_scale_note_is_rewrapped_rather_than_shrunk():
    ctx = SimpleNamespace(tr=Translate("es"), theme=DARK)
    note = arrows.make_not_to_scale_note(ctx, max_w=3.0)
    assert note.width <= 3.0 + 1e-6
    assert len(note) > 2  # the Spanish lines did not fit: broken at spaces
    assert all(line.font_size == pytest.approx(18) for line in note)


# ---- chapters ----------------------------------------------------------------------------
FIXED_RULES = ("overlap", "crossing", "safe-area", "size", "contrast")


def chapter_problems(settings: Settings, slug: str) -> list[str]:
    from attention_video.pipeline.run.lint import lint_chapter
    from attention_video.pipeline.run.render import plan_chapters

    trace = build_trace(settings)
    got = lint_chapter(slug, trace, settings, tuple(plan_chapters(settings, trace, lambda s: None)))
    return [str(p) for p in got.problems if p.finding.rule in FIXED_RULES]


TRANSLATE = Settings(sentence="The ball is blue", translate=True, quality="l")


def test_the_factor_matrix_tag_of_a_translation_stays_off_the_caption():
    # "Q·Kᵀ" went under the full-width factor matrix, onto the two-line caption
    assert chapter_problems(TRANSLATE, "factor") == []


@pytest.mark.parametrize("language", ["en", pytest.param("es", marks=pytest.mark.slow)])
@pytest.mark.slow
def test_the_question_mark_and_the_training_curves_keep_clear(language):
    # the straight arrow of cross-attention ran through its "?"; the Spanish curve's name
    # and values pushed the two plots past the safe area
    settings = Settings(sentence="The ball is blue", translate=True, language=language, quality="l")
    assert chapter_problems(settings, "learning") == []


def test_a_long_badge_takes_two_lines_instead_of_a_smaller_font():
    # "modelo diminuto (d_model 4, 1 cabeza, semilla 0) · entrenado aquí" was 21 px
    settings = Settings(sentence="The black cat drank the milk", language="es", quality="l")
    assert chapter_problems(settings, "input") == []


def test_a_fold_mark_reads_on_its_rows_tint_in_both_themes():
    from attention_video.scenes.chapters.weighted_sum import tint_rows

    for theme in (DARK, LIGHT):
        colours = [word_color(i, theme) for i in range(12)]
        view = MatrixView(np.zeros((12, 20)), key="V", theme=theme, max_cols=6,
                          layout=CellLayout(0.7, 0.4, 18, True))
        tint_rows(view, colours)
        assert lint.low_contrast(lint.marks_of([view]), theme.background) == []


def test_the_input_to_layer_one_names_one_earlier_layer():
    from attention_video.scenes.chapters.input import InputScene

    for layer, said, unsaid in ((1, "layer 0 has already", "0–0"), (3, "layers 0–2 have", None)):
        scene = SimpleNamespace(trace=SimpleNamespace(decoder=False, x_label="LayerNorm(E + P)",
                                                      layer=layer),
                                tr=Translate("en"), x_label=f"hidden state after layer {layer - 1}")
        caption = InputScene.x_caption(scene, 5, 384)
        assert said in caption
        assert unsaid is None or unsaid not in caption


# ---- the rule: one number at every frame -------------------------------------------------
def fade(mob, out: bool) -> SimpleNamespace:
    return SimpleNamespace(mobject=mob, is_remover=lambda: out, is_introducer=lambda: not out)


def test_a_number_fading_in_over_one_fading_out_is_two_numbers_at_once():
    from attention_video.pipeline.run.lint import _Linting

    old, new = make_text("step 0", 22), make_text("step 7500", 22)
    found = lint.crossfades(lint.marks_of([old]), lint.marks_of([new]))
    assert [f.rule for f in found] == ["numbers"]
    assert 'text "step 7500" fades in over text "step 0"' in found[0].message
    # as the lint's play sees it: the animations of one play
    scene = SimpleNamespace(_caption=None, _read=lint.MarkCache())  # a scene's readings
    assert [f.rule for f in _Linting._crossfades(scene, [fade(old, True), fade(new, False)])] \
        == ["numbers"]
    # apart, or a word rather than a number, or one after the other: one number per frame
    assert lint.crossfades(lint.marks_of([old]), lint.marks_of([new.copy().shift(DOWN)])) == []
    assert lint.crossfades(lint.marks_of([make_text("cat", 22)]),
                           lint.marks_of([make_text("dog", 22)])) == []
    assert _Linting._crossfades(scene, [fade(old, True)]) == []


# ---- chapter 5's stacked bar and chapter 3's masked cells --------------------------------
def test_a_stacked_segment_carries_its_word_or_wears_no_word_colour():
    from attention_video.scenes.chapters.softmax import TableGeometry, make_stacked_bar

    weights = np.array([0.7, 0.1, 0.12, 0.08])
    labels = ["every", "word", "look", "at"]
    geo = TableGeometry(shown=[0, 1, 2, 3], hidden=0, row_h=0.4, font=22, head_font=22)
    bar = make_stacked_bar(weights, geo, LOOK_ALIKE[:4], labels, DARK, 0.0, 0.0, i=0,
                           decimals=3, named=0)
    assert [w.text for w in bar.words] == ["every"]  # the only segment wide enough
    assert bar.segments.labelled == (True, False, False, False)  # (what a description says)
    assert bar.segments[0].get_fill_color().to_hex().lower() == LOOK_ALIKE[0]
    marks = lint.marks_of([bar.segments, bar.outline, bar.words])
    confusions = lint.confusable(list(zip(labels, LOOK_ALIKE[:4])))
    assert confusions
    assert lint.colour_findings(marks, confusions) == []
    assert lint.low_contrast(marks, DARK.background) == []


def test_the_captions_word_is_named_under_its_segment_where_it_does_not_fit_inside():
    # the caption names the top weight's word: a grey, nameless segment would contradict it
    from attention_video.scenes.chapters.softmax import (
        BAR_LEN,
        TableGeometry,
        make_stacked_bar,
        named_fits,
    )

    weights = np.array([0.24, 0.23, 0.22, 0.16, 0.15])
    labels = ["Time", "flies", "like", "an", "arrowhead"]
    geo = TableGeometry(shown=[0, 1, 2, 3, 4], hidden=0, row_h=0.4, font=22, head_font=22)
    assert not named_fits(weights, labels, 0, geo)  # "Time" at 0.24: narrower than its word
    bar = make_stacked_bar(weights, geo, LOOK_ALIKE[:5], labels, DARK, 0.0, 0.0, i=0,
                           decimals=3, named=0)
    named = [w for w in bar.words if w.text == "Time"]
    assert len(named) == 1 and bar.segments.labelled[0]
    assert named[0].get_top()[1] < bar.outline.get_bottom()[1]  # under the bar
    assert 0.0 <= named[0].get_left()[0] and named[0].get_right()[0] <= BAR_LEN + 1e-6
    assert bar.segments[0].get_fill_color().to_hex().lower() == LOOK_ALIKE[0]
    # the words inside share one size
    inside = [w for w in bar.words if w.text != "Time"]
    assert len({round(w.font_size, 6) for w in inside}) <= 1


@pytest.mark.parametrize("theme", [DARK, LIGHT], ids=["dark", "light"])
def test_a_masked_cells_minus_infinity_reads_on_its_grey(theme):
    mask = np.tril(np.ones((4, 4), dtype=bool))
    view = MatrixView(np.zeros((4, 4)), key="scores", theme=theme, mask=mask, heat=True,
                      layout=CellLayout(0.6, 0.5, 18, False))
    assert len(view.mask_marks) == 6
    marks = lint.marks_of([view, view.mask_marks])
    assert lint.low_contrast(marks, theme.background) == []


def test_word_marks_without_words_keep_colours_only_while_they_stay_apart():
    from attention_video.scenes.chapters.factor import mark_colors

    apart = ["#ffd166", "#118ab2", "#ef476f"]  # yellow, blue, red: apart under both
    assert not lint.confusable(list(zip("abc", apart)))
    assert mark_colors(list("abc"), apart, list("abc"), apart, DARK) == (apart, apart)
    q, k = mark_colors(list("abcd"), LOOK_ALIKE[:4], list("abcd"), LOOK_ALIKE[:4], DARK)
    assert set(q) == set(k) == {DARK.muted}
