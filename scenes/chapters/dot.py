"""Chapter 4 · The dot product: one cell of Q·Kᵀ opened up.

    Q·Kᵀ[i, j] = Σₘ Q[i, m] · K[j, m]

The followed word's query row and its partner's key row (its highest-scoring other
word) are written as two aligned rows; each pair is multiplied (green where the signs
agree, red where they differ) and the products add up to the cell's value.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attncore.trace import AttentionTrace, HeadTrace
from fastmanim import *  # noqa: F403
from scenes.base import ChapterScene
from scenes.layout import (
    MAX_PAIRS,
    MIN_FONT,
    PAIR_FILL,
    SAFE_BOTTOM,
    SAFE_TOP,
    SAFE_X,
    row_for_font,
    shown_pairs,
    widest,
)
from scenes.text import fit_width, fmt, make_text
from scenes.widgets import CellLayout, MatrixView, Recorder, Theme, sign_color

PAIR_FONT = (18, 30)  # the pair table's font, from the largest down while it is too wide
PAIR_PAD = 0.3  # air beside a pair's numbers in its column, and beside the row names
THUMB_W, THUMB_H = 2.6, 1.9  # the box the factor-matrix thumbnail fits in


def product_decimals(trace: AttentionTrace) -> int:
    """Q, K on the 0.1 grid (random, tiny) have 2 decimals, so 4 decimals make every product
    exact; 3 for pretrained."""
    return 4 if trace.on_grid else 3


# ---- the pair table ---------------------------------------------------------------------------
@dataclass
class PairTable:
    """Three aligned rows: Q_i, K_j and their products, one column per pair."""

    q_row: VGroup
    k_row: VGroup
    p_row: VGroup  # the products, coloured by sign agreement
    frames: VGroup  # one coloured frame per pair column (empty for the "…" column)
    labels: VGroup  # "Q[word]", "K[word]", "×"
    cols: list[int | None]
    signs: np.ndarray  # (d_k,) +1 / −1 / 0 for every pair, shown or not (HeadTrace.agreement)

    @property
    def agree(self) -> int:
        """Pairs whose signs agree: their product is > 0 and adds to the sum."""
        return int((self.signs > 0).sum())

    @property
    def differ(self) -> int:
        """Pairs of opposite signs: their product is < 0 and subtracts."""
        return int((self.signs < 0).sum())

    @property
    def zero(self) -> int:
        """Pairs with a 0 in them: their product is 0 and changes nothing."""
        return int((self.signs == 0).sum())

    @property
    def group(self) -> VGroup:
        return VGroup(self.frames, self.q_row, self.k_row, self.p_row, self.labels)


def pair_column_width(numbers: list[str], products: list[str], font: float) -> float:
    """A pair column's width at `font`: its widest number (products are bold), measured."""
    return max(widest(numbers, font), widest(products, font, "BOLD")) + PAIR_PAD


def pair_font(numbers: list[str], products: list[str], names: list[str], n_cols: int,
              max_w: float) -> float:
    """The largest font at which the row names and n_cols pair columns fit max_w."""
    lo, hi = PAIR_FONT
    font = float(hi)
    while font > lo:
        width = widest(names, font) + PAIR_PAD + n_cols * pair_column_width(numbers, products, font)
        if width <= max_w:
            break
        font -= 1
    return font


def make_pair_table(h: HeadTrace, i: int, j: int, q_label: str, k_label: str,
                    q_color: str, k_color: str, theme: Theme, dec: int, record: Recorder,
                    max_w: float) -> PairTable:
    """Q_i over K_j over Q_i·K_j (products coloured by sign agreement), fitted to max_w."""
    q, k = h.Q[i], h.K[j]  # (d_k,) each
    products, signs = h.products(i, j), h.agreement(i, j)  # (d_k,) each
    cols = shown_pairs(len(q))
    shown = [m for m in cols if m is not None]
    numbers = [fmt(v, 2) for m in shown for v in (q[m], k[m])]
    product_texts = [fmt(products[m], dec) for m in shown]
    names = [f"Q[{q_label}]", f"K[{k_label}]", "×"]
    font = pair_font(numbers, product_texts, names, len(cols), max_w)
    cell_w = pair_column_width(numbers, product_texts, font)
    cell_h = row_for_font(font, PAIR_FILL)
    q_row, k_row, p_row, frames = VGroup(), VGroup(), VGroup(), VGroup()
    for c, m in enumerate(cols):
        x = RIGHT * (c * cell_w)
        if m is None:
            for row, y in ((q_row, 0), (k_row, 1), (p_row, 2)):
                row.add(make_text("…", font, theme.muted).move_to(x + DOWN * y * cell_h))
            frames.add(VGroup())
            continue
        color = sign_color(signs[m], theme)
        for row, y, v, key, idx in ((q_row, 0, q[m], "Q", (i, m)), (k_row, 1, k[m], "K", (j, m))):
            s = fmt(v, 2)
            record(key, idx, s)
            row.add(make_text(s, font, theme.text).move_to(x + DOWN * y * cell_h))
        s = fmt(products[m], dec)
        record("qk_product", (i, j, m), s)
        p_row.add(make_text(s, font, color, weight="BOLD").move_to(x + DOWN * 2 * cell_h))
        frame = RoundedRectangle(corner_radius=0.08, width=cell_w - 0.08, height=3 * cell_h + 0.1,
                                 stroke_color=color, stroke_width=2, fill_color=color,
                                 fill_opacity=0.1)
        frames.add(frame.move_to(x + DOWN * cell_h))
    labels = VGroup(make_text(names[0], font, q_color), make_text(names[1], font, k_color),
                    make_text(names[2], font, theme.muted))
    for y, lab in enumerate(labels):
        lab.next_to(LEFT * (cell_w / 2) + DOWN * y * cell_h, LEFT, buff=0.25)
    return PairTable(q_row, k_row, p_row, frames, labels, cols, signs)


# ---- the thumbnail ---------------------------------------------------------------------------
@dataclass
class CellThumbnail:
    """The factor matrix as coloured cells (no numbers), the opened cell outlined."""

    grid: MatrixView
    box: Rectangle  # around the opened cell
    tag: Mobject  # "Q·Kᵀ", left of the grid

    @property
    def group(self) -> VGroup:
        return VGroup(self.grid, self.box, self.tag)


def make_cell_thumbnail(scores: np.ndarray, mask: np.ndarray, i: int, j: int, theme: Theme,
                        max_w: float, max_h: float) -> CellThumbnail:
    """Heat-map cells (masked ones greyed, without their "−∞"), cell (i, j) outlined."""
    n_q, n_k = scores.shape
    side = min(0.4, max_w / n_k, max_h / n_q)
    grid = MatrixView(scores, key="scores", theme=theme, max_cols=64, heat=True, mask=mask,
                      layout=CellLayout(side, side, MIN_FONT, False))
    tag = make_text("Q·Kᵀ", 24, theme.accent, weight="BOLD")
    tag.next_to(grid, LEFT, buff=0.2).align_to(grid, UP)
    return CellThumbnail(grid, grid.cell_box(i, j, theme.accent, width=5), tag)


# ---- the sum -------------------------------------------------------------------------------
@dataclass
class SumLine:
    """The sum line: "Σ = [value] = Q·Kᵀ[q, k]", and "(d_k = … pairs)" when pairs are folded."""

    lhs: Mobject
    cell: Rectangle  # the frame around the value, grown from the thumbnail's cell
    value: Mobject
    rest: VGroup  # the cell's name and the note

    @property
    def group(self) -> VGroup:
        return VGroup(self.lhs, self.cell, self.value, self.rest)


def make_sum_line(value: str, name: str, note: str | None, theme: Theme) -> SumLine:
    font = 30
    lhs = make_text("Σ =", font, theme.text)
    text = make_text(value, font, theme.text, weight="BOLD")
    cell = Rectangle(width=text.width + 0.4, height=text.height + 0.3,
                     stroke_color=theme.accent, stroke_width=5)
    text.move_to(cell)
    rest = VGroup(make_text(name, font, theme.accent))
    if note:
        rest.add(make_text(note, 22, theme.muted))
    VGroup(lhs, VGroup(cell, text), *rest).arrange(RIGHT, buff=0.25)
    return SumLine(lhs, cell, text, rest)


class DotProductScene(ChapterScene):
    slug = "dot"

    def construct(self) -> None:
        self.show_title()
        thumb, formula = self.show_cell()
        table = self.show_pairs(below=min(thumb.group.get_bottom()[1], formula.get_bottom()[1]))
        self.show_products(table)
        self.show_sum(table, thumb)
        self.finish()

    @property
    def decimals(self) -> int:
        return product_decimals(self.trace)

    # ---- steps ---------------------------------------------------------------------
    def show_cell(self) -> tuple[CellThumbnail, Mobject]:
        t, i, j = self.trace, self.focus, self.partner
        thumb = make_cell_thumbnail(t.head.scores, t.head.mask, i, j, self.theme, THUMB_W, THUMB_H)
        thumb.group.to_corner(UR, buff=0.25).align_to(UP * (SAFE_TOP - 0.05), UP)
        qw, kw = self.q_labels[i], self.k_labels[j]
        formula = make_text(f"Q·Kᵀ[{qw}, {kw}] = Σₘ Q[{qw}, m] · K[{kw}, m]", 28,
                            self.theme.text)
        fit_width(formula, thumb.group.get_left()[0] + SAFE_X - 0.4)
        formula.next_to(LEFT * SAFE_X + UP * (SAFE_TOP - 0.3), RIGHT, buff=0)
        if t.is_self_pair(j):
            en = (f"Open one cell: {self.quoted(self.focus_word)} has no other word to look at, "
                  "so we open its cell with itself.")
            zh = f"打开一个格子：“{self.focus_word}”没有别的词可看，所以打开它和自己的格子。"
        else:
            other_en, other_zh = ("", "") if t.cross else (" other", "其他")
            en = (f"Open one cell: query {self.quoted(self.focus_word)} against key "
                  f"{self.quoted(self.k_word(j))}, its highest-scoring{other_en} word.")
            zh = f"打开一个格子：查询“{self.focus_word}”对键“{self.k_word(j)}”，它得分最高的{other_zh}词。"
        self.say(self.tr(en, zh))
        self.play(FadeIn(VGroup(thumb.grid, thumb.tag)), Create(thumb.box), run_time=0.8)
        self.play(FadeIn(formula), run_time=0.6)
        self.wait(0.8)
        return thumb, formula

    def show_pairs(self, below: float) -> PairTable:
        t, i, j = self.trace, self.focus, self.partner
        h = t.head
        table = make_pair_table(h, i, j, self.q_labels[i], self.k_labels[j],
                                self.q_colors[i], self.k_colors[j], self.theme, self.decimals,
                                self.drawn, 2 * SAFE_X)
        fit_width(table.group, 2 * SAFE_X)
        table.group.move_to(ORIGIN).align_to(UP * (below - 0.35), UP)
        bias = self.tr(" (both include their bias)", "（都已包含偏置）") if h.has_bias else ""
        if t.d_k > MAX_PAIRS:
            shown = sum(m is not None for m in table.cols)
            en = f"Write both rows aligned: {t.d_k} pairs, the first {shown} shown{bias}."
            zh = f"把两行对齐：共 {t.d_k} 对，这里显示前 {shown} 对{bias}。"
        else:
            en = f"Write both rows aligned: {t.d_k} pairs of numbers, one per column{bias}."
            zh = f"把两行对齐：{t.d_k} 对数字，每列一对{bias}。"
        self.say(self.tr(en, zh))
        self.play(FadeIn(VGroup(table.labels[:2], table.q_row, table.k_row)), run_time=0.8)
        self.wait(0.8)
        return table

    def show_products(self, table: PairTable) -> None:
        t = self.trace
        zero_en = f", {table.zero} a zero (grey, adds nothing)" if table.zero else ""
        zero_zh = f"，{table.zero} 对含 0（灰色，不增不减）" if table.zero else ""
        self.say(self.tr(
            f"Multiply each pair: {table.agree} of {t.d_k} pairs have the same sign (green, "
            f"positive), {table.differ} opposite signs (red, negative){zero_en}.",
            f"每对相乘：{t.d_k} 对中 {table.agree} 对同号（绿色，为正），{table.differ} 对异号"
            f"（红色，为负）{zero_zh}。"))
        pairs = [VGroup(f, p) for f, p in zip(table.frames, table.p_row)]
        self.play(FadeIn(table.labels[2]),
                  LaggedStart(*[FadeIn(p) for p in pairs], lag_ratio=0.3),
                  run_time=min(2.4, 0.6 + 0.2 * len(pairs)))
        self.wait(1.0)

    def show_sum(self, table: PairTable, thumb: CellThumbnail) -> None:
        t, i, j = self.trace, self.focus, self.partner
        s = fmt(t.head.scores[i, j], self.decimals)
        self.drawn("scores", (i, j), s)
        note = f"(d_k = {t.d_k} {self.tr('pairs', '对')})" if t.d_k > MAX_PAIRS else None
        line = make_sum_line(s, f"= Q·Kᵀ[{self.q_labels[i]}, {self.k_labels[j]}]", note,
                             self.theme)
        fit_width(line.group, 2 * SAFE_X)
        line.group.next_to(table.group, DOWN, buff=0.45)
        if line.group.get_bottom()[1] < SAFE_BOTTOM + 0.05:
            line.group.shift(UP * (SAFE_BOTTOM + 0.05 - line.group.get_bottom()[1]))
        self.say(self.tr(
            f"Same signs add, opposite signs subtract: the {t.d_k} products sum to {s}, "
            f"the value in the cell ({table.agree} adding, {table.differ} subtracting).",
            f"同号相加，异号相减：{t.d_k} 个乘积之和为 {s}，正是这个格子的值"
            f"（{table.agree} 个加，{table.differ} 个减）。"))
        self.play(FadeIn(VGroup(line.lhs, line.rest)),
                  TransformFromCopy(thumb.box, line.cell), FadeIn(line.value), run_time=1.0)
        self.wait(1.5)
