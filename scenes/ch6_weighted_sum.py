"""Chapter 6 · Weighted sum: the followed word's weights scale every V row; the scaled rows
add up, column by column, to Z_i — the word's "encoded value"."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from manim import *

from scenes.base import ChapterScene
from scenes.widgets import (
    SAFE_BOTTOM,
    SAFE_X,
    CellLayout,
    MatrixView,
    Recorder,
    Theme,
    fit_cells,
    fit_width,
    fmt,
    make_text,
)

MAX_ROWS = 8  # more allowed keys than this: show the TOP_ROWS largest, fold the rest
TOP_ROWS = 6
MAX_COLS = 6  # columns of V shown (d_k up to 64: first ones, "…", last one)
DECIMALS = 2
W_DECIMALS = 3  # weights one digit finer, so weight × V reproduces the scaled row on paper



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
    size = weights_row if normalized else np.abs(weights_row)
    ranked = sorted(allowed, key=lambda j: (-size[j], j))
    return RowPlan(ranked[:TOP_ROWS], len(allowed) - TOP_ROWS, masked)


def make_sub(main: str, sub: str, size: float, color: str, sub_color: str) -> VGroup:
    """A symbol with a word as its subscript, e.g. Z with "milk" below right."""
    m = make_text(main, size, color, weight="BOLD")
    s = fit_width(make_text(sub, max(16, size * 0.62), sub_color), 2.2)
    s.next_to(m, RIGHT, buff=0.04).align_to(m, DOWN).shift(DOWN * size * 0.004)
    return VGroup(m, s)


def make_weighted_table(trace, plan: RowPlan, theme: Theme, k_labels: list[str],
                        k_colors: list[str], q_label: str, q_color: str, record: Recorder,
                        top: float, zh: bool) -> dict[str, VGroup]:
    """weights column × V rows = scaled rows, then their column sums Z_i, fitted under `top`."""
    h, i = trace.head, trace.focus
    rows = plan.rows
    r = len(rows)
    d_k = trace.d_k
    c = min(d_k, MAX_COLS)
    fold_rows = 1 if plan.folded else 0
    label_w = min(1.9, max(len(k_labels[j]) for j in rows) * 0.17 + 0.3)
    avail_w = 2 * SAFE_X - label_w - 1.5
    avail_h = top - SAFE_BOTTOM - 0.55 - 0.35  # headers; the rule above Z
    base = fit_cells(r + fold_rows + 1, 2 * c + 1, avail_w, avail_h, DECIMALS, max_font=28)
    layout = CellLayout(min(base.cell_w, 1.25), base.cell_h, base.font_size, True)
    forced = set(range(r))  # numbers in every row (the font never drops below MIN_FONT)
    w_vals = h.weights[i, rows][:, None]  # (r, 1)
    V_vals = h.V[rows]  # (r, d_k)
    wV_vals = w_vals * V_vals  # (r, d_k)  weights[i, j]·V[j, m]
    kw = {"theme": theme, "layout": layout, "decimals": DECIMALS, "record": record, "heat": False,
              "numbers_in_rows": forced}
    wcol = MatrixView(w_vals, key="weights", max_cols=1, **{**kw, "decimals": W_DECIMALS},
                      row_labels=[k_labels[j] for j in rows], row_colors=[k_colors[j] for j in rows],
                      index_map=lambda a, b: (i, rows[a]))
    for a, j in enumerate(rows):
        wcol.numbers[(a, 0)].set_color(k_colors[j])
        wcol.cell_at[(a, 0)].set_fill(k_colors[j], 0.14)
    V = MatrixView(V_vals, key="V", max_cols=MAX_COLS, index_map=lambda a, m: (rows[a], m), **kw)
    wV = MatrixView(wV_vals, key="weighted_V", max_cols=MAX_COLS,
                    index_map=lambda a, m: (i, rows[a], m), **kw)
    Z = MatrixView(h.Z[i:i + 1], key="Z", max_cols=MAX_COLS, index_map=lambda a, m: (i, m),
                   **{**kw, "numbers_in_rows": {0}})
    bgs = {}
    for name, mob in (("V", V), ("wV", wV)):
        bgs[name] = [Rectangle(width=mob.row_rect_of(a).width, height=layout.cell_h, stroke_width=0,
                               fill_color=k_colors[j], fill_opacity=0.08).move_to(mob.row_rect_of(a))
                     for a, j in enumerate(rows)]
        mob.add_to_back(*bgs[name])  # the row tints travel with their grid
    sign = max(20, min(36, layout.font_size * 1.3))
    times = make_text("×", sign, theme.text)
    equals = make_text("=", sign, theme.text)
    VGroup(wcol, times, V, equals, wV).arrange(RIGHT, buff=0.25, aligned_edge=UP)
    for op in (times, equals):
        op.set_y(wcol.grid_only().get_y())

    head_size = max(16, min(24, layout.font_size * 0.9))
    headers = VGroup(
        make_text(("权重" if zh else "weight") if trace.normalized else ("因子" if zh else "factor"),
                  head_size, theme.muted).next_to(wcol.grid_only(), UP, 0.15),
        make_sub("V", "值" if zh else "values", head_size * 1.15, theme.v, theme.muted)
        .next_to(V.grid_only(), UP, 0.15),
        make_text(("权重" if zh else "weight") + " × V" if trace.normalized
                  else ("因子" if zh else "factor") + " × V", head_size, theme.muted)
        .next_to(wV.grid_only(), UP, 0.15),
    )
    for hd in headers:
        fit_width(hd, max(hd.width * 0.5, 2.4))
    extra = VGroup()
    if plan.folded:
        note_text = (f"⋮  另外 {plan.folded} 个较小的行" if zh
                     else f"⋮  + {plan.folded} smaller row{'s' if plan.folded != 1 else ''}")
        note = make_text(note_text, max(16, min(22, layout.font_size * 0.85)), theme.muted)
        fit_width(note, V.grid_only().width)
        note.next_to(V.grid_only(), DOWN, buff=layout.cell_h * 0.5 - note.height / 2)
        dots = VGroup(*[make_text("⋮", max(16, layout.font_size * 0.9), theme.muted)
                        .next_to(m.grid_only(), DOWN, buff=layout.cell_h * 0.2) for m in (wcol, wV)])
        for d in dots:
            if d.height > layout.cell_h * 0.8:
                d.scale_to_fit_height(layout.cell_h * 0.8)
        extra.add(note, dots)
    above_rule = extra if plan.folded else wV.grid_only()
    rule = Line(LEFT, RIGHT, stroke_color=theme.text, stroke_width=2)
    rule.set_width(wV.grid_only().width + 0.2)
    rule.next_to(VGroup(wV.grid_only(), above_rule), DOWN, buff=0.12).align_to(wV.grid_only(), LEFT)
    rule.shift(LEFT * 0.1)
    Z.grid_only().next_to(rule, DOWN, buff=0.12)
    Z.align_to(wV.grid_only(), LEFT)
    z_label = VGroup(
        make_text("各行相加 =" if zh else "sum of the rows =", max(16, head_size), theme.muted),
        make_sub("Z", q_label, max(22, head_size * 1.25), theme.accent, q_color),
    ).arrange(RIGHT, buff=0.15)
    z_label.next_to(Z.grid_only(), LEFT, buff=0.25)
    z_box = Z.row_box(0, theme.accent)
    whole = VGroup(wcol, times, V, equals, wV, headers, extra, rule, Z, z_label, z_box)
    fit_width(whole, 2 * SAFE_X)
    whole.move_to(ORIGIN).align_to(UP * top, UP)
    return {"wcol": wcol, "V": V, "wV": wV, "Z": Z, "ops": VGroup(times, equals), "headers": headers,
                "extra": extra, "bgs": bgs, "rule": rule, "z_label": z_label, "z_box": z_box}


class WeightedSumScene(ChapterScene):
    chapter = 6
    title_en = "Weighted sum: mixing the values"
    title_zh = "加权求和：把值混合起来"
    reads_trace = ("query_tokens", "key_tokens", "heads", "head_index", "focus", "normalized",
                   "causal", "cross", "source", "model_name", "layer", "seed")
    reads_focus = True

    def construct(self) -> None:
        self.show_title()
        parts = self.show_weights_and_values()
        self.show_scaled_rows(parts)
        self.show_sum(parts)
        self.show_meaning()
        self.finish()

    # ---- what the rows are -------------------------------------------------------------
    @property
    def plan(self) -> RowPlan:
        h = self.trace.head
        return plan_rows(h.weights[self.focus], h.mask[self.focus], self.trace.normalized)

    def w_text(self, j: int) -> str:
        """A weight as drawn in a caption (recorded like every drawn number)."""
        text = fmt(self.trace.head.weights[self.focus, j], W_DECIMALS)
        self.drawn("weights", (self.focus, j), text)
        return text

    def show_weights_and_values(self) -> dict:
        t, i, plan = self.trace, self.focus, self.plan
        parts = make_weighted_table(
            t, plan, self.theme, self.k_labels, self.k_colors, self.q_labels[i],
            self.q_colors[i], self.drawn, top=self.title_mob.get_bottom()[1] - 0.25,
            zh=self.settings.language == "zh")
        self.parts = parts
        w = self.quoted(self.focus_word)
        if t.normalized:
            en = f"The weights of {w} (its softmax row) say how much of each value row V it takes."
            zh = f"{w}的权重（它的 softmax 行）决定它从每一行值 V 中取多少。"
        else:
            en = (f"No softmax: the raw factors of {w} (its row of Q·Kᵀ, not summing to 1) "
                  "weigh the value rows V directly.")
            zh = f"没有 softmax：{w}的原始因子（Q·Kᵀ 的一行，总和不为 1）直接给每一行值 V 加权。"
        if plan.masked:
            m = len(plan.masked)
            en += (f" The {m} later word{'s are' if m != 1 else ' is'} masked: "
                   "weight 0, excluded.")
            zh += f"后面的 {m} 个词被遮住：权重为 0，不参与求和。"
        self.say(en, zh)
        wcol, V = parts["wcol"], parts["V"]
        self.play(FadeIn(VGroup(wcol, parts["headers"][0])), run_time=0.7)
        self.play(FadeIn(VGroup(parts["ops"][0], V, parts["headers"][1])), run_time=0.7)
        self.wait(1.2)
        return parts

    def show_scaled_rows(self, parts: dict) -> None:
        plan, wcol, V, wV = self.plan, parts["wcol"], parts["V"], parts["wV"]
        h, i = self.trace.head, self.focus
        shown = plan.rows
        first = max(range(len(shown)), key=lambda a: (abs(h.weights[i, shown[a]]), -a))
        ranked = sorted(shown, key=lambda k: -abs(h.weights[i, k]))[:2]
        terms = [f"{self.w_text(k)} × V({self.k_labels[k]})" for k in ranked]
        more = "…" if len(shown) > 2 or plan.folded else ""
        what = ("weight", "权重") if self.trace.normalized else ("raw factor", "原始因子")
        self.say(f"Each V row is multiplied by its {what[0]}: {', '.join(terms + [more][:bool(more)])}",
                 f"每一行 V 乘以它的{what[1]}：{'，'.join(terms + [more][:bool(more)])}")
        boxes = VGroup(wcol.cell_box(first, 0, self.theme.accent, width=4),
                       V.row_box(first, self.theme.accent), wV.row_box(first, self.theme.accent))
        self.play(FadeIn(parts["ops"][1], parts["headers"][2]), Create(boxes[:2]), run_time=0.6)
        self.play(FadeIn(self.wv_row(wV, first), shift=RIGHT * 0.3), Create(boxes[2]), run_time=0.8)
        self.wait(0.6)
        rest = [a for a in range(len(shown)) if a != first]
        anims = [FadeIn(self.wv_row(wV, a), shift=RIGHT * 0.3) for a in rest]
        if parts["extra"]:
            anims.append(FadeIn(parts["extra"]))
        self.play(FadeOut(boxes), *( [LaggedStart(*anims, lag_ratio=0.25)] if anims else []),
                  run_time=min(2.0, 0.6 + 0.2 * len(anims)))
        self.wait(0.8)

    def wv_row(self, wV: MatrixView, a: int) -> VGroup:
        """Row a of the scaled matrix: its tint, its cells (with the "…" cell) and numbers."""
        y = wV.row_rect_of(a).get_y()
        cells = [m for m in wV.cells if abs(m.get_y() - y) < 1e-6]
        nums = [t for (r, _), t in wV.numbers.items() if r == a]
        return VGroup(self.parts["bgs"]["wV"][a], *cells, *nums)

    def show_sum(self, parts: dict) -> None:
        plan, wV, Z = self.plan, parts["wV"], parts["Z"]
        zw = self.quoted(self.focus_word)
        if plan.folded:
            n = len(plan.rows) + plan.folded
            en = (f"Adding the rows column by column gives Z of {zw}. Z is the full sum of all "
                  f"{n} rows: the {len(plan.rows)} shown + {plan.folded} smaller rows.")
            zh = (f"按列把各行相加，得到{zw}的 Z。Z 是全部 {n} 行的和："
                  f"显示的 {len(plan.rows)} 行 + 另外 {plan.folded} 个较小的行。")
        else:
            en = f"Adding the scaled rows column by column gives Z of {zw}: its encoded value."
            zh = f"把加权后的各行按列相加，得到{zw}的 Z：它的“编码值”。"
        self.say(en, zh)
        copies = [self.wv_row(wV, a).copy() for a in range(len(plan.rows))]
        self.play(Create(parts["rule"]), run_time=0.4)
        self.play(*[FadeOut(cp, target_position=Z.grid_only().get_center()) for cp in copies],
                  run_time=1.0)
        self.play(FadeIn(Z), FadeIn(parts["z_label"]), Create(parts["z_box"]), run_time=0.8)
        self.wait(1.5 if plan.folded else 1.0)

    def show_meaning(self) -> None:
        t, h, i = self.trace, self.trace.head, self.focus
        allowed = [j for j in range(t.n_k) if h.mask[i, j]]
        if not allowed:
            return
        size = h.weights[i] if t.normalized else np.abs(h.weights[i])
        top = max(allowed, key=lambda j: (size[j], -j))
        zw, kw = self.quoted(self.focus_word), self.quoted(self.k_word(top))
        wt = self.w_text(top)
        if len(allowed) == 1 and t.normalized:
            en = (f"Only one word to attend to: its weight is {wt}, so Z of {zw} is "
                  f"V({self.k_labels[top]}) itself.")
            zh = f"只有一个词可以关注：它的权重是 {wt}，所以{zw}的 Z 就是 V({self.k_labels[top]}) 本身。"
        elif t.normalized:
            en = (f"The weights sum to 1, so Z is a blend of the value rows; {kw} has the largest "
                  f"weight ({wt}), so Z of {zw} leans most towards V({self.k_labels[top]}).")
            zh = (f"权重之和为 1，所以 Z 是各行值的混合；{kw}的权重最大（{wt}），"
                  f"所以{zw}的 Z 最接近 V({self.k_labels[top]})。")
        else:
            total = float(np.sum(h.weights[i]))
            st = fmt(total, DECIMALS)
            self.drawn("weight_sum", (i,), st)
            en = (f"Without softmax the factors sum to {st}, not 1, so Z is not an average: "
                  f"{kw} (factor {wt}) weighs most.")
            zh = f"没有 softmax 时，这些因子之和是 {st} 而不是 1，所以 Z 不是平均值：{kw}（因子 {wt}）分量最大。"
        self.say(en, zh)
        self.wait(1.8)
