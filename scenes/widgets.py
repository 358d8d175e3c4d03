"""Shared widgets: matrices, vectors, word labels, and the
pieces two chapters share (masked cells, symbols with a word subscript, colour marks).

Builders here only build (they never play). Every number a builder draws is
reported to a Recorder with the trace key it was read from, so tests can compare
what is on screen with the trace.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from attention_video.scenes.layout import (
    BUFF_BLOCK,
    BUFF_BOX,
    BUFF_HAIR,
    BUFF_LABEL,
    BUFF_NOTE,
    BUFF_SMALL,
    BUFF_SNUG,
    BUFF_TIGHT,
    BUFF_TITLE_EDGE,
    CELL_FILL,
    DIGIT_HEIGHT,
    MIN_FONT,
    SAFE_BOTTOM,
    SAFE_X,
    TITLE_SAFE_X,
    TITLE_SAFE_Y,
    WIDTH_FILL,
    font_for_row,
    font_for_width,
    row_for_font,
    text_width,
    widest,
)
from attention_video.scenes.text import columns, fit_width, fmt, make_text, wrap
from attention_video.scenes.themes import Theme, blend, ink_on, number_ink
from manim import (
    DOWN,
    LEFT,
    PI,
    RIGHT,
    UP,
    ImageMobject,
    Mobject,
    Rectangle,
    RoundedRectangle,
    Square,
    VGroup,
)

MASKED_TEXT = "masked"  # drawn instead of a number where attending is not allowed
MASK_MARK_FONT = 22  # the "−∞" of a masked score cell: "∞" inks lower than a digit, and at
#                      20 it measured 20 px at 1080p, under the lint's floor (22)
CHIP_FONT = 30  # a token chip's word
CHIP_MAX_W = 2.2  # a long token's chip is shrunk to this width


@dataclass
class Recorder:
    """Everything a scene drew that states a number: (trace key, index, text)."""

    entries: list[tuple[str, tuple, str]] = field(default_factory=list)
    # The start (chapter seconds) of the caption on screen, which the scene sets as each
    # caption comes.
    caption_at: float | None = None
    # Where the video makes each key (ChapterScene.makes): the start of the caption on screen
    # while the scene draws it being made. The companion page seeks there, not to where the
    # key is first drawn (a grid may be built, and its numbers recorded, a caption early).
    made: dict[str, float] = field(default_factory=dict)

    def makes(self, key: str) -> None:
        if self.caption_at is not None:
            self.made.setdefault(key, self.caption_at)

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


def number_sample(decimals: int) -> str:
    """The widest number a cell of this precision usually holds: '−0.00'."""
    return "−0." + "0" * decimals


def fit_cells(rows: int, cols: int, max_w: float, max_h: float, decimals: int = 2,
              max_font: float = 30) -> CellLayout:
    """The largest cells that fit the box; numbers only where they stay legible."""
    cell_h = min(max_h / max(rows, 1), 0.7)
    cell_w = min(max_w / max(cols, 1), 1.6)
    font = min(max_font, font_for_row(cell_h, CELL_FILL, lo=0, hi=max_font),
               font_for_width(number_sample(decimals), cell_w, lo=0, hi=max_font))
    return CellLayout(cell_w, cell_h, font, font >= MIN_FONT)


def sign_color(sign: int, theme: Theme) -> str:
    """The colour of a pair of a dot product by its agreement (attncore.attention.agreement):
    the positive colour (blue) where the signs agree (+1), the negative (red) where
    they differ (−1), muted for a 0 in it."""
    return theme.positive if sign > 0 else theme.negative if sign < 0 else theme.muted


HEAT_FAINTEST = 0.12  # a heat map's cell for a 0: its sign's colour, faint
HEAT_SPAN = 0.7  # ... up to 0.82 for the scale's value and beyond


def value_fill(value: float, scale: float, theme: Theme) -> tuple[str, float]:
    """Heat-map colour of a cell: hue by sign, opacity by size. The sign colours are a
    diverging pair that stays apart for colour-blind viewers at every opacity from
    HEAT_FAINTEST up (scenes.lint.signs_apart), so a heat map too small for numbers still
    tells its signs."""
    a = 0.0 if scale == 0 else min(1.0, abs(value) / scale)
    return (theme.positive if value >= 0 else theme.negative), HEAT_FAINTEST + HEAT_SPAN * a


CellStyle = Callable[[int, int], "tuple[str, float] | None"]  # (i, j) → (colour, fill opacity)


class ChartView(VGroup):
    """A chart's marks (bars, or a curve's line) as one group that says what they plot,
    so the scene graph tells a listener's description (scenes.describe) and its test what
    the chart shows, as MatrixView does for a grid: the trace `key` of its values, each
    value's trace `index` (a bar's (query, key), a curve sample's (step,)), the values
    themselves, and the `decimals` its labels write them with. `kind`: "bars", "curve" or
    "stacked" (one bar split into parts, one per value, laid end to end); `labelled`, per
    value, whether its mark carries its word (a stacked part wide enough to hold it)."""

    def __init__(self, *marks, key: str, kind: str, values: Sequence[float],
                 indices: Sequence[tuple[int, ...]], decimals: int,
                 labelled: Sequence[bool] = ()):
        super().__init__(*marks)
        self.key, self.kind, self.decimals = key, kind, decimals
        self.plotted = tuple(float(v) for v in values)
        self.indices = tuple(tuple(i) for i in indices)
        self.labelled = tuple(bool(b) for b in labelled)


class NumberLabel(VGroup):
    """A text that holds a recorded number among words ("step 500", "milk → drank 0.59"),
    saying which: its trace `key`, `index` and `text` as drawn, so the scene graph tells a
    listener's description (scenes.describe) the number it shows, where the screen's texts
    hold more than the number."""

    def __init__(self, *parts, key: str, index: tuple[int, ...], text: str):
        super().__init__(*parts)
        self.key, self.index, self.text = key, tuple(int(i) for i in index), text


class HeatView(ImageMobject):
    """A grid of weights drawn as an image, one pixel per cell (a model overview's
    thumbnail), saying what it shows as MatrixView does: the trace `key`, its `index` there
    (layer, head) and the grid's `shape` (rows, columns)."""

    def __init__(self, pixels: np.ndarray, *, key: str, index: tuple[int, ...],
                 shape: tuple[int, int]):
        super().__init__(pixels)
        self.key, self.index, self.shape = key, tuple(index), tuple(shape)


class MatrixView(VGroup):
    """A grid of numbers (or coloured cells) with optional row and column labels.

    Built as Manim's own Matrix is: cells, then row labels, then column labels.
    Wider than max_cols or taller than max_rows: the middle is folded into a visible
    "…" column or "⋮" row. `rows`/`cols` list the shown indices (None = the fold).
    Cells where `mask` is False are greyed and show no number (nothing is recorded for
    them); `mask_marks` holds a "−∞" for each one tall enough, for the caller to show.
    With `masked_numbers` they show their value in a muted colour instead (a weight of a
    masked key is a real 0.00), recorded like every other number.
    `cell_style(i, j)` may give a cell its own (colour, fill opacity): its number in that
    colour on a fill of it, as Manim's Matrix takes element_to_mobject (None: the default).
    """

    def __init__(self, values: np.ndarray, *, key: str, theme: Theme, layout: CellLayout,
                 decimals: int = 2, row_labels: list[str] | None = None,
                 row_colors: list[str] | None = None, col_labels: list[str] | None = None,
                 col_colors: list[str] | None = None, max_cols: int = 8, max_rows: int = 64,
                 record: Recorder | None = None, heat: bool | None = None,
                 numbers_in_rows: set[int] | frozenset = frozenset(), index_map=None,
                 mask: np.ndarray | None = None, masked_numbers: bool = False,
                 cell_style: CellStyle | None = None):
        super().__init__()
        values = np.atleast_2d(np.asarray(values, dtype=float))
        self.values, self.key, self.theme, self.layout = values, key, theme, layout
        self.rows = shown_columns(values.shape[0], max_rows)
        self.cols = shown_columns(values.shape[1], max_cols)
        self.cells = VGroup()
        self.cell_at: dict[tuple[int, int], Rectangle] = {}
        self.numbers: dict[tuple[int, int], VGroup] = {}
        self.mask_marks = VGroup()
        self._make_cells(decimals, record, heat, numbers_in_rows, index_map, mask,
                         masked_numbers, cell_style)
        self.number_group = VGroup(*self.numbers.values())
        self.add(self.cells, self.number_group)
        self.row_labels = self._make_row_labels(row_labels, row_colors)
        self.col_labels = self._make_col_labels(col_labels, col_colors)
        self.add(self.row_labels, self.col_labels)

    # ---- building ---------------------------------------------------------------------
    def _make_cells(self, decimals, record, heat, numbers_in_rows, index_map, mask,
                    masked_numbers, cell_style) -> None:
        layout, theme, values = self.layout, self.theme, self.values
        # Heat-map scale: a high percentile, so one outlier does not wash out the rest.
        scale = float(np.percentile(np.abs(values), 95)) if values.size else 1.0
        heat = (not layout.numbers) if heat is None else heat
        w, h = layout.cell_w, layout.cell_h
        # Copies of one cell, shifted: a new Rectangle costs nine times as much.
        cell = Rectangle(width=w, height=h, stroke_width=1, stroke_color=theme.grid)
        for r, i in enumerate(self.rows):
            for c, j in enumerate(self.cols):
                rect = cell.copy().shift(RIGHT * (c * w) + DOWN * (r * h))
                if i is None or j is None:
                    self.cells.add(VGroup(rect.set_stroke(opacity=0),
                                          self._fold_mark(i is None, rect)))
                    continue
                self.cells.add(rect)
                self.cell_at[(i, j)] = rect
                masked = mask is not None and not mask[i, j]
                if masked:
                    rect.set_fill(theme.grid, 0.55)
                    if not masked_numbers:
                        if h * 44 >= MASK_MARK_FONT:  # a cell tall enough for a legible "−∞"
                            ink = ink_on(theme.muted, blend(theme.grid, theme.background, 0.55),
                                         theme)  # legible on the grey of a masked cell
                            self.mask_marks.add(make_text("−∞", MASK_MARK_FONT, ink)
                                                .move_to(rect))
                        continue
                elif heat:
                    rect.set_fill(*value_fill(values[i, j], scale, theme))
                style = cell_style(i, j) if cell_style is not None and not masked else None
                if style is not None:
                    rect.set_fill(*style)
                if (layout.numbers and not heat) or i in numbers_in_rows:
                    text = fmt(values[i, j], decimals)
                    size = max(MIN_FONT, layout.font_size)
                    seen = blend(rect.get_fill_color().to_hex(), theme.background,
                                 rect.get_fill_opacity())
                    if masked:
                        color = ink_on(theme.muted, seen, theme)
                    elif style:
                        color = ink_on(style[0], seen, theme)
                    else:
                        color = number_ink(rect.get_fill_color().to_hex(),
                                           rect.get_fill_opacity(), theme)
                    self.numbers[(i, j)] = fit_width(make_text(text, size, color),
                                                     w * 0.92).move_to(rect)
                    if record is not None:
                        record(self.key, index_map(i, j) if index_map else (i, j), text)

    def _fold_mark(self, is_row: bool, rect: Rectangle) -> VGroup:
        """The "⋮" or "…" drawn in place of the folded rows or columns."""
        size = max(MIN_FONT, self.layout.font_size * 0.9 if self.layout.numbers else 18)
        dots = make_text("⋮" if is_row else "…", size, self.theme.muted)
        # shrunk to its cell, but never under the smallest legible size (MIN_FONT)
        fit = min(1.0, rect.width * 0.9 / dots.width, rect.height * 0.9 / dots.height)
        dots.scale(max(fit, MIN_FONT / size))
        return dots.move_to(rect)

    def _make_row_labels(self, labels: list[str] | None, colors: list[str] | None) -> VGroup:
        out = VGroup()
        if labels is None:
            return out
        size = font_for_row(self.layout.cell_h, 0.6, hi=26)
        for i in self.rows:
            if i is None:
                continue
            color = colors[i] if colors else self.theme.text
            t = fit_width(make_text(labels[i], size, color, muted=self.theme.muted), 1.9)
            out.add(t.next_to(self.row_rect_of(i), LEFT, buff=BUFF_LABEL))
        # rows lower than a legible word: every other label steps out a column, so
        # neighbours never touch (the labels of a 20-token sentence did)
        if len(out) > 1 and max(t.height for t in out) > self.layout.cell_h - 2 * BUFF_HAIR:
            inner = max(t.width for t in out[0::2])
            for t in out[1::2]:
                t.shift(LEFT * (inner + BUFF_SMALL))
        return out

    def _make_col_labels(self, labels: list[str] | None, colors: list[str] | None) -> VGroup:
        out = VGroup()
        if labels is None:
            return out
        size = col_label_font(self.layout.cell_w)
        shown = [j for j in self.cols if j is not None]
        texts = make_col_texts([labels[j] for j in shown],
                               [colors[j] if colors else self.theme.muted for j in shown],
                               size, self.theme, self.layout.cell_w * 0.98)
        for j, t in zip(shown, texts):
            out.add(t.next_to(self.cell_at[(self.rows[0], j)], UP, buff=BUFF_SNUG))
        return out

    # ---- parts, for placing and highlighting --------------------------------------------
    def row_rect_of(self, i: int) -> VGroup:
        return VGroup(*[self.cell_at[(i, j)] for j in self.cols if j is not None])

    def col_rect_of(self, j: int) -> VGroup:
        return VGroup(*[self.cell_at[(i, j)] for i in self.rows if i is not None])

    def row_box(self, i: int, color: str, buff: float = BUFF_BOX, width: float = 4) -> Rectangle:
        """A rectangle around row i (to draw over the grid, cheaper than recolouring)."""
        return box_around(self.row_rect_of(i), color, buff, width)

    def col_box(self, j: int, color: str, buff: float = BUFF_BOX, width: float = 4) -> Rectangle:
        return box_around(self.col_rect_of(j), color, buff, width)

    def cell_box(self, i: int, j: int, color: str, width: float = 5) -> Rectangle:
        return box_around(self.cell_at[(i, j)], color, 0.0, width)

    def grid_only(self) -> VGroup:
        """The cells and numbers, without labels (for sizing and placing)."""
        return VGroup(self.cells, self.number_group)


class TableRows(VGroup):
    """Rows of a MatrixView brought on screen by themselves (a table that comes in row by
    row, its view never added whole): the scene graph then holds these, and they say whose
    rows they are (`view`) and which (`rows`), so a listener's description (scenes.describe)
    knows the table is up, and how much of it, as it would from the view."""

    def __init__(self, *parts, view: MatrixView, rows: Sequence[int]):
        super().__init__(*parts)
        self.view, self.rows = view, tuple(int(r) for r in rows)


def box_around(mob, color: str, buff: float = BUFF_BOX, width: float = 4) -> Rectangle:
    """An unfilled rectangle around `mob`, `buff` away from it."""
    return Rectangle(width=mob.width + 2 * buff, height=mob.height + 2 * buff,
                     stroke_color=color, stroke_width=width).move_to(mob)


def fits_across(word: str, size: float, room: float) -> bool:
    """Whether `word` fits a column `room` wide written across, shrunk no smaller than the
    smallest legible size (MIN_FONT)."""
    return text_width(word, size) * min(1.0, MIN_FONT / size) <= room


def make_col_texts(words: list[str], colors: list[str], size: float, theme: Theme,
                   room: float) -> list[Mobject]:
    """The words over a row of columns `room` wide: written across, each shrunk to its
    column; or, when any one would have to be shrunk under MIN_FONT (or broken), every one
    standing upright, read from the bottom up, so the row reads as one and every word is
    whole at a legible size (but a single letter, which reads the same either way)."""
    upright = any(not fits_across(w, size, room) for w in words)
    return [col_label(w, size, c, theme, room, upright and len(w) > 1)  # (a letter reads
            for w, c in zip(words, colors)]                              # either way)


def col_label(word: str, size: float, color: str, theme: Theme, room: float,
              upright: bool = False) -> Mobject:
    """A column's word, shrunk to its cell but never under the smallest legible size
    (MIN_FONT), and never broken; `upright`: turned a quarter turn, to stand on its
    column (make_col_texts), its line's height shrunk to the column's width."""
    t = make_text(word, size, color, muted=theme.muted)
    if upright:
        t.rotate(PI / 2)
    if t.width > room:
        t.scale(max(room / t.width, min(1.0, MIN_FONT / size)))
    return t


def col_label_font(cell_w: float) -> float:
    """A column label's font: the size at which the cell's numbers would fill it (longer
    words are then shrunk to the cell by fit_width)."""
    return font_for_width(number_sample(2), cell_w, WIDTH_FILL, hi=22)


def make_matrix(values: np.ndarray, key: str, theme: Theme, max_w: float, max_h: float, *,
                decimals: int = 2, max_cols: int = 8, max_rows: int = 64, max_font: float = 30,
                layout: CellLayout | None = None, **view) -> MatrixView:
    """A matrix sized to fit max_w × max_h (cells only; labels sit outside). `view` takes
    MatrixView's other keywords (labels, colours, record, heat, numbers_in_rows, mask)."""
    rows, cols = np.atleast_2d(values).shape
    layout = layout or fit_cells(min(rows, max_rows), min(cols, max_cols), max_w, max_h,
                                 decimals, max_font)
    return MatrixView(values, key=key, theme=theme, layout=layout, decimals=decimals,
                      max_cols=max_cols, max_rows=max_rows, **view)


def make_label(text: str, font_size: float, color: str, theme: Theme,
               max_width: float = 3.0) -> VGroup:
    """A word in a rounded box of its colour (a 'chip')."""
    tint = 0.12
    ink = ink_on(color, blend(color, theme.background, tint), theme)
    t = fit_width(make_text(text, font_size, ink, muted=theme.muted), max_width)
    box = RoundedRectangle(corner_radius=0.08, width=t.width + 0.24,
                           height=max(t.height, font_size * DIGIT_HEIGHT) + 0.2,
                           stroke_color=color, stroke_width=2, fill_color=color, fill_opacity=tint)
    box.move_to(t)
    return VGroup(box, t)


def make_token_chips(labels: list[str], colors: list[str], theme: Theme,
                     max_width: float = 2 * SAFE_X, row_gap: float = BUFF_NOTE) -> VGroup:
    """The tokens as coloured chips in one line or, when they don't fit, in lines filled
    in reading order like wrapped text, each centred, `row_gap` apart."""
    chips = VGroup(*[make_label(t, CHIP_FONT, c, theme, max_width=CHIP_MAX_W)
                     for t, c in zip(labels, colors)])
    rows: list[list] = [[]]
    width = 0.0
    for chip in chips:
        if rows[-1] and width + BUFF_NOTE + chip.width > max_width:
            rows.append([])
            width = 0.0
        width += (BUFF_NOTE if rows[-1] else 0.0) + chip.width
        rows[-1].append(chip)
    lines = VGroup(*[VGroup(*row).arrange(RIGHT, buff=BUFF_NOTE) for row in rows])
    lines.arrange(DOWN, buff=row_gap)
    return chips


TITLE_FONT = 34  # a chapter title's size, unless the video's longest title needs less


def title_font(titles: Sequence[str], max_width: float) -> float:
    """One size for every chapter title of a video: the largest (up to TITLE_FONT) at
    which the widest of `titles` fits max_width, measured from the built text. (Each title
    fitted alone would make titles differ in size from chapter to chapter.)"""
    widest = max(make_text(t, TITLE_FONT, weight="BOLD").width for t in titles)
    if widest <= max_width:
        return TITLE_FONT
    return math.floor(TITLE_FONT * max_width / widest * 10) / 10  # (texts are built at 0.1 steps)


def make_title(text: str, theme: Theme, font_size: float = TITLE_FONT) -> VGroup:
    return make_text(text, font_size, theme.text, weight="BOLD").to_edge(UP, buff=BUFF_TITLE_EDGE)


LRM = "\u200e"  # LEFT-TO-RIGHT MARK: sets a line's base direction, draws nothing
CAPTION_COLUMNS = 80  # a caption line's width in columns (a CJK character counts two)
CAPTION_LINES = 2  # the layout leaves room for two lines above the bottom edge


def caption_lines(text: str) -> list[str]:
    """The caption's lines: wrapped at CAPTION_COLUMNS, or wider (and then drawn smaller)
    when that would take more than CAPTION_LINES lines."""
    width = CAPTION_COLUMNS
    lines = wrap(text, width)
    while len(lines) > CAPTION_LINES and width < 2 * CAPTION_COLUMNS:
        width += 8
        lines = wrap(text, width)
    return lines


def make_caption(text: str, theme: Theme, font_size: float = 24) -> VGroup:
    """The caption at the bottom, in at most two lines (shrunk to the frame's width).
    Each line starts with a left-to-right mark: the captions are English or Chinese, so a
    line that begins with a quoted Hebrew or Arabic word must not be laid out right to left."""
    group = _caption_group(caption_lines(text), theme, font_size)
    if font_size * _fit_share(group, 2 * TITLE_SAFE_X, math.inf) < MIN_FONT:
        # two lines would be shrunk under the size floor: one more line, closer set, in the
        # room the layout leaves under the picture, reads larger (no word broken, none cut)
        band = SAFE_BOTTOM + TITLE_SAFE_Y - BUFF_HAIR
        three = _caption_group(balanced(text, CAPTION_LINES + 1), theme, font_size, BUFF_HAIR)
        if _fit_share(three, 2 * TITLE_SAFE_X, band) > _fit_share(group, 2 * TITLE_SAFE_X, math.inf):
            group = three.scale(_fit_share(three, 2 * TITLE_SAFE_X, band))
    fit_width(group, 2 * TITLE_SAFE_X)
    return group.to_edge(DOWN, buff=BUFF_TITLE_EDGE)


def balanced(text: str, lines: int) -> list[str]:
    """`text` wrapped into `lines` lines (or fewer) as even as wrapping at spaces allows: the
    narrowest width that takes no more."""
    width = math.ceil(columns(text) / lines)
    while len(wrap(text, width)) > lines:
        width += 1
    return wrap(text, width)


def _caption_group(lines: list[str], theme: Theme, font_size: float,
                   leading: float = BUFF_SMALL) -> VGroup:
    group = VGroup(*[make_text(LRM + line, font_size, theme.text) for line in lines])
    return group.arrange(DOWN, buff=leading)


def _fit_share(group: VGroup, width: float, height: float) -> float:
    """The scale (at most 1) at which `group` fits `width` × `height`."""
    return min(1.0, width / group.width, height / group.height)


def make_row_vector(row: np.ndarray, key: str, i: int, theme: Theme, max_w: float, *,
                    decimals: int = 2, max_cols: int = 8, record: Recorder | None = None,
                    font_size: float = 24, label: str | None = None,
                    label_color: str | None = None) -> MatrixView:
    """One row of a trace matrix (row i of `key`), drawn large enough to read.

    For the highlighted row of a matrix too big to show numbers in every cell.
    """
    cols = min(len(row), max_cols)
    layout = fit_cells(1, cols, max_w, row_for_font(font_size, CELL_FILL), decimals, font_size)
    layout = CellLayout(layout.cell_w, layout.cell_h, max(layout.font_size, MIN_FONT), True)
    return MatrixView(np.asarray(row)[None, :], key=key, theme=theme, layout=layout,
                      decimals=decimals, max_cols=max_cols, record=record, heat=False,
                      row_labels=[label] if label is not None else None,
                      row_colors=[label_color or theme.text], index_map=lambda _r, j: (i, j))


def make_sub(main: str, sub: str, size: float, color: str, sub_color: str) -> VGroup:
    """A symbol with a word as its subscript, e.g. Z with "milk" below right."""
    m = make_text(main, size, color, weight="BOLD")
    s = fit_width(make_text(sub, max(MIN_FONT, size * 0.62), sub_color), 2.2)
    s.next_to(m, RIGHT, buff=BUFF_HAIR).align_to(m, DOWN).shift(DOWN * size * 0.004)
    return VGroup(m, s)


def make_marks(colors: list[str], cells: dict, side, size: float) -> VGroup:
    """Small squares in each word's colour beside its row or above its column
    (`cells`: word index → the cells of its row or column)."""
    marks = VGroup()
    for i, cell in cells.items():
        sq = Square(side_length=size, stroke_width=0, fill_color=colors[i], fill_opacity=1)
        marks.add(sq.next_to(cell, side, buff=BUFF_TIGHT))
    return marks


def label_width(labels, font: float = 24, cap: float = 1.9, pad: float = BUFF_BLOCK) -> float:
    """Room for a column of word labels at `font`: the widest, measured, plus padding."""
    return min(cap, widest(labels, font) + pad)
