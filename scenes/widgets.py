"""Shared widgets: themes, one colour per word, cached text, matrices, vectors, word labels.

Builders here only build (they never play). Every number a builder draws is
reported to a Recorder with the trace key it was read from, so tests can compare
what is on screen with the trace.
"""

from __future__ import annotations

import colorsys
import hashlib
import os
import pickle
from dataclasses import dataclass, field
from functools import lru_cache
from importlib.metadata import version
from pathlib import Path

import numpy as np
from manim import (
    DOWN,
    LEFT,
    RIGHT,
    UP,
    Line,
    Rectangle,
    RoundedRectangle,
    Text,
    VGroup,
    VMobject,
)

FONT = "Noto Sans CJK SC"  # Latin, digits and CJK in one face; Pango falls back for the rest
_MANIM = version("manim")
MIN_FONT = 16  # smallest text drawn: ~23 px digit height at 1080p
FRAME_W = 14.2  # usable frame, in scene units (the frame is 14.22 × 8)
SAFE_X = 6.75  # content stays within ±SAFE_X
SAFE_TOP = 3.05  # below the chapter title
SAFE_BOTTOM = -2.8  # above a two-line caption


@dataclass(frozen=True)
class Theme:
    name: str
    background: str
    text: str
    muted: str
    grid: str
    accent: str  # highlights: the followed row, the chosen cell
    positive: str  # agreeing signs, positive values
    negative: str  # opposing signs, negative values
    q: str  # colours of Q, K, V and the weights in the summary
    k: str
    v: str
    w: str
    word_lightness: float
    word_saturation: float


THEMES = {
    "dark": Theme("dark", "#14161c", "#eceff4", "#9aa3b2", "#3b4252", "#ffd166",
                  "#5ad28c", "#ff6b6b", "#f4a261", "#2ec4b6", "#c77dff", "#ffd166", 0.68, 0.75),
    "light": Theme("light", "#fbfaf7", "#1d232c", "#5f6b7a", "#c8ccd4", "#d97706",
                   "#16803c", "#c81e1e", "#c2410c", "#0f766e", "#7e22ce", "#b45309", 0.40, 0.80),
}


def word_color(i: int, theme: Theme) -> str:
    """One colour per token position, spread around the hue circle by the golden ratio."""
    hue = (0.58 + i * 0.6180339887) % 1.0
    r, g, b = colorsys.hls_to_rgb(hue, theme.word_lightness, theme.word_saturation)
    return f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}"


def fmt(value: float, decimals: int = 2) -> str:
    """A number as drawn: fixed decimals, a real minus sign, never '-0.00'."""
    s = f"{value:.{decimals}f}"
    if float(s) == 0.0:
        s = s.lstrip("-")
    return s.replace("-", "−")


def unfmt(text: str) -> float:
    """The value of a drawn number (inverse of fmt, for tests)."""
    return float(text.replace("−", "-").replace("…", ""))


def short_label(text: str, max_chars: int = 10) -> str:
    """Shorten a long word visibly: 'extraordinarily' → 'extraordi…'."""
    return text if len(text) <= max_chars else text[: max_chars - 1] + "…"


TEXT_CACHE: Path | None = None  # where built texts are kept across runs (set by the pipeline)


@lru_cache(maxsize=8192)
def _proto(text: str, font_size: float, weight: str) -> Text:
    """A Text, from memory, from the disk cache, or built with Pango (~50 ms) and kept."""
    path = None
    if TEXT_CACHE is not None:
        key = hashlib.sha256(repr((text, font_size, weight, FONT, _MANIM)).encode()).hexdigest()
        path = TEXT_CACHE / key[:2] / f"{key[2:24]}.pkl"
        try:
            return pickle.loads(path.read_bytes())
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ValueError):
            pass
    t = _build_text(text, font_size, weight)
    if path is not None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_bytes(pickle.dumps(t, protocol=pickle.HIGHEST_PROTOCOL))
            os.replace(tmp, path)  # atomic: a reader never sees half a file
        except OSError:
            pass
    return t


def _build_text(text: str, font_size: float, weight: str) -> Text:
    try:
        t = Text(text, font=FONT, font_size=font_size, weight=weight, disable_ligatures=True)
    except ValueError:  # emoji sequences (❤️, 🐈‍⬛) are one glyph for several characters
        t = Text(text, font=FONT, font_size=font_size, weight=weight)
    for m in t.family_members_with_points():
        if hasattr(m, "path_obj"):
            del m.path_obj  # copies are ~40× cheaper without the parsed SVG path
    return t


def make_text(text: str, font_size: float = 28, color: str | None = None,
              weight: str = "NORMAL") -> Text:
    """A Text built once per (string, size, weight) and copied after that."""
    t = _proto(text, float(round(font_size, 1)), weight).copy()
    if color:
        t.set_color(color)
    return t


def fit_width(mob: VMobject, max_width: float) -> VMobject:
    """Scale down (never up) so the object is at most max_width wide."""
    if mob.width > max_width > 0:
        mob.scale_to_fit_width(max_width)
    return mob


@dataclass
class Recorder:
    """Everything a scene drew that states a number: (trace key, index, text)."""

    entries: list[tuple[str, tuple, str]] = field(default_factory=list)

    def __call__(self, key: str, index: tuple, text: str) -> None:
        self.entries.append((key, tuple(int(i) for i in index), text))


def shown_columns(n: int, max_cols: int) -> list[int | None]:
    """Which columns of an n-wide vector to draw; None marks the ellipsis column."""
    if n <= max_cols:
        return list(range(n))
    head = max_cols - 2
    return list(range(head)) + [None, n - 1]


@dataclass(frozen=True)
class CellLayout:
    """Sizes for a grid of numbers that must fit a box."""

    cell_w: float
    cell_h: float
    font_size: float
    numbers: bool  # False: coloured cells only (too small for legible numbers)


def fit_cells(rows: int, cols: int, max_w: float, max_h: float, decimals: int = 2,
              max_font: float = 30) -> CellLayout:
    """The largest cells that fit the box; numbers only where they stay legible."""
    digits = 3 + decimals  # '−0.00'
    cell_h = min(max_h / max(rows, 1), 0.7)
    cell_w = min(max_w / max(cols, 1), 1.6)
    # Text("−0.00", font_size=f) is about 0.0305·f wide and 0.0106·f tall.
    font = min(max_font, cell_h * 0.55 / 0.0106, cell_w * 0.8 / (0.0061 * (digits + 0.3)))
    return CellLayout(cell_w, cell_h, font, font >= MIN_FONT)


def value_fill(value: float, scale: float, theme: Theme) -> tuple[str, float]:
    """Heat-map colour of a cell: hue by sign, opacity by size."""
    a = 0.0 if scale == 0 else min(1.0, abs(value) / scale)
    return (theme.positive if value >= 0 else theme.negative), 0.12 + 0.7 * a


class MatrixView(VGroup):
    """A grid of numbers (or coloured cells) with optional row and column labels.

    Wider than max_cols or taller than max_rows: the middle is folded into a visible
    "…" column or "⋮" row. `rows`/`cols` list the shown indices (None = the fold).
    """

    def __init__(self, values: np.ndarray, *, key: str, theme: Theme, layout: CellLayout,
                 decimals: int = 2, row_labels: list[str] | None = None,
                 row_colors: list[str] | None = None, col_labels: list[str] | None = None,
                 col_colors: list[str] | None = None, max_cols: int = 8, max_rows: int = 64,
                 record: Recorder | None = None, heat: bool | None = None,
                 numbers_in_rows: set[int] | frozenset = frozenset(), index_map=None):
        super().__init__()
        values = np.atleast_2d(np.asarray(values, dtype=float))
        self.values, self.key, self.theme, self.layout = values, key, theme, layout
        n_rows, n_cols = values.shape
        self.cols = shown_columns(n_cols, max_cols)
        # Heat-map scale: a high percentile, so one outlier does not wash out the rest.
        scale = float(np.percentile(np.abs(values), 95)) if values.size else 1.0
        heat = (not layout.numbers) if heat is None else heat
        w, h = layout.cell_w, layout.cell_h
        self.cells = VGroup()
        self.numbers: dict[tuple[int, int], Text] = {}
        self.cell_at: dict[tuple[int, int], Rectangle] = {}
        self.rows = shown_columns(n_rows, max_rows)
        for r, i in enumerate(self.rows):
            for c, j in enumerate(self.cols):
                rect = Rectangle(width=w, height=h, stroke_width=1, stroke_color=theme.grid)
                rect.move_to(RIGHT * (c * w) + DOWN * (r * h))
                if i is None or j is None:
                    dots = make_text("⋮" if i is None else "…",
                                     layout.font_size * 0.9 if layout.numbers else 18,
                                     theme.muted).move_to(rect)
                    fit_width(dots, w * 0.9)
                    if dots.height > h * 0.9:
                        dots.scale_to_fit_height(h * 0.9)
                    rect.set_stroke(opacity=0)
                    self.cells.add(VGroup(rect, dots))
                    continue
                v = values[i, j]
                if heat:
                    color, op = value_fill(v, scale, theme)
                    rect.set_fill(color, op)
                self.cells.add(rect)
                self.cell_at[(i, j)] = rect
                if (layout.numbers and not heat) or i in numbers_in_rows:
                    size = layout.font_size if layout.numbers else max(MIN_FONT, layout.font_size)
                    txt = fit_width(make_text(fmt(v, decimals), size, theme.text), w * 0.92)
                    txt.move_to(rect)
                    self.numbers[(i, j)] = txt
                    if record is not None:
                        idx = index_map(i, j) if index_map else (i, j)
                        record(key, idx, fmt(v, decimals))
        self.add(self.cells)
        self.number_group = VGroup(*self.numbers.values())
        self.add(self.number_group)
        self.row_labels = VGroup()
        if row_labels is not None:
            size = max(MIN_FONT, min(26, h * 0.6 / 0.0106))
            for i in self.rows:
                if i is None:
                    continue
                color = row_colors[i] if row_colors else theme.text
                t = fit_width(make_text(row_labels[i], size, color), 1.9)
                t.next_to(self.row_rect_of(i), LEFT, buff=0.12)
                self.row_labels.add(t)
            self.add(self.row_labels)
        self.col_labels = VGroup()
        if col_labels is not None:
            size = max(MIN_FONT, min(22, w * 0.8 / 0.03))
            for j in self.cols:
                if j is None:
                    continue
                color = col_colors[j] if col_colors else theme.muted
                t = fit_width(make_text(col_labels[j], size, color), w * 0.98)
                t.next_to(self.cell_at[(self.rows[0], j)], UP, buff=0.08)
                self.col_labels.add(t)
            self.add(self.col_labels)

    def row_rect_of(self, i: int) -> VGroup:
        return VGroup(*[self.cell_at[(i, j)] for j in self.cols if j is not None])

    def col_rect_of(self, j: int) -> VGroup:
        return VGroup(*[self.cell_at[(i, j)] for i in self.rows if i is not None])

    def row_box(self, i: int, color: str, buff: float = 0.03, width: float = 4) -> Rectangle:
        """A rectangle around row i (to draw over the grid, cheaper than recolouring)."""
        g = self.row_rect_of(i)
        return Rectangle(width=g.width + 2 * buff, height=g.height + 2 * buff,
                         stroke_color=color, stroke_width=width).move_to(g)

    def col_box(self, j: int, color: str, buff: float = 0.03, width: float = 4) -> Rectangle:
        g = self.col_rect_of(j)
        return Rectangle(width=g.width + 2 * buff, height=g.height + 2 * buff,
                         stroke_color=color, stroke_width=width).move_to(g)

    def cell_box(self, i: int, j: int, color: str, width: float = 5) -> Rectangle:
        c = self.cell_at[(i, j)]
        return Rectangle(width=c.width, height=c.height, stroke_color=color,
                         stroke_width=width).move_to(c)

    def grid_only(self) -> VGroup:
        """The cells and numbers, without labels (for sizing and placing)."""
        return VGroup(self.cells, self.number_group)


def make_matrix(values: np.ndarray, key: str, theme: Theme, max_w: float, max_h: float, *,
                decimals: int = 2, row_labels: list[str] | None = None,
                row_colors: list[str] | None = None, col_labels: list[str] | None = None,
                col_colors: list[str] | None = None, max_cols: int = 8, max_rows: int = 64,
                record: Recorder | None = None, max_font: float = 30,
                numbers_in_rows: set[int] | frozenset = frozenset(), heat: bool | None = None,
                layout: CellLayout | None = None) -> MatrixView:
    """A matrix sized to fit max_w × max_h (cells only; labels sit outside)."""
    rows, cols = np.atleast_2d(values).shape
    layout = layout or fit_cells(min(rows, max_rows), min(cols, max_cols), max_w, max_h,
                                 decimals, max_font)
    return MatrixView(values, key=key, theme=theme, layout=layout, decimals=decimals,
                      row_labels=row_labels, row_colors=row_colors, col_labels=col_labels,
                      col_colors=col_colors, max_cols=max_cols, max_rows=max_rows, record=record,
                      numbers_in_rows=numbers_in_rows, heat=heat)


def make_label(text: str, font_size: float, color: str, theme: Theme,
               max_width: float = 3.0) -> VGroup:
    """A word in a rounded box of its colour (a 'chip')."""
    t = fit_width(make_text(text, font_size, color), max_width)
    box = RoundedRectangle(corner_radius=0.08, width=t.width + 0.24,
                           height=max(t.height, font_size * 0.0106) + 0.2,
                           stroke_color=color, stroke_width=2, fill_color=color, fill_opacity=0.12)
    box.move_to(t)
    return VGroup(box, t)


def make_title(text: str, theme: Theme) -> Text:
    return make_text(text, 34, theme.text, weight="BOLD").to_edge(UP, buff=0.3)


def make_caption(text: str, theme: Theme, font_size: float = 24) -> VGroup:
    """The caption line(s) at the bottom; wrapped to two lines, shrunk if still too wide."""
    group = VGroup(*[make_text(line, font_size, theme.text) for line in wrap(text, 80)])
    group.arrange(DOWN, buff=0.1)
    fit_width(group, 2 * SAFE_X)
    return group.to_edge(DOWN, buff=0.28)


_CLOSING = set("，。；：、！？）》」』,.;:!?)")


def _is_wide(ch: str) -> bool:
    return ord(ch) >= 0x2E80


def wrap(text: str, width: int) -> list[str]:
    """Greedy wrap to `width` columns (a CJK character counts two). Lines break at spaces,
    between CJK characters, or (preferred in the second half of a line) after punctuation;
    never inside a run of Latin letters or digits."""
    text = " ".join(text.split())
    lines: list[str] = []
    while sum(2 if _is_wide(c) else 1 for c in text) > width:
        cols, cut, punct = 0, 0, 0
        for i, ch in enumerate(text):
            cols += 2 if _is_wide(ch) else 1
            if cols > width:
                break
            nxt = text[i + 1] if i + 1 < len(text) else ""
            if nxt in _CLOSING:
                continue  # never start a line with closing punctuation
            if ch == " " or _is_wide(ch) or _is_wide(nxt):
                cut = i + 1
            if ch in _CLOSING and (ch == " " or _is_wide(ch) or nxt in (" ", "") or _is_wide(nxt)):
                punct = i + 1
        if punct > 0.5 * cut:
            cut = punct
        if cut == 0:  # one unbreakable run longer than a line
            cut = max(1, i)
        lines.append(text[:cut].strip())
        text = text[cut:].strip()
    lines.append(text)
    return [line for line in lines if line] or [""]


def arrow_line(start, end, color: str, width: float = 3) -> Line:
    return Line(start, end, stroke_color=color, stroke_width=width, buff=0.08)


def make_row_vector(row: np.ndarray, key: str, i: int, theme: Theme, max_w: float, *,
                    decimals: int = 2, max_cols: int = 8, record: Recorder | None = None,
                    font_size: float = 24, label: str | None = None,
                    label_color: str | None = None) -> MatrixView:
    """One row of a trace matrix (row i of `key`), drawn large enough to read.

    For the highlighted row of a matrix too big to show numbers in every cell.
    """
    cols = min(len(row), max_cols)
    layout = fit_cells(1, cols, max_w, font_size * 0.0106 / 0.55, decimals, font_size)
    layout = CellLayout(layout.cell_w, layout.cell_h, max(layout.font_size, MIN_FONT), True)
    return MatrixView(np.asarray(row)[None, :], key=key, theme=theme, layout=layout,
                      decimals=decimals, max_cols=max_cols, record=record, heat=False,
                      row_labels=[label] if label is not None else None,
                      row_colors=[label_color or theme.text], index_map=lambda _r, j: (i, j))
