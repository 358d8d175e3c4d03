"""The sign of a value survives colour blindness on the rendered pixels (issue 40): the Q·Kᵀ
thumbnail and a heat map are drawn to pixels and seen as a deuteranope, a protanope (and a
tritanope) sees them (colorspacious' Machado 2009 model, full severity). The thumbnail's
signs are read back by the shape written on each cell (+ has a vertical bar, − has not);
the heat map's, which has no room for writing, by its colours staying apart."""

from __future__ import annotations

import numpy as np
import pytest
from attention_video.scenes.chapters.dot import make_cell_thumbnail
from attention_video.scenes.lint import MIN_WORD_DELTA_E, ciede2000
from attention_video.scenes.themes import THEMES
from attention_video.scenes.widgets import CellLayout, MatrixView
from manim import ORIGIN, Camera, config, tempconfig

colorspacious = pytest.importorskip("colorspacious")

SCORES = np.array([[1.2, -0.8, 0.4, -2.0], [-1.1, 0.9, -0.3, 1.6], [0.7, -1.4, 2.2, -0.5]])


def render(group, theme) -> np.ndarray:
    """The group drawn as a 1080p frame would show it, as sRGB in [0, 1] (H, W, 3)."""
    with tempconfig({"pixel_height": 1080, "pixel_width": 1920}):
        camera = Camera(background_color=theme.background)
        camera.capture_mobjects([group])
        return np.asarray(camera.get_image().convert("RGB"), float) / 255


def pixel_box(cell, shape) -> tuple[slice, slice]:
    h, w = shape[:2]
    fw, fh = config.frame_width, config.frame_height
    left, bottom = cell.get_corner([-1, -1, 0])[:2]
    right, top = cell.get_corner([1, 1, 0])[:2]
    cols = slice(int((left + fw / 2) / fw * w) + 8, int((right + fw / 2) / fw * w) - 8)
    rows = slice(int((fh / 2 - top) / fh * h) + 8, int((fh / 2 - bottom) / fh * h) - 8)
    return rows, cols


def sign_read(patch: np.ndarray) -> int:
    """+1 if the glyph on a cell has a vertical stroke through its middle (+), −1 if not
    (−): the ink is the pixels far from the cell's own (median) colour."""
    lightness = patch.mean(axis=2)
    ink = np.abs(lightness - np.median(lightness)) > 0.25
    h, w = ink.shape
    middle = ink[:, w // 2 - 2: w // 2 + 3].any(axis=1)  # rows with ink in the middle column
    bar_rows = ink.any(axis=1)  # rows with any ink
    return 1 if middle.sum() > 2.0 * max(1, (bar_rows & ~middle).sum() + 3) else -1


@pytest.mark.slow
@pytest.mark.parametrize("cvd", ["deuteranomaly", "protanomaly"])
@pytest.mark.parametrize("theme_name", list(THEMES))
def test_each_cells_sign_is_read_back_from_simulated_colour_blind_pixels(cvd, theme_name):
    theme = THEMES[theme_name]
    mask = np.ones_like(SCORES, bool)  # True: every cell allowed
    thumb = make_cell_thumbnail(SCORES, mask, 0, 0, theme, 2.6, 1.9)
    image = render(thumb.group, theme)
    seen = np.clip(colorspacious.cspace_convert(
        image, {"name": "sRGB1+CVD", "cvd_type": cvd, "severity": 100}, "sRGB1"), 0, 1)
    read = {}
    for (r, c), cell in thumb.grid.cell_at.items():
        rows, cols = pixel_box(cell, seen.shape)
        read[(r, c)] = sign_read(seen[rows, cols])
    assert read == {k: (1 if SCORES[k] >= 0 else -1) for k in read}


HEAT = np.array([[0.05, -0.05, 0.4, -0.4], [1.0, -1.0, 2.5, -2.5]])  # ± pairs, faint to full


@pytest.mark.parametrize("cvd", ["deuteranomaly", "protanomaly", "tritanomaly"])
@pytest.mark.parametrize("theme_name", list(THEMES))
def test_a_heat_maps_signs_are_told_apart_in_simulated_colour_blind_pixels(cvd, theme_name):
    """A heat map too small for numbers (chapters 2, 3, 9) tells each cell's sign by colour
    alone: rendered and seen through each dichromacy, a positive cell and the negative cell
    of the same size stay 10 CIEDE2000 apart (a viewer can match each to its side of the
    scale), the faintest pair too. Under the old green–red pair, deuteranopes saw 1.4."""
    theme = THEMES[theme_name]
    grid = MatrixView(HEAT, key="heat", theme=theme, heat=True,
                      layout=CellLayout(1.0, 1.0, 0, False))
    image = render(grid.move_to(ORIGIN), theme)
    seen = np.clip(colorspacious.cspace_convert(
        image, {"name": "sRGB1+CVD", "cvd_type": cvd, "severity": 100}, "sRGB1"), 0, 1)
    lab = {}
    for key, cell in grid.cell_at.items():
        rows, cols = pixel_box(cell, seen.shape)
        colour = np.median(seen[rows, cols].reshape(-1, 3), axis=0)
        lab[key] = colorspacious.cspace_convert(colour, "sRGB1", "CIELab")
    gaps = {(r, c): round(ciede2000(lab[(r, c)], lab[(r, c + 1)]), 1)
            for r in range(HEAT.shape[0]) for c in range(0, HEAT.shape[1], 2)}
    assert min(gaps.values()) >= MIN_WORD_DELTA_E, gaps
