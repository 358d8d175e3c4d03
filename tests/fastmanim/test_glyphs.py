"""fastmanim.glyphs: a text read a glyph at a time must be Manim's Text exactly: the same
paths, in the same order, with the same points to the last bit and the same styles."""

from __future__ import annotations

import numpy as np
import pytest
from attention_video.fastmanim import glyphs
from attention_video.fastmanim.glyphs import GlyphText, glyph_paths
from attention_video.scenes.text import FONT
from manim import Text

STRINGS = [
    "0.00", "−4.40", "24.1346", "-16.71", "1 × 4",
    'The row of "milk" in X becomes its row of Q: (2.87, −4.40, −1.54, 0.36).',
    "每对相乘：4 对中 3 对同号（绿色，为正），1 对异号（红色，为负）。",
    "Q · Kᵀ[milk, drank] = Σₘ Q[milk, m] · K[drank, m]", "÷ √4 = 2.00", "exp(x − max)",
    "two\nlines", "tab\there", "a  b", "שלום עולם", "القط", "Ünïcödé façade", "日本語",
]


def make(cls, text: str, size: float, weight: str):
    try:
        return cls(text, font=FONT, font_size=size, weight=weight, disable_ligatures=True,
                   warn_missing_font=False)
    except ValueError:  # as scenes.text._pango_text does
        return cls(text, font=FONT, font_size=size, weight=weight, warn_missing_font=False)


def differences(a: Text, b: Text) -> list[str]:
    out = []
    fa, fb = a.family_members_with_points(), b.family_members_with_points()
    if len(fa) != len(fb):
        return [f"{len(fa)} paths against {len(fb)}"]
    for i, (x, y) in enumerate(zip(fa, fb)):
        if x.points.shape != y.points.shape or not np.array_equal(x.points, y.points):
            out.append(f"path {i}: points")
        for attr in ("fill_rgbas", "stroke_rgbas", "background_stroke_rgbas"):
            if not np.array_equal(getattr(x, attr), getattr(y, attr)):
                out.append(f"path {i}: {attr}")
        if x.stroke_width != y.stroke_width:
            out.append(f"path {i}: stroke width")
    if [len(m.submobjects) for m in a.submobjects] != [len(m.submobjects) for m in b.submobjects]:
        out.append("grouping")
    if not np.array_equal(a.get_center(), b.get_center()):
        out.append("centre")
    return out


@pytest.mark.slow
@pytest.mark.parametrize("weight", ["NORMAL", "BOLD"])
@pytest.mark.parametrize("text", STRINGS)
def test_glyph_text_is_manims_text_to_the_last_bit(text, weight):
    for size in (20, 27.5):
        manim, ours = make(Text, text, size, weight), make(GlyphText, text, size, weight)
        assert differences(manim, ours) == [], (text, size)


@pytest.mark.slow
def test_every_string_is_read_the_fast_way_into_the_paths_manims_reader_makes(tmp_path):
    """Pango's plain glyph lists are all read by glyph_paths (none falls back), into the
    paths SVGMobject.get_mobjects_from makes of the same file, point for point."""
    import xml.etree.ElementTree as ET

    import svgelements as se

    for text in STRINGS:
        t = make(Text, text, 20, "NORMAL")
        modified = tmp_path / "modified.svg"
        t.modify_xml_tree(ET.parse(t.get_file_path())).write(modified)
        manims, _ = t.get_mobjects_from(se.SVG.parse(modified))
        if not manims:  # Manim's Text draws no glyph for some short right-to-left words
            continue  # (scenes.text draws them with MarkupText)
        ours = glyph_paths(t, t.get_file_path().read_text(encoding="utf-8"))
        assert len(ours) == len(manims), text
        for a, b in zip(ours, manims):
            assert np.array_equal(a.points, b.points), text


def test_anything_else_goes_to_manims_reader():
    """An element Pango's glyph lists do not have (here a rectangle in the body, and a
    transform on a use) is refused, and GlyphText then reads the file as Manim does."""
    t = make(Text, "0.5", 20, "NORMAL")
    svg = t.get_file_path().read_text(encoding="utf-8")
    rect = svg.replace("</svg>", '<rect x="0" y="0" width="5" height="5"/></svg>')
    moved = svg.replace('<use xlink:href=', '<use transform="scale(2)" xlink:href=', 1)
    for bad in (rect, moved):
        with pytest.raises(glyphs._Unreadable):
            glyph_paths(t, bad)


def test_a_line_closing_a_glyph_and_a_curve_become_manims_points():
    """The handles of a line are at a third and two thirds, computed after the use's
    translation, exactly as Manim's path reader computes them."""
    d = "M 0 0 L 3 0 C 3 1 2 2 1 2 Z"
    raw, rows = glyphs._program(d)
    assert raw.tolist() == [[0, 0], [3, 0], [3, 1], [2, 2], [1, 2]]
    assert [r[0] for r in rows] == ["p", "h1", "h2", "p", "p", "p", "p", "p",
                                   "p", "h1", "h2", "p"]  # the line, the curve, the close
