"""The video's themes and the colour maths that reads them: each theme's colours by name,
the WCAG contrast of two colours, and one colour per word legible on the background.

Pure Python, no Manim: the companion page and the slides read the same palette without
importing the renderer (tests/scenes/test_themes.py checks that).
"""

from __future__ import annotations

import colorsys
from dataclasses import dataclass

MIN_CONTRAST = 4.5  # WCAG AA for text: a word's colour against the theme's background


def relative_luminance(color: str) -> float:
    """WCAG 2's relative luminance of a #rrggbb colour."""
    channels = [int(color[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    r, g, b = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def is_dark(color: str) -> bool:
    """A colour light ink reads on (rather than dark ink)."""
    return relative_luminance(color) < 0.18


def contrast(a: str, b: str) -> float:
    """WCAG 2's contrast ratio of two colours, 1 to 21."""
    hi, lo = sorted((relative_luminance(a), relative_luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


@dataclass(frozen=True)
class Theme:
    """One look of the video: every colour a chapter draws with, as #rrggbb, by its role."""

    name: str  # the --theme value
    background: str
    text: str  # titles, captions, numbers on a plain cell
    muted: str  # secondary text: a shape, a "…", a masked cell's mark
    grid: str  # cell borders, rules, a masked cell's fill
    accent: str  # highlights: the followed row, the chosen cell
    positive: str  # agreeing signs, positive values: a blue ...
    negative: str  # opposing signs, negative values: ... and a red (vermilion), a diverging pair
    #                that stays 10+ CIEDE2000 apart at every heat-map opacity (0.12 up) for
    #                normal, deuteranopic, protanopic and tritanopic vision
    #                (scenes.lint.signs_apart; tests/scenes/test_themes.py): green and red
    #                were one khaki under deuteranopia, so a heat map's sign was lost
    q: str  # the colours of Q, K, V, the weights and Z: one each, in every chapter
    k: str
    v: str
    w: str
    z: str
    word_lightness: float  # HLS lightness the word colours start from (word_color)
    word_saturation: float  # and their HLS saturation

    @property
    def dark(self) -> bool:
        """Light ink on a dark background: word colours step lighter to read, not darker."""
        return is_dark(self.background)


THEMES = {
    "dark": Theme(
        name="dark", background="#14161c", text="#eceff4", muted="#9aa3b2", grid="#3b4252",
        accent="#ffd166", positive="#3481f4", negative="#ec4713",
        q="#f4a261", k="#2ec4b6", v="#c77dff", w="#ffd166", z="#ff8fab",
        word_lightness=0.68, word_saturation=0.75),
    "light": Theme(
        name="light", background="#fbfaf7", text="#1d232c", muted="#5f6b7a", grid="#c8ccd4",
        accent="#b45309", positive="#205bf3", negative="#a0160d",
        q="#c2410c", k="#0f766e", v="#7e22ce", w="#b45309", z="#be185d",
        word_lightness=0.40, word_saturation=0.80),
}


def legible(hue: float, lightness: float, saturation: float, theme: Theme) -> str:
    """The colour of `hue` at `lightness`, moved away from the background's lightness
    (lighter on dark, darker on light) until it reads as text on it: yellows and greens at
    the lightness that suits blues are too pale on a light background."""
    step = 0.01 if theme.dark else -0.01
    while True:
        r, g, b = colorsys.hls_to_rgb(hue, min(1.0, max(0.0, lightness)), saturation)
        color = f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}"
        if contrast(color, theme.background) >= MIN_CONTRAST or not 0.0 < lightness < 1.0:
            return color
        lightness += step


def blend(top: str, under: str, alpha: float) -> str:
    """The #rrggbb seen where `top` is laid at `alpha` over `under`."""
    a = [int(top[i:i + 2], 16) for i in (1, 3, 5)]
    b = [int(under[i:i + 2], 16) for i in (1, 3, 5)]
    r, g, bl = (min(255, max(0, round(alpha * x + (1 - alpha) * y))) for x, y in zip(a, b))
    return f"#{r:02x}{g:02x}{bl:02x}"


def ink_on(color: str, fill: str, theme: Theme, floor: float = MIN_CONTRAST) -> str:
    """`color`, or its hue made lighter or darker (whichever reads better), until it reads
    on `fill` (the colour seen under the text) at `floor`: a word's number keeps its word's
    hue on a tinted cell or chip."""
    if contrast(color, fill) >= floor:
        return color
    r, g, b = (int(color[i:i + 2], 16) / 255 for i in (1, 3, 5))
    hue, light, sat = colorsys.rgb_to_hls(r, g, b)
    step = 0.01 if is_dark(fill) else -0.01
    best = color
    while 0.0 <= light <= 1.0:
        r, g, b = colorsys.hls_to_rgb(hue, light, sat)
        best = f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}"
        if contrast(best, fill) >= floor:
            return best
        light += step
    return best


def number_ink(fill: str, opacity: float, theme: Theme) -> str:
    """The colour of a number on a cell filled with `fill` at `opacity`: the theme's text
    colour, or its background's where the cell is too bright (or too dark) for it, or
    black or white on a mid-tone cell, picked by the cell's luminance as seen."""
    seen = blend(fill, theme.background, opacity)
    for ink in (theme.text, theme.background):
        if contrast(ink, seen) >= MIN_CONTRAST:
            return ink
    # a mid-tone cell: black or white reads on any colour at 4.58:1 or more
    return max(("#000000", "#ffffff"), key=lambda c: contrast(c, seen))


# The first word colours as (hue in turns, lightness step away from the background): picked
# greedily so that each stays at least 11 CIEDE2000 from every earlier one as viewers with
# deuteranopia or protanopia see them (Machado 2009, full severity), in both themes
# (scenes.lint.confusable checks it; tests/test_lint.py). Hue alone cannot keep more apart:
# past these, words also carry their labels (scenes.lint's colour rule).
WORD_HUES = ((0.58, 0.0), (0.25, -0.12), (0.479, 0.16), (0.6875, 0.0), (0.958, 0.08),
             (0.917, -0.06), (0.521, 0.0))


# The next 25, picked the same greedy way (hues in 120ths of a turn, lightness steps of
# 0.04 up to 0.16) to keep each as far as it can from every earlier one, as seen with
# normal, deuteranopic or protanopic vision in either theme: from 9.3 CIEDE2000 for the
# 8th down to 3.3 for the 32nd. Past 7 no colour is safe alone (the lint asks each mark to
# carry its word), but no two of 32 words are near one colour: spreading by the golden
# ratio gave the 7th and 9th words colours 0.6 apart.
MORE_WORD_HUES = ((0.425, -0.16), (0.0083, -0.16), (0.9083, 0.12), (0.0083, 0.16),
                  (0.9417, -0.16), (0.95, 0.16), (0.9833, 0.04), (0.6167, 0.0),
                  (0.8917, -0.16), (0.9667, -0.16), (0.8833, 0.04), (0.425, 0.16),
                  (0.0833, 0.16), (0.55, 0.0), (0.3917, -0.16), (0.9167, 0.04),
                  (0.4917, -0.04), (0.525, 0.16), (0.475, 0.0), (0.85, -0.16), (0.2, 0.16),
                  (0.9333, 0.08), (0.8917, 0.08), (0.375, 0.16), (0.95, 0.0))


def word_color(i: int, theme: Theme) -> str:
    """One colour per token position: the first len(WORD_HUES) told apart also without
    red-green vision, the next len(MORE_WORD_HUES) kept as far apart as they can be;
    later ones spread around the hue circle by the golden ratio; each legible on the
    background."""
    if i < len(WORD_HUES):
        hue, step = WORD_HUES[i]
    elif i < len(WORD_HUES) + len(MORE_WORD_HUES):
        hue, step = MORE_WORD_HUES[i - len(WORD_HUES)]
    else:
        hue, step = (0.58 + i * 0.6180339887) % 1.0, 0.0
    away = step if theme.dark else -step
    return legible(hue, theme.word_lightness + away, theme.word_saturation, theme)


FAMILIES = {"cool": (0.42, 0.80), "warm": (0.93, 1.20)}  # hue ranges (turns; > 1 wraps)


def family_colors(n: int, family: str, theme: Theme) -> list[str]:
    """n colours from one hue family ("cool": greens to violets for the source sentence,
    "warm": reds to yellows for the target), alternating lightness so neighbours differ."""
    lo, hi = FAMILIES[family]
    out = []
    for i in range(n):
        hue = (lo + (hi - lo) * (i + 0.5) / max(n, 1)) % 1.0
        light = theme.word_lightness + (0.08 if i % 2 else -0.04) * (1 if theme.dark else -1)
        out.append(legible(hue, min(0.9, max(0.2, light)), theme.word_saturation, theme))
    return out
