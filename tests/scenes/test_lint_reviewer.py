"""The lint's rules for what a reviewer saw and the first lint missed (issue 40): each fires on
a small synthetic picture with the defect and stays quiet once it is fixed."""

from __future__ import annotations

import numpy as np
import pytest
from attention_video.scenes import lint
from attention_video.scenes.layout import SAFE_X, SAFE_Y, TITLE_SAFE_X, TITLE_SAFE_Y
from attention_video.scenes.text import make_text
from attention_video.scenes.themes import THEMES
from attention_video.scenes.widgets import HEAT_FAINTEST, HEAT_SPAN, make_caption
from manim import (
    DL,
    DOWN,
    LEFT,
    ORIGIN,
    RIGHT,
    UL,
    UP,
    UR,
    Arc,
    Arrow,
    Line,
    Rectangle,
    Square,
    VGroup,
    VMobject,
)

DARK = THEMES["dark"]


def text(s: str, size: float = 24, color: str = DARK.text):
    return make_text(s, size, color)


def rules(findings) -> list[str]:
    return [f.rule for f in findings]


def arrow(angle_deg: float, length: float = 3.0, color: str = DARK.accent) -> Arrow:
    end = length * np.array([np.cos(np.radians(angle_deg)), np.sin(np.radians(angle_deg)), 0])
    return Arrow(ORIGIN, end, buff=0, color=color, stroke_width=5)


# ---- 1. lines on lines ------------------------------------------------------------------
def test_two_arrows_a_degree_apart_lie_on_each_other_and_twenty_apart_do_not():
    found = lint.lines_on_lines(lint.marks_of([arrow(80), arrow(81, color=DARK.q)]))
    assert "lines" in rules(found) and "runs along" in found[0].message
    assert lint.lines_on_lines(lint.marks_of([arrow(60), arrow(80, color=DARK.q)])) == []


def test_parallel_strokes_apart_by_more_than_a_stroke_width_are_two_lines():
    a = Line(LEFT * 2, RIGHT * 2, stroke_width=5)
    near = Line(LEFT * 2, RIGHT * 2, stroke_width=5).shift(UP * 0.06)  # 0.06 < 0.05 + 0.05
    far = Line(LEFT * 2, RIGHT * 2, stroke_width=5).shift(UP * 0.3)
    assert rules(lint.lines_on_lines(lint.marks_of([a, near]))) == ["lines"]
    assert lint.lines_on_lines(lint.marks_of([a, far])) == []
    # crossing strokes, and a short touch, are not on each other
    assert lint.lines_on_lines(lint.marks_of([a, Line(DOWN, UP, stroke_width=5)])) == []
    short = Line(LEFT * 0.1, RIGHT * 0.1, stroke_width=5).shift(UP * 0.03)
    assert lint.lines_on_lines(lint.marks_of([a, short])) == []


def test_outlines_may_share_edges_as_a_tables_cells_do():
    cells = [Square(0.5, stroke_width=2).shift(RIGHT * 0.5 * i) for i in range(4)]
    assert lint.lines_on_lines(lint.marks_of(cells)) == []


def test_an_arrowhead_under_another_arrowhead_is_hidden():
    found = lint.lines_on_lines(lint.marks_of([arrow(80), arrow(81, length=3.05,
                                                                 color=DARK.q)]))
    assert any("head of" in f.message for f in found)
    assert lint.hidden_tips(lint.marks_of([arrow(30), arrow(80, color=DARK.q)])) == []
    # ... or under an opaque box drawn over it
    a = arrow(0)
    box = Rectangle(width=0.6, height=0.6, stroke_width=0).set_fill(DARK.background, 1)
    box.move_to(a.get_end())
    assert rules(lint.hidden_tips(lint.marks_of([a, box]))) == ["lines"]


# ---- 2. labels and their marks -------------------------------------------------------------
def test_a_label_far_from_its_arc_fires_and_one_beside_it_does_not():
    arc = Arc(radius=0.6, start_angle=0, angle=np.radians(11))
    beside = text("θ").next_to(arc, RIGHT, buff=0.1)
    assert lint.far_labels(lint.marks_of([VGroup(arc, beside)])) == []
    far = text("θ").move_to(arc.get_center() + UP * 1.5)
    found = lint.far_labels(lint.marks_of([VGroup(arc.copy(), far)]))
    assert rules(found) == ["label"] and 'text "θ"' in found[0].message


def test_the_gap_is_to_the_marks_ink_not_its_box():
    """Inside a wide arc's box but far from its ink: far."""
    arc = Arc(radius=2, start_angle=0, angle=np.radians(150))
    inside = text("θ").move_to(ORIGIN + UP * 0.3 + RIGHT * 0.2)
    assert rules(lint.far_labels(lint.marks_of([VGroup(arc, inside)]))) == ["label"]


def test_two_angles_each_labelled_theta_fire_and_theta_one_theta_two_do_not():
    def angle(deg: float, name: str) -> VGroup:
        arc = Arc(radius=0.6, start_angle=0, angle=np.radians(deg))
        return VGroup(arc, text(name).next_to(arc.point_from_proportion(0.5), UR, buff=0.05))

    found = lint.repeated_names(lint.marks_of([angle(30, "θ"), angle(120, "θ").shift(RIGHT * 3)]))
    assert rules(found) == ["label"] and '"θ"' in found[0].message
    # a one-character word names its arrow and its shadow bar: one word's marks, in its colour
    word = [angle(30, "了"), angle(120, "了").shift(RIGHT * 3)]
    for group in word:
        group[1].set_color(DARK.k)
    assert rules(lint.repeated_names(lint.marks_of(word))) == ["label"]
    assert lint.repeated_names(lint.marks_of(word), word_colors=[DARK.k]) == []
    assert lint.repeated_names(lint.marks_of([angle(30, "θ₁"),
                                              angle(120, "θ₂").shift(RIGHT * 3)])) == []


def test_a_word_beside_the_middle_of_a_long_shaft_is_near_it():
    """The gap to a line is measured to every point of it, not to points sampled at thirds:
    a word over the middle of a 6-unit shaft is 0.3 from it, not 1.0."""
    shaft = Line(LEFT * 3, RIGHT * 3)
    near = text("k").move_to(UP * 0.3 + RIGHT * 0.5)
    assert lint.far_labels(lint.marks_of([VGroup(shaft, near)])) == []
    far = text("k").move_to(UP * 1.2 + RIGHT * 0.5)
    assert rules(lint.far_labels(lint.marks_of([VGroup(shaft.copy(), far)]))) == ["label"]


def test_one_query_labelled_q_in_each_of_its_panels_is_one_thing_drawn_again():
    """Small multiples: the same arrow, at one scale, labelled "q" in every panel, names one
    quantity; two different arrows labelled "q" name two."""
    def panel(length: float) -> VGroup:
        q = Arrow(ORIGIN, RIGHT * length, buff=0, color=DARK.q, stroke_width=5)
        return VGroup(q, text("q", color=DARK.q).next_to(q, RIGHT, buff=0.1))

    same = [panel(2.0), panel(2.0).shift(RIGHT * 4), panel(2.0).shift(DOWN * 2)]
    assert lint.repeated_names(lint.marks_of(same)) == []
    other = [panel(2.0), panel(1.2).shift(RIGHT * 4)]
    assert rules(lint.repeated_names(lint.marks_of(other))) == ["label"]


# ---- 3. told by colour alone -------------------------------------------------------------
GREEN_RED = ("#5ad28c", "#ff6b6b")  # the old sign colours: one khaki under deuteranopia


def signed_cells(with_glyphs: bool, colors: tuple[str, str] = GREEN_RED,
                 opacity: float = 0.6) -> list:
    """Four cells tinted by sign, with a + or − on each or nothing."""
    out = []
    for c, sign in enumerate((1, -1, 1, -1)):
        cell = Square(0.5, stroke_width=0).set_fill(colors[sign < 0], opacity)
        out.append(cell.shift(RIGHT * 0.5 * c))
        if with_glyphs:
            out.append(text("+" if sign > 0 else "−", 20).move_to(cell))
    return out


def test_a_sign_told_by_colour_alone_fires_and_a_written_sign_does_not():
    back = DARK.background
    found = lint.sign_by_colour_alone(lint.marks_of(signed_cells(False)), *GREEN_RED, back)
    assert rules(found) == ["colour"] and "4 marks" in found[0].message
    assert lint.sign_by_colour_alone(lint.marks_of(signed_cells(True)), *GREEN_RED, back) == []
    # a product's box with its number on it tells the sign by the number
    box = Rectangle(width=1, height=0.5, stroke_width=2).set_fill(GREEN_RED[1], 0.2)
    assert lint.sign_by_colour_alone(lint.marks_of([box, text("−0.12").move_to(box)]),
                                     *GREEN_RED, back) == []


@pytest.mark.parametrize("theme", sorted(THEMES))
def test_sign_colours_that_stay_apart_for_colour_blind_viewers_need_no_written_sign(theme):
    """The themes' blue–red pair tells the sign by colour to every viewer at every
    heat-map opacity; a blue–red pair that a protanope loses when faint still fires, on the
    faint cells only."""
    t = THEMES[theme]
    signs = (t.positive, t.negative)
    for opacity in (HEAT_FAINTEST, 0.3, HEAT_FAINTEST + HEAT_SPAN):
        cells = lint.marks_of(signed_cells(False, signs, opacity))
        assert lint.sign_by_colour_alone(cells, *signs, t.background) == [], opacity
    blue_red = ("#5aa9ff", "#ff6b6b")  # 46 apart at full opacity, 7 at 0.12 as protanopes see
    assert lint.sign_by_colour_alone(lint.marks_of(signed_cells(False, blue_red, 0.8)),
                                     *blue_red, DARK.background) == []
    faint = lint.sign_by_colour_alone(lint.marks_of(signed_cells(False, blue_red, HEAT_FAINTEST)),
                                      *blue_red, DARK.background)
    assert rules(faint) == ["colour"] and "4 marks" in faint[0].message


@pytest.mark.parametrize("theme", sorted(THEMES))
def test_the_sign_colours_stay_apart_at_every_heat_map_opacity(theme):
    t = THEMES[theme]
    for opacity in np.linspace(HEAT_FAINTEST, 1.0, 23):
        apart = lint.signs_apart(t.positive, t.negative, t.background, float(opacity))
        assert apart >= lint.MIN_WORD_DELTA_E, (theme, round(float(opacity), 2), round(apart, 1))


def test_one_word_in_two_colours_fires_and_indexed_it_does_not():
    two = [text("flies", color=DARK.q), text("flies", color=DARK.k).shift(DOWN)]
    found = lint.same_words_by_colour(lint.marks_of(two))
    assert rules(found) == ["colour"] and "flies₁" in found[0].message
    # "The" and "the" are the same word to a reader
    cased = [text("The", color=DARK.q), text("the", color=DARK.k).shift(DOWN)]
    assert rules(lint.same_words_by_colour(lint.marks_of(cased))) == ["colour"]
    indexed = [text("flies₁", color=DARK.q), text("flies₂", color=DARK.k).shift(DOWN)]
    assert lint.same_words_by_colour(lint.marks_of(indexed)) == []
    # the same word twice in one colour names one thing
    assert lint.same_words_by_colour(lint.marks_of([text("cat"), text("cat").shift(DOWN)])) == []


# ---- 4. every resting state held for its reading time ------------------------------------
def test_a_snapshot_rested_on_for_a_third_of_a_second_is_too_brief():
    table = lint.Shown(("step 94", "0.12", "−0.40", "0.33"), came=10.0, went=10.3, rested=0.3,
                       reading=2.5)
    assert rules(lint.brief_states([table], 1 / 15)) == ["state"]
    held = lint.Shown(table.texts, came=10.0, went=12.6, rested=2.6, reading=2.5)
    assert lint.brief_states([held], 1 / 15) == []
    # passed through in a morph, never rested on: not a state the picture rests in
    passing = lint.Shown(table.texts, came=10.0, went=10.7, rested=0.0, reading=2.5)
    assert lint.brief_states([passing], 1 / 15) == []


def test_text_look_changes_when_a_text_morphs_or_fades_not_when_it_moves():
    label, caption = text("0.61"), make_caption("A caption.", DARK)
    before = lint.text_look([label, caption], skip=[caption])
    assert [v[0] for v in before.values()] == ["0.61"]
    label.shift(RIGHT)  # the same table moved: still the same state
    assert lint.text_look([label])[id(label)] == before[id(label)]
    label.become(text("0.75").move_to(label))  # a snapshot's number turned into the next
    assert lint.text_look([label])[id(label)][1] != before[id(label)][1]
    label.set_opacity(0)
    assert lint.text_look([label]) == {}


# ---- 5. charts state their scale -----------------------------------------------------------
def curve(n: int = 40) -> VMobject:
    line = VMobject(stroke_color=DARK.negative, stroke_width=4)
    x = np.linspace(-2, 2, n)
    line.set_points_as_corners([[a, np.exp(-a - 2) * 2 - 1, 0] for a in x])
    return line


def test_a_plot_without_numbers_on_its_axis_fires_and_labelled_extremes_do_not():
    line = curve()
    box = Rectangle(width=4, height=2.2, stroke_width=2).move_to(ORIGIN)
    found = lint.unscaled_charts(lint.marks_of([box, line, text("loss").next_to(box, UP)]))
    assert rules(found) == ["chart"]
    top = text("2.0", 18).next_to(box.get_corner(UL), LEFT, buff=0.1)
    bottom = text("0", 18).next_to(box.get_corner(DL), LEFT, buff=0.1)
    assert lint.unscaled_charts(lint.marks_of([box, line, top, bottom])) == []
    # a straight arrow is no plot
    assert lint.unscaled_charts(lint.marks_of([arrow(10)])) == []


# ---- 6. title-safe margins -----------------------------------------------------------------
def test_a_caption_past_the_title_safe_area_fires_where_other_text_may_go():
    wide = text("x" * 10).move_to([TITLE_SAFE_X + 0.05, 0, 0], aligned_edge=RIGHT)
    assert lint.outside_safe_area(lint.marks_of([wide])) == []  # inside 93 %
    found = lint.outside_safe_area(lint.marks_of([wide], framed=[wide]))
    assert rules(found) == ["safe-area"] and "title-safe" in found[0].message


def test_only_the_framed_objects_are_held_to_the_title_safe_area_as_they_were_read():
    # Their marks say so as read: a lint that named them by id() once the picture had gone
    # held a freed note to the title-safe area when a later caption took its id.
    note = text("x" * 10).move_to([TITLE_SAFE_X + 0.05, 1, 0], aligned_edge=RIGHT)
    caption = text("y" * 10).move_to([TITLE_SAFE_X + 0.05, -1, 0], aligned_edge=RIGHT)
    marks = lint.marks_of([note, caption], framed=[caption])
    assert [m.framed for m in marks] == [False, True]
    found = lint.outside_safe_area(marks)
    assert len(found) == 1 and '"yyyyyyyyyy"' in found[0].message


@pytest.mark.parametrize("long", [False, True])
def test_the_caption_and_the_safe_areas_are_smpte_st_2046_1(long):
    assert SAFE_X == pytest.approx(0.93 * 14.2222 / 2, abs=0.01)
    assert SAFE_Y == pytest.approx(0.93 * 8 / 2, abs=0.01)
    assert (TITLE_SAFE_X, TITLE_SAFE_Y) == (pytest.approx(0.90 * 14.2222 / 2, abs=0.01), 3.6)
    caption = make_caption("word " * (60 if long else 5), DARK)
    assert lint.outside_safe_area(lint.marks_of([caption], framed=[caption])) == []


def test_a_repeated_word_is_labelled_by_its_occurrence_everywhere():
    from attention_video.scenes.labels import word_labels

    assert word_labels(["Time", "flies", "like", "an", "arrow", "fruit", "flies", "like",
                        "a", "banana"]) == ["Time", "flies₁", "like₁", "an", "arrow", "fruit",
                                            "flies₂", "like₂", "a", "banana"]
    assert word_labels(["The", "black", "cat", "drank", "the", "milk"])[::4] == ["The₁", "the₂"]
    assert word_labels(["extraordinarily", "extraordinarily"]) == ["extraord…₁", "extraord…₂"]


def test_a_dashed_query_under_a_key_three_degrees_off_is_two_lines_and_keeps_its_head():
    """Chapter 4 dashes the query's arrow under a key within a few degrees of it: a dashed
    line and a solid one are told apart where they meet, and the dashed arrow's head is
    still a head (a head laid over it is hidden)."""
    dashed = lint.marks_of([VGroup(_dashed_arrow(3.0)), VGroup(arrow(3, 2.0, DARK.k))])
    assert lint.lines_on_lines(dashed) == []
    solid = lint.marks_of([VGroup(arrow(0, color=DARK.q)), VGroup(arrow(3, 2.0, DARK.k))])
    assert rules(lint.lines_on_lines(solid)) == ["lines"]
    assert any(m.role == "tip" for m in lint.marks_of([_dashed_arrow(3.0)]))
    covered = lint.marks_of([_dashed_arrow(3.0), arrow(1, length=3.0, color=DARK.k)])
    assert any("head of" in f.message for f in lint.hidden_tips(covered))


def test_one_query_dashed_in_one_panel_and_solid_in_the_others_is_one_thing_drawn_again():
    def panel(q: VMobject) -> VGroup:
        return VGroup(q, text("q", color=DARK.q).next_to(q, RIGHT, buff=0.1))

    same = [panel(_solid_arrow(2.0)), panel(_dashed_arrow(2.0)).shift(RIGHT * 4)]
    assert lint.repeated_names(lint.marks_of(same)) == []
    other = [panel(_solid_arrow(2.0)), panel(_dashed_arrow(1.2)).shift(RIGHT * 4)]
    assert rules(lint.repeated_names(lint.marks_of(other))) == ["label"]


def _dashed_arrow(length: float) -> VMobject:
    from manim import DashedLine

    line = DashedLine(ORIGIN, RIGHT * length, color=DARK.q, stroke_width=6, dash_length=0.1)
    return line.add_tip(tip_length=0.2, tip_width=0.2)


def _solid_arrow(length: float) -> Arrow:
    """The query's arrow as chapter 4 draws it solid: the dashed one's head."""
    return Arrow(ORIGIN, RIGHT * length, buff=0, color=DARK.q, stroke_width=6, tip_length=0.2,
                 max_tip_length_to_length_ratio=1)
