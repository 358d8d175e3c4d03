"""Chapter 4 · The dot product: one cell of Q·Kᵀ opened up.

The followed word's query row and its highest-scoring other word's key row are
written as two aligned rows; each pair is multiplied (green where the signs
agree, red where they differ) and the products add up to the cell's value.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from manim import *

from scenes.base import ChapterScene
from scenes.ch3_factor import is_self_pair, mask_cells, partner, text_width
from scenes.widgets import (
    SAFE_BOTTOM,
    SAFE_TOP,
    SAFE_X,
    CellLayout,
    MatrixView,
    Recorder,
    Theme,
    fit_width,
    fmt,
    make_text,
)

MAX_PAIRS = 8  # more pairs than this: the first MAX_PAIRS − 1, then "…"


def shown_pairs(d_k: int) -> list[int | None]:
    """The pair indices drawn; None marks the ellipsis column."""
    if d_k <= MAX_PAIRS:
        return list(range(d_k))
    return list(range(MAX_PAIRS - 1)) + [None]


def product_decimals(trace) -> int:
    """Random Q, K have 2 decimals, so 4 decimals make every product exact; 3 for pretrained."""
    return 4 if trace.source == "random" else 3


@dataclass
class PairTable:
    """Three aligned rows: Q_i, K_j and their products, one column per pair."""

    group: VGroup
    q_row: VGroup
    k_row: VGroup
    p_row: VGroup
    frames: VGroup  # one coloured frame per pair column
    labels: VGroup
    cols: list[int | None]


def make_pair_table(q: np.ndarray, k: np.ndarray, i: int, j: int, q_label: str, k_label: str,
                    q_color: str, k_color: str, theme: Theme, dec: int, record: Recorder,
                    max_w: float) -> PairTable:
    """Q_i over K_j over Q_i·K_j (products coloured by sign agreement), fitted to max_w."""
    cols = shown_pairs(len(q))
    products = q * k  # (d_k,)
    strings = [fmt(products[m], dec) for m in cols if m is not None]
    strings += [fmt(v, 2) for m in cols if m is not None for v in (q[m], k[m])]
    names = [f"Q[{q_label}]", f"K[{k_label}]", "×"]
    font = 30.0
    while font > 18:
        cell_w = text_width(max(strings, key=len), font) * 1.12 + 0.3  # bold products
        label_w = max(text_width(s, font) * 1.1 for s in names) + 0.3
        if label_w + len(cols) * cell_w <= max_w:
            break
        font -= 1
    cell_h = font * 0.0106 / 0.42
    q_row, k_row, p_row, frames = VGroup(), VGroup(), VGroup(), VGroup()
    for c, m in enumerate(cols):
        x = RIGHT * (c * cell_w)
        if m is None:
            for row, y in ((q_row, 0), (k_row, 1), (p_row, 2)):
                row.add(make_text("…", font, theme.muted).move_to(x + DOWN * y * cell_h))
            frames.add(VGroup())
            continue
        color = theme.positive if products[m] >= 0 else theme.negative
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
        frame.move_to(x + DOWN * cell_h)
        frames.add(frame)
    labels = VGroup(
        make_text(names[0], font, q_color), make_text(names[1], font, k_color),
        make_text(names[2], font, theme.muted))
    for y, lab in enumerate(labels):
        lab.next_to(LEFT * (cell_w / 2) + DOWN * y * cell_h, LEFT, buff=0.25)
    group = VGroup(frames, q_row, k_row, p_row, labels)
    return PairTable(group, q_row, k_row, p_row, frames, labels, cols)


def make_cell_thumbnail(scores: np.ndarray, mask: np.ndarray, i: int, j: int, theme: Theme,
                        max_w: float, max_h: float) -> tuple[MatrixView, Rectangle]:
    """The factor matrix as coloured cells (no numbers), the opened cell outlined."""
    n_q, n_k = scores.shape
    side = min(0.4, max_w / n_k, max_h / n_q)
    view = MatrixView(scores, key="scores", theme=theme, max_cols=64, heat=True,
                      layout=CellLayout(side, side, 16, False))
    mask_cells(view, mask, theme)
    return view, view.cell_box(i, j, theme.accent, width=5)


class DotProductScene(ChapterScene):
    chapter = 4
    title_en = "One cell: a dot product"
    title_zh = "一个格子：点积"
    reads_trace = ("query_tokens", "key_tokens", "heads", "head_index", "cross", "source")
    reads_focus = True

    def construct(self) -> None:
        self.show_title()
        self.show_cell()
        self.show_pairs()
        self.show_products()
        self.show_sum()
        self.finish()

    # ---- steps ---------------------------------------------------------------------
    def show_cell(self) -> None:
        t, i = self.trace, self.focus
        self.j = j = partner(t)
        self.dec = product_decimals(t)
        thumb, box = make_cell_thumbnail(t.head.scores, t.head.mask, i, j, self.theme, 2.6, 1.9)
        tag = make_text("Q·Kᵀ", 24, self.theme.accent, weight="BOLD")
        tag.next_to(thumb, LEFT, buff=0.2).align_to(thumb, UP)
        thumb_all = VGroup(thumb, box, tag)
        thumb_all.to_corner(UR, buff=0.25).align_to(UP * (SAFE_TOP - 0.05), UP)
        self.thumb, self.thumb_box = thumb, box
        qw, kw = self.q_labels[i], self.k_labels[j]
        formula = make_text(f"Q·Kᵀ[{qw}, {kw}] = Σₘ Q[{qw}, m] · K[{kw}, m]", 28,
                            self.theme.text)
        fit_width(formula, thumb_all.get_left()[0] + SAFE_X - 0.4)
        formula.next_to(LEFT * SAFE_X + UP * (SAFE_TOP - 0.3), RIGHT, buff=0)
        self.formula = formula
        self.thumb_bottom = thumb_all.get_bottom()[1]
        if is_self_pair(t, j):
            en = (f"Open one cell: {self.quoted(self.focus_word)} has no other word to look at, "
                  "so we open its cell with itself.")
            zh = f"打开一个格子：“{self.focus_word}”没有别的词可看，所以打开它和自己的格子。"
        else:
            other = "" if t.cross else " other"
            en = (f"Open one cell: query {self.quoted(self.focus_word)} against key "
                  f"{self.quoted(self.k_word(j))}, its highest-scoring{other} word.")
            zh = (f"打开一个格子：查询“{self.focus_word}”对键“{self.k_word(j)}”，"
                  f"它得分最高的{'' if t.cross else '其他'}词。")
        self.say(en, zh)
        self.play(FadeIn(VGroup(thumb, tag)), Create(box), run_time=0.8)
        self.play(FadeIn(formula), run_time=0.6)
        self.wait(0.8)

    def show_pairs(self) -> None:
        t, i, j = self.trace, self.focus, self.j
        h = t.head
        table = make_pair_table(h.Q[i], h.K[j], i, j, self.q_labels[i], self.k_labels[j],
                                self.q_colors[i], self.k_colors[j], self.theme, self.dec,
                                self.drawn, 2 * SAFE_X)
        fit_width(table.group, 2 * SAFE_X)
        top = min(self.thumb_bottom, self.formula.get_bottom()[1]) - 0.35
        table.group.move_to(ORIGIN).align_to(UP * top, UP)
        self.table = table
        bias = self.tr(" (both include their bias)", "（都已包含偏置）") if h.has_bias else ""
        if t.d_k > MAX_PAIRS:
            shown = sum(m is not None for m in table.cols)
            en = (f"Write both rows aligned: {t.d_k} pairs, the first {shown} shown{bias}.")
            zh = f"把两行对齐：共 {t.d_k} 对，这里显示前 {shown} 对{bias}。"
        else:
            en = f"Write both rows aligned: {t.d_k} pairs of numbers, one per column{bias}."
            zh = f"把两行对齐：{t.d_k} 对数字，每列一对{bias}。"
        self.say(en, zh)
        self.play(FadeIn(VGroup(table.labels[:2], table.q_row, table.k_row)), run_time=0.8)
        self.wait(0.8)

    def show_products(self) -> None:
        t, i, j = self.trace, self.focus, self.j
        products = t.head.Q[i] * t.head.K[j]  # (d_k,)
        agree = int((products >= 0).sum())
        self.say(f"Multiply each pair: {agree} of {t.d_k} pairs have the same sign (green, "
                 f"positive), {t.d_k - agree} opposite signs (red, negative).",
                 f"每对相乘：{t.d_k} 对中 {agree} 对同号（绿色，为正），{t.d_k - agree} 对异号（红色，为负）。")
        tb = self.table
        pairs = [VGroup(f, p) for f, p in zip(tb.frames, tb.p_row)]
        self.play(FadeIn(tb.labels[2]),
                  LaggedStart(*[FadeIn(p) for p in pairs], lag_ratio=0.3),
                  run_time=min(2.4, 0.6 + 0.2 * len(pairs)))
        self.wait(1.0)

    def show_sum(self) -> None:
        t, i, j = self.trace, self.focus, self.j
        value = float(t.head.scores[i, j])
        s = fmt(value, self.dec)
        self.drawn("scores", (i, j), s)
        font = 30
        pairs_note = f"  ({self.tr('d_k', 'd_k')} = {t.d_k} {self.tr('pairs', '对')})" \
            if t.d_k > MAX_PAIRS else ""
        lhs = make_text("Σ =", font, self.theme.text)
        cell_text = make_text(s, font, self.theme.text, weight="BOLD")
        cell = Rectangle(width=cell_text.width + 0.4, height=cell_text.height + 0.3,
                         stroke_color=self.theme.accent, stroke_width=5)
        cell_text.move_to(cell)
        cell_group = VGroup(cell, cell_text)
        name = make_text(f"= Q·Kᵀ[{self.q_labels[i]}, {self.k_labels[j]}]", font, self.theme.accent)
        parts = [lhs, cell_group, name]
        if pairs_note:
            parts.append(make_text(pairs_note.strip(), 22, self.theme.muted))
        line = VGroup(*parts).arrange(RIGHT, buff=0.25)
        fit_width(line, 2 * SAFE_X)
        line.next_to(self.table.group, DOWN, buff=0.45)
        if line.get_bottom()[1] < SAFE_BOTTOM + 0.05:
            line.shift(UP * (SAFE_BOTTOM + 0.05 - line.get_bottom()[1]))
        n_pos = int((t.head.Q[i] * t.head.K[j] >= 0).sum())
        self.say(f"Same signs add, opposite signs subtract: the {t.d_k} products sum to {s}, "
                 f"the value in the cell ({n_pos} adding, {t.d_k - n_pos} subtracting).",
                 f"同号相加，异号相减：{t.d_k} 个乘积之和为 {s}，正是这个格子的值"
                 f"（{n_pos} 个加，{t.d_k - n_pos} 个减）。")
        self.play(FadeIn(VGroup(lhs, *parts[2:])),
                  TransformFromCopy(self.thumb_box, cell), FadeIn(cell_text), run_time=1.0)
        self.wait(1.5)
