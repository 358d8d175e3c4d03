"""scenes.themes: every theme names its colours, each a #rrggbb, and the module runs
without Manim (the companion page and the slides read it)."""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys

import pytest
from attention_video.scenes.themes import THEMES, Theme, contrast

from tests.support.paths import ROOT

HEX = re.compile(r"#[0-9a-f]{6}")
COLOURS = [f.name for f in dataclasses.fields(Theme) if f.type == "str" and f.name != "name"]


def test_the_theme_module_imports_no_manim():
    code = ("import sys\n"
            "import attention_video.scenes.themes\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'manim'))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"


def test_a_theme_has_the_colour_of_every_role():
    assert {"background", "text", "muted", "grid", "accent", "positive", "negative",
            "q", "k", "v", "w", "z"} == set(COLOURS)


@pytest.mark.parametrize("name", sorted(THEMES))
def test_every_colour_of_a_theme_is_a_hex_colour(name):
    theme = THEMES[name]
    assert theme.name == name
    for field in COLOURS:
        assert HEX.fullmatch(getattr(theme, field)), (name, field, getattr(theme, field))
    assert 0.0 < theme.word_lightness < 1.0 and 0.0 < theme.word_saturation <= 1.0


def test_dark_is_read_from_the_background():
    assert THEMES["dark"].dark and not THEMES["light"].dark


@pytest.mark.parametrize("name", sorted(THEMES))
def test_text_reads_on_the_background(name):
    theme = THEMES[name]
    assert contrast(theme.text, theme.background) >= 7.0  # WCAG AAA


# WCAG 2.2 1.4.11 (non-text contrast): a mark the picture needs to be understood (an arrow
# in Q's or K's colour, the accent's outline of the followed row, a sign's colour, a
# weight's bar) stands at 3:1 or more against the background. `grid` is left out on
# purpose: cell borders, axes and ticks are at about 1.5-1.8:1, and each carries nothing
# a number or a label beside it does not also say (README, "Accessibility").
MARKS = ("muted", "accent", "positive", "negative", "q", "k", "v", "w", "z")


@pytest.mark.parametrize("name", sorted(THEMES))
def test_every_mark_that_carries_meaning_stands_out_at_three_to_one(name):
    theme = THEMES[name]
    low = {mark: round(contrast(getattr(theme, mark), theme.background), 2) for mark in MARKS
           if contrast(getattr(theme, mark), theme.background) < 3.0}
    assert not low, f"{name}: below WCAG 1.4.11's 3:1: {low}"


@pytest.mark.parametrize("name", sorted(THEMES))
def test_the_grid_is_the_one_role_below_three_to_one(name):
    """If the grid ever reaches 3:1, or another role falls below, the statement in the
    README must change with it."""
    theme = THEMES[name]
    below = {field for field in COLOURS if field != "background"
             and contrast(getattr(theme, field), theme.background) < 3.0}
    assert below == {"grid"}
