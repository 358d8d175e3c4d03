"""Chapter `factor` · The factor matrix: Q·Kᵀ, one cell per (query word, key word).

Q sits at the left (one coloured row per query word), Kᵀ above (one column per
key word) and the factor matrix fills in where a row of Q meets a column of Kᵀ.
The followed word's row is "its query against every key"; the column of its
partner (its highest-scoring other key) is "every query against this key".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from attention_video.attncore.trace import AttentionTrace
from attention_video.fastmanim import *  # noqa: F403
from attention_video.scenes.base import ChapterScene
from attention_video.scenes.context import ChapterContext
from attention_video.scenes.layout import (
    BUFF_BLOCK,
    BUFF_BLOCK_WIDE,
    BUFF_LABEL,
    BUFF_LARGE,
    BUFF_MEDIUM,
    BUFF_NOTE,
    BUFF_ROW,
    BUFF_SECTION,
    BUFF_SMALL,
    BUFF_SNUG,
    BUFF_TIGHT,
    CELL_FILL,
    LABEL_FILL,
    MIN_FONT,
    SAFE_BOTTOM,
    SAFE_X,
    STAGE_TOP,
    font_for_row,
    row_for_font,
    text_width,
)
from attention_video.scenes.lint import confusable
from attention_video.scenes.rotary import PLAIN, ScoreNames, score_names
from attention_video.scenes.text import fit_width, fmt, make_text
from attention_video.scenes.themes import Theme
from attention_video.scenes.widgets import (
    MASKED_TEXT,
    CellLayout,
    MatrixView,
    col_label_font,
    label_width,
    make_col_texts,
    make_marks,
    shown_columns,
)

MAX_DIMS = 6  # widest Q row / tallest Kᵀ column drawn before folding into "…"
S_TAG, S_TAG_FONT = "Q·Kᵀ", 26  # the factor matrix's tag
LABEL_GAP = BUFF_LABEL  # between a row's word label and its row
CELL_PAD = 0.22  # air beside a number in its cell (both sides together)
MATRIX_GAP = BUFF_BLOCK_WIDE  # room between Q and the factor matrix (their 0.3 gap and some air)
NAME_FONT = MIN_FONT + 2  # the followed word's / partner's name beside its colour mark
PANEL_LINES = 14  # the side panel's list goes into two columns beyond this many keys


# ---- layout ----------------------------------------------------------------------------
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


def longest_number(values: np.ndarray) -> str:
    """The longest of the values as drawn (2 decimals): it sets the cell width."""
    return max((fmt(v, 2) for v in np.ravel(values)), key=len)


def plan_layout(n_q: int, n_k: int, n_dims: int, q_sample: str, s_sample: str,
                labels: list[str], tag: str = S_TAG) -> FactorLayout:
    """The largest legible layout for these sizes; falls back to a heat map when too small.

    `q_sample` / `s_sample` are the widest numbers of Q and of Kᵀ and the factor matrix
    (which share their column widths); `labels` are the row labels' words; `tag` the
    factor matrix's name.
    """
    height = STAGE_TOP - SAFE_BOTTOM - 0.45  # column labels and gaps
    label_w = label_width(labels, 24, cap=1.9, pad=BUFF_MEDIUM)
    # Numbers everywhere: one row height for Q and the factor matrix, one font; the
    # "Q·Kᵀ" tag right of the factor matrix (below it, it would sit on the caption).
    width = 2 * SAFE_X - text_width(tag, S_TAG_FONT, "BOLD") - BUFF_ROW
    h = min(0.62, height / (n_q + n_dims))
    font = font_for_row(h, CELL_FILL, lo=0, hi=28)
    while font >= MIN_FONT:
        w = text_width(s_sample, font) + CELL_PAD
        w_q = text_width(q_sample, font) + CELL_PAD
        if label_w + n_dims * w_q + MATRIX_GAP + n_k * w <= width:
            h = min(h, row_for_font(font, CELL_FILL))
            return FactorLayout(w, h, w_q, h, font, True, True, True, label_w, 0.0)
        font -= 1
    # Heat map: square-ish cells; the followed row's numbers go to a side panel.
    height -= 0.3  # room above the colour marks for the highlighted column's name
    h = min(0.32, 3.9 / n_q)
    w = min(0.42, h * 1.3)
    h_k = min(0.38, max(0.12, (height - n_q * h - 0.1) / n_dims))
    w_q = 0.3
    panel_w = 4.6 if n_k > PANEL_LINES else 2.6
    row_text = h >= 0.21
    if not row_text:
        label_w = min(label_w, 1.6)
    return FactorLayout(w, h, w_q, h_k, MIN_FONT, False, row_text, False, label_w, panel_w)


def plan_for(trace: AttentionTrace, q_labels: list[str], k_labels: list[str]) -> FactorLayout:
    """plan_layout for this trace: masked scores are never drawn, so they do not count."""
    h = trace.head
    allowed_scores = h.scores[h.mask] if h.mask.any() else h.scores
    return plan_layout(trace.n_q, trace.n_k, len(shown_columns(trace.d_k, MAX_DIMS)),
                       longest_number(h.Q),
                       longest_number(np.concatenate([np.ravel(allowed_scores), np.ravel(h.K)])),
                       q_labels + k_labels)  # a longer tag (Q_rot·K_rotᵀ) moves (`place`)


# ---- the three matrices, their names and tags -------------------------------------------------
@dataclass
class FactorMatrices:
    """Q, Kᵀ and the factor matrix S = Q·Kᵀ, with their word names and tags."""

    layout: FactorLayout
    q: MatrixView
    kt: MatrixView
    s: MatrixView  # its `mask_marks` ("−∞") are shown after its cells
    q_names: VGroup  # word labels (or colour marks) beside Q's rows
    k_names: VGroup  # word labels (or colour marks) above Kᵀ's columns
    tag_q: Mobject
    tag_k: Mobject
    tag_s: Mobject

    @property
    def group(self) -> VGroup:
        """Every part, for placing the block as a whole."""
        return VGroup(self.q, self.kt, self.s, self.s.mask_marks, self.q_names, self.k_names,
                      self.tag_q, self.tag_k, self.tag_s)


@dataclass
class Grids:
    """Q (left), Kᵀ (above) and the factor matrix Q·Kᵀ, aligned for row-times-column."""

    q: MatrixView
    kt: MatrixView
    s: MatrixView


@dataclass
class Tags:
    """"Q" above Q, "Kᵀ" left of Kᵀ, "Q·Kᵀ" right of the factor matrix."""

    q: Mobject
    k: Mobject
    s: Mobject


def make_grids(trace: AttentionTrace, ctx: ChapterContext, lay: FactorLayout) -> Grids:
    """Q (left), Kᵀ (above) and the factor matrix, aligned for row-times-column.
    Masked cells of the factor matrix are greyed, without a number."""
    h = trace.head
    heat = not lay.numbers
    q = MatrixView(h.Q, key="Q", theme=ctx.theme, decimals=2, max_cols=MAX_DIMS, record=ctx.record,
                   layout=CellLayout(lay.w_q, lay.h, lay.font, lay.numbers), heat=heat)
    kt = MatrixView(h.K.T, key="K", theme=ctx.theme, decimals=2, max_cols=64, max_rows=MAX_DIMS,
                    record=ctx.record, layout=CellLayout(lay.w, lay.h_k, lay.font, lay.numbers),
                    heat=heat, index_map=lambda r, c: (c, r))
    s = MatrixView(h.scores, key="scores", theme=ctx.theme, decimals=2, max_cols=64, record=ctx.record,
                   layout=CellLayout(lay.w, lay.h, lay.font, lay.numbers), heat=heat,
                   mask=h.mask)
    # Factor matrix under Kᵀ, Q left of the factor matrix with rows aligned.
    kt.next_to(s.grid_only(), UP, buff=BUFF_LABEL)
    q.next_to(s.grid_only(), LEFT, buff=BUFF_BLOCK)
    q.align_to(s.grid_only(), UP)
    return Grids(q, kt, s)


def mark_colors(q_labels: list[str], q_colors: list[str], k_labels: list[str],
                k_colors: list[str], theme: Theme) -> tuple[list[str], list[str]]:
    """The colours of the marks that stand for words too many to write (rows, columns):
    the words' own where every two of them stay apart, also under deuteranopia and
    protanopia (scenes.lint.confusable); else one neutral grey, since a mark without its
    word, in a colour that looks like another's, would name nothing (the followed word
    and its partner are still named beside theirs)."""
    if confusable(list(zip(q_labels, q_colors)) + list(zip(k_labels, k_colors))):
        return [theme.muted] * len(q_colors), [theme.muted] * len(k_colors)
    return q_colors, k_colors


def make_row_names(q: MatrixView, lay: FactorLayout, labels: list[str],
                   colors: list[str], marks: list[str]) -> VGroup:
    """The query words beside Q's rows: text where rows are tall enough, marks (in
    `marks`' colours) else."""
    rows = {i: q.row_rect_of(i) for i in range(len(labels))}
    if not lay.row_text:
        return make_marks(marks, rows, LEFT, min(0.14, lay.h * 0.8))
    size = font_for_row(lay.h, LABEL_FILL, hi=26)
    return VGroup(*[fit_width(make_text(labels[i], size, colors[i]), lay.label_w)
                    .next_to(rows[i], LEFT, buff=LABEL_GAP) for i in rows])


def make_col_names(kt: MatrixView, lay: FactorLayout, labels: list[str],
                   colors: list[str], marks: list[str]) -> VGroup:
    """The key words above Kᵀ's columns: text where columns are wide enough, marks (in
    `marks`' colours) else."""
    cols = {j: kt.col_rect_of(j) for j in range(len(labels))}
    if not lay.col_text:
        return make_marks(marks, cols, UP, min(0.14, lay.w * 0.8))
    size = col_label_font(lay.w)
    texts = make_col_texts([labels[j] for j in cols], [colors[j] for j in cols], size,
                           kt.theme, lay.w * 0.98)
    return VGroup(*[t.next_to(cols[j], UP, buff=BUFF_SNUG) for j, t in zip(cols, texts)])


def make_tags(q: MatrixView, kt: MatrixView, s: MatrixView, theme: Theme,
              names: ScoreNames = PLAIN) -> Tags:
    """The tags: "Q" above Q, "Kᵀ" left of Kᵀ (raised if it would hit "Q"), "Q·Kᵀ" right
    of the factor matrix (Q_rot, K_rotᵀ and Q_rot·K_rotᵀ once RoPE turned the rows)."""
    tag_q = make_text(names.q, 30, theme.q, weight="BOLD").next_to(q.grid_only(), UP, buff=BUFF_NOTE)
    tag_k = make_text(f"{names.k}ᵀ", 30, theme.k, weight="BOLD").next_to(kt.grid_only(), LEFT,
                                                                        buff=BUFF_ROW)
    hits_q = (tag_k.get_left()[0] < tag_q.get_right()[0] + 0.1
              and tag_k.get_bottom()[1] < tag_q.get_top()[1])
    if hits_q:
        tag_k.align_to(kt.grid_only(), UP)
    tag_s = make_text(names.scores, S_TAG_FONT, theme.accent, weight="BOLD")
    tag_s.next_to(s.grid_only(), RIGHT, buff=BUFF_ROW).align_to(s.grid_only(), UP)
    return Tags(tag_q, tag_k, tag_s)


def place(mats: FactorMatrices, focus_label: str) -> None:
    """Centre the block in the space left of the side panel, under the title; then move
    "Q·Kᵀ" clear of the panel (or of the frame's edge), and leave room left of the colour
    marks for the followed word's name."""
    lay, whole, grid = mats.layout, mats.group, mats.s.grid_only()
    free_left, free_right = -SAFE_X, SAFE_X - lay.panel_w
    top = STAGE_TOP - (0 if lay.numbers else 0.3)
    whole.shift(RIGHT * ((free_left + free_right) / 2 - whole.get_center()[0]))
    whole.shift(UP * (top - whole.get_top()[1]))
    if whole.get_left()[0] < -SAFE_X:
        whole.shift(RIGHT * (-SAFE_X - whole.get_left()[0]))
    if not lay.numbers:  # the side panel sits top right; the tag goes below it
        mats.tag_s.next_to(grid, RIGHT, buff=BUFF_ROW).align_to(grid, DOWN)
    elif mats.tag_s.get_right()[0] > SAFE_X:
        over = mats.tag_s.get_right()[0] - SAFE_X
        if whole.get_left()[0] - over >= -SAFE_X:  # room on the left: the block steps over
            whole.shift(LEFT * over)
        else:  # below the grid, where the caption is not
            mats.tag_s.next_to(grid, DOWN, buff=BUFF_SMALL).align_to(grid, RIGHT)
    if not lay.row_text:
        room = mats.q_names.get_left()[0] + SAFE_X
        name_w = text_width(focus_label, NAME_FONT) + 0.15
        if name_w > room:
            whole.shift(RIGHT * (name_w - room))


def make_factor_matrices(trace: AttentionTrace, ctx: ChapterContext, q_labels: list[str],
                         q_colors: list[str], k_labels: list[str], k_colors: list[str]) -> FactorMatrices:
    """Q, Kᵀ and the factor matrix laid out for this trace: grids, then names, then tags,
    then the whole block placed."""
    lay = plan_for(trace, q_labels, k_labels)
    g = make_grids(trace, ctx, lay)
    tags = make_tags(g.q, g.kt, g.s, ctx.theme, score_names(trace))
    q_marks, k_marks = mark_colors(q_labels, q_colors, k_labels, k_colors, ctx.theme)
    mats = FactorMatrices(lay, g.q, g.kt, g.s,
                          make_row_names(g.q, lay, q_labels, q_colors, q_marks),
                          make_col_names(g.kt, lay, k_labels, k_colors, k_marks),
                          tags.q, tags.k, tags.s)
    place(mats, q_labels[trace.focus])
    return mats


# ---- the side panel (heat-map layout) -------------------------------------------------------
def make_row_panel(values: np.ndarray, allowed: np.ndarray, labels: list[str],
                   colors: list[str], ctx: ChapterContext, key: str, row: int,
                   max_w: float, max_h: float) -> VGroup:
    """The followed row as a readable list "word  value" (one or two columns), names
    right-aligned, values left-aligned beside them; masked keys read MASKED_TEXT."""
    n = len(values)
    per_col = n if n <= PANEL_LINES else -(-n // 2)
    line_h = min(0.42, max_h / max(per_col, 1))
    size = font_for_row(line_h, LABEL_FILL, hi=24)
    blocks = VGroup()
    for start in range(0, n, per_col):
        block = VGroup()
        for k, j in enumerate(range(start, min(n, start + per_col))):
            name = fit_width(make_text(labels[j], size, colors[j]), 1.3)
            if allowed[j]:
                s = fmt(values[j], 2)
                ctx.record(key, (row, j), s)
                val = make_text(s, size, ctx.theme.text)
            else:
                val = make_text(MASKED_TEXT, size, ctx.theme.muted)
            name.move_to(DOWN * k * line_h, aligned_edge=RIGHT)
            block.add(VGroup(name, val.next_to(name, RIGHT, buff=BUFF_NOTE)))
        blocks.add(block)
    blocks.arrange(RIGHT, buff=BUFF_SECTION, aligned_edge=UP)
    return fit_width(blocks, max_w)


def make_panel(trace: AttentionTrace, ctx: ChapterContext, q_label: str,
               k_labels: list[str], k_colors: list[str],
               mats: FactorMatrices) -> VGroup:
    """The followed row's factors as a titled list, top right, beside the factor matrix."""
    i = trace.focus
    title = make_text(ctx.tr("{scores}, row of {q_label}", scores=score_names(trace).scores,
                             q_label=q_label), 22, ctx.theme.accent)
    top = STAGE_TOP
    max_h = top - SAFE_BOTTOM - title.height - 0.3 - 0.5  # leaves room for the Q·Kᵀ tag
    body = make_row_panel(trace.head.scores[i], trace.head.mask[i], k_labels, k_colors, ctx,
                          "scores", i, mats.layout.panel_w - 0.2, max_h)
    panel = VGroup(title, body).arrange(DOWN, buff=BUFF_ROW, aligned_edge=LEFT)
    panel.next_to(mats.s, RIGHT, buff=BUFF_LARGE)
    panel.align_to(UP * top, UP)
    if panel.get_right()[0] > SAFE_X:
        panel.shift(LEFT * (panel.get_right()[0] - SAFE_X))
    return panel


def keep_in_frame(mob: Mobject) -> Mobject:
    """Shift right so the object starts no further left than -SAFE_X."""
    if mob.get_left()[0] < -SAFE_X:
        mob.shift(RIGHT * (-SAFE_X - mob.get_left()[0]))
    return mob


class FactorScene(ChapterScene):
    slug = "factor"

    def construct(self) -> None:
        self.show_title()
        mats = self.show_inputs()
        self.fill_factor_matrix(mats)
        self.show_followed_row(mats)
        self.show_partner_column(mats)
        if self.trace.trained and self.trace.cross:
            self.show_alignment(mats)
        self.finish()

    # ---- steps ---------------------------------------------------------------------
    def show_inputs(self) -> FactorMatrices:
        t = self.trace
        mats = make_factor_matrices(t, self.ctx, self.q_labels, self.q_colors, self.k_labels,
                                    self.k_colors)
        if t.rope is not None:  # the rows chapter `linear` turned
            names = score_names(t)
            self.say(self.tr("{q}, the turned queries: one row per query word ({n_q} × {d_k}). "
                             "{k}ᵀ, the turned keys: one column per key word ({d_k} × {n_k}).",
                             q=names.q, k=names.k, n_q=t.n_q, d_k=t.d_k, n_k=t.n_k))
        else:
            self.say(self.tr("Q: one row per query word ({n_q} × {d_k}). Kᵀ: one column per key "
                             "word ({d_k} × {n_k}).", n_q=t.n_q, d_k=t.d_k, n_k=t.n_k))
        self.play(FadeIn(VGroup(mats.q, mats.q_names, mats.tag_q)),
                  FadeIn(VGroup(mats.kt, mats.k_names, mats.tag_k)), run_time=0.8)
        self.wait(0.8)
        return mats

    def fill_factor_matrix(self, mats: FactorMatrices) -> None:
        t, S = self.trace, mats.s
        masked = int((~t.head.mask).sum())
        extra = (self.tr(" {masked} cells are masked: no word may look at a later one.",
                         masked=masked)
                 if masked else "")
        self.say(self.tr("Each cell is one query row · one key column: {n_q} × {n_k} dot "
                         "products.{extra}", n_q=t.n_q, n_k=t.n_k, extra=extra))
        self.makes("scores")
        rows = []
        for i in range(t.n_q):
            cells = [S.cell_at[(i, j)] for j in S.cols if j is not None]
            nums = [S.numbers[(i, j)] for j in S.cols if (i, j) in S.numbers]
            rows.append(VGroup(*cells, *nums))
        self.play(FadeIn(mats.tag_s),
                  LaggedStart(*[FadeIn(r) for r in rows], lag_ratio=0.5),
                  run_time=min(2.6, 0.6 + 0.12 * t.n_q))
        if len(S.mask_marks):
            self.play(FadeIn(S.mask_marks), run_time=0.4)
        self.wait(0.6)

    def show_followed_row(self, mats: FactorMatrices) -> None:
        t, i, lay = self.trace, self.focus, mats.layout
        boxes = VGroup(mats.q.row_box(i, self.theme.accent), mats.s.row_box(i, self.theme.accent))
        anims = [Create(boxes)]
        if not lay.row_text:  # the word's name beside its mark
            name = make_text(self.q_labels[i], NAME_FONT, self.q_colors[i])
            name.next_to(mats.q_names, LEFT, buff=BUFF_SMALL).match_y(mats.q.row_rect_of(i))
            anims.append(FadeIn(keep_in_frame(name)))
        if not lay.numbers:
            anims.append(FadeIn(make_panel(t, self.ctx, self.q_labels[i], self.k_labels,
                                           self.k_colors, mats)))
        allowed = int(t.head.mask[i].sum())
        self.say(self.tr.plural("Row {row}: the query of \"{word}\" against every key ({n} factor).",
                                "Row {row}: the query of \"{word}\" against every key ({n} factors).",
                                allowed, row=i + 1, word=self.focus_word))
        self.play(*anims, run_time=0.8)
        self.wait(1.4)

    def show_partner_column(self, mats: FactorMatrices) -> None:
        t, i, j = self.trace, self.focus, self.partner
        value = fmt(t.head.scores[i, j], 2)  # the same string the cell shows
        anims = [Create(mats.kt.col_box(j, self.theme.k)), Create(mats.s.col_box(j, self.theme.k)),
                 Create(mats.s.cell_box(i, j, self.theme.accent, width=6))]
        if not mats.layout.col_text:
            name = make_text(self.k_labels[j], NAME_FONT, self.k_colors[j])
            name.next_to(mats.k_names, UP, buff=BUFF_TIGHT).match_x(mats.kt.col_rect_of(j))
            anims.append(FadeIn(keep_in_frame(name)))
        kw, qw = self.k_word(j), self.focus_word
        if t.is_self_pair(j):
            text = self.tr("Column {j}: every query against the key of \"{kw}\". \"{qw}\" has no other key to "
                           "look at, so we take itself: {value}.",
                           j=j + 1, kw=kw, qw=qw, value=value)
        else:
            if t.cross:
                text = self.tr("Column {j}: every query against the key of \"{kw}\", the "
                               "highest-scoring key for \"{qw}\": {value}.",
                               j=j + 1, kw=kw, qw=qw, value=value)
            else:
                text = self.tr("Column {j}: every query against the key of \"{kw}\", the "
                               "highest-scoring other key for \"{qw}\": {value}.",
                               j=j + 1, kw=kw, qw=qw, value=value)
        self.say(text)
        self.play(*anims, run_time=0.8)
        self.wait(1.6)

    def show_alignment(self, mats: FactorMatrices) -> None:
        """A trained translation: each target row's highest-scoring source word, outlined;
        the caption says whether the alignment keeps the word order or crosses it."""
        t = self.trace
        best = [t.head.best_key(i) for i in range(t.n_q)]
        pairs = ", ".join(f"{self.q_word(i)} → {self.k_word(j)}" for i, j in enumerate(best))
        crossing = [(a, b) for a in range(t.n_q) for b in range(a + 1, t.n_q)
                    if best[a] > best[b]]
        if crossing:
            a, b = crossing[0]
            text = self.tr("Each target row's largest score: {pairs}. The order is swapped: \"{query}\" "
                           "comes before \"{query2}\", but \"{key}\" after \"{key2}\".",
                           pairs=pairs, query=self.q_word(a), query2=self.q_word(b), key=self.k_word(best[a]), key2=self.k_word(best[b]))
        else:
            text = self.tr("Each target row's largest score: {pairs}, in the same order in both sentences.",
                           pairs=pairs)
        self.say(text)
        boxes = VGroup(*[mats.s.cell_box(i, j, self.theme.accent, width=4)
                         for i, j in enumerate(best)])
        self.play(LaggedStart(*[Create(b) for b in boxes], lag_ratio=0.3), run_time=1.0)
        self.wait(2.0)
