"""Chapter `weighted_sum` · Weighted sum: the followed word's weights scale every V row; the scaled rows
add up, column by column, to Z_i — the word's "encoded value"."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from attention_video.attncore.attention import ranking
from attention_video.fastmanim import *  # noqa: F403
from attention_video.scenes.base import ChapterScene
from attention_video.scenes.claims import MASKED, NOT_DRAWN, Claim
from attention_video.scenes.context import ChapterContext
from attention_video.scenes.layout import (
    BUFF_LABEL,
    BUFF_MEDIUM,
    BUFF_NOTE,
    MIN_FONT,
    SAFE_BOTTOM,
    SAFE_X,
    STAGE_TOP,
)
from attention_video.scenes.precision import SCORES, weight_decimals
from attention_video.scenes.rotary import score_names
from attention_video.scenes.text import adds_up, fit_width, fmt, make_text
from attention_video.scenes.themes import MIN_CONTRAST, blend, ink_on
from attention_video.scenes.widgets import (
    CellLayout,
    MatrixView,
    fit_cells,
    label_width,
    make_sub,
)

MAX_ROWS = 8  # more allowed keys than this: show the TOP_ROWS largest, fold the rest
TOP_ROWS = 6
MAX_COLS = 6  # columns of V shown (d_k up to 64: first ones, "…", last one)
DECIMALS = SCORES  # V, the scaled rows and Z (the weights: scenes.precision)



@dataclass(frozen=True)
class RowPlan:
    """Which key rows the table shows, in which order, and how many are folded away."""

    rows: list[int]  # key indices shown, top to bottom
    folded: int  # allowed keys not shown (their rows are still in Z)
    masked: list[int]  # keys the mask excludes (weight exactly 0)


def plan_rows(weights_row: np.ndarray, mask_row: np.ndarray, normalized: bool) -> RowPlan:
    """All allowed keys in sentence order, or the TOP_ROWS largest (|raw factor| without
    softmax, since a large negative factor weighs V as much as a large positive one)."""
    allowed = [j for j in range(len(weights_row)) if mask_row[j]]
    masked = [j for j in range(len(weights_row)) if not mask_row[j]]
    if len(allowed) <= MAX_ROWS:
        return RowPlan(allowed, 0, masked)
    ranked = list(ranking(weights_row, mask_row, by_size=not normalized))
    return RowPlan(ranked[:TOP_ROWS], len(allowed) - TOP_ROWS, masked)


@dataclass
class WeightedTable:
    """weights × V = weighted rows, summed into Z: the parts, in the order they appear."""

    weights: MatrixView  # the followed word's weight (or raw factor) per shown key
    V: MatrixView
    weighted: MatrixView  # weights[i, j]·V[j], one row per shown key
    Z: MatrixView
    times: Mobject
    equals: Mobject
    headers: VGroup  # over the weights, V and the weighted rows
    folded: VGroup  # "+ N smaller rows" and the "⋮" marks (empty when nothing is folded)
    tints: list[Rectangle]  # behind each weighted row, in its key's colour
    rule: Line
    z_label: VGroup
    z_box: Rectangle

    @property
    def group(self) -> VGroup:
        return VGroup(self.weights, self.times, self.V, self.equals, self.weighted,
                      self.headers, self.folded, self.rule, self.Z, self.z_label, self.z_box)


@dataclass
class Grids:
    """The four grids of weights × V = weighted rows → Z."""

    weights: MatrixView  # the followed word's weight per shown key, a column
    V: MatrixView  # the shown keys' V rows
    weighted: MatrixView  # weights[i, j]·V[j]
    Z: MatrixView  # Z_i, their column sums


def make_grids(trace, plan: RowPlan, layout: CellLayout, ctx: ChapterContext, k_labels: list[str],
               k_colors: list[str]) -> Grids:
    """The weight column, V's shown rows, the weighted rows and Z_i, every number drawn."""
    h, i, rows = trace.head, trace.focus, plan.rows
    kw = {"theme": ctx.theme, "layout": layout, "decimals": DECIMALS, "record": ctx.record,
          "heat": False, "numbers_in_rows": set(range(len(rows)))}
    w_vals = h.weights[i, rows][:, None]  # (r, 1)
    V_vals = h.V[rows]  # (r, d_k)
    weights = MatrixView(w_vals, key="weights", max_cols=1, **{**kw, "decimals": weight_decimals(trace.normalized)},
                         row_labels=[k_labels[j] for j in rows],
                         row_colors=[k_colors[j] for j in rows],
                         index_map=lambda a, b: (i, rows[a]),
                         cell_style=lambda a, b: (k_colors[rows[a]], 0.14))
    V = MatrixView(V_vals, key="V", max_cols=MAX_COLS, index_map=lambda a, m: (rows[a], m), **kw)
    weighted = MatrixView(h.weighted_rows(i)[rows], key="weighted_V", max_cols=MAX_COLS,  # (r, d_k)
                          index_map=lambda a, m: (i, rows[a], m), **kw)
    Z = MatrixView(h.Z[i:i + 1], key="Z", max_cols=MAX_COLS, index_map=lambda a, m: (i, m),
                   **{**kw, "numbers_in_rows": {0}})
    return Grids(weights, V, weighted, Z)


ROW_TINT = 0.08  # the opacity of a row's band of its word's colour
INK_FLOOR = MIN_CONTRAST + 0.1  # a fold mark's contrast on its band, with room for rounding


def tint_rows(view: MatrixView, colors: list[str]) -> list[Rectangle]:
    """A faint band of each row's word colour behind the row (it travels with the grid);
    the row's "…" darkened or lightened until it reads on its band."""
    theme = view.theme
    tints = []
    for a, c in enumerate(colors):
        band = view.row_rect_of(a)
        tints.append(Rectangle(width=band.width, height=view.layout.cell_h, stroke_width=0,
                               fill_color=c, fill_opacity=ROW_TINT).move_to(band))
        ink = ink_on(theme.muted, blend(c, theme.background, ROW_TINT), theme, INK_FLOOR)
        for cell in view.cells:
            if isinstance(cell, VGroup) and len(cell) == 2 and abs(cell.get_y() - band.get_y()) < 1e-6:
                cell[1].set_color(ink)  # the fold mark beside the rect
    view.add_to_back(*tints)
    return tints


def make_headers(trace, views: tuple[MatrixView, ...], size: float, ctx: ChapterContext) -> VGroup:
    """'weight' (or 'factor' without softmax), 'V values' and 'weight × V' over their grids."""
    weights, V, weighted = views
    name = ctx.tr("weight") if trace.normalized else ctx.tr("factor")
    headers = VGroup(
        make_text(name, size, ctx.theme.muted).next_to(weights.grid_only(), UP, buff=BUFF_NOTE),
        make_sub("V", ctx.tr("values"), size * 1.15, ctx.theme.v, ctx.theme.muted)
        .next_to(V.grid_only(), UP, buff=BUFF_NOTE),
        make_text(name + " × V", size, ctx.theme.muted).next_to(weighted.grid_only(), UP, buff=BUFF_NOTE),
    )
    for hd in headers:
        fit_width(hd, max(hd.width * 0.5, 2.4))
    return headers


def make_fold_note(plan: RowPlan, views: tuple[MatrixView, ...], ctx: ChapterContext) -> VGroup:
    """Under the rows: '+ N smaller rows' under V, '⋮' under the weights and weighted rows."""
    if not plan.folded:
        return VGroup()
    weights, V, weighted = views
    layout = V.layout
    n = plan.folded
    note = make_text(ctx.tr.plural("⋮  + {n} smaller row", "⋮  + {n} smaller rows", n),
                     max(MIN_FONT, min(22, layout.font_size * 0.85)), ctx.theme.muted)
    fit_width(note, V.grid_only().width)
    note.next_to(V.grid_only(), DOWN, buff=layout.cell_h * 0.5 - note.height / 2)
    dots = VGroup(*[make_text("⋮", max(MIN_FONT, layout.font_size * 0.9), ctx.theme.muted)
                    .next_to(m.grid_only(), DOWN, buff=layout.cell_h * 0.2)
                    for m in (weights, weighted)])
    for d in dots:
        if d.height > layout.cell_h * 0.8:
            d.scale_to_fit_height(layout.cell_h * 0.8)
    return VGroup(note, dots)


def rows_add_up(rows: np.ndarray, total: np.ndarray) -> bool:
    """Whether the weighted rows (r, d_k) as drawn add up, column by column, to Z (d_k,) as
    drawn."""
    return all(adds_up([fmt(v, DECIMALS) for v in rows[:, m]], fmt(total[m], DECIMALS))
               for m in range(rows.shape[1]))


def make_weighted_table(trace, plan: RowPlan, ctx: ChapterContext, k_labels: list[str],
                        k_colors: list[str], q_label: str, q_color: str,
                        top: float) -> WeightedTable:
    """weights column × V rows = scaled rows, then their column sums Z_i, fitted under `top`."""
    r, c = len(plan.rows), min(trace.d_k, MAX_COLS)
    avail_w = 2 * SAFE_X - label_width([k_labels[j] for j in plan.rows]) - 1.5
    avail_h = top - SAFE_BOTTOM - 0.55 - 0.35  # headers; the rule above Z
    base = fit_cells(r + (1 if plan.folded else 0) + 1, 2 * c + 1, avail_w, avail_h, DECIMALS,
                     max_font=28)
    layout = CellLayout(min(base.cell_w, 1.25), base.cell_h, base.font_size, True)
    grids = make_grids(trace, plan, layout, ctx, k_labels, k_colors)
    weights, V, weighted, Z = grids.weights, grids.V, grids.weighted, grids.Z
    colors = [k_colors[j] for j in plan.rows]
    tint_rows(V, colors)
    tints = tint_rows(weighted, colors)
    sign = max(20, min(36, layout.font_size * 1.3))
    times, equals = make_text("×", sign, ctx.theme.text), make_text("=", sign, ctx.theme.text)
    VGroup(weights, times, V, equals, weighted).arrange(RIGHT, buff=BUFF_MEDIUM, aligned_edge=UP)
    for op in (times, equals):
        op.set_y(weights.grid_only().get_y())
    head_size = max(MIN_FONT, min(24, layout.font_size * 0.9))
    headers = make_headers(trace, (weights, V, weighted), head_size, ctx)
    folded = make_fold_note(plan, (weights, V, weighted), ctx)
    # The rule under the weighted rows, then Z: their column sums.
    above_rule = folded if plan.folded else weighted.grid_only()
    rule_w = weighted.grid_only().width + 0.2
    rule = Line(LEFT * rule_w / 2, RIGHT * rule_w / 2, stroke_color=ctx.theme.text, stroke_width=2)
    rule.next_to(VGroup(weighted.grid_only(), above_rule), DOWN, buff=BUFF_LABEL)
    rule.align_to(weighted.grid_only(), LEFT).shift(LEFT * 0.1)
    Z.grid_only().next_to(rule, DOWN, buff=BUFF_LABEL)
    Z.align_to(weighted.grid_only(), LEFT)
    # "≈" where the rows as drawn do not add up to Z as drawn (Z is the sum of the unrounded
    # rows); with rows folded away the fold note already says the sum holds more rows
    on_paper = plan.folded or rows_add_up(trace.head.weighted_rows(trace.focus)[plan.rows],
                                          trace.head.Z[trace.focus])
    sum_of = ctx.tr("sum of the rows =") if on_paper else ctx.tr("sum of the rows ≈")
    z_label = VGroup(
        make_text(sum_of, max(MIN_FONT, head_size), ctx.theme.muted),
        make_sub("Z", q_label, max(22, head_size * 1.25), ctx.theme.z, q_color),
    ).arrange(RIGHT, buff=BUFF_NOTE)
    z_label.next_to(Z.grid_only(), LEFT, buff=BUFF_MEDIUM)
    table = WeightedTable(weights, V, weighted, Z, times, equals, headers, folded, tints, rule,
                          z_label, Z.row_box(0, ctx.theme.accent))
    whole = table.group
    fit_width(whole, 2 * SAFE_X)
    whole.move_to(ORIGIN).align_to(UP * top, UP)
    return table


class WeightedSumScene(ChapterScene):
    slug = "weighted_sum"

    def construct(self) -> None:
        self.show_title()
        table = self.show_weights_and_values()
        self.show_scaled_rows(table)
        self.show_sum(table)
        self.show_meaning()
        self.finish()

    # ---- what the rows are -------------------------------------------------------------
    @property
    def plan(self) -> RowPlan:
        h = self.trace.head
        return plan_rows(h.weights[self.focus], h.mask[self.focus], self.trace.normalized)

    def w_text(self, j: int) -> str:
        return self.weight_text(j)

    def show_weights_and_values(self) -> WeightedTable:
        t, i, plan = self.trace, self.focus, self.plan
        table = make_weighted_table(t, plan, self.ctx, self.k_labels, self.k_colors,
                                    self.q_labels[i], self.q_colors[i], top=STAGE_TOP)
        w = self.quoted(self.focus_word)
        if t.normalized:
            text = self.tr("The weights of {w} (its softmax row) say how much of each value row V it takes.",
                           w=w)
        else:
            text = self.tr("No softmax: the raw factors of {w} (its row of {scores}, not summing to 1) "
                           "weigh the value rows V directly.", w=w, scores=score_names(t).scores)
        if plan.masked:
            m = len(plan.masked)
            text += self.tr.plural(" The {n} later word is masked: weight 0, excluded.",
                                   " The {n} later words are masked: weight 0, excluded.", m)
        self.say(text)
        if plan.masked:
            self.claim(Claim(MASKED, tuple(plan.masked)))
        self.play(FadeIn(VGroup(table.weights, table.headers[0])), run_time=0.7)
        self.play(FadeIn(VGroup(table.times, table.V, table.headers[1])), run_time=0.7)
        self.wait(1.2)
        return table

    def show_scaled_rows(self, table: WeightedTable) -> None:
        plan = self.plan
        h, i = self.trace.head, self.focus
        shown = plan.rows
        first = max(range(len(shown)), key=lambda a: (abs(h.weights[i, shown[a]]), -a))
        ranked = [k for k in h.ranking(i, by_size=True) if k in shown][:2]
        terms = [f"{self.w_text(k)} × V({self.k_labels[k]})" for k in ranked]
        if len(shown) > 2 or plan.folded:
            terms.append("…")
        what = self.tr("weight") if self.trace.normalized else self.tr("raw factor")
        self.say(self.tr("Each V row is multiplied by its {what}: {terms}", what=what,
                         terms=self.tr.context("comma", ", ").join(terms)))
        boxes = VGroup(table.weights.cell_box(first, 0, self.theme.accent, width=4),
                       table.V.row_box(first, self.theme.accent),
                       table.weighted.row_box(first, self.theme.accent))
        self.play(FadeIn(table.equals, table.headers[2]), Create(boxes[:2]), run_time=0.6)
        self.play(FadeIn(self.weighted_row(table, first), shift=RIGHT * 0.3), Create(boxes[2]),
                  run_time=0.8)
        self.wait(0.6)
        rest = [a for a in range(len(shown)) if a != first]
        anims = [FadeIn(self.weighted_row(table, a), shift=RIGHT * 0.3) for a in rest]
        if plan.folded:
            anims.append(FadeIn(table.folded))
        self.play(FadeOut(boxes), *([LaggedStart(*anims, lag_ratio=0.25)] if anims else []),
                  run_time=min(2.0, 0.6 + 0.2 * len(anims)))
        self.wait(0.8)

    def folded_keys(self) -> list[int]:
        """The allowed keys whose rows are folded away ("+ N smaller rows")."""
        h, i = self.trace.head, self.focus
        return [j for j in range(self.trace.n_k) if h.mask[i, j] and j not in self.plan.rows]

    @staticmethod
    def weighted_row(table: WeightedTable, a: int) -> VGroup:
        """Row a of the weighted rows: its tint, its cells (with the "…" cell) and numbers."""
        view = table.weighted
        y = view.row_rect_of(a).get_y()
        cells = [m for m in view.cells if abs(m.get_y() - y) < 1e-6]
        nums = [t for (r, _), t in view.numbers.items() if r == a]
        return VGroup(table.tints[a], *cells, *nums)

    def show_sum(self, table: WeightedTable) -> None:
        plan, Z = self.plan, table.Z
        zw = self.quoted(self.focus_word)
        if plan.folded:
            n = len(plan.rows) + plan.folded
            text = self.tr("Adding the rows column by column gives Z of {zw}. Z is the full sum of all {n} "
                           "rows: the {n_rows} shown + {folded} smaller rows.",
                           zw=zw, n=n, n_rows=len(plan.rows), folded=plan.folded)
        else:
            text = self.tr("Adding the scaled rows column by column gives Z of {zw}: its encoded value.",
                           zw=zw)
        self.say(text)
        if plan.folded:  # the rows shown, by their weights; the caption counts the others
            self.claim(Claim(NOT_DRAWN, tuple(self.folded_keys()),
                             {j: table.weights.numbers[(a, 0)] for a, j in enumerate(plan.rows)}))
        self.makes("Z")
        copies = [self.weighted_row(table, a).copy() for a in range(len(plan.rows))]
        self.play(Create(table.rule), run_time=0.4)
        self.play(*[FadeOut(cp, target_position=Z.grid_only().get_center()) for cp in copies],
                  run_time=1.0)
        self.play(FadeIn(Z), FadeIn(table.z_label), Create(table.z_box), run_time=0.8)
        self.wait(1.5 if plan.folded else 1.0)

    def show_meaning(self) -> None:
        t, h, i = self.trace, self.trace.head, self.focus
        allowed = [j for j in range(t.n_k) if h.mask[i, j]]
        if not allowed:
            return
        size = h.weights[i] if t.normalized else np.abs(h.weights[i])
        top = max(allowed, key=lambda j: (size[j], -j))
        zw, kw, v = self.quoted(self.focus_word), self.quoted(self.k_word(top)), self.k_labels[top]
        wt = self.w_text(top)
        if len(allowed) == 1 and t.normalized:
            text = self.tr("Only one word to attend to: its weight is {wt}, so Z of {zw} is V({v}) itself.",
                           wt=wt, zw=zw, v=v)
        elif t.normalized:
            text = self.tr("The weights sum to 1, so Z is a blend of the value rows; {kw} has the largest "
                           "weight ({wt}), so Z of {zw} leans most towards V({v}).",
                           kw=kw, wt=wt, zw=zw, v=v)
        else:
            st = fmt(float(np.sum(h.weights[i])), weight_decimals(t.normalized))
            self.drawn("weight_sum", (i,), st)
            text = self.tr("Without softmax the factors sum to {st}, not 1, so Z is not an average: {kw} "
                           "(factor {wt}) weighs most.",
                           st=st, kw=kw, wt=wt)
        self.say(text)
        self.wait(1.8)
