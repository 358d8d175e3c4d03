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
