"""Chapter `qkv` · Query, key, value: the followed word asks (query), every word answers (key)
and hands over its value; the attention row as a ranked bar chart with its real numbers."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from attention_video.attncore.attention import ranking
from attention_video.fastmanim import *  # noqa: F403
from attention_video.scenes.base import ChapterScene
from attention_video.scenes.claims import MASKED, NOT_DRAWN, Claim
from attention_video.scenes.context import ChapterContext
from attention_video.scenes.layout import (
    BUFF_BLOCK,
    BUFF_LABEL,
    BUFF_LARGE,
    BUFF_MEDIUM,
    BUFF_NOTE,
    BUFF_ROW,
    BUFF_SNUG,
    BUFF_TIGHT,
    LABEL_FILL,
    MIN_FONT,
    SAFE_BOTTOM,
    SAFE_X,
    font_for_row,
    widest,
)
from attention_video.scenes.precision import weight_decimals
from attention_video.scenes.rotary import score_names
from attention_video.scenes.text import fit_width, fmt, make_text, wrap
from attention_video.scenes.themes import Theme
from attention_video.scenes.widgets import ChartView, make_label

MAX_BARS = 11  # up to this many allowed keys: one bar each (12 rows do not fit at a legible size)
TOP_BARS = 10  # more keys: the 10 largest as bars, the rest summed in one line
NOTES_GAP = 0.14  # between the lines of the notes under the bars (plan_chart gives a note
#                  0.42 of height): one block, a shade tighter than BUFF_NOTE
ROLES_INDENT = 0.6  # the query's chip and role, in from the frame's left edge: 0.24 inside
#                     the safe area (SAFE_X)



@dataclass(frozen=True)
class BarPlan:
    """Which keys get a bar (ranked, largest first) and what is left over."""

    ranked: list[int]  # key indices with a bar, largest value first (ties: sentence order)
    rest: list[int]  # allowed keys without a bar
    masked: list[int]  # keys the causal mask excludes (weight exactly 0)
    decimals: int  # how its values are written (scenes.precision: weights, or raw factors)

    def rest_sum(self, row: np.ndarray) -> float:
        """weights_rest[i] = Σ weights[i, j] over every key j without a bar
        (masked keys add exactly 0)."""
        shown = set(self.ranked)
        return float(sum(row[j] for j in range(len(row)) if j not in shown))


def plan_bars(row: np.ndarray, mask_row: np.ndarray, decimals: int) -> BarPlan:
    """Rank the allowed keys by their value (largest first; raw factors too, by value).
    More than MAX_BARS: the first TOP_BARS get bars, the others are summed."""
    masked = [j for j in range(len(row)) if not mask_row[j]]
    ranked = list(ranking(row, mask_row))
    if len(ranked) > MAX_BARS:
        return BarPlan(ranked[:TOP_BARS], ranked[TOP_BARS:], masked, decimals)
    return BarPlan(ranked, [], masked, decimals)


@dataclass
class BarChart:
    """The ranked bars with their labels, values, zero line, headings and notes."""

    labels: VGroup
    bars: VGroup
    grow_from: list[np.ndarray]  # the edge each bar grows from: LEFT (≥ 0) or RIGHT (< 0)
    values: VGroup
    axis: Line
    headings: VGroup  # "keys" over the labels, "attention weight" over the bars
    notes: VGroup  # the total (and the rest), the masked keys

    @property
    def group(self) -> VGroup:
        return VGroup(self.labels, self.bars, self.values, self.axis, self.headings, self.notes)


@dataclass(frozen=True)
class ChartGeometry:
    row_h: float
    font: float
    label_w: float
    unit: float  # length of a bar per unit of value
    x0: float  # the zero line, from the left end of the bar area


def plan_chart(row: np.ndarray, plan: BarPlan, labels: list[str], top: float,
               bottom: float) -> ChartGeometry:
    """Row height and font from the room; bar lengths from the widest value that must fit."""
    n = len(plan.ranked)
    notes = 1 + bool(plan.masked)  # "+ N more · all keys", "masked"
    row_h = min(0.55, max(0.27, (top - bottom - 0.5 - notes * 0.42) / max(n, 1)))
    font = font_for_row(row_h, LABEL_FILL)
    label_w = min(2.2, widest([labels[j] for j in plan.ranked], font, "BOLD") + 0.2)
    value_w = widest([fmt(row[j], plan.decimals) for j in plan.ranked], font) + 0.2
    bar_w = min(7.5, 2 * SAFE_X - label_w - value_w - 0.6)
    vals = row[plan.ranked]
    pos, neg = max(float(vals.max()), 0.0), max(float(-vals.min()), 0.0)
    unit = bar_w / (pos + neg) if pos + neg > 0 else 0.0
    return ChartGeometry(row_h, font, label_w, unit, neg * unit)


@dataclass
class Bars:
    """One line per ranked key: its label, its bar from the zero line, its value."""

    labels: VGroup
    bars: VGroup
    grow_from: list[np.ndarray]  # the side each bar grows from (LEFT for a positive value)
    values: VGroup


def make_bars(row: np.ndarray, plan: BarPlan, geo: ChartGeometry, labels: list[str],
              colors: list[str], ctx: ChapterContext,
              focus: int, itself: int | None) -> Bars:
    """One line per ranked key: its label, its bar from the zero line, its value."""
    label_col, bars, grow_from, values = VGroup(), VGroup(), [], VGroup()
    for r, j in enumerate(plan.ranked):
        y = -r * geo.row_h
        v = float(row[j])
        length = max(abs(v) * geo.unit, 0.015)
        bar = Rectangle(width=length, height=geo.row_h * 0.64, stroke_width=0,
                        fill_color=colors[j], fill_opacity=0.85)
        bars.add(bar.move_to([geo.x0 + (length / 2 if v >= 0 else -length / 2), y, 0]))
        grow_from.append(LEFT if v >= 0 else RIGHT)
        lab = make_text(labels[j], geo.font, colors[j], weight="BOLD" if j == itself else "NORMAL")
        label_col.add(fit_width(lab, geo.label_w).move_to([-0.2, y, 0], aligned_edge=RIGHT))
        text = fmt(v, plan.decimals)
        ctx.record("weights", (focus, j), text)
        anchor = bar.get_right() if v >= 0 else np.array([geo.x0, y, 0])
        values.add(make_text(text, geo.font, ctx.theme.text).next_to(anchor, RIGHT, buff=BUFF_LABEL))
    chart = ChartView(*bars, key="weights", kind="bars", values=row[plan.ranked],
                      indices=[(focus, j) for j in plan.ranked], decimals=plan.decimals)
    return Bars(label_col, chart, grow_from, values)


def make_notes(row: np.ndarray, plan: BarPlan, size: float, ctx: ChapterContext,
               focus: int, normalized: bool) -> VGroup:
    """Under the bars: the total of all keys (with the rest summed), and the masked keys."""
    total = fmt(float(row.sum()), plan.decimals)
    ctx.record("weight_sum", (focus,), total)
    if normalized:
        text = ctx.tr("all keys: ") + total
    else:
        text = ctx.tr("all raw factors: {total} (not 1)", total=total)
    if plan.rest:
        rest = fmt(plan.rest_sum(row), plan.decimals)
        ctx.record("weights_rest", (focus,), rest)
        m = len(plan.rest)
        text = ctx.tr("+ {m} more, together {rest}", m=m, rest=rest) + "   ·   " + text
    notes = VGroup(make_text(text, size, ctx.theme.text))
    if plan.masked:
        m = len(plan.masked)
        notes.add(make_text(ctx.tr.plural("masked (weight 0): {n} later word",
                                      "masked (weight 0): {n} later words", m), size, ctx.theme.muted))
    return notes.arrange(DOWN, buff=NOTES_GAP, aligned_edge=LEFT)


def make_bar_chart(row: np.ndarray, plan: BarPlan, labels: list[str], colors: list[str],
                   ctx: ChapterContext, top: float, bottom: float, focus: int,
                   itself: int | None,
                   normalized: bool, scores: str) -> BarChart:
    """Horizontal bars, one per ranked key: label, bar in the key's colour, value.
    Fitted between `top` and `bottom`, centred. `focus` is the query row of `row`;
    `itself` the key that is the query word (in bold), None in cross-attention; `scores`
    names the factor matrix (Q_rot·K_rotᵀ once RoPE turned Q and K: scenes.rotary)."""
    geo = plan_chart(row, plan, labels, top, bottom)
    parts = make_bars(row, plan, geo, labels, colors, ctx, focus, itself)
    label_col, bars = parts.labels, parts.bars
    n = len(plan.ranked)
    axis = Line([geo.x0, geo.row_h * 0.5, 0], [geo.x0, -(n - 0.5) * geo.row_h, 0],
                stroke_color=ctx.theme.muted, stroke_width=2)
    note_size = max(MIN_FONT, min(22, geo.font * 0.85))
    head_k = make_text(ctx.tr("keys"), note_size, ctx.theme.k)
    head_k.next_to(label_col, UP, buff=BUFF_ROW).align_to(label_col, RIGHT)
    head_w = make_text(ctx.tr("attention weight") if normalized
                       else ctx.tr("raw factor {scores}", scores=scores), note_size, ctx.theme.w)
    head_w.next_to(axis, UP, buff=BUFF_ROW).align_to(bars, LEFT)
    head_w.set_y(head_k.get_y())
    notes = make_notes(row, plan, note_size, ctx, focus, normalized)
    notes.next_to(VGroup(bars, axis), DOWN, buff=BUFF_MEDIUM).align_to(bars, LEFT)
    chart = BarChart(label_col, bars, parts.grow_from, parts.values, axis, VGroup(head_k, head_w),
                     notes)
    whole = chart.group
    fit_width(whole, 2 * SAFE_X)
    if whole.height > top - bottom:  # a last resort; the sizes above normally fit
        whole.scale_to_fit_height(top - bottom)
    whole.move_to(ORIGIN).align_to(UP * top, UP)
    return chart


def make_head_reason(reason: str, theme: Theme, beside: VGroup) -> VGroup:
    """Why this head was chosen: right of `beside` if it fits on one line, else wrapped below."""
    line = make_text(reason, 18, theme.muted)
    room = SAFE_X - beside.get_right()[0] - 0.5
    if line.width <= room:
        return line.next_to(beside, RIGHT, buff=BUFF_LARGE)
    lines = VGroup(*[make_text(s, 18, theme.muted) for s in wrap(reason, 120)])
    lines.arrange(DOWN, buff=BUFF_SNUG, aligned_edge=LEFT)
    fit_width(lines, 2 * SAFE_X - 0.6)
    return lines.next_to(beside, DOWN, buff=BUFF_NOTE, aligned_edge=LEFT)


class QKVScene(ChapterScene):
    slug = "qkv"

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
        return plan_bars(self.row, self.trace.head.mask[self.focus],
                         weight_decimals(self.trace.normalized))

    def w_text(self, j: int) -> str:
        return self.weight_text(j)

    # ---- steps ---------------------------------------------------------------------------
    def show_roles(self) -> VGroup:
        i = self.focus
        chip = make_label(self.q_labels[i], 30, self.q_colors[i], self.theme, max_width=3.0)
        tag = make_text(self.tr("query: the word that asks"), 22, self.theme.q)
        roles = VGroup(chip, tag).arrange(RIGHT, buff=BUFF_MEDIUM)
        roles.next_to(self.title_mob, DOWN, buff=BUFF_BLOCK).to_edge(LEFT, buff=ROLES_INDENT)
        reason = self.head_reason()
        if reason:
            roles.add(make_head_reason(reason, self.theme, roles))
        w = self.quoted(self.focus_word)
        if self.trace.cross:
            text = self.tr("{w} is the query: it comes from the target sentence. The keys, and the values "
                           "they hand over, come from the source sentence.",
                           w=w)
        elif not self.trace.head.mask[i].all():  # a causal mask hides the words after it
            text = self.tr("{w} is the query: it asks. Every word up to it, itself included, is a key "
                           "that answers and a value that gets mixed in; the later words are masked.",
                           w=w)
        else:
            text = self.tr("{w} is the query: it asks. Every word, itself included, is a key that answers "
                           "and a value that gets mixed in.", w=w)
        self.say(text)
        self.play(FadeIn(roles, shift=0.2 * RIGHT), run_time=0.7)
        self.wait(1.0)
        return roles

    def show_ranked_bars(self, roles: VGroup) -> BarChart:
        plan = self.plan
        chart = make_bar_chart(self.row, plan, self.k_labels, self.k_colors, self.ctx,
                               top=roles.get_bottom()[1] - 0.3, bottom=SAFE_BOTTOM + 0.15,
                               focus=self.focus, itself=None if self.trace.cross else self.focus,
                               normalized=self.trace.normalized,
                               scores=score_names(self.trace).scores)
        if self.trace.normalized:
            text = self.tr("Its attention weights over the keys, ranked from largest to smallest.")
        else:
            text = self.tr("No softmax: its raw factors ({scores}) over the keys, ranked from largest "
                           "to smallest. They don't sum to 1.", scores=score_names(self.trace).scores)
        self.say(text)
        bars = {j: chart.bars[r] for r, j in enumerate(plan.ranked)}
        if plan.rest:  # "+ N more, together …": the keys without a bar
            self.claim(Claim(NOT_DRAWN, tuple(plan.rest), bars,
                             text=chart.notes[0].original_text))
        if plan.masked:  # "masked (weight 0): N later words"
            self.claim(Claim(MASKED, tuple(plan.masked), text=chart.notes[-1].original_text))
        self.play(FadeIn(chart.labels), FadeIn(chart.headings), Create(chart.axis),
                  run_time=0.6)
        grow = [GrowFromEdge(b, edge) for b, edge in zip(chart.bars, chart.grow_from)]
        self.play(LaggedStart(*grow, lag_ratio=0.12), run_time=min(2.2, 0.6 + 0.12 * len(grow)))
        self.add(chart.bars)  # the bars as one chart in the scene graph (scenes.describe)
        self.play(FadeIn(chart.values), FadeIn(chart.notes), run_time=0.6)
        self.wait(1.0)
        return chart

    def show_what_it_says(self, chart: BarChart) -> None:
        plan, w = self.plan, self.quoted(self.focus_word)
        ranked = plan.ranked
        if not ranked:
            return
        first = ranked[0]
        box = SurroundingRectangle(VGroup(chart.labels[0], chart.bars[0], chart.values[0]),
                                   color=self.theme.accent, buff=BUFF_TIGHT)
        if len(ranked) == 1:
            text = self.tr("{w} can only attend to {key} ({w_text}).",
                           w=w, key=self.key_name(first), w_text=self.w_text(first))
        else:
            second = ranked[1]
            values = dict(w=w, first=self.key_name(first), first_weight=self.w_text(first),
                          second=self.key_name(second), second_weight=self.w_text(second))
            if self.trace.normalized:
                text = self.tr("{w} attends most to {first} ({first_weight}), then {second} "
                               "({second_weight}).", **values)
            else:
                text = self.tr("{w} has the largest factor with {first} ({first_weight}), then "
                               "{second} ({second_weight}).", **values)
            last = ranked[-1]
            if not plan.rest and len(ranked) > 2:
                text += self.tr(" Least: {key} ({w_text}).",
                                key=self.key_name(last), w_text=self.w_text(last))
        t = self.trace
        if t.trained_here:
            text += self.tr(" The model learned this pattern while training.")
        elif t.trained:
            text += self.tr(" ({model_name}, layer {layer}, head {head_index})",
                            model_name=t.model_name, layer=t.layer, head_index=t.head_index)
        else:
            text += self.tr(" The weights are untrained, so this pattern is arbitrary.")
        self.say(text)
        self.play(Create(box), run_time=0.5)
        self.wait(2.0)
        self.play(FadeOut(box), run_time=0.3)

    def show_caveat(self) -> None:
        t = self.trace
        if t.trained_here:
            text = self.tr("These weights were learned here, by the {model_name}: small enough to check by "
                           "hand.", model_name=t.model_name)
            if self.in_plan("learning"):
                text += self.tr(" The next chapter replays its training.")
        elif t.trained:
            text = self.tr("These are learned weights: {model_name}, layer {layer}, head {head_index}. Each "
                           "head learns its own pattern.",
                           model_name=t.model_name, layer=t.layer, head_index=t.head_index)
            if t.head_choice is not None:
                text += self.tr(" Why this head: see the note at the top.")
        else:
            text = self.tr("Careful: random weights (seed {seed}) were never trained, so which word wins "
                           "here means nothing yet. Training is what makes related words attend to each "
                           "other.", seed=t.seed)
        self.say(text)
        self.wait(2.2)
