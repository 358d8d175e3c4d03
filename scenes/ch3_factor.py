"""Chapter 3 · The factor matrix: Q·Kᵀ, one cell per (query word, key word).

Q sits at the left (one coloured row per query word), Kᵀ above (one column per
key word) and the factor matrix fills in where a row of Q meets a column of Kᵀ.
The followed word's row is "its query against every key"; the column of its
highest-scoring other key is "every query against this key".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from manim import *

from scenes.base import ChapterScene
from scenes.widgets import (
    MIN_FONT,
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
    shown_columns,
)

MAX_DIMS = 6  # widest Q row / tallest Kᵀ column drawn before folding into "…"
LABEL_GAP = 0.12
MASKED_TEXT = "masked"  # drawn instead of a number where attending is not allowed


def partner(trace) -> int:
    """The key the followed word scores highest, other than itself (itself if there is none).

    Only allowed (unmasked) keys count. In cross-attention every key is an "other" word.
    """
    i = trace.focus
    row = trace.head.scores[i]  # (n_k,)
    allowed = trace.head.mask[i].copy()  # (n_k,)
    if not trace.cross and allowed.sum() > 1:
        allowed[i] = False
    if not allowed.any():
        return i if i < trace.n_k else 0
    return int(np.argmax(np.where(allowed, row, -np.inf)))


def is_self_pair(trace, j: int) -> bool:
    """True when the followed word is paired with itself (no other key to pair with)."""
    return not trace.cross and j == trace.focus


def text_width(s: str, font: float) -> float:
    """Approximate drawn width of a number string (measured: ~0.00685·font per character)."""
    return 0.00685 * font * len(s)


@dataclass(frozen=True)
class FactorLayout:
    """Cell sizes of Q (w_q × h), Kᵀ (w × h_k) and the factor matrix (w × h)."""

    w: float
    h: float
    w_q: float
    h_k: float
    font: float
    numbers: bool  # False: coloured cells, the followed row's numbers in a side panel
    row_text: bool  # word labels beside the rows (False: colour marks only)
    col_text: bool  # word labels above the columns
    label_w: float
    panel_w: float  # width reserved right of the matrices for the followed row's numbers


def plan_layout(n_q: int, n_k: int, n_dims: int, longest_q: str, longest_s: str,
                longest_label: str) -> FactorLayout:
    """The largest legible layout for these sizes; falls back to a heat map when too small."""
    width = 2 * SAFE_X
    height = SAFE_TOP - SAFE_BOTTOM - 0.55  # column labels and gaps
    label_w = min(1.9, text_width(longest_label, 24) + 0.25)
    # Numbers everywhere: one row height for Q and the factor matrix, one font.
    h = min(0.62, height / (n_q + n_dims))
    font = min(28.0, h * 0.55 / 0.0106)
    while font >= MIN_FONT:
        w = text_width(longest_s, font) + 0.22
        w_q = text_width(longest_q, font) + 0.22
        col_ok = max(text_width("m" * 6, min(22, font)), 0) <= w * 1.6
        if label_w + n_dims * w_q + 0.35 + n_k * w <= width and col_ok:
            h = min(h, font * 0.0106 / 0.55)
            return FactorLayout(w, h, w_q, h, font, True, True, True, label_w, 0.0)
        font -= 1
    # Heat map: square-ish cells; the followed row's numbers go to a side panel.
    height -= 0.3  # room above the colour marks for the highlighted column's name
    h = min(0.32, 3.9 / n_q)
    w = min(0.42, h * 1.3)
    h_k = min(0.38, max(0.12, (height - n_q * h - 0.1) / n_dims))
    w_q = 0.3
    panel_w = 4.6 if n_k > 14 else 2.6
    row_text = h >= 0.21
    if not row_text:
        label_w = min(label_w, 1.6)
    return FactorLayout(w, h, w_q, h_k, MIN_FONT, False, row_text, False, label_w, panel_w)


def make_marks(colors: list[str], indices: list[int | None], cells: dict, side, size: float,
               theme: Theme) -> VGroup:
    """Small squares in each word's colour beside its row or above its column."""
    marks = VGroup()
    for i in indices:
        if i is None:
            continue
        sq = Square(side_length=size, stroke_width=0, fill_color=colors[i], fill_opacity=1)
        sq.next_to(cells[i], side, buff=0.06)
        marks.add(sq)
    return marks


def mask_cells(view: MatrixView, mask: np.ndarray, theme: Theme) -> VGroup:
    """Grey out masked cells (their numbers were never drawn); returns the '×' marks."""
    marks = VGroup()
    for (i, j), rect in view.cell_at.items():
        if mask[i, j]:
            continue
        rect.set_fill(theme.grid, 0.55)
        num = view.numbers.pop((i, j), None)
        if num is not None:
            view.number_group.remove(num)
        if rect.height >= 0.28:
            marks.add(make_text("−∞", min(20, rect.height * 40), theme.muted).move_to(rect))
    return marks


def unmasked_recorder(record: Recorder, mask: np.ndarray):
    """A recorder that ignores masked cells (no number is drawn there)."""
    def rec(key: str, index: tuple, text: str) -> None:
        if mask[index[0], index[1]]:
            record(key, index, text)
    return rec


def make_factor_matrices(trace, theme: Theme, lay: FactorLayout, q_labels: list[str],
                         q_colors: list[str], k_labels: list[str], k_colors: list[str],
                         record: Recorder) -> dict[str, VGroup]:
    """Q (left), Kᵀ (above) and the factor matrix, aligned for row-times-column."""
    h = trace.head
    nums = lay.numbers
    q = MatrixView(h.Q, key="Q", theme=theme, decimals=2, max_cols=MAX_DIMS, record=record,
                   layout=CellLayout(lay.w_q, lay.h, lay.font, nums), heat=not nums)
    kt = MatrixView(h.K.T, key="K", theme=theme, decimals=2, max_cols=64, max_rows=MAX_DIMS,
                    record=record, layout=CellLayout(lay.w, lay.h_k, lay.font, nums),
                    heat=not nums, index_map=lambda r, c: (c, r))
    s = MatrixView(h.scores, key="scores", theme=theme, decimals=2, max_cols=64,
                   record=unmasked_recorder(record, h.mask),
                   layout=CellLayout(lay.w, lay.h, lay.font, nums), heat=not nums)
    s.mask_marks = mask_cells(s, h.mask, theme)
    # Place: factor matrix under Kᵀ, Q left of the factor matrix with rows aligned.
    kt.next_to(s.grid_only(), UP, buff=0.12)
    q.next_to(s.grid_only(), LEFT, buff=0.3)
    q.align_to(s.grid_only(), UP)
    s.add(s.mask_marks)
    # Word labels: text where rows/columns are tall/wide enough, colour marks otherwise.
    rows = {i: q.row_rect_of(i) for i in range(trace.n_q)}
    cols = {j: kt.col_rect_of(j) for j in range(trace.n_k)}
    if lay.row_text:
        size = max(MIN_FONT, min(26, lay.h * 0.62 / 0.0106))
        q_names = VGroup(*[fit_width(make_text(q_labels[i], size, q_colors[i]), lay.label_w)
                           .next_to(rows[i], LEFT, buff=LABEL_GAP) for i in rows])
    else:
        q_names = make_marks(q_colors, list(rows), rows, LEFT, min(0.14, lay.h * 0.8), theme)
    if lay.col_text:
        size = max(MIN_FONT, min(22, lay.w * 0.8 / 0.03))
        k_names = VGroup(*[fit_width(make_text(k_labels[j], size, k_colors[j]), lay.w * 0.98)
                           .next_to(cols[j], UP, buff=0.08) for j in cols])
    else:
        k_names = make_marks(k_colors, list(cols), cols, UP, min(0.14, lay.w * 0.8), theme)
    tag_q = make_text("Q", 30, theme.q, weight="BOLD")
    tag_k = make_text("Kᵀ", 30, theme.k, weight="BOLD")
    tag_q.next_to(q.grid_only(), UP, buff=0.15)
    tag_k.next_to(kt.grid_only(), LEFT, buff=0.2)
    if tag_k.get_left()[0] < tag_q.get_right()[0] + 0.1 and tag_k.get_bottom()[1] < tag_q.get_top()[1]:
        tag_k.next_to(kt.grid_only(), LEFT, buff=0.2).align_to(kt.grid_only(), UP)
    tag_s = make_text("Q·Kᵀ", 26, theme.accent, weight="BOLD")
    tag_s.next_to(s.grid_only(), RIGHT, buff=0.2).align_to(s.grid_only(), UP)
    whole = VGroup(q, kt, s, q_names, k_names, tag_q, tag_k, tag_s)
    # Centre the block in the space left of the panel, under the title.
    free_left, free_right = -SAFE_X, SAFE_X - lay.panel_w
    top = SAFE_TOP - (0.05 if lay.numbers else 0.35)
    whole.shift(RIGHT * ((free_left + free_right) / 2 - whole.get_center()[0]))
    whole.shift(UP * (top - whole.get_top()[1]))
    if whole.get_left()[0] < -SAFE_X:
        whole.shift(RIGHT * (-SAFE_X - whole.get_left()[0]))
    if not lay.numbers:  # the side panel sits top right; the tag goes below it
        tag_s.next_to(s.grid_only(), RIGHT, buff=0.2).align_to(s.grid_only(), DOWN)
    elif tag_s.get_right()[0] > SAFE_X:
        tag_s.next_to(s.grid_only(), DOWN, buff=0.1).align_to(s.grid_only(), RIGHT)
    return {"Q": q, "K": kt, "S": s, "q_names": q_names, "k_names": k_names,
            "tag_q": tag_q, "tag_k": tag_k, "tag_s": tag_s}


def make_row_panel(values: np.ndarray, allowed: np.ndarray, labels: list[str],
                   colors: list[str], theme: Theme, record: Recorder, key: str, row: int,
                   max_w: float, max_h: float, highlight: int | None = None) -> VGroup:
    """The followed row as a readable list "word  value" (one or two columns)."""
    n = len(values)
    per_col = n if n <= 14 else -(-n // 2)
    line_h = min(0.42, max_h / max(per_col, 1))
    size = max(MIN_FONT, min(24, line_h * 0.62 / 0.0106))
    lines = VGroup()
    for j in range(n):
        name = fit_width(make_text(labels[j], size, colors[j]), 1.3)
        if allowed[j]:
            s = fmt(values[j], 2)
            record(key, (row, j), s)
            val = make_text(s, size, theme.text)
        else:
            val = make_text(MASKED_TEXT, size, theme.muted)
        val.next_to(name, RIGHT, buff=0.15)
        line = VGroup(name, val)
        lines.add(line)
    cols = [lines[k:k + per_col] for k in range(0, n, per_col)]
    blocks = VGroup()
    for col in cols:
        blk = VGroup(*col)
        for k, line in enumerate(blk):
            line[0].move_to(ORIGIN + DOWN * k * line_h, aligned_edge=RIGHT)
            line[1].next_to(line[0], RIGHT, buff=0.15)
        # Align names on their right edge and values on their left edge.
        blocks.add(blk)
    blocks.arrange(RIGHT, buff=0.45, aligned_edge=UP)
    fit_width(blocks, max_w)
    return blocks



class FactorScene(ChapterScene):
    chapter = 3
    title_en = "The factor matrix Q·Kᵀ"
    title_zh = "因子矩阵 Q·Kᵀ"
    reads_trace = ("query_tokens", "key_tokens", "heads", "head_index", "cross", "causal")
    reads_focus = True

    def construct(self) -> None:
        self.show_title()
        mats = self.show_inputs()
        self.fill_factor_matrix(mats)
        self.show_followed_row(mats)
        self.show_partner_column(mats)
        self.finish()

    # ---- steps ---------------------------------------------------------------------
    def build(self) -> dict:
        t = self.trace
        dims = len(shown_columns(t.d_k, MAX_DIMS))
        def longest(arr):
            return max((fmt(v, 2) for v in np.ravel(arr)), key=len)
        allowed_scores = t.head.scores[t.head.mask] if t.head.mask.any() else t.head.scores
        self.lay = plan_layout(t.n_q, t.n_k, dims, longest(t.head.Q),
                               longest(np.concatenate([np.ravel(allowed_scores), np.ravel(t.head.K)])),
                               max(self.q_labels + self.k_labels, key=len))
        mats = make_factor_matrices(t, self.theme, self.lay, self.q_labels, self.q_colors,
                                    self.k_labels, self.k_colors, self.drawn)
        if not self.lay.row_text:  # keep room left of the marks for the followed word's name
            name_w = make_text(self.q_labels[self.focus], MIN_FONT + 2).width + 0.15
            room = mats["q_names"].get_left()[0] + SAFE_X
            if name_w > room:
                for m in {id(m): m for m in mats.values() if isinstance(m, Mobject)}.values():
                    m.shift(RIGHT * (name_w - room))
        return mats

    def show_inputs(self) -> dict:
        mats = self.build()
        t = self.trace
        self.say(f"Q: one row per query word ({t.n_q} × {t.d_k}). Kᵀ: one column per key word "
                 f"({t.d_k} × {t.n_k}).",
                 f"Q：每个查询词一行（{t.n_q} × {t.d_k}）。Kᵀ：每个键词一列（{t.d_k} × {t.n_k}）。")
        self.play(FadeIn(VGroup(mats["Q"], mats["q_names"], mats["tag_q"])),
                  FadeIn(VGroup(mats["K"], mats["k_names"], mats["tag_k"])), run_time=0.8)
        self.wait(0.8)
        return mats

    def fill_factor_matrix(self, mats: dict) -> None:
        t, S = self.trace, mats["S"]
        masked = int((~t.head.mask).sum())
        extra_en = f" {masked} cells are masked: no word may look at a later one." if masked else ""
        extra_zh = f"{masked} 个格子被遮住：词不能看后面的词。" if masked else ""
        self.say(f"Each cell is one query row · one key column: {t.n_q} × {t.n_k} dot products."
                 + extra_en,
                 f"每个格子 = 一行查询 · 一列键：共 {t.n_q} × {t.n_k} 个点积。" + extra_zh)
        rows = []
        for i in range(t.n_q):
            cells = [S.cell_at[(i, j)] for j in S.cols if j is not None]
            nums = [S.numbers[(i, j)] for j in S.cols if (i, j) in S.numbers]
            rows.append(VGroup(*cells, *nums))
        self.play(FadeIn(mats["tag_s"]),
                  LaggedStart(*[FadeIn(r) for r in rows], lag_ratio=0.5),
                  run_time=min(2.6, 0.6 + 0.12 * t.n_q))
        if len(S.mask_marks):
            self.play(FadeIn(S.mask_marks), run_time=0.4)
        self.wait(0.6)

    def show_followed_row(self, mats: dict) -> None:
        t, i = self.trace, self.focus
        Q, S = mats["Q"], mats["S"]
        boxes = VGroup(Q.row_box(i, self.theme.accent), S.row_box(i, self.theme.accent))
        anims = [Create(boxes)]
        if not self.lay.row_text:  # the word's name beside its mark
            name = make_text(self.q_labels[i], MIN_FONT + 2, self.q_colors[i])
            name.next_to(mats["q_names"], LEFT, buff=0.1).match_y(Q.row_rect_of(i))
            self.ensure_left(name)
            anims.append(FadeIn(name))
        if not self.lay.numbers:
            self.panel = self.make_panel(mats)
            anims.append(FadeIn(self.panel))
        allowed = int(t.head.mask[i].sum())
        self.say(f"Row {i + 1}: the query of {self.quoted(self.focus_word)} against every key "
                 f"({allowed} factor{'s' if allowed != 1 else ''}).",
                 f"第 {i + 1} 行：“{self.focus_word}”的查询与每个键相乘（{allowed} 个因子）。")
        self.play(*anims, run_time=0.8)
        self.wait(1.4)

    def show_partner_column(self, mats: dict) -> None:
        t, i = self.trace, self.focus
        j = partner(t)
        K, S = mats["K"], mats["S"]
        value = fmt(t.head.scores[i, j], 2)  # the same string the cell shows
        box_k = K.col_box(j, self.theme.k)
        box_s = S.col_box(j, self.theme.k)
        cell = S.cell_box(i, j, self.theme.accent, width=6)
        anims = [Create(box_k), Create(box_s), Create(cell)]
        if not self.lay.col_text:
            name = make_text(self.k_labels[j], MIN_FONT + 2, self.k_colors[j])
            name.next_to(mats["k_names"], UP, buff=0.06).match_x(K.col_rect_of(j))
            self.ensure_left(name)
            anims.append(FadeIn(name))
        kw = self.quoted(self.k_word(j))
        if is_self_pair(t, j):
            en = (f"Column {j + 1}: every query against the key of {kw}. {self.quoted(self.focus_word)} "
                  f"has no other key to look at, so we take itself: {value}.")
            zh = (f"第 {j + 1} 列：每个查询与“{self.k_word(j)}”的键。“{self.focus_word}”没有别的键可看，"
                  f"所以取它自己：{value}。")
        else:
            other = "" if t.cross else " other"
            en = (f"Column {j + 1}: every query against the key of {kw}, the highest-scoring"
                  f"{other} key for {self.quoted(self.focus_word)}: {value}.")
            zh = (f"第 {j + 1} 列：每个查询与“{self.k_word(j)}”的键。“{self.k_word(j)}”是"
                  f"“{self.focus_word}”得分最高的{'' if t.cross else '其他'}键：{value}。")
        self.say(en, zh)
        self.play(*anims, run_time=0.8)
        self.wait(1.6)

    # ---- helpers ---------------------------------------------------------------------
    def make_panel(self, mats: dict) -> VGroup:
        t, i = self.trace, self.focus
        title = make_text(self.tr(f"Q·Kᵀ, row of {self.q_labels[i]}", f"Q·Kᵀ 中“{self.q_labels[i]}”这一行"),
                          22, self.theme.accent)
        top = SAFE_TOP - 0.05
        max_h = top - SAFE_BOTTOM - title.height - 0.3 - 0.5  # leaves room for the Q·Kᵀ tag
        body = make_row_panel(t.head.scores[i], t.head.mask[i], self.k_labels, self.k_colors,
                              self.theme, self.drawn, "scores", i,
                              self.lay.panel_w - 0.2, max_h)
        panel = VGroup(title, body).arrange(DOWN, buff=0.2, aligned_edge=LEFT)
        panel.next_to(mats["S"], RIGHT, buff=0.5)
        panel.align_to(UP * top, UP)
        if panel.get_right()[0] > SAFE_X:
            panel.shift(LEFT * (panel.get_right()[0] - SAFE_X))
        return panel

    @staticmethod
    def ensure_left(mob: VMobject) -> None:
        if mob.get_left()[0] < -SAFE_X:
            mob.shift(RIGHT * (-SAFE_X - mob.get_left()[0]))
