"""Layout numbers, named once: the frame's safe area, the smallest legible font, how tall
a glyph is per point of font size, how much of a row its text fills, and text widths
measured from the built text (never guessed per character).

Every size is in scene units (the frame is 14.22 × 8); fonts are Manim font sizes.
"""

from __future__ import annotations

from attention_video.scenes.text import built_text

# SMPTE ST 2046-1's safe areas of the 14.22 × 8 frame: the picture within the action-safe
# 93 %, captions and titles within the title-safe 90 % (a television may crop the rest).
SAFE_X = 6.61  # content stays within ±SAFE_X: 93 % of the width
SAFE_Y = 3.72  # everything stays within ±SAFE_Y: 93 % of the height
TITLE_SAFE_X = 6.4  # captions and titles within ±TITLE_SAFE_X: 90 % of the width
TITLE_SAFE_Y = 3.6  # ... and ±TITLE_SAFE_Y: 90 % of the height (the title's top, the
#                     caption's bottom)
STAGE_TOP = 2.95  # the top of the stage: every chapter's content starts below it (the
#                   titles' bottoms measure 3.18 to 3.31, in both languages)
SAFE_BOTTOM = -2.8  # above a two-line caption

MIN_FONT = 16  # smallest text drawn: ~23 px digit height at 1080p
DIGIT_HEIGHT = 0.0106  # height of a digit per unit of font size (Noto Sans CJK SC, measured)

# How much of a row's height its text fills (the rest is air between rows).
CELL_FILL = 0.55  # a number in a grid cell
LABEL_FILL = 0.62  # a word beside a row, a line of a list, a bar's label
TABLE_FILL = 0.58  # a row of the softmax table
PAIR_FILL = 0.42  # the three rows of the dot-product pairs (framed, so airier)
WIDTH_FILL = 0.8  # how much of a cell's width its number may take

# ---- spacing: the buff of next_to / arrange / to_edge, by size (scene units) ---------------
# Named as Manim names its own (SMALL_BUFF, MED_LARGE_BUFF), but apart from them, so a
# chapter's `from manim import *` never shadows one. Every buff is one of these; a gap off
# the steps is a named constant, saying why, in the chapter that uses it (or below, when
# shared). tests/scenes/test_spacing.py keeps literal numbers out of buff=.
BUFF_NONE = 0  # touching: an arrow from its very point, a group put by its corner at a point
BUFF_HAIR = 0.04  # the smallest: a frame hugging what it outlines
BUFF_TIGHT = 0.06
BUFF_SNUG = 0.08
BUFF_SMALL = 0.1  # Manim's SMALL_BUFF
BUFF_LABEL = 0.12  # the most used: a label beside its object
BUFF_NOTE = 0.15
BUFF_NOTE_WIDE = 0.16
BUFF_ROW = 0.2
BUFF_MEDIUM = 0.25  # Manim's MED_SMALL_BUFF
BUFF_BLOCK = 0.3
BUFF_BLOCK_WIDE = 0.35
BUFF_SECTION = 0.45
BUFF_LARGE = 0.5  # Manim's MED_LARGE_BUFF
# Exceptions, off the steps on purpose:
BUFF_BOX = 0.03  # a frame round a grid's row, column or cell (MatrixView.row_box): tighter
#                  than BUFF_HAIR, as a grid's rows touch and a frame round one lies on its
#                  neighbours' cells, the less of them the tighter it is
BUFF_SAFE_EDGE = 0.28  # from the frame's edge (±4) to the action-safe line (±SAFE_Y)
BUFF_TITLE_EDGE = 0.4  # from the frame's edge (±4) to the title-safe line (±TITLE_SAFE_Y):
#                        the caption's bottom sits on it

_REFERENCE_SIZE = 48.0  # widths are measured once at this size and scaled (Text is linear)


def font_for_row(height: float, fill: float, lo: float = MIN_FONT, hi: float = 28) -> float:
    """The font whose digits fill `fill` of a row `height` tall, kept within [lo, hi]."""
    return max(lo, min(hi, height * fill / DIGIT_HEIGHT))


def row_for_font(font: float, fill: float) -> float:
    """The row height in which a `font` text fills `fill` of the height."""
    return font * DIGIT_HEIGHT / fill


def text_width(text: str, font: float, weight: str = "NORMAL") -> float:
    """The drawn width of `text` at `font`, measured from the built text."""
    if not text:
        return 0.0
    return built_text(text, _REFERENCE_SIZE, weight).width * font / _REFERENCE_SIZE


def widest(texts, font: float, weight: str = "NORMAL") -> float:
    """The width of the widest of `texts` at `font` (0 for none)."""
    return max((text_width(t, font, weight) for t in texts), default=0.0)


def font_for_width(text: str, width: float, fill: float = WIDTH_FILL, lo: float = MIN_FONT,
                   hi: float = 28) -> float:
    """The largest font (within [lo, hi]) at which `text` takes at most `fill` of `width`."""
    w = text_width(text, _REFERENCE_SIZE)
    if w <= 0:
        return hi
    return max(lo, min(hi, width * fill * _REFERENCE_SIZE / w))


# ---- the pairs of a dot product (chapters `dot` and `learning`) ------------------------------
MAX_PAIRS = 8  # more pairs than this: the first MAX_PAIRS − 1, then "…"


def shown_pairs(d_k: int) -> list[int | None]:
    """The pair indices drawn of a d_k-wide dot product; None marks the "…" column."""
    if d_k <= MAX_PAIRS:
        return list(range(d_k))
    return list(range(MAX_PAIRS - 1)) + [None]


# ---- vectors drawn as arrows in their plane (chapters `dot` and `learning`) -----------------
ARROW_STROKE = 5  # an arrow's line, readable at 480p
ARROW_TIP = 0.2  # the tip's length (shorter arrows get a proportionally shorter tip)
SHADOW_ROW = 0.3  # between two shadow bars under the query's line (each with its word)
SHADOW_STROKE = 8  # a shadow bar's thickness
ARC_RADIUS = 0.6  # the angle's arc, at most (half the shorter arrow at least)
ARROW_LABEL_FONT = 18  # a word at an arrow's tip
ARROW_LABEL_ROOM = 0.45  # kept round the arrows for the labels at their tips
AXIS_OVERHANG = 0.25  # the query's line runs this far past the outermost tips
ARC_STEP = 0.3  # a second angle's arc is this much wider than the first
LABEL_REACH = 0.5  # a label's ink is this close to its mark's ink at most (~70 px at 1080p;
#                    scenes.lint's far_labels): further, the eye no longer pairs them
LABELLED_ARROW = 0.6  # shorter arrows are drawn over the longer ones (and labelled where there is room)
TABLE_COL_GAP = 0.35  # between the columns of the numbers beside the arrows
TABLE_ROW_STEP = 0.42  # from one row of them to the next
PICTURE_SHARE = 0.56  # of the safe width, the arrows' box; their numbers take the rest
PANEL_GAP = 0.4  # between the arrows' box and their numbers
PANEL_FONT = 22  # the numbers beside the arrows
