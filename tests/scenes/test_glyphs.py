"""Glyphs and maths on screen (issue 40): a √ is one piece with its bar over the radicand,
and no caption or title writes maths in ASCII ("base^(−2m/d_k)"): a "^" or a "d_k" is a
typing convention, not what a reader should see."""

from __future__ import annotations

import re

import pytest
from attention_video.scenes.text import join_radicals, make_text
from babel.messages.pofile import read_po

from tests.support.paths import ROOT

PLACEHOLDER = re.compile(r"\{\w*\}")


@pytest.mark.parametrize("written", ["√dₖ", "÷ √4 = 2.00", "softmax(Q·Kᵀ / √dₖ)·V"])
def test_a_root_s_bar_reaches_over_its_radicand(written):
    t = make_text(written, 28)
    at = written.index("√")
    radicand = t[at + 1:at + 1 + len(re.match(r"\w+", written[at + 1:])[0])]
    root = t[at]
    # its ink runs on over the radicand, above it: one piece, the tick and the bar
    assert root.get_right()[0] >= radicand.get_right()[0]
    assert root.get_top()[1] > radicand.get_top()[1]


def test_a_font_s_root_alone_stops_short_of_its_radicand():
    """Why it is redrawn: the glyph as the font draws it ends where "4" starts."""
    from attention_video.scenes.text import _pango_text  # noqa: PLC0415

    t = _pango_text("√4", 28.0, "NORMAL")
    assert t[0].get_right()[0] < t[1].get_center()[0]
    join_radicals(t, "√4")
    assert t[0].get_right()[0] >= t[1].get_right()[0]


def messages() -> list[str]:
    with open(ROOT / "locale" / "messages.pot", "rb") as f:
        catalogue = read_po(f)
    out = []
    for m in catalogue:
        if m.id:
            out += [m.id] if isinstance(m.id, str) else list(m.id)
    return out


def test_no_caption_writes_a_power_with_a_caret_or_d_k_with_an_underscore():
    """Placeholders ({d_k}) are names in code, not on screen; the rest must read as maths."""
    bad = [m for m in messages() if "^" in PLACEHOLDER.sub("", m)
           or "d_k" in PLACEHOLDER.sub("", m)]
    assert not bad, bad
