"""The scenes' pure helpers: number formatting and parsing, caption wrapping, layout
arithmetic and measured text widths, and the matrix widget's folding and masking."""

from __future__ import annotations

import numpy as np
import pytest
from attention_video.attncore.tokenize import CLOSING, OPENING
from attention_video.scenes.catalogue import Translate
from attention_video.scenes.layout import (
    CELL_FILL,
    DIGIT_HEIGHT,
    MIN_FONT,
    font_for_row,
    font_for_width,
    row_for_font,
    text_width,
    widest,
)
from attention_video.scenes.text import (
    columns,
    decimals_of,
    fmt,
    make_text,
    parse_number,
    wrap,
)
from attention_video.scenes.themes import THEMES
from attention_video.scenes.widgets import (
    CellLayout,
    MatrixView,
    Recorder,
    fit_cells,
    label_width,
    shown_columns,
)
from hypothesis import given
from hypothesis import strategies as st

DARK = THEMES["dark"]


# ---- numbers ---------------------------------------------------------------------------
@pytest.mark.parametrize("value, decimals, text", [
    (1.0, 2, "1.00"), (-0.5, 2, "−0.50"), (-0.0001, 2, "0.00"), (-0.004, 2, "0.00"),
    (-0.005001, 2, "−0.01"), (12.3456, 3, "12.346"), (-3.0, 0, "−3"),
])
def test_fmt_uses_a_real_minus_and_never_shows_minus_zero(value, decimals, text):
    assert fmt(value, decimals) == text


@given(st.floats(-1e6, 1e6, allow_nan=False), st.integers(0, 5))
def test_parse_number_reads_back_what_fmt_drew_within_its_precision(value, decimals):
    text = fmt(value, decimals)
    assert decimals_of(text) == decimals
    assert abs(parse_number(text) - value) <= 0.5 * 10 ** -decimals + 1e-9 * abs(value)


def test_parse_number_accepts_separators_and_an_ellipsis():
    assert parse_number("1,000.5") == 1000.5
    assert parse_number("−2.5…") == -2.5
    with pytest.raises(ValueError):
        parse_number("masked")


# ---- captions --------------------------------------------------------------------------
def test_wrap_keeps_lines_within_width_and_loses_no_word():
    text = "The query of milk against every key gives six factors, one per word of the sentence."
    lines = wrap(text, 30)
    assert all(columns(line) <= 30 for line in lines)
    assert " ".join(lines).split() == text.split()


def test_wrap_never_breaks_inside_a_number_or_a_word():
    lines = wrap("x " * 10 + "0.123456789 supercalifragilistic", 24)
    assert any("0.123456789" in line for line in lines)
    assert any("supercalifragilistic" in line for line in lines)


def test_wrap_breaks_chinese_between_characters_and_not_before_closing_punctuation():
    text = "每个格子等于一行查询乘以一列键，共六乘六个点积。后面的词被遮住了。"
    lines = wrap(text, 20)
    assert "".join(lines) == text
    assert all(columns(line) <= 20 for line in lines)
    assert not any(line[0] in "，。" for line in lines)


def test_wrap_never_starts_a_line_with_closing_nor_ends_one_with_opening_punctuation():
    """Every width from 8 to 60 columns, so a break is tried at every place of the text."""
    text = ("每对相乘：4 对中 3 对同号（绿色，为正），1 对异号（红色，为负）。"
            "“牛奶”给“喝”的权重最大：1.00。")
    for width in range(8, 61):
        lines = wrap(text, width)
        assert "".join(lines).replace(" ", "") == text.replace(" ", ""), width
        assert not any(line[0] in CLOSING for line in lines), (width, lines)
        assert not any(line[-1] in OPENING for line in lines), (width, lines)


def test_translate_picks_the_caption_language():
    assert Translate("en")("key") == "key"
    assert Translate("zh")("key") == "键"
    assert Translate("es")("key") == "clave"


# ---- layout ----------------------------------------------------------------------------
def test_font_for_row_and_row_for_font_are_inverse_within_the_bounds():
    for font in (16.0, 20.0, 27.5):
        assert font_for_row(row_for_font(font, CELL_FILL), CELL_FILL) == pytest.approx(font)
    assert font_for_row(0.01, CELL_FILL) == MIN_FONT  # never below legible
    assert font_for_row(5.0, CELL_FILL, hi=28) == 28
    assert row_for_font(20, 1.0) == pytest.approx(20 * DIGIT_HEIGHT)


def test_text_width_is_measured_from_the_built_text():
    built = make_text("−0.00", 30)
    assert text_width("−0.00", 30) == pytest.approx(built.width, rel=1e-3)
    assert text_width("−0.00", 60) == pytest.approx(2 * text_width("−0.00", 30), rel=1e-6)
    assert text_width("milk", 24) < text_width("milkshake", 24)
    assert text_width("", 24) == 0.0
    assert widest(["a", "abc", "ab"], 24) == text_width("abc", 24)


def test_font_for_width_fits_the_text_in_its_share_of_the_width():
    font = font_for_width("−0.00", 1.0, fill=0.8, lo=0, hi=100)
    assert text_width("−0.00", font) == pytest.approx(0.8, rel=1e-6)


def test_label_width_is_capped_and_padded():
    assert label_width(["a"], 24) == pytest.approx(text_width("a", 24) + 0.3)
    assert label_width(["a" * 80], 24) == 1.9


@pytest.mark.parametrize("rows, cols, max_w, max_h", [(6, 4, 5.0, 4.0), (32, 64, 6.0, 4.0),
                                                      (1, 1, 14.0, 8.0)])
def test_fit_cells_fits_the_box_and_shows_numbers_only_when_legible(rows, cols, max_w, max_h):
    lay = fit_cells(rows, cols, max_w, max_h)
    assert lay.cell_w * cols <= max_w + 1e-9 and lay.cell_h * rows <= max_h + 1e-9
    assert lay.numbers == (lay.font_size >= MIN_FONT)
    if lay.numbers:  # the widest usual number fits its cell
        assert text_width("−0.00", lay.font_size) <= lay.cell_w


# ---- the matrix widget -----------------------------------------------------------------
def test_shown_columns_folds_the_middle_into_one_marker():
    assert shown_columns(4, 8) == [0, 1, 2, 3]
    assert shown_columns(64, 6) == [0, 1, 2, 3, None, 63]


def test_matrix_view_records_every_drawn_number_and_nothing_in_masked_cells():
    values = np.arange(12, dtype=float).reshape(3, 4) / 10
    mask = np.tril(np.ones((3, 4), dtype=bool))
    rec = Recorder()
    view = MatrixView(values, key="scores", theme=DARK, layout=CellLayout(0.8, 0.5, 20, True),
                      record=rec, mask=mask)
    assert {idx for _, idx, _ in rec.entries} == {tuple(map(int, ij)) for ij in np.argwhere(mask)}
    assert all(text == fmt(values[idx], 2) for _, idx, text in rec.entries)
    assert set(view.numbers) == {idx for _, idx, _ in rec.entries}
    assert len(view.mask_marks) == int((~mask).sum())  # cells 0.5 tall get a "−∞"


def test_matrix_view_folds_wide_rows_with_a_visible_marker():
    rec = Recorder()
    view = MatrixView(np.ones((2, 64)), key="Q", theme=DARK,
                      layout=CellLayout(0.5, 0.4, 18, True), max_cols=6, record=rec)
    assert view.cols == [0, 1, 2, 3, None, 63]
    assert len(view.cells) == 2 * 6  # the fold is a cell of its own, with its "…"
    assert {idx[1] for _, idx, _ in rec.entries} == {0, 1, 2, 3, 63}


def test_a_long_caption_takes_two_lines_never_three():
    from attention_video.scenes.widgets import CAPTION_LINES, caption_lines

    text = ("The weights sum to 1, so Z is a blend of the value rows; \"drank\" has the largest "
            "weight (0.989), so Z of \"milk\" leans most towards V(drank).")
    lines = caption_lines(text)
    assert len(lines) <= CAPTION_LINES and " ".join(lines).split() == text.split()
    assert caption_lines("short") == ["short"]


def test_the_kept_texts_are_keyed_on_the_code_that_builds_them(tmp_path):
    """A hand-bumped BUILD_VERSION could be forgotten: the key holds the bytes of
    scenes/text.py and fastmanim/glyphs.py, so editing either builds texts anew."""
    import shutil

    from attention_video.scenes import text as text_mod

    files = []
    for f in text_mod.BUILD_FILES:
        files.append(tmp_path / f.name)
        shutil.copy(f, files[-1])
    assert {f.name for f in files} == {"text.py", "glyphs.py", "texts.py"}
    before = text_mod.code_digest(tuple(files))
    assert before == text_mod.BUILD_CODE
    for f in files:
        f.write_text(f.read_text(encoding="utf-8") + "\n# edit\n", encoding="utf-8")
        after = text_mod.code_digest(tuple(files))
        assert after != before, f.name
        before = after


# ---- colours ---------------------------------------------------------------------------
def wcag_contrast(a: str, b: str) -> float:
    """WCAG 2.1's contrast ratio, written out here from the definition (sRGB to linear,
    luminance weights, (L1 + 0.05) / (L2 + 0.05))."""
    def luminance(color: str) -> float:
        rgb = np.array([int(color.lstrip("#")[i:i + 2], 16) for i in (0, 2, 4)]) / 255.0
        linear = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
        return float(linear @ [0.2126, 0.7152, 0.0722])
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


@pytest.mark.parametrize("theme", sorted(THEMES))
def test_every_colour_drawn_as_text_reads_on_its_background(theme):
    """Words, their families (cross-attention) and the theme's text colours all reach
    WCAG AA's 4.5:1 on the background: on the light theme the golden-ratio hues at one
    lightness gave yellows and greens of 2:1, and the accent 3:1."""
    from attention_video.scenes.themes import family_colors, word_color

    t = THEMES[theme]
    colours = {f"word {i}": word_color(i, t) for i in range(32)}
    colours |= {f"{family} {i}/{n}": c for family in ("cool", "warm") for n in (1, 2, 5, 12, 32)
                for i, c in enumerate(family_colors(n, family, t))}
    colours |= {name: getattr(t, name) for name in
                ("text", "muted", "accent", "positive", "negative", "q", "k", "v", "w")}
    low = {name: round(wcag_contrast(c, t.background), 2) for name, c in colours.items()
           if wcag_contrast(c, t.background) < 4.5}
    assert not low, low
    assert len(set(word_color(i, t) for i in range(32))) == 32  # still one colour per word


def test_a_masked_cell_too_short_for_a_legible_minus_infinity_stays_plain_grey():
    """A "−∞" is drawn at the size floor's font or not at all: cells under 0.5 tall keep
    only their grey (a smaller mark measured 20 px at 1080p, under the 22 px floor)."""
    mask = np.tril(np.ones((3, 3), dtype=bool))
    for h, marks in ((0.49, 0), (0.5, 3)):
        view = MatrixView(np.zeros((3, 3)), key="scores", theme=THEMES["dark"], mask=mask,
                          heat=True, layout=CellLayout(0.6, h, 18, False))
        assert len(view.mask_marks) == marks, h
        from attention_video.scenes.text import make_text  # noqa: PLC0415
        floor = make_text("−∞", 22).height  # the size the lint's floor asks of it
        assert all(m.height >= floor - 1e-9 for m in view.mask_marks)


def test_a_caption_too_long_for_two_lines_at_the_size_floor_takes_three_not_a_smaller_font():
    """Chapter 9's head choice on an Arabic sentence quoted each token with its word: two
    lines of it were shrunk to 21 px (the lint's floor is 22). It takes a third line, set
    closer, in the room under the picture, and every line stays at the floor or above."""
    from attention_video.scenes import lint
    from attention_video.scenes.layout import SAFE_BOTTOM
    from attention_video.scenes.widgets import make_caption

    long = ("We follow layer 5, head 11 (outlined; the ticks mark the row of \"alpha (in alphabet)\"). "
            "--head auto chose it: 'alpha' (part of 'alphabet') gives 0.448 of its attention to "
            "'bet' (part of 'alphabet'), the token just before it, the highest to another word "
            "of any head, and every word of it is kept whole.")
    caption = make_caption(long, THEMES["dark"])
    marks = lint.marks_of([caption])
    assert len(caption) == 3 and lint.too_small(marks) == []
    assert caption.get_top()[1] <= SAFE_BOTTOM and lint.outside_safe_area(marks) == []
    assert "".join(t.text.lstrip("\u200e") for t in caption) == long.replace(" ", "")  # all of it
    assert len(make_caption("A short one.", THEMES["dark"])) == 1
