"""Chapter `dot` · The dot product: one cell of Q·Kᵀ opened up.

    Q·Kᵀ[i, j] = Σₘ Q[i, m] · K[j, m]

The followed word's query row and its partner's key row (its highest-scoring other
word) are written as two aligned rows; each pair is multiplied (blue where the signs
agree, red where they differ) and the products add up to the cell's value.

Then the same two vectors as arrows in the plane they span (scenes.arrows), where

    q·k = |q| · |k| · cos θ

and every key at its true angle to the query and its true length: its shadow on the
query's line, times |q|, is its score. Each key has its own panel (scenes.arrows.ArrowPanels),
every panel at one scale: real models' keys often lie within a degree of each other, and
in one picture their arrows would lie on each other. The numbers are the trace's
(HeadTrace.geometry).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from attention_video.attncore.geometry import QueryGeometry
from attention_video.attncore.trace import HeadTrace
from attention_video.fastmanim import *  # noqa: F403
from attention_video.scenes.arrows import (
    ArrowPanels,
    ArrowPicture,
    GeometryKeys,
    angle_text,
    cos_text,
    fit_panels,
    keys_to_draw,
    make_arrow_panels,
    make_key_table,
    make_one_scale_note,
    norm_text,
    shadow_text,
)
from attention_video.scenes.base import ChapterScene
from attention_video.scenes.claims import FURTHEST, LEAST_ALIGNED, NOT_DRAWN, RANKING, Claim
from attention_video.scenes.context import ChapterContext
from attention_video.scenes.layout import (
    BUFF_BLOCK,
    BUFF_MEDIUM,
    BUFF_NONE,
    BUFF_NOTE,
    BUFF_NOTE_WIDE,
    BUFF_ROW,
    BUFF_SECTION,
    BUFF_SMALL,
    BUFF_TIGHT,
    CELL_FILL,
    MAX_PAIRS,
    MIN_FONT,
    PAIR_FILL,
    PANEL_FONT,
    PANEL_GAP,
    PICTURE_SHARE,
    SAFE_BOTTOM,
    SAFE_X,
    STAGE_TOP,
    TABLE_ROW_STEP,
    font_for_row,
    row_for_font,
    shown_pairs,
    widest,
)
from attention_video.scenes.rotary import PLAIN, ScoreNames, score_names, show_distance
from attention_video.scenes.text import (
    adds_up,
    equals_sign,
    fit_width,
    fmt,
    make_text,
    multiplies_to,
)
from attention_video.scenes.themes import Theme, blend, ink_on
from attention_video.scenes.widgets import (
    CellLayout,
    MatrixView,
    sign_color,
)

PAIR_FONT = (18, 30)  # the pair table's font, from the largest down while it is too wide
PAIR_PAD = BUFF_BLOCK  # air beside a pair's numbers in its column, and beside the row names
THUMB_W, THUMB_H = 2.6, 1.9  # the box the factor-matrix thumbnail fits in
MAX_ARROWS = 6  # keys drawn as arrows, one panel each; the others are named in the table
Q_NAME = "q"  # the query's arrow in every panel: the readout and the identity call it q
NO_ARROW = "*"  # after a key's word in the shadow table: it has no arrow (the note says so)
NOTE_LIFT = BUFF_NOTE  # the note's bottom above the safe bottom, clear of the caption
PAIR_TINT = 0.1  # a pair's frame fill: its product's colour, faint
DECIMALS = 2  # products and scores, as every chapter and the page draw them: where the
#              products as drawn do not add up to the score as drawn, "Σ ≈" says so
READOUT_GAP = 0.4  # between a pair's lengths and the identity under them: wider than their
#                    lines' BUFF_NOTE_WIDE, so they read as two blocks
READOUT_CELL_PAD = 0.12  # air between the readout's value and the sides of its box


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
    signs: np.ndarray  # (d_k,) +1 / −1 / 0 for every pair, shown or not (HeadTrace.agreement;
    #                    0 too where the product is drawn as zero)

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
        """Pairs with a 0 in them, or whose product is drawn as 0: it changes nothing."""
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
                    q_color: str, k_color: str, ctx: ChapterContext, dec: int,
                    max_w: float, names: ScoreNames = PLAIN) -> PairTable:
    """Q_i over K_j over Q_i·K_j (products coloured by sign agreement), fitted to max_w;
    `names` says what the rows are called (Q_rot and K_rot once RoPE turned them)."""
    q, k = h.Q[i], h.K[j]  # (d_k,) each
    products, signs = h.products(i, j), h.agreement(i, j)  # (d_k,) each
    # A product drawn as 0.00 adds nothing as drawn: grey and counted with the zeros, never
    # red or blue beside a number that shows no sign
    signs = np.where([fmt(v, dec) == fmt(0.0, dec) for v in products], 0, signs)
    cols = shown_pairs(len(q))
    shown = [m for m in cols if m is not None]
    numbers = [fmt(v, 2) for m in shown for v in (q[m], k[m])]
    product_texts = [fmt(products[m], dec) for m in shown]
    names = [f"{names.q}[{q_label}]", f"{names.k}[{k_label}]", "×"]
    font = pair_font(numbers, product_texts, names, len(cols), max_w)
    cell_w = pair_column_width(numbers, product_texts, font)
    cell_h = row_for_font(font, PAIR_FILL)
    q_row, k_row, p_row, frames = VGroup(), VGroup(), VGroup(), VGroup()
    for c, m in enumerate(cols):
        x = RIGHT * (c * cell_w)
        if m is None:
            for row, y in ((q_row, 0), (k_row, 1), (p_row, 2)):
                row.add(make_text("…", font, ctx.theme.muted).move_to(x + DOWN * y * cell_h))
            frames.add(VGroup())
            continue
        color = sign_color(signs[m], ctx.theme)
        for row, y, v, key, idx in ((q_row, 0, q[m], "Q", (i, m)), (k_row, 1, k[m], "K", (j, m))):
            s = fmt(v, 2)
            ctx.record(key, idx, s)
            row.add(make_text(s, font, ctx.theme.text).move_to(x + DOWN * y * cell_h))
        s = fmt(products[m], dec)
        ctx.record("qk_product", (i, j, m), s)
        ink = ink_on(color, blend(color, ctx.theme.background, PAIR_TINT), ctx.theme)
        p_row.add(make_text(s, font, ink, weight="BOLD").move_to(x + DOWN * 2 * cell_h))
        frame = RoundedRectangle(corner_radius=0.08, width=cell_w - 0.08, height=3 * cell_h + 0.1,
                                 stroke_color=color, stroke_width=2, fill_color=color,
                                 fill_opacity=PAIR_TINT)
        frames.add(frame.move_to(x + DOWN * cell_h))
    labels = VGroup(make_text(names[0], font, q_color), make_text(names[1], font, k_color),
                    make_text(names[2], font, ctx.theme.muted))
    for y, lab in enumerate(labels):
        lab.next_to(LEFT * (cell_w / 2) + DOWN * y * cell_h, LEFT, buff=BUFF_MEDIUM)
    return PairTable(q_row, k_row, p_row, frames, labels, cols, signs)


# ---- the thumbnail ---------------------------------------------------------------------------
@dataclass
class CellThumbnail:
    """The factor matrix as coloured cells (no numbers), the opened cell outlined; each
    cell's sign written on it as well (+ or −): the pairs below read by their numbers'
    signs, and so does the cell they add up to."""

    grid: MatrixView
    box: Rectangle  # around the opened cell
    tag: Mobject  # "Q·Kᵀ", left of the grid
    signs: VGroup  # + or − on each cell (empty where the cells are too small to write on)

    @property
    def group(self) -> VGroup:
        return VGroup(self.grid, self.signs, self.box, self.tag)


def make_cell_thumbnail(scores: np.ndarray, mask: np.ndarray, i: int, j: int, theme: Theme,
                        max_w: float, max_h: float, name: str = PLAIN.scores) -> CellThumbnail:
    """Heat-map cells (masked ones greyed, without their "−∞"), cell (i, j) outlined."""
    n_q, n_k = scores.shape
    side = min(0.4, max_w / n_k, max_h / n_q)
    grid = MatrixView(scores, key="scores", theme=theme, max_cols=64, heat=True, mask=mask,
                      layout=CellLayout(side, side, MIN_FONT, False))
    tag = make_text(name, 24, theme.accent, weight="BOLD")
    tag.next_to(grid, LEFT, buff=BUFF_ROW).align_to(grid, UP)
    return CellThumbnail(grid, grid.cell_box(i, j, theme.accent, width=5), tag,
                         make_cell_signs(grid, scores, mask, side, theme))


def make_cell_signs(grid: MatrixView, scores: np.ndarray, mask: np.ndarray, side: float,
                    theme: Theme) -> VGroup:
    """+ or − on every cell that is not masked (mask True: allowed), as large as the cell lets (none if that is
    under the size floor)."""
    font = font_for_row(side, CELL_FILL, lo=0, hi=24)
    signs = VGroup()
    if font < MIN_FONT:
        return signs
    for (r, c), cell in grid.cell_at.items():
        if r is None or c is None or not mask[r, c]:  # False: masked, greyed
            continue
        fill = cell.get_fill_color().to_hex()
        glyph = "+" if scores[r, c] >= 0 else "−"
        under = blend(fill, theme.background, cell.get_fill_opacity())
        signs.add(make_text(glyph, font, ink_on(theme.text, under, theme),
                            weight="BOLD").move_to(cell))
    return signs


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


def make_sum_line(value: str, name: str, note: str | None, theme: Theme,
                  sign: str = "=") -> SumLine:
    """`sign`: "≈" where the products as drawn do not add up to `value` on paper."""
    font = 30
    lhs = make_text(f"Σ {sign}", font, theme.text)
    text = make_text(value, font, theme.text, weight="BOLD")
    cell = Rectangle(width=text.width + 0.4, height=text.height + 0.3,
                     stroke_color=theme.accent, stroke_width=5)
    text.move_to(cell)
    rest = VGroup(make_text(name, font, theme.accent))
    if note:
        rest.add(make_text(note, 22, theme.muted))
    VGroup(lhs, VGroup(cell, text), *rest).arrange(RIGHT, buff=BUFF_MEDIUM)
    return SumLine(lhs, cell, text, rest)


# ---- the arrows' numbers ---------------------------------------------------------------------
PANEL_MARGIN = BUFF_SMALL  # right of the numbers: a box drawn round a row stays inside
MAX_PANEL_W = 2 * SAFE_X * (1 - PICTURE_SHARE) - PANEL_GAP - PANEL_MARGIN  # the numbers' widest


def picture_right(panel_w: float) -> float:
    """The right edge of the arrows' box: the numbers beside it take only the width they
    need (at most MAX_PANEL_W, shrunk to it beyond), and the arrows get the rest."""
    return SAFE_X - PANEL_MARGIN - PANEL_GAP - min(panel_w, MAX_PANEL_W)


def panel_width(right: float) -> float:
    """The width the numbers beside an arrow picture ending at `right` have."""
    return SAFE_X - PANEL_MARGIN - right - PANEL_GAP


@dataclass
class PairReadout:
    """Beside the two arrows: |q|, |k|, θ, then q·k = |q| · |k| · cos θ and the cell."""

    lengths: VGroup  # "|Q[milk]| = 5.49", "|K[drank]| = 4.49", "θ = 11°"
    identity: VGroup  # "|q| · |k| · cos θ", "= 5.49 · 4.49 · 0.980", "= 24.1346"
    cell: Rectangle  # around the value, as the sum line's
    sign: str  # "=" or "≈" before the value, as drawn: the caption says the same

    @property
    def group(self) -> VGroup:
        return VGroup(self.lengths, self.identity, self.cell)


def make_pair_readout(g: QueryGeometry, j: int, q_name: str, k_name: str, q_color: str,
                      k_color: str, value: str, cell_name: str, ctx: ChapterContext, keys: GeometryKeys) -> PairReadout:
    q, k = norm_text(g, None, keys, ctx.record), norm_text(g, j, keys, ctx.record)
    lengths = VGroup(make_text(f"|{q_name}| = {q}", PANEL_FONT, q_color),
                     make_text(f"|{k_name}| = {k}", PANEL_FONT, k_color),
                     make_text(f"θ = {angle_text(g, j, keys, ctx.record)}", PANEL_FONT, ctx.theme.text))
    lengths.arrange(DOWN, aligned_edge=LEFT, buff=BUFF_NOTE_WIDE)
    cos = cos_text(g, j, keys, ctx.record)
    sign = equals_sign(multiplies_to([q, k, cos], value))  # "≈": made from unrounded numbers
    result = VGroup(make_text(sign, PANEL_FONT, ctx.theme.text),
                    make_text(value, PANEL_FONT, ctx.theme.text, weight="BOLD"),
                    make_text(cell_name, PANEL_FONT, ctx.theme.accent))
    result.arrange(RIGHT, buff=READOUT_CELL_PAD + BUFF_SMALL)  # the "="s clear the box
    identity = VGroup(make_text("|q| · |k| · cos θ", PANEL_FONT, ctx.theme.text),
                      make_text(f"= {q} · {k} · {cos}", PANEL_FONT, ctx.theme.text), result)
    identity.arrange(DOWN, aligned_edge=LEFT, buff=BUFF_NOTE_WIDE)
    VGroup(lengths, identity).arrange(DOWN, aligned_edge=LEFT, buff=READOUT_GAP)
    cell = Rectangle(width=result[1].width + 2 * READOUT_CELL_PAD, height=result[1].height + 0.2,
                     stroke_color=ctx.theme.accent, stroke_width=4).move_to(result[1])
    return PairReadout(lengths, identity, cell, sign)


@dataclass(frozen=True)
class Gap:
    """Keys the shadow table leaves out between two of its rows (one "⋮ n more" row)."""

    n: int


def table_rows(ranked: list[int], drawn: list[int], room: int) -> list[int | Gap]:
    """The rows of the shadow table, longest shadow first: every allowed key when they fit
    `room` rows; else the highest-scoring ones and every key drawn as an arrow, with each
    run of keys left out between them as one Gap row, so the table still ranks every key."""
    rows: list[int | Gap] = list(ranked)
    for top in range(min(room, len(ranked)), -1, -1):
        if len(rows) <= room:
            break
        keep = set(ranked[:top]) | set(drawn)
        rows, left_out = [], []
        for k in ranked:
            if k in keep:
                rows += _fold(left_out) + [k]
                left_out = []
            else:
                left_out.append(k)
        rows += _fold(left_out)
    return rows


def _fold(left_out: list[int]) -> list[int | Gap]:
    """The row(s) standing for a run of keys left out: one "⋮ n more" row, or the key itself
    when the run is one key (its own row takes no more room than the gap's)."""
    return list(left_out) if len(left_out) == 1 else [Gap(len(left_out))] * bool(left_out)


@dataclass
class ShadowTable:
    """Beside the arrows: the allowed keys' shadows on the query's line and their scores,
    longest shadow first; a key without an arrow is starred, and a run of keys left out
    for room is one "⋮ n more" row."""

    heading: VGroup
    rows: dict[int, VGroup]  # key → word, shadow, score
    gaps: list[tuple[Mobject, int]]  # each "⋮ n more" row and its n
    note: Mobject | None  # "* no arrow drawn", when a listed key has none

    @property
    def group(self) -> VGroup:
        return VGroup(self.heading, *self.rows.values(), *(m for m, _ in self.gaps),
                      *([self.note] if self.note is not None else []))


def make_shadow_table(g: QueryGeometry, drawn: list[int], i: int, names: list[str],
                      colors: list[str], ctx: ChapterContext, keys: GeometryKeys,
                      max_w: float, room: int) -> ShadowTable:
    """The table of `table_rows(g.by_score(), drawn, room)`, fitted to `max_w`."""
    font = PANEL_FONT
    heads = [ctx.tr("key"), ctx.tr("shadow"), "|q| · " + ctx.tr("shadow")]
    plan = table_rows(list(g.by_score()), drawn, room)
    cells = []
    for j in (r for r in plan if not isinstance(r, Gap)):
        score = fmt(g.scores[j], 2)
        ctx.record("scores", (i, j), score)
        word = names[j] if j in drawn else names[j] + NO_ARROW
        cells.append((j, [word, shadow_text(g, j, keys, ctx.record), score]))
    table = make_key_table(heads, cells, colors, ctx.theme, font, lambda j, c: c == 2)
    heading, rows = table.heading, dict(table.rows)
    # the rows in plan order, one step apart, a gap row where keys are left out
    gaps = []
    for r, row in enumerate(plan):
        y = heading.get_y() - (r + 1) * TABLE_ROW_STEP
        if isinstance(row, Gap):
            mark = make_text(ctx.tr.plural("⋮ {n} more", "⋮ {n} more", row.n), font - 4,
                             ctx.theme.muted)
            gaps.append((mark.move_to([heading.get_left()[0], y, 0], aligned_edge=LEFT), row.n))
        else:
            rows[row].set_y(y)
    note = None
    if any(j not in drawn for j in rows):
        note = make_text(ctx.tr("* no arrow drawn"), font - 4, ctx.theme.muted)
        note.next_to(VGroup(*rows.values(), *(m for m, _ in gaps)), DOWN,
                     buff=BUFF_BLOCK).align_to(heading, LEFT)
    table = ShadowTable(heading, rows, gaps, note)
    fit_width(table.group, max_w)
    return table


class DotProductScene(ChapterScene):
    slug = "dot"

    def construct(self) -> None:
        self.pictures: list[tuple[GeometryKeys, ArrowPicture]] = []  # what tests measure
        self.show_title()
        thumb, formula = self.show_cell()
        table = self.show_pairs(below=min(thumb.group.get_bottom()[1], formula.get_bottom()[1]))
        self.show_products(table)
        self.show_sum(table, thumb)
        g = self.trace.head.geometry(self.focus)
        if g.q_norm == 0:
            self.say_no_direction()
        else:
            picture, drawn, named = self.show_two_arrows(g)
            self.show_every_key(picture, drawn, named)
            self.show_shadows(picture, drawn)
            self.show_least_aligned(picture)
        if self.trace.rope is not None:
            show_distance(self)  # a decoder with RoPE: why the turn tells word order
        self.finish()

    @property
    def names(self) -> ScoreNames:
        """Q_rot, K_rot once RoPE turned the rows (scenes.rotary), else Q, K."""
        return score_names(self.trace)

    # ---- steps ---------------------------------------------------------------------
    def show_cell(self) -> tuple[CellThumbnail, Mobject]:
        t, i, j = self.trace, self.focus, self.partner
        names = self.names
        thumb = make_cell_thumbnail(t.head.scores, t.head.mask, i, j, self.theme, THUMB_W, THUMB_H,
                                    names.scores)
        thumb.group.move_to([SAFE_X, STAGE_TOP, 0], aligned_edge=UR)  # inside the safe area
        qw, kw = self.q_labels[i], self.k_labels[j]
        formula = make_text(f"{names.scores}[{qw}, {kw}] = Σₘ {names.q}[{qw}, m] · "
                            f"{names.k}[{kw}, m]", 28, self.theme.text)
        fit_width(formula, thumb.group.get_left()[0] + SAFE_X - 0.4)
        formula.next_to(LEFT * SAFE_X + UP * (STAGE_TOP - 0.25), RIGHT, buff=BUFF_NONE)
        if t.is_self_pair(j):
            text = self.tr("Open one cell: \"{word}\" has no other word to look at, so we open its cell with "
                           "itself.", word=self.focus_word)
        else:
            if t.cross:
                text = self.tr("Open one cell: query \"{word}\" against key \"{key}\", its "
                               "highest-scoring word.", word=self.focus_word, key=self.k_word(j))
            else:
                text = self.tr("Open one cell: query \"{word}\" against key \"{key}\", its "
                               "highest-scoring other word.", word=self.focus_word, key=self.k_word(j))
        self.say(text)
        self.play(FadeIn(VGroup(thumb.grid, thumb.signs, thumb.tag)), Create(thumb.box), run_time=0.8)
        self.play(FadeIn(formula), run_time=0.6)
        self.wait(0.8)
        return thumb, formula

    def show_pairs(self, below: float) -> PairTable:
        t, i, j = self.trace, self.focus, self.partner
        h = t.head
        table = make_pair_table(h, i, j, self.q_labels[i], self.k_labels[j], self.q_colors[i],
                                self.k_colors[j], self.ctx, DECIMALS, 2 * SAFE_X, self.names)
        fit_width(table.group, 2 * SAFE_X)
        table.group.move_to(ORIGIN).align_to(UP * (below - 0.35), UP)
        bias = self.tr(" (both include their bias)") if h.has_bias else ""
        if t.d_k > MAX_PAIRS:
            shown = sum(m is not None for m in table.cols)
            text = self.tr("Write both rows aligned: {d_k} pairs, the first {shown} shown{bias}.",
                           d_k=t.d_k, shown=shown, bias=bias)
        else:
            text = self.tr("Write both rows aligned: {d_k} pairs of numbers, one per column{bias}.",
                           d_k=t.d_k, bias=bias)
        self.say(text)
        self.play(FadeIn(VGroup(table.labels[:2], table.q_row, table.k_row)), run_time=0.8)
        self.wait(0.8)
        return table

    def show_products(self, table: PairTable) -> None:
        t = self.trace
        zero = (self.tr(", {zero} a zero (grey, adds nothing)", zero=table.zero)
                if table.zero else "")
        self.say(self.tr.plural(
            "Multiply each pair: {agree} of {d_k} pairs have the same sign (blue, positive), "
            "{n} opposite sign (red, negative){zero}.",
            "Multiply each pair: {agree} of {d_k} pairs have the same sign (blue, positive), "
            "{n} opposite signs (red, negative){zero}.",
            table.differ, agree=table.agree, d_k=t.d_k, zero=zero))
        pairs = [VGroup(f, p) for f, p in zip(table.frames, table.p_row)]
        self.play(FadeIn(table.labels[2]),
                  LaggedStart(*[FadeIn(p) for p in pairs], lag_ratio=0.3),
                  run_time=min(2.4, 0.6 + 0.2 * len(pairs)))
        self.wait(1.0)

    def show_sum(self, table: PairTable, thumb: CellThumbnail) -> None:
        t, i, j = self.trace, self.focus, self.partner
        s = fmt(t.head.scores[i, j], DECIMALS)
        self.drawn("scores", (i, j), s)
        folded = t.d_k > MAX_PAIRS  # the note says how many pairs the sum has
        note = self.tr("(dₖ = {d_k} pairs)", d_k=t.d_k) if folded else None
        products = [fmt(p, DECIMALS) for p in t.head.products(i, j)]
        sign = "=" if folded else equals_sign(adds_up(products, s))
        line = make_sum_line(s, f"= {self.names.scores}[{self.q_labels[i]}, {self.k_labels[j]}]",
                             note, self.theme, sign)
        fit_width(line.group, 2 * SAFE_X)
        line.group.next_to(table.group, DOWN, buff=BUFF_SECTION)
        if line.group.get_bottom()[1] < SAFE_BOTTOM + 0.05:
            line.group.shift(UP * (SAFE_BOTTOM + 0.05 - line.group.get_bottom()[1]))
        values = dict(d_k=t.d_k, s=s, agree=table.agree, differ=table.differ)
        if sign == "=":
            self.say(self.tr("Same signs add, opposite signs subtract: the {d_k} products sum to {s}, the "
                             "value in the cell ({agree} adding, {differ} subtracting).", **values))
        else:  # the products as drawn add up to another last digit: "Σ ≈", as drawn
            self.say(self.tr("Same signs add, opposite signs subtract: the {d_k} products sum to {s}, the "
                             "value in the cell ({agree} adding, {differ} subtracting); rounded as "
                             "drawn, they add up to it only nearly (≈).", **values))
        self.makes("scores")  # one cell; chapter `factor`, when played, made them all first
        self.play(FadeIn(VGroup(line.lhs, line.rest)),
                  TransformFromCopy(thumb.box, line.cell), FadeIn(line.value), run_time=1.0)
        self.wait(1.5)

    # ---- the arrows ----------------------------------------------------------------------
    @property
    def geometry_keys(self) -> GeometryKeys:
        return GeometryKeys("", (self.focus,), (self.focus,))

    def make_shadow_table(self, g: QueryGeometry, drawn: list[int], max_w: float,
                          room: int) -> ShadowTable:
        return make_shadow_table(g, drawn, self.focus, self.k_labels, self.k_colors, self.ctx,
                                 self.geometry_keys, max_w, room)

    def say_no_direction(self) -> None:
        self.say(self.tr("{q_name} is all zeros: it has no direction, so every key scores 0 against it.",
                         q_name=f"{self.names.q}[{self.q_labels[self.focus]}]"))
        self.wait(1.0)

    def make_panels(self, g: QueryGeometry, drawn: list[int], left: float, right: float,
                    top: float) -> ArrowPanels:
        """The drawn keys one per panel, in score order, every angle labelled by its value."""
        words = {k: self.k_labels[k] for k in drawn}
        planes = fit_panels(g, drawn, left, right, SAFE_BOTTOM, top, Q_NAME, words)
        marks = {k: angle_text(g, k, self.geometry_keys, self.ctx.record) for k in drawn}
        return make_arrow_panels(g, drawn, planes, Q_NAME, words,
                                 {k: self.k_colors[k] for k in drawn}, self.theme, marks)

    def show_two_arrows(self, g: QueryGeometry) -> tuple[ArrowPanels, list[int], list[int]]:
        """Q_i and K_j as arrows in their plane; then |q|·|k|·cos θ is the cell's value."""
        t, i, j = self.trace, self.focus, self.partner
        self.clear_stage()
        drawn, named = keys_to_draw(g, j, MAX_ARROWS)
        top = STAGE_TOP
        value = fmt(t.head.scores[i, j], DECIMALS)
        self.drawn("scores", (i, j), value)
        names = self.names
        q_name, k_name = f"{names.q}[{self.q_labels[i]}]", f"{names.k}[{self.k_labels[j]}]"
        readout = make_pair_readout(g, j, q_name, k_name, self.theme.q, self.k_colors[j], value,
                                    f"= {names.scores}[{self.q_labels[i]}, {self.k_labels[j]}]",
                                    self.ctx, self.geometry_keys)
        widest_table = self.make_shadow_table(g, drawn, MAX_PANEL_W, room=t.n_k)
        left = -SAFE_X
        # the arrows get the room the drawn keys' rows leave (the other rows fit to it)
        right = self.picture_right = picture_right(
            max(readout.group.width,
                VGroup(widest_table.heading, *(widest_table.rows[k] for k in drawn)).width))
        picture = self.make_panels(g, drawn, left, right, top)
        for panel in picture.panels.values():
            self.pictures.append((self.geometry_keys, panel))  # each measured by the tests
        fit_width(readout.group, panel_width(right))
        readout.group.next_to(RIGHT * (right + PANEL_GAP) + UP * top, DR, buff=BUFF_NONE)
        self.readout = readout
        keys = self.geometry_keys
        q_len, k_len = norm_text(g, None, keys, self.drawn), norm_text(g, j, keys, self.drawn)
        theta = angle_text(g, j, keys, self.drawn)
        self.say(self.tr("Two vectors, however many numbers wide, lie in one plane. There {q_name} and "
                         "{k_name} keep their true lengths, {q_len} and {k_len}, and the true angle "
                         "between them, {theta}.",
                         q_name=q_name, k_name=k_name, q_len=q_len, k_len=k_len, theta=theta))
        first = picture.panels[j]
        self.play(FadeIn(VGroup(first.axis, first.q_label)), GrowArrow(first.q_arrow)
                  if isinstance(first.q_arrow, Arrow) else FadeIn(first.q_arrow), run_time=0.6)
        self.play(FadeIn(first.key_group(j)), *[Create(a) for a in first.arcs.get(j, [])[:1]],
                  run_time=0.7)
        self.play(FadeIn(first.arcs[j][1]) if j in first.arcs else Wait(0.01),
                  FadeIn(readout.lengths), run_time=0.5)
        self.wait(1.2)
        cos = cos_text(g, j, keys, self.drawn)
        shadow = shadow_text(g, j, keys, self.drawn)
        values = dict(q_len=q_len, k_len=k_len, cos=cos, value=value, shadow=shadow)
        if readout.sign == "=":
            self.say(self.tr("q·k = |q| · |k| · cos θ: {q_len} × {k_len} × {cos} gives {value}, the same "
                             "value as the cell. |k| · cos θ = {shadow} is the shadow of the key on the "
                             "query's line: the score is |q| times it.", **values))
        else:  # the rounded numbers drawn multiply to another last digit: "≈", as drawn
            self.say(self.tr("q·k = |q| · |k| · cos θ: {q_len} × {k_len} × {cos} ≈ {value}, the cell's "
                             "value (from the unrounded numbers). |k| · cos θ = {shadow} is the "
                             "shadow of the key on the query's line: the score is |q| times it.",
                             **values))
        self.play(FadeIn(readout.identity), Create(readout.cell), run_time=0.8)
        self.play(FadeIn(picture.shadow_group(j)), run_time=0.6)
        self.wait(1.5)
        return picture, drawn, named

    def show_every_key(self, picture: ArrowPanels, drawn: list[int], named: list[int]) -> None:
        others = [k for k in drawn if k != self.partner]
        if not others:
            return
        rest = (self.tr.plural(" ({n} more is not drawn)", " ({n} more are not drawn)", len(named))
                if named else "")
        right = self.picture_right
        note = self.scale_note = make_one_scale_note(self.ctx, max_w=panel_width(right))
        note.next_to(RIGHT * (right + PANEL_GAP) + UP * (SAFE_BOTTOM + NOTE_LIFT), UR, buff=BUFF_NONE)
        self.say(self.tr("Every other key joins in its own panel, at its true angle to the query "
                         "and its true length{rest}, every panel at one scale.", rest=rest))
        self.claim(Claim(NOT_DRAWN, tuple(named), dict(picture.arrows)))
        self.play(LaggedStart(*[FadeIn(picture.key_group(k)) for k in others], lag_ratio=0.25),
                  FadeIn(note), run_time=min(2.0, 0.6 + 0.25 * len(others)))
        self.wait(1.2)

    def show_shadows(self, picture: ArrowPanels, drawn: list[int]) -> None:
        """The keys' shadows light up, longest first, beside their scores."""
        t, g, i = self.trace, picture.geometry, self.focus
        top = self.readout.group.get_top()[1]
        right = self.picture_right
        note = getattr(self, "scale_note", None)  # the table stays above it
        bottom = note.get_top()[1] if note is not None else SAFE_BOTTOM
        room = max(1, int((top - bottom - 2 * BUFF_BLOCK - TABLE_ROW_STEP) / TABLE_ROW_STEP) - 1)
        table = self.make_shadow_table(g, drawn, panel_width(right), room)
        table.group.next_to(RIGHT * (right + PANEL_GAP) + UP * top, DR, buff=BUFF_NONE)
        self.shadow_table = table
        best = g.by_score()[0]  # drawn (show_two_arrows keeps it)
        shadow = shadow_text(g, best, self.geometry_keys, self.drawn)
        score = fmt(t.head.scores[i, best], 2)
        self.drawn("scores", (i, best), score)
        q_len = norm_text(g, None, self.geometry_keys, self.drawn)
        self.play(FadeOut(self.readout.group), run_time=0.4)
        sign = equals_sign(multiplies_to([q_len, shadow], score))  # "≈": rounded factors
        self.say(self.tr("Their shadows on the query's line, longest first: {key} reaches furthest "
                         "({shadow}), so it has the highest score, {score} {sign} {q_len} × {shadow}.",
                         key=self.key_name(best), shadow=shadow, score=score, sign=sign,
                         q_len=q_len))
        self.claim(Claim(FURTHEST, (best,), {best: picture.arrows[best]}))
        self.claim(Claim(RANKING, tuple(table.rows), dict(table.rows), tuple(table.gaps)))
        self.play(FadeIn(table.heading), run_time=0.4)
        for k in table.rows:  # longest shadow first
            if k == self.partner or k not in picture.arrows:
                self.play(FadeIn(table.rows[k]), run_time=0.35)
            else:
                self.play(FadeIn(picture.shadow_group(k)), FadeIn(table.rows[k]), run_time=0.35)
        rest = [m for m, _ in table.gaps] + ([table.note] if table.note is not None else [])
        if rest:
            self.play(FadeIn(VGroup(*rest)), run_time=0.4)
        self.wait(1.2)

    def show_least_aligned(self, picture: ArrowPanels) -> None:
        g, i = picture.geometry, self.focus
        j = g.least_aligned()
        if j == self.partner or len(picture.keys) < 2:
            return
        keys = self.geometry_keys
        theta, shadow = angle_text(g, j, keys, self.drawn), shadow_text(g, j, keys, self.drawn)
        score = fmt(self.trace.head.scores[i, j], 2)
        self.drawn("scores", (i, j), score)
        if g.shadows[j] < 0:
            text = self.tr("its shadow falls behind the query ({shadow}), so its score is negative ({score})",
                           shadow=shadow, score=score)
        else:
            text = self.tr("its shadow is short ({shadow}), and so is its score ({score})",
                           shadow=shadow, score=score)
        self.say(self.tr("The least aligned key, {key}, points {theta} away from the query: {text}.",
                         key=self.key_name(j), theta=theta, text=text))
        self.claim(Claim(LEAST_ALIGNED, (j,), {j: picture.arrows[j]}))
        box = SurroundingRectangle(self.shadow_table.rows[j], buff=BUFF_TIGHT, color=self.theme.accent)
        anims = [Create(box), Indicate(picture.arrows[j], color=self.theme.accent)]
        if j in picture.arcs:  # its angle, already drawn, pointed at
            anims.append(Indicate(picture.arcs[j][1], color=self.theme.accent))
        self.play(*anims, run_time=0.8)
        self.wait(1.5)
