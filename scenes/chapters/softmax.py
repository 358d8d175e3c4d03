"""Chapter `softmax` · Scale and softmax: the followed row of Q·Kᵀ becomes weights that sum to 1.

    weights_i = softmax(Q·Kᵀ_i / √d_k),  softmax(x)_j = exp(x_j − max x) / Σ_k exp(x_k − max x)

One row per key word: score → ÷√d_k → exp(· − max) → ÷Σ → weight and a bar; the
bars then stack into one bar of length 1. Masked keys get exp 0 and weight 0. Every
part (the max, each exp, Σ) is the core's, read from the trace.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from attention_video.attncore.attention import ranking
from attention_video.attncore.sinks import attention_sink
from attention_video.fastmanim import *  # noqa: F403
from attention_video.scenes.base import ChapterScene
from attention_video.scenes.claims import MASKED, NOT_DRAWN, Claim
from attention_video.scenes.context import ChapterContext
from attention_video.scenes.layout import (
    BUFF_SMALL,
    BUFF_TIGHT,
    MIN_FONT,
    SAFE_BOTTOM,
    SAFE_X,
    STAGE_TOP,
    TABLE_FILL,
    font_for_row,
    widest,
)
from attention_video.scenes.precision import WEIGHTS, weight_decimals
from attention_video.scenes.rotary import score_names
from attention_video.scenes.text import fit_width, fmt, make_text
from attention_video.scenes.themes import Theme, number_ink
from attention_video.scenes.widgets import MASKED_TEXT, ChartView, MatrixView, fit_cells

MASK_MAX = 12  # the causal step draws the whole weight matrix up to this many words
MIN_ROW_H = 0.31  # rows closer than this would make the numbers too small
SEGMENT_PAD = BUFF_TIGHT  # air round a word inside a stacked segment
BAR_LEN = 2.6  # length of a bar of weight 1
HEADER_H = 0.6  # the header line sits this far above the first row
COLUMNS = ("word", "scores", "scaled", "exp", "weights")


def rows_to_show(weights: np.ndarray, max_rows: int) -> list[int]:
    """Every key if they fit; else the heaviest (max_rows − 1), in sentence order."""
    n = len(weights)
    if n <= max_rows:
        return list(range(n))
    top = ranking(weights, np.ones(n, dtype=bool))[: max_rows - 1]
    return sorted(top)


@dataclass(frozen=True)
class TableGeometry:
    """Where the table's rows and columns go."""

    shown: list[int]  # the keys with a row, in sentence order
    hidden: int  # keys without a row (still in Σ and in the stacked bar)
    row_h: float
    font: float
    head_font: float

    @property
    def n_rows(self) -> int:
        return len(self.shown) + (1 if self.hidden else 0)


@dataclass
class SoftmaxTable:
    """The parts that appear step by step: the columns (header + cells), the bars, the
    footer (max, Σ exp, Σ weights, the rule) and the stacked bar."""

    word: VGroup
    scores: VGroup
    scaled: VGroup
    exp: VGroup
    weights: VGroup
    bar_scale: VGroup  # the ruler of length 1 and its "1"
    bars: VGroup  # one bar per shown key
    row_max: Mobject
    exp_sum: Mobject
    weight_sum: Mobject
    rule: Line
    segments: VGroup  # every key's weight laid end to end
    outline: Rectangle  # the stacked bar's frame of length 1
    shown: list[int]
    segment_words: VGroup = field(default_factory=VGroup)  # in the segments wide enough

    @property
    def group(self) -> VGroup:
        return VGroup(self.word, self.scores, self.scaled, self.exp, self.weights,
                      self.bar_scale, self.bars, self.row_max, self.exp_sum, self.weight_sum,
                      self.rule, self.segments, self.outline, self.segment_words)


def plan_table(weights: np.ndarray, max_h: float) -> TableGeometry:
    """As many rows as stay legible in max_h; the rest folded into one "… more" line."""
    body_h = max_h - 1.25  # header and footer
    shown = rows_to_show(weights, max(2, int(body_h // MIN_ROW_H)))
    hidden = len(weights) - len(shown)
    row_h = min(0.52, body_h / (len(shown) + (1 if hidden else 0)))
    font = font_for_row(row_h, TABLE_FILL, hi=26)
    return TableGeometry(shown, hidden, row_h, font, min(24, font))


@dataclass
class Column:
    """One column of the table before it is laid out: its header and a cell per shown key."""

    header: str
    cells: list[Mobject] = field(default_factory=list)


@dataclass
class Columns:
    """The table's columns, left to right (COLUMNS names them in that order)."""

    word: Column
    scores: Column
    scaled: Column
    exp: Column
    weights: Column

    def __iter__(self):
        return iter((name, getattr(self, name)) for name in COLUMNS)


@dataclass
class PlacedColumn:
    """A column laid out: header and cells in one group, and the x of its right edge."""

    group: VGroup
    right: float


@dataclass
class PlacedColumns:
    """The columns laid out, left to right."""

    word: PlacedColumn
    scores: PlacedColumn
    scaled: PlacedColumn
    exp: PlacedColumn
    weights: PlacedColumn


def make_cells(trace, i: int, geo: TableGeometry, labels: list[str], colors: list[str],
               ctx: ChapterContext, headers: dict[str, str]) -> Columns:
    """The cells of each column, one per shown key (plus the "… more" line)."""
    h = trace.head
    f = geo.font
    cols = Columns(*[Column(headers[c]) for c in COLUMNS])
    for j in geo.shown:
        cols.word.cells.append(fit_width(make_text(labels[j], f, colors[j]), 1.9))
        if h.mask[i, j]:
            for column in (cols.scores, cols.scaled):
                name = "scores" if column is cols.scores else "scaled"
                s = fmt(getattr(h, name)[i, j], 2)
                ctx.record(name, (i, j), s)
                column.cells.append(make_text(s, f, ctx.theme.text))
        else:
            cols.scores.cells.append(make_text(MASKED_TEXT, f, ctx.theme.muted))
            cols.scaled.cells.append(make_text("−∞", f, ctx.theme.muted))
        color = ctx.theme.text if h.mask[i, j] else ctx.theme.muted
        s = fmt(h.exp_shifted[i, j], WEIGHTS)
        ctx.record("exp_shifted", (i, j), s)
        cols.exp.cells.append(make_text(s, f, color))
        s = fmt(h.weights[i, j], weight_decimals(trace.normalized))
        ctx.record("weights", (i, j), s)
        cols.weights.cells.append(make_text(s, f, color, weight="BOLD"))
    if geo.hidden:
        more = ctx.tr("… {hidden} more words (in Σ)", hidden=geo.hidden)
        cols.word.cells.append(make_text(more, max(MIN_FONT, f * 0.85), ctx.theme.muted))
    return cols


def make_columns(columns: Columns, geo: TableGeometry, theme: Theme) -> PlacedColumns:
    """Each column as header + cells, numbers right-aligned, left to right."""
    widths = {c: max(widest([col.header], geo.head_font), *(m.width for m in col.cells)) + 0.45
              for c, col in columns}
    widths["word"] = max(m.width for m in columns.word.cells[: len(geo.shown)]) + 0.3
    placed, x = {}, 0.0
    for c, column in columns:
        col = VGroup()
        if column.header:  # (the word column has none: an empty text would draw "␣")
            head = make_text(column.header, geo.head_font,
                             theme.accent if c == "weights" else theme.muted)
            col.add(head.move_to(RIGHT * (x + widths[c] / 2) + UP * HEADER_H))
        inset = 0.15 if c == "word" else 0.2
        for r, m in enumerate(column.cells):
            y = DOWN * (r * geo.row_h)
            if c == "word" and r == len(geo.shown):  # the "… more" line, left-aligned
                m.move_to(RIGHT * x + y, aligned_edge=LEFT)
            else:
                m.move_to(RIGHT * (x + widths[c] - inset) + y, aligned_edge=RIGHT)
            col.add(m)
        x += widths[c]
        placed[c] = PlacedColumn(col, x - 0.2)
    return PlacedColumns(**placed)


@dataclass
class Bars:
    """One bar per shown key, and the ruler above them that marks a weight of 1."""

    bars: VGroup
    scale: VGroup


def make_bars(weights: np.ndarray, geo: TableGeometry, colors: list[str], theme: Theme,
              bar_x: float, i: int, decimals: int) -> Bars:
    """One bar per shown key (a weight of 1 is BAR_LEN long) and the ruler above them;
    `i` is the query row of `weights`, `decimals` how the weights column writes them."""
    bars = ChartView(key="weights", kind="bars", values=[weights[j] for j in geo.shown],
                     indices=[(i, j) for j in geo.shown], decimals=decimals)
    for r, j in enumerate(geo.shown):
        w = max(weights[j] * BAR_LEN, 0.0)
        bar = Rectangle(width=max(w, 1e-3), height=geo.row_h * 0.6, stroke_width=0,
                        fill_color=colors[j], fill_opacity=0.9 if w > 0 else 0)
        bars.add(bar.move_to(RIGHT * bar_x + DOWN * (r * geo.row_h), aligned_edge=LEFT))
    ruler = Line(ORIGIN, RIGHT * BAR_LEN, stroke_color=theme.muted, stroke_width=2)
    ticks = VGroup(*[Line(UP * 0.08, DOWN * 0.08, stroke_color=theme.muted, stroke_width=2)
                     .move_to(ruler.get_start() + RIGHT * k * BAR_LEN) for k in (0, 1)])
    scale_mark = VGroup(ruler, ticks).move_to(RIGHT * bar_x + UP * HEADER_H, aligned_edge=LEFT)
    one = make_text("1", geo.head_font, theme.muted).next_to(scale_mark, RIGHT, buff=BUFF_SMALL)
    return Bars(bars, VGroup(one, scale_mark))


@dataclass
class StackedBar:
    """Every weight laid end to end inside a frame of length 1."""

    segments: VGroup
    outline: Rectangle
    words: VGroup  # the word inside each segment wide enough for it (the named one's: or under it)


SEGMENT_OPACITY = (0.9, 0.45)  # a nameless segment's grey, alternating so that they part


def segment_font(label: str, width: float, height: float, font: float) -> float | None:
    """The font at which `label` fits inside a stacked segment `width` × `height`: `font`
    or smaller, never under MIN_FONT; None where it does not fit."""
    word = make_text(label, font, "#ffffff")
    fit = min(1.0, (width - 2 * SEGMENT_PAD) / word.width, (height - SEGMENT_PAD) / word.height)
    return fit * font if fit * font >= MIN_FONT else None


def stacked_height(geo: TableGeometry) -> float:
    return geo.row_h * 0.6


def named_fits(weights: np.ndarray, labels: list[str], named: int, geo: TableGeometry) -> bool:
    """Whether the caption's word (`named`, the row's top weight) fits inside its segment."""
    return segment_font(labels[named], weights[named] * BAR_LEN, stacked_height(geo),
                        geo.font) is not None


def make_stacked_bar(weights: np.ndarray, geo: TableGeometry, colors: list[str],
                     labels: list[str], theme: Theme, bar_x: float, y: float, i: int,
                     decimals: int, named: int) -> StackedBar:
    """Every weight (shown or not) laid end to end inside a frame of length BAR_LEN = 1.
    A segment wide enough carries its word inside it, in its word's colour, all at one
    size; the others, too narrow to be named, are grey (a colour with no word would name
    nothing to a viewer who cannot tell two word colours apart). The caption's word
    (`named`, the row's top weight) is always named: under its segment where it does not
    fit inside (the table keeps a row free for it: make_softmax_table). The segments are
    one chart (ChartView "stacked", the weights of query row `i` as the weights column
    writes them, `decimals`), so a listener's description says which parts carry a word
    (scenes.describe)."""
    words, x = VGroup(), bar_x
    height = stacked_height(geo)
    parts = [j for j in range(len(weights)) if weights[j] * BAR_LEN > 0]
    fonts = {j: segment_font(labels[j], weights[j] * BAR_LEN, height, geo.font) for j in parts}
    inside = [f for f in fonts.values() if f is not None]
    size = min(inside) if inside else geo.font  # one size for every word inside
    segments = ChartView(key="weights", kind="stacked", values=[weights[j] for j in parts],
                         indices=[(i, j) for j in parts], decimals=decimals,
                         labelled=[fonts[j] is not None or j == named for j in parts])
    for j in parts:
        w = weights[j] * BAR_LEN
        named_here = fonts[j] is not None or j == named
        fill, opacity = ((colors[j], 0.9) if named_here
                         else (theme.muted, SEGMENT_OPACITY[len(segments) % 2]))
        seg = Rectangle(width=w, height=height, stroke_width=1,
                        stroke_color=theme.background, fill_color=fill, fill_opacity=opacity)
        segments.add(seg.move_to(RIGHT * x + UP * y, aligned_edge=LEFT))
        if fonts[j] is not None:
            words.add(make_text(labels[j], size, number_ink(fill, 0.9, theme)).move_to(seg))
        elif j == named:  # under its segment, inside the bar's length
            word = make_text(labels[j], geo.font, colors[j]).next_to(seg, DOWN, buff=BUFF_TIGHT)
            word.shift(RIGHT * max(0.0, bar_x - word.get_left()[0]))
            word.shift(LEFT * max(0.0, word.get_right()[0] - (bar_x + BAR_LEN)))
            words.add(word)
        x += w
    outline = Rectangle(width=BAR_LEN, height=height, stroke_color=theme.text,
                        stroke_width=2).move_to(RIGHT * bar_x + UP * y, aligned_edge=LEFT)
    return StackedBar(segments, outline, words)


def make_softmax_table(trace, i: int, labels: list[str], colors: list[str], ctx: ChapterContext,
                       max_h: float) -> SoftmaxTable:
    """The followed row through ÷√d_k, exp(· − max), ÷Σ, with bars; fitted to max_h."""
    h = trace.head
    named = h.ranking(i)[0]  # the top weight, which the caption names
    geo = plan_table(h.weights[i], max_h)
    if not named_fits(h.weights[i], labels, named, geo):  # its word goes under the bar
        geo = plan_table(h.weights[i], max_h - geo.row_h)
    sq = fmt(float(np.sqrt(trace.d_k)), 2)
    ctx.record("sqrt_dk", (), sq)
    headers = {"word": "", "scores": score_names(trace).scores, "scaled": f"÷ √{trace.d_k} = {sq}",
               "exp": ctx.tr("exp(x − max)"),
               "weights": ctx.tr("÷ Σ = weight")}
    columns = make_columns(make_cells(trace, i, geo, labels, colors, ctx, headers),
                           geo, ctx.theme)
    right_of = {c: getattr(columns, c).right for c in COLUMNS}
    bar_x = right_of["weights"] + 0.4
    bars = make_bars(h.weights[i], geo, colors, ctx.theme, bar_x, i,
                     weight_decimals(trace.normalized))
    # Footer: max under the scaled column, Σ under exp and weights, the stacked bar.
    foot_y = -(geo.n_rows * geo.row_h + 0.15)
    rule = Line(ORIGIN, RIGHT * (right_of["weights"] + 0.2), stroke_color=ctx.theme.grid,
                stroke_width=2).shift(DOWN * ((geo.n_rows - 0.5) * geo.row_h + 0.05))
    s_max, s_sum = fmt(h.row_max[i], 2), fmt(h.exp_sum[i], WEIGHTS)
    s_w = fmt(h.weights[i].sum(), weight_decimals(trace.normalized))
    ctx.record("row_max", (i,), s_max)
    ctx.record("exp_sum", (i,), s_sum)
    ctx.record("weight_sum", (i,), s_w)

    def under(column: str, text: str, color: str, weight: str = "NORMAL") -> Mobject:
        return make_text(text, geo.font, color, weight=weight).move_to(
            RIGHT * right_of[column] + UP * foot_y, aligned_edge=RIGHT)

    stacked = make_stacked_bar(h.weights[i], geo, colors, labels, ctx.theme, bar_x, foot_y, i,
                               weight_decimals(trace.normalized), named)
    return SoftmaxTable(
        word=columns.word.group, scores=columns.scores.group, scaled=columns.scaled.group,
        exp=columns.exp.group, weights=columns.weights.group, bar_scale=bars.scale,
        bars=bars.bars,
        row_max=under("scaled", ctx.tr("max = {s_max}", s_max=s_max), ctx.theme.muted),
        exp_sum=under("exp", f"Σ = {s_sum}", ctx.theme.text),
        weight_sum=under("weights", f"Σ = {s_w}", ctx.theme.accent, "BOLD"),
        rule=rule, segments=stacked.segments, outline=stacked.outline, shown=geo.shown,
        segment_words=stacked.words)


class SoftmaxScene(ChapterScene):
    slug = "softmax"

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
            if self.trace.causal and not self.trace.cross:
                self.show_causal()
        self.finish()

    # ---- steps ---------------------------------------------------------------------
    def show_switched_off(self) -> None:
        self.say(self.tr("Softmax is switched off: the raw factors weigh V directly."))
        self.makes("weights")  # the raw factors, as they are

    def build_table(self) -> None:
        top = STAGE_TOP
        t = make_softmax_table(self.trace, self.focus, self.k_labels, self.k_colors, self.ctx,
                               top - SAFE_BOTTOM - 0.1)
        group = t.group
        fit_width(group, 2 * SAFE_X)
        group.move_to(UP * (top + SAFE_BOTTOM) / 2)
        self.table = t

    def show_row(self) -> None:
        n = int(self.trace.head.mask[self.focus].sum())
        self.say(self.tr("The row of \"{word}\" in {scores}: one score per key word ({n} allowed).",
                         word=self.focus_word, scores=score_names(self.trace).scores, n=n))
        tb = self.table
        if len(tb.word) > len(tb.shown):  # "… N more words (in Σ)": the keys without a row
            self.claim(Claim(NOT_DRAWN, tuple(j for j in range(self.trace.n_k) if j not in tb.shown),
                             {j: tb.word[r] for r, j in enumerate(tb.shown)},
                             values={"among": "every"},
                             text=tb.word[len(tb.shown)].original_text))
        self.play(FadeIn(VGroup(self.table.word, self.table.scores)), run_time=0.8)
        self.wait(0.8)

    def show_scale(self) -> None:
        t = self.trace
        sq = fmt(float(np.sqrt(t.d_k)), 2)
        self.say(self.tr("Divide by √dₖ = √{d_k} = {sq}, so the spread of the scores does not grow with "
                         "the vector width.", d_k=t.d_k, sq=sq))
        self.makes("scaled")
        self.play(FadeIn(self.table.scaled, shift=0.2 * RIGHT), run_time=0.8)
        self.wait(0.8)

    def show_exp(self) -> None:
        t, i = self.trace, self.focus
        m = fmt(t.head.row_max[i], 2)
        masked = "" if t.head.mask[i].all() else self.tr(" Masked keys get exp = 0.")
        self.say(self.tr("Softmax, step 1: subtract the row's max ({m}) and take exp: all positive, the "
                         "largest becomes 1.{masked}", m=m, masked=masked))
        self.play(FadeIn(VGroup(self.table.exp, self.table.row_max), shift=0.2 * RIGHT),
                  run_time=0.8)
        self.wait(0.9)

    def show_weights(self) -> None:
        tb, e_sum = self.table, fmt(self.trace.head.exp_sum[self.focus], 3)
        self.say(self.tr("Step 2: divide each by their sum ({e_sum}): the weights.", e_sum=e_sum))
        self.makes("weights")
        self.play(FadeIn(VGroup(tb.weights, tb.exp_sum, tb.rule), shift=0.2 * RIGHT),
                  run_time=0.8)
        self.play(FadeIn(tb.bar_scale), *[GrowFromEdge(b, LEFT) for b in tb.bars], run_time=0.8)
        self.add(tb.bars)  # the bars as one chart in the scene graph (scenes.describe)
        self.wait(0.8)

    def show_total(self) -> None:
        t, i = self.trace, self.focus
        w = t.head.weights[i]
        j = t.head.ranking(i)[0]
        tb = self.table
        itself = self.tr(" (itself)") if (not t.cross and j == i) else ""
        n = int(t.head.mask[i].sum())
        text = self.tr("\"{word}\" gives the most weight to \"{key}\"{itself}: {w}.",
                       word=self.focus_word, key=self.k_word(j), itself=itself, w=self.weight_text(j))
        total = fmt(w.sum(), weight_decimals(t.normalized))
        self.drawn("weight_sum", (i,), total)
        if n == 1:
            text += self.tr(" Its single weight fills the whole bar: Σ = {total}.", total=total)
        else:
            text += self.tr(" Laid end to end, its {n} weights fill exactly one bar: Σ = {total}.",
                            n=n, total=total)
        self.say(text)
        # The shown bars slide down into the stacked bar; the hidden keys' segments fade in.
        moved = []
        with_segment = [k for k in range(len(w)) if w[k] * BAR_LEN > 0]
        for k, seg in zip(with_segment, tb.segments):
            if k in tb.shown:
                moved.append(TransformFromCopy(tb.bars[tb.shown.index(k)], seg))
            else:
                moved.append(FadeIn(seg))
        self.play(FadeIn(tb.outline), FadeIn(tb.weight_sum), LaggedStart(*moved, lag_ratio=0.05),
                  run_time=1.4)
        self.gather(tb.segments)  # the parts as one chart in the scene graph (scenes.describe)
        if len(tb.segment_words):
            self.play(FadeIn(tb.segment_words), run_time=0.4)
        self.wait(1.2)

    # ---- a causal decoder: the mask, and where the followed word's weight goes ---------
    def show_causal(self) -> None:
        """The whole weight matrix under the causal mask, the followed row outlined; when the
        row gives most of its weight to the first token, say so (attncore.sinks)."""
        t, i = self.trace, self.focus
        h = t.head
        self.clear_stage()
        n = t.n_q
        shown = min(n, MASK_MAX)
        top, bottom = STAGE_TOP, SAFE_BOTTOM + 0.1
        decimals = weight_decimals(t.normalized)

        def mask_view(room: float) -> MatrixView:
            layout = fit_cells(shown + 1, shown + 2, 2 * SAFE_X - 2.0, room, decimals)
            return MatrixView(h.weights, key="weights", theme=self.theme, layout=layout,
                              decimals=decimals, record=self.drawn, heat=True, mask=h.mask,
                              masked_numbers=True, numbers_in_rows=frozenset(range(n)),
                              max_cols=MASK_MAX, max_rows=MASK_MAX, row_labels=self.q_labels,
                              row_colors=self.q_colors, col_labels=self.k_labels,
                              col_colors=self.k_colors)

        view = mask_view(top - bottom - 0.3)
        if view.height > top - bottom:  # the words stand upright over their columns: the
            #                             cells make room for them, the text keeps its size
            view = mask_view(top - bottom - 0.3 - (view.height - (top - bottom)))
        fit_width(view, 2 * SAFE_X)
        if view.height > top - bottom:
            view.scale_to_fit_height(top - bottom)
        view.move_to(UP * (top + bottom) / 2)
        allowed = int(h.mask[i].sum())
        later = int((~h.mask[i]).sum())
        if later == 0:
            text = self.tr("A decoder may look only back: every cell above the diagonal is masked "
                           "(weight 0). \"{word}\" is the last word: it sees all {allowed}, itself "
                           "included.", word=self.focus_word, allowed=allowed)
        else:
            text = self.tr.plural(
                "A decoder may look only back: every cell above the diagonal is masked (weight 0). "
                "\"{word}\" sees {allowed} words, itself included; {n} later word is masked.",
                "A decoder may look only back: every cell above the diagonal is masked (weight 0). "
                "\"{word}\" sees {allowed} words, itself included; {n} later words are masked.",
                later, word=self.focus_word, allowed=allowed)
        self.say(text)
        if later:
            self.claim(Claim(MASKED, tuple(j for j in range(t.n_k) if not h.mask[i, j])))
        self.play(FadeIn(view), run_time=0.8)
        row = view.row_box(i, self.theme.accent, width=3) if i in view.rows else None
        if row is not None:
            self.play(Create(row), run_time=0.4)
        self.wait(1.5)
        sink = attention_sink(t)
        if sink is None or not t.trained:  # untrained weights: no habit to explain
            return
        share = fmt(sink.share, WEIGHTS)
        self.drawn("weights", (i, 0), share)
        self.say(self.tr("\"{word}\" gives {share} of its weight to the first token, \"{first}\".",
                         word=self.focus_word, share=share, first=self.k_word(0)))
        marks = [view.col_box(0, self.theme.accent, width=2)]
        if row is not None:
            marks.append(view.cell_box(i, 0, self.theme.accent, width=5))
        self.play(*[Create(m) for m in marks], run_time=0.6)
        self.wait(1.0)
        self.say(self.tr("Trained decoders often do this (\"attention sinks\", Xiao et al. 2023): "
                         "the first token, seen by every later word, is where spare weight rests."))
        self.wait(1.5)
