"""The lint reads each object once (scenes.lint.MarkCache, issue 45): a reading kept from an
earlier picture is served only for an object that looks the same, byte for byte, so an
object changed in place between two pictures is read again; a picture unchanged when its
caption leaves is checked once (same_picture), one that changed is checked again; and in a
real chapter the marks read with the chapter's cache are the marks read afresh."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from attention_video.attncore import Settings
from attention_video.pipeline.run import lint as run_lint
from attention_video.scenes import lint
from attention_video.scenes.text import make_text
from attention_video.scenes.themes import THEMES
from manim import DOWN, LEFT, RIGHT, UP, Arrow, DashedLine, Rectangle, VGroup

from tests.support.builds import plan_of, trace_of

pytestmark = pytest.mark.xdist_group("lint")

DARK = THEMES["dark"]


def picture() -> list:
    """A word in a filled box, a number, an arrow between them and a dashed line."""
    word = make_text("cat", 24, DARK.text).move_to(LEFT * 2)
    box = Rectangle(width=1.2, height=0.8, stroke_color=DARK.grid, fill_color=DARK.q,
                    fill_opacity=0.3).move_to(word)
    number = make_text("0.61", 24, DARK.text).move_to(RIGHT * 2)
    arrow = Arrow(LEFT, RIGHT, color=DARK.accent)
    dashed = DashedLine(LEFT * 3 + DOWN, RIGHT * 3 + DOWN, color=DARK.grid)
    return [VGroup(box, word), number, arrow, dashed]


# Changes made in place, as a scene's code makes them between two pictures without a play.
CHANGES = {
    "a text moved": lambda p: p[1].shift(UP * 0.5),
    "a text recoloured": lambda p: p[1].set_color(DARK.k),
    "a text faded": lambda p: p[1].set_opacity(0.4),
    "a fill moved with its group": lambda p: p[0].shift(DOWN * 0.3),
    "a fill made opaque": lambda p: p[0][0].set_fill(opacity=1.0),
    "an arrow recoloured": lambda p: p[2].set_color(DARK.v),
    "an arrow thickened": lambda p: p[2].set_stroke(width=12),
    "an arrow turned": lambda p: p[2].rotate(0.5),
    "a dashed line moved": lambda p: p[3].shift(UP),
    "a point moved in place": lambda p: p[2][0].points.__setitem__((0, 0), -0.9),
}


@pytest.mark.parametrize("change", CHANGES)
def test_an_object_changed_in_place_is_read_again(change):
    pic = picture()
    cache = lint.MarkCache()
    before = lint.marks_of(pic, cache)
    CHANGES[change](pic)
    kept = lint.marks_of(pic, cache)
    assert lint.same_picture(kept, lint.marks_of(pic))  # as read afresh
    assert not lint.same_picture(kept, before)  # the change shows


def test_a_picture_read_again_reads_nothing_again(monkeypatch):
    pic = picture()
    cache = lint.MarkCache()
    first = lint.marks_of(pic, cache)
    reads = []
    for name in ("_read_leaf", "_read_text", "_read_glyphs"):
        real = getattr(lint, name)
        monkeypatch.setattr(lint, name, lambda m, real=real, name=name: reads.append(name)
                            or real(m))
    again = lint.marks_of(pic, cache)
    assert reads == []
    assert lint.same_picture(first, again)
    pic[1].shift(UP)  # one text moved: only it is read again
    lint.marks_of(pic, cache)
    assert sorted(reads) == ["_read_glyphs", "_read_text"]


def test_same_picture_tells_a_difference_in_any_field():
    pic = picture()
    marks = lint.marks_of(pic)
    line = next(m for m in marks if m.kind == "line")
    assert lint.same_picture(marks, lint.marks_of(pic))
    for field in dataclasses.fields(lint.Mark):
        value = getattr(line, field.name)
        if isinstance(value, np.ndarray):
            other = value + 0.001
        elif isinstance(value, str):
            other = value + "x"
        elif isinstance(value, tuple):
            other = value + ("x",)
        elif value is None:
            other = np.zeros((1, 2))
        else:
            other = value + 1
        changed = [dataclasses.replace(m, **{field.name: other}) if m is line else m
                   for m in marks]
        assert not lint.same_picture(marks, changed), field.name
    assert not lint.same_picture(marks, marks[:-1])


@pytest.mark.slow  # a whole chapter built: the synthetic pictures above are the fast check
def test_in_a_chapter_the_kept_readings_are_the_marks_read_afresh(monkeypatch):
    # every picture the lint takes of a real chapter, read with the chapter's cache and
    # again without it
    settings = Settings(sentence="The black cat drank the milk", quality="l")
    pictures = []
    kept_marks = run_lint._Linting._marks

    def both(scene):
        kept = kept_marks(scene)
        pictures.append((kept, lint.marks_of(scene.mobjects, framed=scene.framing)))
        return kept

    monkeypatch.setattr(run_lint._Linting, "_marks", both)
    run_lint.lint_chapter("linear", trace_of(settings), settings, plan_of(settings))
    assert len(pictures) > 10
    assert all(lint.same_picture(kept, fresh) for kept, fresh in pictures)
    assert sum(len(kept) for kept, _ in pictures) > 1000


@pytest.mark.parametrize("turn", [0.0, 1.5707963267948966, 0.3])
def test_a_texts_extent_is_manims_width_and_height(turn):
    # the size rule reads a text's height in one pass (_extent), not by Manim's walk
    for mob in (make_text("cat 0.61", 24, DARK.text).rotate(turn),
                VGroup(make_text("θ", 30, DARK.k), VGroup(), Rectangle().shift(UP)).rotate(turn)):
        assert lint._extent(mob, 0) == mob.width
        assert lint._extent(mob, 1) == mob.height
