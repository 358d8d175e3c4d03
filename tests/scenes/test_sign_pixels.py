"""The sign of a product survives red–green colour blindness on the rendered pixels (issue
40): the Q·Kᵀ thumbnail is drawn to pixels, seen as a deuteranope and a protanope sees it
(colorspacious' Machado 2009 model, full severity), and each cell's sign is read back from
the simulated pixels by the shape written on it (+ has a vertical bar, − has not)."""

from __future__ import annotations

import numpy as np
import pytest
from attention_video.scenes.chapters.dot import make_cell_thumbnail
from attention_video.scenes.lint import ciede2000
from attention_video.scenes.themes import THEMES
from manim import Camera, config, tempconfig

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


def test_without_the_written_signs_the_two_colours_are_hard_to_tell_apart():
    """Why the signs are written: simulated, the two sign colours' cells are close (the
    number says how close; under 10 CIEDE2000 a viewer cannot match them across a frame)."""
    theme = THEMES["dark"]
    lab = {}
    for name, color in (("pos", theme.positive), ("neg", theme.negative)):
        rgb = np.array([int(color[i:i + 2], 16) / 255 for i in (1, 3, 5)])
        seen = colorspacious.cspace_convert(
            rgb, {"name": "sRGB1+CVD", "cvd_type": "deuteranomaly", "severity": 100}, "sRGB1")
        lab[name] = colorspacious.cspace_convert(np.clip(seen, 0, 1), "sRGB1", "CIELab")
    assert ciede2000(lab["pos"], lab["neg"]) < 10
