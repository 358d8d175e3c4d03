"""Chapter 7 · Query, key, value: the followed word asks (query), every word answers (key)
and hands over its value; the attention row as a ranked bar chart with its real numbers."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from manim import *

from scenes.base import ChapterScene
from scenes.widgets import (
    MIN_FONT,
    SAFE_BOTTOM,
    SAFE_X,
    Recorder,
    Theme,
    fit_width,
    fmt,
    make_label,
    make_text,
    wrap,
)

MAX_BARS = 12  # up to this many allowed keys: one bar each
TOP_BARS = 10  # more keys: the 10 largest as bars, the rest summed in one line
DECIMALS = 2



@dataclass(frozen=True)
class BarPlan:
    """Which keys get a bar (ranked, largest first) and what is left over."""

    ranked: list[int]  # key indices with a bar, largest value first (ties: sentence order)
    rest: list[int]  # allowed keys without a bar
    masked: list[int]  # keys the causal mask excludes (weight exactly 0)

    def rest_sum(self, row: np.ndarray) -> float:
        """weights_rest[i] = Σ weights[i, j] over every key j without a bar
        (masked keys add exactly 0)."""
        shown = set(self.ranked)
        return float(sum(row[j] for j in range(len(row)) if j not in shown))


def plan_bars(row: np.ndarray, mask_row: np.ndarray) -> BarPlan:
    """Rank the allowed keys by their value (largest first; raw factors too, by value).
    More than MAX_BARS: the first TOP_BARS get bars, the others are summed."""
    allowed = [j for j in range(len(row)) if mask_row[j]]
    masked = [j for j in range(len(row)) if not mask_row[j]]
    ranked = sorted(allowed, key=lambda j: (-row[j], j))
    if len(ranked) > MAX_BARS:
        return BarPlan(ranked[:TOP_BARS], ranked[TOP_BARS:], masked)
    return BarPlan(ranked, [], masked)


def make_bar_chart(row: np.ndarray, plan: BarPlan, labels: list[str], colors: list[str],
                   theme: Theme, top: float, bottom: float, record: Recorder, focus: int,
                   zh: bool, normalized: bool) -> dict[str, VGroup]:
    """Horizontal bars, one per ranked key: label, bar in the key's colour, value.
    Fitted between `top` and `bottom`, centred."""
    n = len(plan.ranked)
    notes = 1 + bool(plan.masked)  # "+ N more · all keys", "masked"
    row_h = min(0.55, max(0.27, (top - bottom - 0.5 - notes * 0.42) / max(n, 1)))
    size = max(MIN_FONT, min(28, row_h * 0.62 / 0.0106))
    label_w = min(2.2, max(len(labels[j]) for j in plan.ranked) * size * 0.0062 + 0.2)
    value_w = size * 0.0061 * 6.5
    bar_w = min(7.5, 2 * SAFE_X - label_w - value_w - 0.6)
    vals = row[plan.ranked]
    pos, neg = max(float(vals.max()), 0.0), max(float(-vals.min()), 0.0)
    unit = bar_w / (pos + neg) if pos + neg > 0 else 0.0
    x0 = neg * unit  # the zero line, measured from the left end of the bar area
    label_col, bars, values = VGroup(), VGroup(), VGroup()
    for r, j in enumerate(plan.ranked):
        y = -r * row_h
        v = float(row[j])
        length = max(abs(v) * unit, 0.015)
        bar = Rectangle(width=length, height=row_h * 0.64, stroke_width=0,
                        fill_color=colors[j], fill_opacity=0.85)
        bar.move_to([x0 + (length / 2 if v >= 0 else -length / 2), y, 0])
        bar.grows_from = LEFT if v >= 0 else RIGHT
        lab = fit_width(make_text(labels[j], size, colors[j], weight="BOLD" if j == focus else "NORMAL"),
                        label_w)
        lab.move_to([-0.2, y, 0], aligned_edge=RIGHT)
        text = fmt(v, DECIMALS)
        record("weights", (focus, j), text)  # the caller maps focus = the query index
        val = make_text(text, size, theme.text)
        anchor = bar.get_right() if v >= 0 else np.array([x0, y, 0])
        val.next_to(anchor, RIGHT, buff=0.12)
        label_col.add(lab)
        bars.add(bar)
        values.add(val)
    axis = Line([x0, row_h * 0.5, 0], [x0, -(n - 0.5) * row_h, 0], stroke_color=theme.muted,
                stroke_width=2)
    note_size = max(MIN_FONT, min(22, size * 0.85))
    head_k = make_text("键 (key)" if zh else "keys", note_size, theme.k)
    head_k.next_to(label_col, UP, buff=0.2).align_to(label_col, RIGHT)
    head_w = make_text(("注意力权重" if zh else "attention weight") if normalized
                       else ("原始因子 Q·Kᵀ" if zh else "raw factor Q·Kᵀ"), note_size, theme.w)
    head_w.next_to(axis, UP, buff=0.2).align_to(bars, LEFT)
    head_w.set_y(head_k.get_y())
    notes_g = VGroup()
    total = fmt(float(row.sum()), DECIMALS)
    record("weight_sum", (focus,), total)
    if normalized:
        total_text = ("全部键合计：" if zh else "all keys: ") + total
    else:
        total_text = f"全部原始因子之和：{total}（不是 1）" if zh else f"all raw factors: {total} (not 1)"
    if plan.rest:
        rest = fmt(plan.rest_sum(row), DECIMALS)
        record("weights_rest", (focus,), rest)
        m = len(plan.rest)
        total_text = (f"+ 另外 {m} 个词，合计 {rest}" if zh else f"+ {m} more, together {rest}") \
            + "   ·   " + total_text
    notes_g.add(make_text(total_text, note_size, theme.text))
    if plan.masked:
        m = len(plan.masked)
        notes_g.add(make_text(f"被遮住（权重 0）：后面的 {m} 个词" if zh
                              else f"masked (weight 0): {m} later word{'s' if m != 1 else ''}",
                              note_size, theme.muted))
    notes_g.arrange(DOWN, buff=0.14, aligned_edge=LEFT)
    notes_g.next_to(VGroup(bars, axis), DOWN, buff=0.25).align_to(bars, LEFT)
    chart = VGroup(label_col, bars, values, axis, head_k, head_w, notes_g)
    fit_width(chart, 2 * SAFE_X)
    if chart.height > top - bottom:  # a last resort; the sizes above normally fit
        chart.scale_to_fit_height(top - bottom)
    chart.move_to(ORIGIN).align_to(UP * top, UP)
    return {"labels": label_col, "bars": bars, "values": values, "axis": axis,
            "heads": VGroup(head_k, head_w), "notes": notes_g, "chart": chart}


def make_head_reason(reason: str, theme: Theme, beside: VGroup) -> VGroup:
    """Why this head was chosen: right of `beside` if it fits on one line, else wrapped below."""
    line = make_text(reason, 18, theme.muted)
    room = SAFE_X - beside.get_right()[0] - 0.5
    if line.width <= room:
        return line.next_to(beside, RIGHT, buff=0.5)
    lines = VGroup(*[make_text(s, 18, theme.muted) for s in wrap(reason, 120)])
    lines.arrange(DOWN, buff=0.08, aligned_edge=LEFT)
    fit_width(lines, 2 * SAFE_X - 0.6)
    return lines.next_to(beside, DOWN, buff=0.15, aligned_edge=LEFT)


class QKVScene(ChapterScene):
    chapter = 7
    title_en = "Query, key, value: who gets attention?"
    title_zh = "查询、键、值：注意力给了谁？"
    reads_trace = ("query_tokens", "key_tokens", "heads", "head_index", "focus", "normalized",
                   "causal", "cross", "source", "model_name", "layer", "seed", "head_reason")
    reads_focus = True

    def construct(self) -> None:
        self.show_title()
        roles = self.show_roles()
        chart = self.show_ranked_bars(roles)
        self.show_what_it_says(chart)
        self.show_caveat()
        self.finish()

    @property
    def row(self) -> np.ndarray:
        return self.trace.head.weights[self.focus]

    @property
    def plan(self) -> BarPlan:
        return plan_bars(self.row, self.trace.head.mask[self.focus])

    def w_text(self, j: int) -> str:
        text = fmt(self.row[j], DECIMALS)
        self.drawn("weights", (self.focus, j), text)
        return text

    def key_name(self, j: int) -> str:
        """A key word in a caption: "itself" when it is the query word in self-attention."""
        if not self.trace.cross and j == self.focus:
            return self.tr("itself", "它自己")
        return self.quoted(self.k_word(j))

    # ---- steps ---------------------------------------------------------------------------
    def show_roles(self) -> VGroup:
        i = self.focus
        chip = make_label(self.q_labels[i], 30, self.q_colors[i], self.theme, max_width=3.0)
        tag = make_text(self.tr("query: the word that asks", "查询：提问的词"), 22, self.theme.q)
        roles = VGroup(chip, tag).arrange(RIGHT, buff=0.25)
        roles.next_to(self.title_mob, DOWN, buff=0.3).to_edge(LEFT, buff=0.6)
        if self.trace.head_reason:
            roles.add(make_head_reason(self.trace.head_reason, self.theme, roles))
        w = self.quoted(self.focus_word)
        if self.trace.cross:
            en = (f"{w} is the query: it comes from the target sentence. The keys, and the values "
                  "they hand over, come from the source sentence.")
            zh = f"{w}是查询，来自目标句子；键以及它们交出的值来自源句子。"
        else:
            en = (f"{w} is the query: it asks. Every word, itself included, is a key that answers "
                  "and a value that gets mixed in.")
            zh = f"{w}是查询：它提问。每个词（包括它自己）都是回答的键，也是被混合进来的值。"
        self.say(en, zh)
        self.play(FadeIn(roles, shift=0.2 * RIGHT), run_time=0.7)
        self.wait(1.0)
        return roles

    def show_ranked_bars(self, roles: VGroup) -> dict:
        plan = self.plan
        parts = make_bar_chart(self.row, plan, self.k_labels, self.k_colors, self.theme,
                               top=roles.get_bottom()[1] - 0.3, bottom=SAFE_BOTTOM + 0.15,
                               record=self.drawn, focus=self.focus,
                               zh=self.settings.language == "zh", normalized=self.trace.normalized)
        if self.trace.normalized:
            en, zh = ("Its attention weights over the keys, ranked from largest to smallest.",
                      "它对各个键的注意力权重，从大到小排列。")
        else:
            en, zh = (("No softmax: its raw factors (Q·Kᵀ) over the keys, ranked from largest to "
                      "smallest. They don't sum to 1."),
                      "没有 softmax：它对各个键的原始因子（Q·Kᵀ），从大到小排列。它们的和不是 1。")
        self.say(en, zh)
        self.play(FadeIn(parts["labels"]), FadeIn(parts["heads"]), Create(parts["axis"]),
                  run_time=0.6)
        grow = [GrowFromEdge(b, b.grows_from) for b in parts["bars"]]
        self.play(LaggedStart(*grow, lag_ratio=0.12), run_time=min(2.2, 0.6 + 0.12 * len(grow)))
        self.play(FadeIn(parts["values"]), FadeIn(parts["notes"]), run_time=0.6)
        self.wait(1.0)
        return parts

    def show_what_it_says(self, parts: dict) -> None:
        plan, w = self.plan, self.quoted(self.focus_word)
        ranked = plan.ranked
        if not ranked:
            return
        first = ranked[0]
        box = SurroundingRectangle(VGroup(parts["labels"][0], parts["bars"][0], parts["values"][0]),
                                   color=self.theme.accent, buff=0.06)
        if len(ranked) == 1:
            en = f"{w} can only attend to {self.key_name(first)} ({self.w_text(first)})."
            zh = f"{w}只能关注{self.key_name(first)}（{self.w_text(first)}）。"
        else:
            second = ranked[1]
            verb = ("attends most to", "最关注") if self.trace.normalized else \
                ("has the largest factor with", "因子最大的是")
            en = (f"{w} {verb[0]} {self.key_name(first)} ({self.w_text(first)}), "
                  f"then {self.key_name(second)} ({self.w_text(second)}).")
            zh = (f"{w}{verb[1]}{self.key_name(first)}（{self.w_text(first)}），"
                  f"其次是{self.key_name(second)}（{self.w_text(second)}）。")
            last = ranked[-1]
            if not plan.rest and len(ranked) > 2:
                en += f" Least: {self.key_name(last)} ({self.w_text(last)})."
                zh += f"最少的是{self.key_name(last)}（{self.w_text(last)}）。"
        t = self.trace
        if t.trained:
            en += f" ({t.model_name}, layer {t.layer}, head {t.head_index})"
            zh += f"（{t.model_name}，第 {t.layer} 层，第 {t.head_index} 个头）"
        else:
            en += " The weights are untrained, so this pattern is arbitrary."
            zh += "权重未经训练，所以这个模式是任意的。"
        self.say(en, zh)
        self.play(Create(box), run_time=0.5)
        self.wait(2.0)
        self.play(FadeOut(box), run_time=0.3)

    def show_caveat(self) -> None:
        t = self.trace
        if t.trained:
            en = (f"These are learned weights: {t.model_name}, layer {t.layer}, head {t.head_index}."
                  " Each head learns its own pattern.")
            zh = f"这些是训练得到的权重：{t.model_name}，第 {t.layer} 层，第 {t.head_index} 个头。每个头学到自己的模式。"
            if t.head_reason:
                en += " Why this head: see the note at the top."
                zh += "为什么选这个头：见上方的说明。"
        else:
            en = (f"Careful: random weights (seed {t.seed}) were never trained, so which word wins "
                  "here means nothing yet. Training is what makes related words attend to each other.")
            zh = f"注意：随机权重（种子 {t.seed}）从未训练过，所以这里哪个词胜出还没有意义。是训练让相关的词互相关注。"
        self.say(en, zh)
        self.wait(2.2)
