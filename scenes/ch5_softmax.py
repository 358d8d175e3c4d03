"""Chapter 5 · Scale and softmax: the followed row of Q·Kᵀ becomes weights that sum to 1.

    weights_i = softmax(Q·Kᵀ_i / √d_k),  softmax(x)_j = exp(x_j − max x) / Σ_k exp(x_k − max x)

One row per key word: score → ÷√d_k → exp(· − max) → ÷Σ → weight and a bar; the
bars then stack into one bar of length 1. Masked keys get exp 0 and weight 0.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from manim import *

from scenes.base import ChapterScene
from scenes.ch3_factor import MASKED_TEXT, text_width
from scenes.widgets import (
    MIN_FONT,
    SAFE_BOTTOM,
    SAFE_TOP,
    SAFE_X,
    Recorder,
    Theme,
    fit_width,
    fmt,
    make_text,
)

MIN_ROW_H = 0.31  # rows closer than this would make the numbers too small
BAR_LEN = 2.6  # length of a bar of weight 1


def softmax_parts(scaled: np.ndarray, mask: np.ndarray) -> tuple[float, np.ndarray, float]:
    """row_max over allowed keys, exp(scaled − row_max) (0 where masked), and their sum."""
    allowed = scaled[mask]
    row_max = float(allowed.max()) if allowed.size else 0.0
    e = np.where(mask, np.exp(np.where(mask, scaled - row_max, 0.0)), 0.0)  # (n_k,)
    return row_max, e, float(e.sum())


def rows_to_show(weights: np.ndarray, max_rows: int) -> list[int]:
    """Every key if they fit; else the heaviest (max_rows − 1), in sentence order."""
    n = len(weights)
    if n <= max_rows:
        return list(range(n))
    top = np.argsort(-weights, kind="stable")[: max_rows - 1]
    return sorted(int(j) for j in top)


@dataclass
class SoftmaxTable:
    """Column groups (header + cells) that appear step by step."""

    columns: dict[str, VGroup] = field(default_factory=dict)
    bars: VGroup = field(default_factory=VGroup)
    footer: dict[str, VGroup] = field(default_factory=dict)
    stacked: VGroup = field(default_factory=VGroup)
    segments: VGroup = field(default_factory=VGroup)
    group: VGroup = field(default_factory=VGroup)
    shown: list[int] = field(default_factory=list)  # the keys with a row (sentence order)


def make_softmax_table(trace, i: int, labels: list[str], colors: list[str], theme: Theme,
                       record: Recorder, max_h: float, tr) -> SoftmaxTable:
    """The followed row through ÷√d_k, exp(· − max), ÷Σ, with bars; fitted to max_h."""
    h = trace.head
    scores, scaled, mask, weights = h.scores[i], h.scaled[i], h.mask[i], h.weights[i]
    row_max, e, e_sum = softmax_parts(scaled, mask)
    sqrt_dk = float(np.sqrt(trace.d_k))
    body_h = max_h - 1.25  # header and footer
    max_rows = max(2, int(body_h // MIN_ROW_H))
    shown = rows_to_show(weights, max_rows)
    hidden = len(weights) - len(shown)
    n_rows = len(shown) + (1 if hidden else 0)
    row_h = min(0.52, body_h / n_rows)
    font = max(MIN_FONT, min(26, row_h * 0.58 / 0.0106))
    head_font = max(MIN_FONT, min(24, font))

    cols = ("word", "scores", "scaled", "exp", "weights")
    sq = fmt(sqrt_dk, 2)
    record("sqrt_dk", (), sq)
    headers = {"word": "", "scores": "Q·Kᵀ", "scaled": f"÷ √{trace.d_k} = {sq}",
               "exp": tr("exp(x − max)", "exp(x − 最大值)"), "weights": tr("÷ Σ = weight", "÷ Σ = 权重")}
    cells: dict[str, list[VGroup]] = {c: [] for c in cols}
    for j in shown:
        cells["word"].append(fit_width(make_text(labels[j], font, colors[j]), 1.9))
        if mask[j]:
            for c, v, key, d in (("scores", scores[j], "scores", 2), ("scaled", scaled[j], "scaled", 2)):
                s = fmt(v, d)
                record(key, (i, j), s)
                cells[c].append(make_text(s, font, theme.text))
        else:
            cells["scores"].append(make_text(MASKED_TEXT, font, theme.muted))
            cells["scaled"].append(make_text("−∞", font, theme.muted))
        s = fmt(e[j], 3)
        record("exp_shifted", (i, j), s)
        cells["exp"].append(make_text(s, font, theme.text if mask[j] else theme.muted))
        s = fmt(weights[j], 2)
        record("weights", (i, j), s)
        cells["weights"].append(make_text(s, font, theme.text if mask[j] else theme.muted,
                                          weight="BOLD"))
    if hidden:
        more = tr(f"… {hidden} more words (in Σ)", f"……另外 {hidden} 个词（计入 Σ）")
        cells["word"].append(make_text(more, font * 0.85, theme.muted))
    widths = {c: max([text_width(headers[c], head_font)] +
                     [m.width for m in cells[c]]) + 0.45 for c in cols}
    widths["word"] = max(m.width for m in cells["word"][: len(shown)]) + 0.3
    table = SoftmaxTable(shown=shown)
    x = 0.0
    for c in cols:
        col = VGroup()
        head = make_text(headers[c], head_font, theme.accent if c == "weights" else theme.muted)
        head.move_to(RIGHT * (x + widths[c] / 2) + UP * 0.6)
        col.add(head)
        for r, m in enumerate(cells[c]):
            y = DOWN * (r * row_h)
            if c == "word":
                m.move_to(RIGHT * (x + widths[c] - 0.15) + y, aligned_edge=RIGHT)
                if r == len(shown):  # the "… more" line, left-aligned
                    m.move_to(RIGHT * x + y, aligned_edge=LEFT)
            else:
                m.move_to(RIGHT * (x + widths[c] - 0.2) + y, aligned_edge=RIGHT)
            col.add(m)
        table.columns[c] = col
        x += widths[c]
    # Bars: a weight of 1 would be BAR_LEN long.
    bar_x = x + 0.2
    for r, j in enumerate(shown):
        w = max(weights[j] * BAR_LEN, 0.0)
        bar = Rectangle(width=max(w, 1e-3), height=row_h * 0.6, stroke_width=0,
                        fill_color=colors[j], fill_opacity=0.9 if w > 0 else 0)
        bar.move_to(RIGHT * bar_x + DOWN * (r * row_h), aligned_edge=LEFT)
        table.bars.add(bar)
    ruler = Line(ORIGIN, RIGHT * BAR_LEN, stroke_color=theme.muted, stroke_width=2)
    ticks = VGroup(*[Line(UP * 0.08, DOWN * 0.08, stroke_color=theme.muted, stroke_width=2)
                     .move_to(ruler.get_start() + RIGHT * k * BAR_LEN) for k in (0, 1)])
    scale_mark = VGroup(ruler, ticks)
    scale_mark.move_to(RIGHT * bar_x + UP * 0.6, aligned_edge=LEFT)
    bar_head = make_text(tr("1", "1"), head_font, theme.muted)  # the ruler's length: weight 1
    bar_head.next_to(scale_mark, RIGHT, buff=0.1)
    table.columns["bars"] = VGroup(bar_head, scale_mark, table.bars)
    # Footer: max under the scaled column, Σ under exp and weights, the stacked bar.
    foot_y = DOWN * (n_rows * row_h + 0.15)
    rule = Line(ORIGIN, RIGHT * x, stroke_color=theme.grid, stroke_width=2).shift(
        DOWN * ((n_rows - 0.5) * row_h + 0.05))
    s_max = fmt(row_max, 2)
    record("row_max", (i,), s_max)
    s_sum = fmt(e_sum, 3)
    record("exp_sum", (i,), s_sum)
    s_w = fmt(weights.sum(), 2)
    record("weight_sum", (i,), s_w)
    x_of = {}
    acc = 0.0
    for c in cols:
        x_of[c] = acc + widths[c] - 0.2
        acc += widths[c]
    table.footer["max"] = make_text(tr(f"max = {s_max}", f"最大值 = {s_max}"), font,
                                    theme.muted).move_to(RIGHT * x_of["scaled"] + foot_y,
                                                         aligned_edge=RIGHT)
    table.footer["exp_sum"] = make_text(f"Σ = {s_sum}", font, theme.text).move_to(
        RIGHT * x_of["exp"] + foot_y, aligned_edge=RIGHT)
    table.footer["weight_sum"] = make_text(f"Σ = {s_w}", font, theme.accent, weight="BOLD").move_to(
        RIGHT * x_of["weights"] + foot_y, aligned_edge=RIGHT)
    table.footer["rule"] = VGroup(rule)
    # The stacked bar: every weight (shown or not) laid end to end, length BAR_LEN = 1.
    seg_x = bar_x
    for j in range(len(weights)):
        w = weights[j] * BAR_LEN
        if w <= 0:
            continue
        seg = Rectangle(width=w, height=row_h * 0.6, stroke_width=1, stroke_color=theme.background,
                        fill_color=colors[j], fill_opacity=0.9)
        seg.move_to(RIGHT * seg_x + foot_y, aligned_edge=LEFT)
        table.segments.add(seg)
        seg_x += w
    outline = Rectangle(width=BAR_LEN, height=row_h * 0.6, stroke_color=theme.text, stroke_width=2)
    outline.move_to(RIGHT * bar_x + foot_y, aligned_edge=LEFT)
    table.stacked = VGroup(outline)
    table.group = VGroup(*table.columns.values(), *table.footer.values(), table.segments,
                         table.stacked)
    return table


class SoftmaxScene(ChapterScene):
    chapter = 5
    title_en = "Scale and softmax: scores become weights"
    title_zh = "缩放与 softmax：分数变成权重"
    reads_trace = ("query_tokens", "key_tokens", "heads", "head_index", "normalized", "causal",
                   "cross")
    reads_focus = True

    def construct(self) -> None:
        self.show_title()
        if not self.trace.normalized:
            self.show_switched_off()
        else:
            self.build_table()
            self.show_row()
            self.show_scale()
            self.show_exp()
            self.show_weights()
            self.show_total()
        self.finish()

    # ---- steps ---------------------------------------------------------------------
    def show_switched_off(self) -> None:
        self.say("Softmax is switched off: the raw factors weigh V directly.",
                 "softmax 已关闭：原始因子直接给 V 加权。")

    def build_table(self) -> None:
        top = SAFE_TOP - 0.05
        t = make_softmax_table(self.trace, self.focus, self.k_labels, self.k_colors, self.theme,
                               self.drawn, top - SAFE_BOTTOM - 0.1, self.tr)
        fit_width(t.group, 2 * SAFE_X)
        t.group.move_to(UP * (top + SAFE_BOTTOM) / 2)
        self.table = t

    def show_row(self) -> None:
        c = self.table.columns
        n = int(self.trace.head.mask[self.focus].sum())
        self.say(f"The row of {self.quoted(self.focus_word)} in Q·Kᵀ: one score per key word "
                 f"({n} allowed).",
                 f"Q·Kᵀ 中“{self.focus_word}”这一行：每个键词一个分数（{n} 个可用）。")
        self.play(FadeIn(VGroup(c["word"], c["scores"])), run_time=0.8)
        self.wait(0.8)

    def show_scale(self) -> None:
        t = self.trace
        sq = fmt(float(np.sqrt(t.d_k)), 2)
        self.say(f"Divide by √d_k = √{t.d_k} = {sq}, so the spread of the scores does not grow "
                 "with the vector width.",
                 f"除以 √d_k = √{t.d_k} = {sq}，分数的幅度就不会随向量宽度变大。")
        self.play(FadeIn(self.table.columns["scaled"], shift=0.2 * RIGHT), run_time=0.8)
        self.wait(0.8)

    def show_exp(self) -> None:
        t, i = self.trace, self.focus
        row_max, _, _ = softmax_parts(t.head.scaled[i], t.head.mask[i])
        m = fmt(row_max, 2)
        masked = "" if t.head.mask[i].all() else self.tr(" Masked keys get exp = 0.",
                                                         "被遮住的键 exp = 0。")
        self.say(f"Softmax, step 1: subtract the row's max ({m}) and take exp: all positive, "
                 f"the largest becomes 1.{masked}",
                 f"softmax 第一步：减去这一行的最大值（{m}）再取 exp：全部为正，最大的变成 1。{masked}")
        self.play(FadeIn(VGroup(self.table.columns["exp"], self.table.footer["max"]),
                         shift=0.2 * RIGHT), run_time=0.8)
        self.wait(0.9)

    def show_weights(self) -> None:
        t, i = self.trace, self.focus
        _, _, e_sum = softmax_parts(t.head.scaled[i], t.head.mask[i])
        tb = self.table
        self.say(f"Step 2: divide each by their sum ({fmt(e_sum, 3)}): the weights.",
                 f"第二步：每个除以它们的和（{fmt(e_sum, 3)}）：得到权重。")
        self.play(FadeIn(VGroup(tb.columns["weights"], tb.footer["exp_sum"], tb.footer["rule"]),
                         shift=0.2 * RIGHT), run_time=0.8)
        self.play(FadeIn(tb.columns["bars"][:2]),
                  *[GrowFromEdge(b, LEFT) for b in tb.columns["bars"][2]], run_time=0.8)
        self.wait(0.8)

    def show_total(self) -> None:
        t, i = self.trace, self.focus
        w = t.head.weights[i]
        j = int(np.argmax(w))
        tb = self.table
        who = self.quoted(self.k_word(j))
        itself = self.tr(" (itself)", "（它自己）") if (not t.cross and j == i) else ""
        n = int(t.head.mask[i].sum())
        head_en = f"{self.quoted(self.focus_word)} gives the most weight to {who}{itself}: {fmt(w[j], 2)}."
        head_zh = f"“{self.focus_word}”给“{self.k_word(j)}”{itself}的权重最大：{fmt(w[j], 2)}。"
        total = fmt(w.sum(), 2)
        if n == 1:
            tail_en = f" Its single weight fills the whole bar: Σ = {total}."
            tail_zh = f"唯一的权重填满整条：Σ = {total}。"
        else:
            tail_en = f" Laid end to end, its {n} weights fill exactly one bar: Σ = {total}."
            tail_zh = f"{n} 个权重首尾相接正好填满一整条：Σ = {total}。"
        self.say(head_en + tail_en, head_zh + tail_zh)
        anims = [FadeIn(tb.stacked), FadeIn(tb.footer["weight_sum"])]
        # The shown bars slide down into the stacked bar; the hidden keys' segments fade in.
        moved = []
        with_segment = [k for k in range(len(w)) if w[k] * BAR_LEN > 0]
        for k, seg in zip(with_segment, tb.segments):
            if k in tb.shown:
                moved.append(TransformFromCopy(tb.bars[tb.shown.index(k)], seg))
            else:
                moved.append(FadeIn(seg))
        self.play(*anims, LaggedStart(*moved, lag_ratio=0.05), run_time=1.4)
        self.wait(1.2)
