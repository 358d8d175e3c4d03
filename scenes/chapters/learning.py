"""Chapter `learning` · Learning: training aligns the vectors.

The article's key idea: "milk" attends to "drank" because training moved milk's query
and drank's key until their products agree in sign, so their dot product is large.
The tiny model was trained here, with snapshots kept; this chapter replays them on the
sentence: the followed word's attention row at each snapshot, Q·K of its partner pair
by pair, the same vectors as arrows at every snapshot (the query along its line, each
key at its true angle to it and its true length, one scale throughout: scenes.arrows),
and the loss and held-out accuracy curves with the snapshots marked.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from attention_video.attncore.attention import ranking
from attention_video.attncore.geometry import QueryGeometry
from attention_video.fastmanim import *  # noqa: F403
from attention_video.scenes.arrows import (
    ArrowPanels,
    ArrowPicture,
    GeometryKeys,
    Plane,
    angle_text,
    crowded_pairs,
    fit_panels,
    fit_plane,
    keys_to_draw,
    keys_under,
    make_arrow_panels,
    make_arrow_picture,
    make_key_table,
    make_not_to_scale_note,
    make_one_scale_note,
    norm_text,
)
from attention_video.scenes.base import ChapterScene
from attention_video.scenes.claims import (
    AGREEING,
    HIGHEST,
    OTHERS,
    PARTNER,
    SNAPSHOTS,
    SPREAD,
    TREND,
    Claim,
)
from attention_video.scenes.context import ChapterContext
from attention_video.scenes.labels import subscript
from attention_video.scenes.layout import (
    BUFF_BLOCK_WIDE,
    BUFF_HAIR,
    BUFF_LABEL,
    BUFF_MEDIUM,
    BUFF_NONE,
    BUFF_ROW,
    BUFF_SMALL,
    BUFF_SNUG,
    BUFF_TIGHT,
    MIN_FONT,
    PANEL_FONT,
    PANEL_GAP,
    PICTURE_SHARE,
    SAFE_BOTTOM,
    SAFE_X,
    STAGE_TOP,
    shown_pairs,
    widest,
)
from attention_video.scenes.pacing import state_seconds
from attention_video.scenes.precision import WEIGHTS
from attention_video.scenes.text import fit_width, fmt, make_text, texts_in
from attention_video.scenes.widgets import (
    CHIP_FONT,
    CHIP_MAX_W,
    CellLayout,
    ChartView,
    MatrixView,
    NumberLabel,
    TableRows,
    fit_cells,
    make_label,
    make_sub,
    make_token_chips,
    sign_color,
)

QUESTION_ROW_GAP = 0.9  # between the rows of a long sentence's chips in the opening
QUESTION_RISE = 1.3  # cross-attention: the query's chip above the keys' chips, room for the
#                      arrow down to its partner
MAX_KEYS = 8  # more keys than this: the ones that ever get much weight (see keys_to_show)
PLOT_H = 2.8  # height of each curve's box
PLOTS_GAP = 1.0  # between the loss box and the accuracy box: far wider than a label's gap, so
#                  the two read as two plots, not one
MAX_ARROWS = 4  # keys drawn as arrows through training (the partner, the best, the least aligned)
STEP_TIME = 0.7  # one snapshot to the next
TICK = 0.12  # a tick on a chart's y axis
MIN_VISIBLE_ARROW = 0.5  # scene units: a snapshot whose longest arrow is shorter is drawn larger


def too_short_to_see(plane: Plane, g: QueryGeometry, keys: list[int]) -> bool:
    """Whether the snapshot's longest arrow is too short to see at the plane's scale: its
    arrows would be a blob at the origin."""
    return plane.unit * max([g.q_norm, *(float(g.k_norms[j]) for j in keys)]) < MIN_VISIBLE_ARROW


@dataclass
class Question:
    """Chapter `learning`'s opening picture: why does the followed word look at its partner?"""

    chips: VGroup  # the sentence's words (and, in cross-attention, the followed word first)
    arrow: VMobject  # from the followed word to its partner; empty when they are one word
    mark: Mobject  # the question mark on the arrow
    box: Rectangle  # around the partner

    @property
    def group(self) -> VGroup:
        return VGroup(self.chips, self.arrow, self.mark, self.box)


def question_arrow(start: Mobject, box: Mobject, chips: VGroup, color: str
                   ) -> tuple[VMobject, np.ndarray]:
    """An arrow from the chip `start` to the partner's `box`, kept off the other chips, and
    the side of it the question mark goes on (a unit vector square to the arrow at its
    middle). Along one row it arcs over the row (under it for the last of several rows),
    low enough to stay in the gap between rows; between rows it is straight, through the
    gap, with the mark on its right."""
    rows = sorted({round(c.get_y(), 2) for c in chips}, reverse=True)
    if abs(start.get_y() - box.get_y()) < 0.05:
        row = rows.index(min(rows, key=lambda y: abs(y - start.get_y())))
        side = DOWN if row == len(rows) - 1 and row > 0 else UP
        outer = row == 0 or side is DOWN  # nothing beyond the arc but the stage
        a, b = start.get_edge_center(side) + 0.1 * side, box.get_edge_center(side) + 0.08 * side
        chord = np.linalg.norm(b - a)
        sag = 1.0 if outer else 0.35 * QUESTION_ROW_GAP
        angle = min(TAU / 4, 4 * np.arctan(2 * sag / chord))
        over = (a[0] > b[0]) == (side is UP)  # counterclockwise from right to left is over
        return CurvedArrow(a, b, angle=angle if over else -angle, color=color,
                           stroke_width=4), side
    down = start.get_y() > box.get_y()
    a = (start.get_bottom() + 0.08 * DOWN) if down else (start.get_top() + 0.08 * UP)
    b = (box.get_top() + 0.08 * UP) if down else (box.get_bottom() + 0.08 * DOWN)
    along = (b - a) / np.linalg.norm(b - a)
    right = np.array([abs(along[1]), along[0] if along[1] < 0 else -along[0], 0.0])
    return Arrow(a, b, buff=BUFF_NONE, color=color, stroke_width=4), right


def keys_to_show(weights: np.ndarray, partner: int, focus: int) -> list[int]:
    """Every key if they fit; else the partner, the followed word and the keys with the
    largest weight at any snapshot, in sentence order."""
    n = weights.shape[1]
    if n <= MAX_KEYS:
        return list(range(n))
    peak = weights.max(axis=0)  # (n,)
    ranked = [j for j in ranking(peak, np.ones(n, dtype=bool)) if j not in (partner, focus)]
    return sorted({partner, focus, *ranked[: MAX_KEYS - 2]})


def pairs_to_show(d_k: int) -> list[int]:
    return [m for m in shown_pairs(d_k) if m is not None]


@dataclass
class SnapshotTable:
    """A grid with one row per training snapshot, "step N" beside each row."""

    view: MatrixView
    steps: VGroup  # the row labels
    title: Mobject
    extra: VGroup  # column headings, the Σ column, notes

    @property
    def group(self) -> VGroup:
        return VGroup(self.view, self.steps, self.title, self.extra)


def make_step_labels(view: MatrixView, steps: np.ndarray, size: float,
                     ctx: ChapterContext) -> VGroup:
    """'step N' left of each row (N is recorded like every drawn number)."""
    labels = VGroup()
    for s, step in enumerate(steps):
        n = fmt(step, 0)
        ctx.record("history_steps", (s,), n)
        label = NumberLabel(make_text(ctx.tr("step {n}", n=n), size, ctx.theme.muted),
                            key="history_steps", index=(s,), text=n)
        labels.add(label.next_to(view.row_rect_of(s), LEFT, buff=BUFF_ROW))
    return labels


def make_weights_table(history, keys: list[int], labels: list[str], colors: list[str],
                       focus_label: str, ctx: ChapterContext,
                       max_w: float, max_h: float) -> SnapshotTable:
    """The followed word's attention row at every snapshot, one column per shown key."""
    n_s = len(history.steps)
    step_w = widest([ctx.tr("step {x}", x=int(x)) for x in history.steps], 22) + 0.3
    layout = fit_cells(n_s, len(keys), max_w - step_w, max_h, WEIGHTS, max_font=26)
    layout = CellLayout(min(layout.cell_w, 1.2), layout.cell_h, max(layout.font_size, MIN_FONT),
                        True)
    view = MatrixView(history.weights[:, keys], key="history_weights", theme=ctx.theme,
                      layout=layout, heat=True, decimals=WEIGHTS, numbers_in_rows=set(range(n_s)),
                      col_labels=[labels[j] for j in keys], col_colors=[colors[j] for j in keys],
                      record=ctx.record, index_map=lambda s, c: (s, keys[c]), max_cols=64)
    steps = make_step_labels(view, history.steps, min(22, layout.font_size), ctx)
    title = make_sub(ctx.tr("weights"), focus_label, 26, ctx.theme.w, ctx.theme.accent)
    title.next_to(VGroup(view, steps), UP, buff=BUFF_ROW).align_to(steps, LEFT)
    return SnapshotTable(view, steps, title, VGroup())


def make_pairs_table(history, q_label: str, k_label: str, ctx: ChapterContext, max_w: float,
                     max_h: float) -> SnapshotTable:
    """Q[followed]·K[partner] at every snapshot: the products pair by pair, sign-coloured,
    and their sum, the cell of Q·Kᵀ."""
    n_s, d_k = history.products.shape
    pairs = pairs_to_show(d_k)
    folded = len(pairs) < d_k
    step_w = widest([ctx.tr("step {x}", x=int(x)) for x in history.steps], 22) + 0.3
    cols = len(pairs) + 2 + folded  # the pairs, "…", the Σ column (twice as wide)
    layout = fit_cells(n_s, cols, max_w - step_w, max_h, 2, max_font=26)
    layout = CellLayout(min(layout.cell_w, 1.2), layout.cell_h, max(layout.font_size, MIN_FONT),
                        True)
    view = MatrixView(history.products[:, pairs], key="history_products", theme=ctx.theme,
                      layout=layout, heat=False, record=ctx.record, max_cols=64,
                      col_labels=[f"q{subscript(m + 1)}k{subscript(m + 1)}" for m in pairs],
                      index_map=lambda s, c: (s, pairs[c]),  # agreeing signs add, opposite subtract
                      cell_style=lambda s, c: (sign_color(history.agreement[s, pairs[c]], ctx.theme), 0.12))
    extra = VGroup()
    right = view.cells.get_right()[0]
    if folded:
        more = make_text("…", layout.font_size, ctx.theme.muted)
        extra.add(more.move_to([right + 0.3, view.row_rect_of(0).get_y(), 0]))
        right += 0.6
    sums = VGroup()
    for s in range(n_s):
        text = fmt(history.scores[s], 2)
        ctx.record("history_scores", (s,), text)
        cell = make_text(f"= {text}", layout.font_size, ctx.theme.text, weight="BOLD")
        sums.add(cell.move_to([right + 0.25, view.row_rect_of(s).get_y(), 0], aligned_edge=LEFT))
    head = make_text("Σ = Q·Kᵀ", min(22, layout.font_size), ctx.theme.accent)
    head.next_to(sums, UP, buff=BUFF_LABEL).align_to(sums, LEFT)
    head.match_y(view.col_labels)
    extra.add(sums, head)
    steps = make_step_labels(view, history.steps, min(22, layout.font_size), ctx)
    title = make_text(f"Q[{q_label}] · K[{k_label}]", 26, ctx.theme.accent)
    title.next_to(VGroup(view, steps, extra), UP, buff=BUFF_ROW).align_to(steps, LEFT)
    return SnapshotTable(view, steps, title, extra)


@dataclass
class Curve:
    box: Rectangle
    line: VMobject
    marks: VGroup  # one dot per snapshot
    labels: VGroup  # name, first and last value, the step range

    @property
    def group(self) -> VGroup:
        return VGroup(self.box, self.line, self.marks, self.labels)


def make_curve(x: np.ndarray, y: np.ndarray, marks_at: np.ndarray, name: str, key: str,
               color: str, ctx: ChapterContext, width: float,
               decimals: int) -> Curve:
    """y against x in a box `width` × PLOT_H (y from 0 to its maximum), the snapshots
    marked on the curve; the first and last values beside the name."""
    box = Rectangle(width=width, height=PLOT_H, stroke_color=ctx.theme.grid, stroke_width=2)
    top = max(float(np.max(y)), 1e-9)
    x0, x_max = float(marks_at[0]), max(float(np.max(x)), float(marks_at[0]) + 1e-9)

    def point(px: float, py: float) -> np.ndarray:
        return box.get_corner(DL) + np.array([width * (px - x0) / (x_max - x0),
                                              PLOT_H * py / top, 0])

    path = VMobject(stroke_color=color, stroke_width=4)
    path.set_points_as_corners([point(a, b) for a, b in zip(x, y)])
    line = ChartView(path, key=key, kind="curve", values=y, indices=[(k,) for k in range(len(y))],
                     decimals=decimals)
    at = np.interp(marks_at, x, y)  # the curve's value at each snapshot (between samples)
    marks = VGroup(*[Dot(point(a, b), radius=0.06, color=ctx.theme.accent)
                     for a, b in zip(marks_at, at)])
    first, last = fmt(y[0], decimals), fmt(y[-1], decimals)
    ctx.record(key, (0,), first)
    ctx.record(key, (len(y) - 1,), last)
    title = VGroup(make_text(name, 22, color), make_text(f"{first} → {last}", 22, ctx.theme.text))
    title.arrange(RIGHT, buff=BUFF_MEDIUM)
    if title.width > width:  # a language's longer name: the values go under it
        title.arrange(DOWN, aligned_edge=LEFT, buff=BUFF_TIGHT)
    title.next_to(box, UP, buff=BUFF_LABEL).align_to(box, LEFT)
    first_step, last_step = fmt(marks_at[0], 0), fmt(x[-1], 0)  # the box starts at step 0
    ctx.record("history_steps", (0,), first_step)
    ctx.record("curve_step", (len(x) - 1,), last_step)
    s0 = make_text(ctx.tr("step {first_step}", first_step=first_step), 18, ctx.theme.muted)
    s1 = make_text(ctx.tr("step {last_step}", last_step=last_step), 18, ctx.theme.muted)
    s0.next_to(box, DOWN, buff=BUFF_SMALL).align_to(box, LEFT)
    s1.next_to(box, DOWN, buff=BUFF_SMALL).align_to(box, RIGHT)
    return Curve(box, line, marks, VGroup(title, s0, s1, make_y_scale(box, y, key, ctx, decimals)))


def make_y_scale(box: Rectangle, y: np.ndarray, key: str, ctx: ChapterContext,
                 decimals: int) -> VGroup:
    """The y axis's scale: 0 at the box's foot and the curve's highest value at its top
    (the box runs from 0 to that value), each left of the box with a tick."""
    peak = int(np.argmax(y))
    top = fmt(y[peak], decimals)
    ctx.record(key, (peak,), top)
    out = VGroup()
    for text, corner in ((top, UL), ("0", DL)):
        at = box.get_corner(corner)
        tick = Line(at, at + LEFT * TICK, stroke_color=ctx.theme.grid, stroke_width=2)
        label = make_text(text, 18, ctx.theme.muted).next_to(tick, LEFT, buff=BUFF_TIGHT)
        out.add(VGroup(tick, label))
    return out


@dataclass(frozen=True)
class ArrowScale:
    """How every snapshot's arrows are drawn, at one scale: in one picture, where the keys
    can all be kept off each other, some of them under the query's line (scenes.arrows
    keys_under), so that they are watched turning together; else one key per panel
    (ArrowPanels, as the dot chapter draws them), where no arrow can lie on another."""

    planes: list[Plane]  # the picture's plane, or one per panel
    first: list[Plane]  # the first snapshot's: `planes`, or larger ones where its arrows
    #                     are too short to see at them (too_short_to_see)
    under: frozenset[int]  # the keys drawn under the query's line (one picture only)
    panels: bool

    @property
    def zoom(self) -> float:
        """How much larger the first snapshot is drawn than the rest (1: not)."""
        return self.first[0].unit / self.planes[0].unit


def fit_arrows(geoms: list[QueryGeometry], drawn: list[int], partner: int, right: float,
               top: float, q_name: str, names: dict[int, str]) -> ArrowScale:
    """The largest scale at which every snapshot of `geoms` fits left of `right`, the first
    drawn larger where its arrows are too short to see at it: one picture, with the partner
    (its shadow and its angle marked) over the query's line and as many others under it
    as keep every two keys apart at every snapshot; one panel per key if none does."""
    box = (-SAFE_X, right, SAFE_BOTTOM, top)

    def fit(under: frozenset[int]) -> tuple[Plane, Plane]:  # (every snapshot's, the first's)
        plane = fit_plane(geoms, drawn, *box, 1, q_name, under=under)
        if not too_short_to_see(plane, geoms[0], drawn):
            return plane, plane
        return plane, fit_plane(geoms[:1], drawn, *box, 1, q_name, under=under)

    def units(plane: Plane, first: Plane) -> list[float]:
        return [first.unit] + [plane.unit] * (len(geoms) - 1)

    under = keys_under(geoms, drawn, {partner}, units(*fit(frozenset())))
    plane, first = fit(under)
    if not crowded_pairs(geoms, drawn, under, units(plane, first)):
        return ArrowScale([plane], [first], under, panels=False)
    planes = fit_panels(geoms, drawn, *box, q_name, names)
    if too_short_to_see(planes[0], geoms[0], drawn):
        return ArrowScale(planes, fit_panels(geoms[:1], drawn, *box, q_name, names),
                          frozenset(), panels=True)
    return ArrowScale(planes, planes, frozenset(), panels=True)


@dataclass
class SnapshotNumbers:
    """Beside the arrows at one snapshot: the step, |q|, and per drawn key θ, |k|, q·k."""

    step: Mobject
    q_norm: Mobject
    heading: VGroup
    rows: dict[int, VGroup]  # key → word, θ, |k|, q·k

    @property
    def group(self) -> VGroup:
        return VGroup(self.step, self.q_norm, self.heading, *self.rows.values())


def make_snapshot_numbers(history, s: int, g: QueryGeometry, drawn: list[int], partner: int,
                          labels: list[str], colors: list[str], ctx: ChapterContext, max_w: float) -> SnapshotNumbers:
    keys = GeometryKeys("history_", (s,), (s,))
    n = fmt(history.steps[s], 0)
    ctx.record("history_steps", (s,), n)
    step = NumberLabel(make_text(ctx.tr("step {n}", n=n), PANEL_FONT + 2, ctx.theme.accent,
                                 weight="BOLD"), key="history_steps", index=(s,), text=n)
    q_norm = make_text(f"|q| = {norm_text(g, None, keys, ctx.record)}", PANEL_FONT, ctx.theme.q)
    heads = [ctx.tr("key"), "θ", "|k|", "q·k"]
    cells = []
    for j in drawn:
        score = fmt(g.scores[j], 2)
        ctx.record("history_key_scores", (s, j), score)
        cells.append((j, [labels[j], angle_text(g, j, keys, ctx.record), norm_text(g, j, keys, ctx.record),
                          score]))
    table = make_key_table(heads, cells, colors, ctx.theme, PANEL_FONT, lambda j, c: j == partner)
    heading, rows = table.heading, table.rows
    VGroup(step, q_norm, table.group).arrange(DOWN, aligned_edge=LEFT, buff=BUFF_MEDIUM)
    numbers = SnapshotNumbers(step, q_norm, heading, rows)
    fit_width(numbers.group, max_w)
    return numbers


class LearningScene(ChapterScene):
    slug = "learning"

    def construct(self) -> None:
        self.pictures: list[tuple[GeometryKeys, ArrowPicture]] = []  # what tests measure
        self.show_title()
        self.show_task()
        self.show_attention_forming()
        self.show_vectors_aligning()
        self.show_arrows_through_training()
        self.show_curves()
        self.show_conclusion()
        self.finish()

    @property
    def history(self):
        return self.trace.history

    def k_name(self, j: int) -> str:
        return self.quoted(self.k_word(j))  # "itself" is not said here: it is a row of weights

    def w_text(self, s: int, j: int) -> str:
        text = fmt(self.history.weights[s, j], WEIGHTS)  # softmax weights: it trained with softmax
        self.drawn("history_weights", (s, j), text)
        return text

    def step_text(self, s: int) -> str:
        text = fmt(self.history.steps[s], 0)
        self.drawn("history_steps", (s,), text)
        return text

    def task_text(self) -> str:
        """What the model was trained to do (the core's task, as data), in the caption
        language; the example pair is in the caption language when the corpus has it."""
        h = self.history
        if h.task == h.TRANSLATE:
            return self.tr("trained to translate English into Spanish, one word after the other")
        examples = {code: (verb, obj) for code, verb, obj in h.examples}
        verb, obj = examples.get(self.settings.language) or examples["en"]
        return self.tr("trained to spot an object that does not go with its verb "
                       "(\"{verb} the {object}\")", verb=verb, object=obj)

    # ---- steps -------------------------------------------------------------------------
    def show_task(self) -> None:
        h, n = self.history, len(self.history.steps)
        self.say(self.tr("Why does {w} look at {p}? This model was {task}. We replay {n} "
                         "snapshots of its training on this sentence.",
                         w=self.quoted(self.focus_word), p=self.k_name(h.partner),
                         task=self.task_text(), n=n))
        picture = self.question = self.make_question(h.partner)
        self.claim(Claim(PARTNER, (h.partner,), {h.partner: picture.box}))
        self.play(LaggedStart(*[FadeIn(c, shift=0.15 * UP) for c in picture.chips],
                              lag_ratio=0.08), run_time=min(2.0, 0.5 + 0.08 * len(picture.chips)))
        self.play(Create(picture.arrow), FadeIn(picture.mark), Create(picture.box), run_time=0.8)
        self.wait(1.6)

    def make_question(self, partner: int) -> Question:
        """The sentence as chips, the followed word's arrow to `partner` and a question
        mark on it. In cross-attention the followed word is from the other sentence: its
        chip stands above the keys' rows."""
        t, i, accent = self.trace, self.focus, self.theme.accent
        chips = make_token_chips(self.k_labels, self.k_colors, self.theme, row_gap=QUESTION_ROW_GAP)
        box = SurroundingRectangle(chips[partner], buff=BUFF_SNUG, color=accent, stroke_width=4)
        if t.cross:
            query = make_label(self.q_labels[i], CHIP_FONT, self.q_colors[i], self.theme,
                               max_width=CHIP_MAX_W).next_to(chips, UP, buff=QUESTION_RISE).set_x(0)
            arrow, side = question_arrow(query, box, chips, accent)
            chips = VGroup(query, *chips)
        elif partner == i:  # the word's own key: no arrow between two chips
            arrow, side = VGroup(), UP
        else:
            arrow, side = question_arrow(chips[i], box, chips, accent)
        anchor = arrow.point_from_proportion(0.5) if len(arrow.points) else box.get_top()
        mark = make_text("?", 40, accent, weight="BOLD")
        # clear of the arrow by BUFF_LABEL on `side`, however the arrow slants, or on the
        # other side where a chip (a second row of a long sentence) stands on the first
        for way in (side, -side):
            mark.move_to(anchor + way * (BUFF_LABEL + abs(way[0]) * mark.width / 2
                                         + abs(way[1]) * mark.height / 2))
            if not any(_touch(mark, chip) for chip in chips):
                break
        question = Question(chips, arrow, mark, box)
        question.group.move_to(UP * (STAGE_TOP + SAFE_BOTTOM) / 2)
        return question

    def show_attention_forming(self) -> None:
        self.clear_stage()
        h, i = self.history, self.focus
        keys = keys_to_show(h.weights, h.partner, i)
        top = STAGE_TOP
        table = make_weights_table(h, keys, self.k_labels, self.k_colors, self.q_labels[i],
                                   self.ctx, 2 * SAFE_X, top - SAFE_BOTTOM - 1.3)
        whole = table.group
        fit_width(whole, 2 * SAFE_X)
        whole.move_to(ORIGIN).align_to(UP * top, UP)
        v = table.view
        first, last = 0, len(h.steps) - 1
        w, p = self.quoted(self.focus_word), self.k_name(h.partner)
        heading = VGroup(table.title, v.col_labels)
        if not self.trace.normalized:  # the video skipped softmax; its training did not
            self.say(self.softmax_note())
            self.play(FadeIn(heading), run_time=0.6)
            heading = VGroup()
        spread = h.weights[first].max() < 0.5
        if spread:
            self.say(self.tr("At step {step_text}, {w} spreads its attention: {w_text} to {p}.",
                             step_text=self.step_text(first), w=w, w_text=self.w_text(first, h.partner), p=p))
        else:
            top = ranking(h.weights[first], np.ones(len(h.weights[first]), dtype=bool))[0]
            self.say(self.tr("At step {step_text}, {w} already gives {w_text} to {k_name}.",
                             step_text=self.step_text(first), w=w, w_text=self.w_text(first, top), k_name=self.k_name(top)))
        if len(heading):
            self.play(FadeIn(heading), run_time=0.6)
        rows = [TableRows(table.steps[s], v.row_rect_of(s),
                          *[v.numbers[(s, c)] for c in range(len(keys)) if (s, c) in v.numbers],
                          view=v, rows=[s])  # (its rows come one by one: scenes.describe)
                for s in range(len(h.steps))]
        if spread:
            self.claim(Claim(SPREAD, (), {first: rows[first]}, values={"snapshot": first}))
        else:
            self.claim(Claim(HIGHEST, (top,), {top: rows[first]}, values={"snapshot": first}))
        self.play(FadeIn(rows[0]), run_time=0.5)
        self.wait(0.8)
        change = h.weights[last, h.partner] - h.weights[first, h.partner]
        trend = 0 if abs(change) < SAME_WEIGHT else (1 if change > 0 else -1)
        values = dict(p=p, steps=self.step_text(last), w=w, weight=self.w_text(last, h.partner))
        if trend > 0:
            self.say(self.tr("As training goes on, its weight for {p} rises: after {steps} steps {w} "
                             "gives {weight} of its attention to {p}.", **values))
        elif trend < 0:
            self.say(self.tr("As training goes on, its weight for {p} falls: after {steps} steps {w} "
                             "gives {weight} of its attention to {p}.", **values))
        else:  # one word, or a weight training never moved: it neither rises nor falls
            self.say(self.tr("As training goes on, its weight for {p} stays where it was: after "
                             "{steps} steps {w} gives {weight} of its attention to {p}.", **values))
        column = v.col_box(keys.index(h.partner), self.theme.accent)
        self.claim(Claim(TREND, (h.partner,), {h.partner: column}, values={"weight": trend}))
        self.play(LaggedStart(*[FadeIn(r, shift=0.1 * DOWN) for r in rows[1:]], lag_ratio=0.35),
                  run_time=min(2.4, 0.5 + 0.3 * len(rows)))
        self.play(Create(column), run_time=0.5)
        self.wait(1.4)

    def softmax_note(self) -> str:
        """Without softmax (--no-softmax) the chapters before weighed V with the raw factors;
        the model was trained with softmax, so the weights replayed here are softmax weights:
        said, with the sum of a row."""
        total = fmt(float(self.history.weights[0].sum()), WEIGHTS)
        return self.tr("Unlike the chapters before, which skip softmax and weigh V with the raw "
                       "factors, the model was trained with softmax: these are its weights, and "
                       "each row sums to {total}.", total=total)

    def show_vectors_aligning(self) -> None:
        self.clear_stage()
        h, i = self.history, self.focus
        top = STAGE_TOP
        table = make_pairs_table(h, self.q_labels[i], self.k_labels[h.partner], self.ctx,
                                 2 * SAFE_X, top - SAFE_BOTTOM - 1.3)
        whole = table.group
        fit_width(whole, 2 * SAFE_X)
        whole.move_to(ORIGIN).align_to(UP * top, UP)
        d_k, last = h.products.shape[1], len(h.steps) - 1
        agree = [h.agreeing(s) for s in (0, last)]
        s0, s1 = fmt(h.scores[0], 2), fmt(h.scores[last], 2)
        self.drawn("history_scores", (0,), s0)
        self.drawn("history_scores", (last,), s1)
        self.say(self.tr("Why: the dot product Q·K, pair by pair. At step {step_text}, {agree} of {d_k} "
                         "pairs agree in sign and the sum is {s0}; after training {agree2} of {d_k} agree "
                         "and the sum is {s1}.",
                         step_text=self.step_text(0), agree=agree[0], d_k=d_k, s0=s0, agree2=agree[1], s1=s1))
        v = table.view
        self.play(FadeIn(VGroup(table.title, v.col_labels, table.extra[-1])), run_time=0.6)
        rows = [TableRows(table.steps[s], v.row_rect_of(s), table.extra[-2][s],
                          *[v.numbers[(s, c)] for c in range(len(v.cols)) if (s, c) in v.numbers],
                          view=v, rows=[s])
                for s in range(len(h.steps))]
        self.claim(Claim(AGREEING, (h.partner,), {0: rows[0], last: rows[last]},
                         values={"first": agree[0], "last": agree[1]}))
        anims = [FadeIn(r, shift=0.1 * DOWN) for r in rows]
        if len(table.extra) > 2:
            anims.append(FadeIn(table.extra[0]))
        self.play(LaggedStart(*anims, lag_ratio=0.3), run_time=min(2.6, 0.6 + 0.3 * len(rows)))
        self.play(Create(VGroup(v.row_box(last, self.theme.accent),
                                SurroundingRectangle(table.extra[-2][last], buff=BUFF_TIGHT,
                                                     color=self.theme.accent))), run_time=0.5)
        self.wait(1.8)

    def show_arrows_through_training(self) -> None:
        """The followed query and the keys as arrows at every snapshot, one scale for all."""
        h, i = self.history, self.focus
        geoms = [h.geometry(s) for s in range(len(h.steps))]
        last = len(geoms) - 1
        if any(g.q_norm == 0 for g in geoms):
            return  # a query with no direction at some snapshot: no picture to draw
        self.clear_stage()
        p = h.partner
        drawn, _ = keys_to_draw(geoms[last], p, MAX_ARROWS)
        top = STAGE_TOP
        right = -SAFE_X + PICTURE_SHARE * 2 * SAFE_X
        q_name = f"Q[{self.q_labels[i]}]"
        names = {j: self.k_labels[j] for j in drawn}
        colors = {j: self.k_colors[j] for j in drawn}
        scale = fit_arrows(geoms, drawn, p, right, top, q_name, names)
        pictures, panels = [], []
        for s, g in enumerate(geoms):
            pictures.append(self.draw_arrows(g, s, scale, scale.planes, drawn, q_name, names,
                                             colors))
            panel = make_snapshot_numbers(h, s, g, drawn, p, self.k_labels, self.k_colors,
                                          self.ctx, SAFE_X - right - PANEL_GAP)
            panel.group.next_to(RIGHT * (right + PANEL_GAP) + UP * top, DR, buff=BUFF_NONE)
            panels.append(panel)
        note = (make_one_scale_note(self.ctx, max_w=SAFE_X - right - PANEL_GAP) if scale.panels
                else make_not_to_scale_note(self.ctx, max_w=SAFE_X - right - PANEL_GAP,
                                            either_side=bool(scale.under)))
        note.next_to(panels[0].group, DOWN, buff=BUFF_BLOCK_WIDE).align_to(panels[0].group, LEFT)
        keys0 = GeometryKeys("history_", (0,), (0,))
        keys1 = GeometryKeys("history_", (last,), (last,))
        t0, t1 = angle_text(geoms[0], p, keys0, self.drawn), angle_text(geoms[last], p, keys1,
                                                                            self.drawn)
        s0, s1 = fmt(h.scores[0], 2), fmt(h.scores[last], 2)
        self.drawn("history_scores", (0,), s0)
        self.drawn("history_scores", (last,), s1)
        q, k = f"Q[{self.q_labels[i]}]", f"K[{self.k_labels[p]}]"
        first = pictures[0]
        if scale.first is not scale.planes:  # the first drawn larger, and said so
            zoom = scale.zoom
            first = self.draw_arrows(geoms[0], 0, scale, scale.first, drawn, q_name, names,
                                     colors)
            self.say(self.tr("The same vectors as arrows. At step {step_text} they are too short to see "
                             "at the scale of the later snapshots, so they are drawn {zoom}× larger: "
                             "{k} is {t0} from {q} and q·k = {s0}.",
                             step_text=self.step_text(0), zoom=fmt(zoom, 0), k=k, t0=t0, q=q, s0=s0))
        else:
            self.say(self.tr("The same vectors as arrows, one scale for every snapshot: at step {step_text}, "
                             "{k} is {t0} from {q} and q·k = {s0}.",
                             step_text=self.step_text(0), k=k, t0=t0, q=q, s0=s0))
        # Snapshots morph from one to the next through copies, so the pictures stay as built
        # (a Transform reshapes what it starts from); the last one is shown itself.
        shown = first.group.copy() if last or first is not pictures[0] else first.group
        boards = [panel.group for panel in panels]  # (each .group is a new VGroup: kept once)
        self.play(FadeIn(shown), FadeIn(boards[0]), FadeIn(note), run_time=0.8)
        self.wait(1.2)
        if last:
            if first is not pictures[0]:
                self.say(self.tr("Training replayed at one scale for every snapshot, from step "
                                 "{step_text} to step {last_text}: the arrows and their numbers "
                                 "at each snapshot.",
                                 step_text=self.step_text(0), last_text=self.step_text(last)))
            else:
                self.say(self.tr("Training replayed, from step {step_text} to step {last_text}: "
                                 "the arrows and their numbers at each snapshot.",
                                 step_text=self.step_text(0), last_text=self.step_text(last)))
        if first is not pictures[0]:  # down to the common scale before the snapshots play
            nxt = pictures[0].group if not last else pictures[0].group.copy()
            self.play(ReplacementTransform(shown, nxt), run_time=STEP_TIME)
            shown = nxt
        for s in range(1, len(pictures)):
            nxt = pictures[s].group if s == last else pictures[s].group.copy()
            self.play(ReplacementTransform(shown, nxt), run_time=STEP_TIME)
            # The numbers change as the arrows arrive, by a cut: one number at every frame
            # (a cross-fade would draw two steps' numbers over each other).
            self.remove(boards[s - 1])
            self.add(boards[s])
            shown = nxt
            # each snapshot rests long enough to read its numbers (scenes.pacing)
            self.wait(state_seconds(texts_in(VGroup(boards[s], nxt)), self.settings.language,
                                    self.settings.pace))
        self.say(self.tr("After {step_text} steps {k} is {t1} from the query (from {t0}) and q·k = {s1} "
                         "(from {s0}).",
                         step_text=self.step_text(last), k=k, t1=t1, t0=t0, s1=s1, s0=s0))
        self.play(Indicate(pictures[-1].arrows[p], color=self.theme.accent), run_time=0.8)
        self.wait(1.0)
        others, said = self.others_through_training(geoms, drawn)
        if others:
            self.say(others)
            self.claim(Claim(OTHERS, tuple(j for j in drawn if j != p),
                             {j: pictures[-1].arrows[j] for j in drawn if j != p}, values=said))
            self.wait(1.5)

    def draw_arrows(self, g: QueryGeometry, s: int, scale: ArrowScale, planes: list[Plane],
                    drawn: list[int], q_name: str, names: dict[int, str],
                    colors: dict[int, str]) -> ArrowPicture | ArrowPanels:
        """Snapshot s's arrows drawn as `scale` says, on `planes` (its planes or its first
        snapshot's), kept for the tests to measure: one picture, the partner's shadow and
        angle marked; or one panel per key, each angle labelled by its value (as chapter
        4's)."""
        keys = GeometryKeys("history_", (s,), (s,))
        if scale.panels:
            marks = {j: angle_text(g, j, keys, self.ctx.record) for j in drawn}
            picture = make_arrow_panels(g, drawn, planes, q_name, names, colors,
                                        self.theme, marks)
            self.pictures += [(keys, panel) for panel in picture.panels.values()]
            return picture
        picture = make_arrow_picture(g, drawn, planes[0], q_name, names, colors,
                                     self.theme, shadows=[self.history.partner],
                                     arcs=[self.history.partner], under=scale.under)
        self.pictures.append((keys, picture))
        return picture

    def others_through_training(self, geoms: list[QueryGeometry], drawn: list[int]
                                ) -> tuple[str, dict[str, int | bool]]:
        """What the other keys drawn did between the first and the last snapshot, counted
        from the numbers: turned away (a wider angle), got shorter, or came closer; and
        those counts as a claim's values (scenes.claims OTHERS)."""
        p, first, last = self.history.partner, geoms[0], geoms[-1]
        others = [j for j in drawn if j != p]
        if not others:
            return "", {}
        away = sum(last.angles[j] > first.angles[j] for j in others)
        shorter = sum(last.k_norms[j] < first.k_norms[j] for j in others)
        closer = len(others) - away
        furthest = all(last.shadows[p] > last.shadows[j] for j in others)
        tr = self.tr

        def count(n: int) -> str:
            return tr("none") if n == 0 else tr.context("a count of keys", "{n}", n=n)

        text = tr("Of the other {n} keys drawn, {away} turned away from the query and {shorter} "
                  "got shorter", n=len(others), away=count(away), shorter=count(shorter))
        if closer and furthest:
            if last.angles[p] < first.angles[p]:
                text += tr("; {closer} came closer too, but none reaches as far along the query.",
                           closer=closer)
            else:
                text += tr("; {closer} came closer, but none reaches as far along the query.",
                           closer=closer)
        elif furthest:
            text += tr(", and none reaches as far along it as {key}.", key=self.k_name(p))
        else:
            text += tr(".")
        return text, {"away": int(away), "shorter": int(shorter), "furthest": bool(furthest)}

    def show_curves(self) -> None:
        self.clear_stage()
        h, th = self.history, self.theme
        def curves(width: float) -> tuple:
            loss = make_curve(h.curve_step, h.curve_loss, h.steps, self.tr("training loss"),
                              "curve_loss", th.negative, self.ctx, width, 3)
            acc = make_curve(h.curve_step, h.curve_accuracy, h.steps,
                             self.tr("held-out accuracy"), "curve_accuracy", th.positive,
                             self.ctx, width, 3)
            # boxes level however many lines their names take
            return loss, acc, VGroup(loss.group, acc.group).arrange(RIGHT, buff=PLOTS_GAP,
                                                                    aligned_edge=DOWN)

        width = (2 * SAFE_X - 1.2) / 2
        loss, acc, plots = curves(width)
        if plots.width > 2 * SAFE_X:  # the axis labels reach past the boxes: narrower boxes
            loss, acc, plots = curves(width - (plots.width - 2 * SAFE_X) / 2)
        top = STAGE_TOP - 0.2
        plots.move_to(ORIGIN).align_to(UP * top, UP)
        note = make_text(self.tr("● the snapshots: the rows of the tables before"), 20, th.accent)
        note.next_to(plots, DOWN, buff=BUFF_BLOCK_WIDE)
        last = len(h.curve_loss) - 1
        values = dict(curve_loss=fmt(h.curve_loss[0], 3), curve_loss2=fmt(h.curve_loss[last], 3),
                      curve_accuracy=fmt(h.curve_accuracy[0], 3),
                      curve_accuracy2=fmt(h.curve_accuracy[last], 3))
        if h.curve_loss[last] < h.curve_loss[0] and h.curve_accuracy[last] > h.curve_accuracy[0]:
            self.say(self.tr("Training lowered the loss from {curve_loss} to {curve_loss2}; held-out "
                             "accuracy rose from {curve_accuracy} to {curve_accuracy2}.", **values))
            self.claim(Claim(TREND, (), {0: loss.line, 1: acc.line},
                             values={"loss": -1, "accuracy": 1}))
        else:  # a training that did not help: said as it went, no direction claimed
            self.say(self.tr("Training took the loss from {curve_loss} to {curve_loss2}; held-out "
                             "accuracy went from {curve_accuracy} to {curve_accuracy2}.", **values))
        for curve, name in ((loss, "loss"), (acc, "accuracy")):
            self.claim(Claim(SNAPSHOTS, tuple(range(len(h.steps))), dict(enumerate(curve.marks)),
                             frames={s: curve.box for s in range(len(h.steps))},
                             values={"curve": name}))
        for key, values in (("curve_loss", h.curve_loss), ("curve_accuracy", h.curve_accuracy)):
            self.drawn(key, (0,), fmt(values[0], 3))
            self.drawn(key, (last,), fmt(values[last], 3))
        self.play(FadeIn(VGroup(loss.box, loss.labels, acc.box, acc.labels)), run_time=0.6)
        self.play(Create(loss.line), Create(acc.line), run_time=1.6)
        self.play(FadeIn(loss.marks), FadeIn(acc.marks), FadeIn(note), run_time=0.5)
        self.wait(1.5)

    def show_conclusion(self) -> None:
        h, last = self.history, len(self.history.steps) - 1
        w, p = self.quoted(self.focus_word), self.k_name(h.partner)
        grew = h.scores[last] > h.scores[0] and h.weights[last, h.partner] > h.weights[0, h.partner]
        if grew:
            text = self.tr("Nobody wrote this rule: training moved the query of {w} and the key of {p} "
                           "until their products agree, so their dot product, and the attention, grew.",
                           w=w, p=p)
        else:
            text = self.tr("Training did not pull {w} towards {p}: the model needed that attention "
                           "elsewhere for its task.", w=w, p=p)
        self.say(text)
        if grew:
            self.claim(Claim(TREND, (h.partner,), values={"score": 1, "weight": 1}))
        self.wait(2.2)


SAME_WEIGHT = 1e-6  # a weight that moved less than this through training did not move


def _touch(a, b, pad: float = BUFF_HAIR) -> bool:
    """Whether two objects' boxes come within `pad` of each other."""
    return not (a.get_right()[0] + pad < b.get_left()[0] or b.get_right()[0] + pad < a.get_left()[0]
                or a.get_top()[1] + pad < b.get_bottom()[1] or b.get_top()[1] + pad < a.get_bottom()[1])
