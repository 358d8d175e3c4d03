"""Chapter 8 · Learning: training aligns the vectors.

The article's key idea: "milk" attends to "drank" because training moved milk's query
and drank's key until their products agree in sign, so their dot product is large.
The tiny model was trained here, with snapshots kept; this chapter replays them on the
sentence: the followed word's attention row at each snapshot, Q·K of its partner pair
by pair, and the loss and held-out accuracy curves with the snapshots marked.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attncore.attention import ranking
from fastmanim import *  # noqa: F403
from scenes.base import ChapterScene
from scenes.layout import MIN_FONT, SAFE_BOTTOM, SAFE_X, shown_pairs, widest
from scenes.text import Translate, fit_width, fmt, make_text, subscript
from scenes.widgets import (
    CellLayout,
    MatrixView,
    Recorder,
    Theme,
    fit_cells,
    make_sub,
    sign_color,
)

MAX_KEYS = 8  # more keys than this: the ones that ever get much weight (see keys_to_show)
PLOT_H = 2.8  # height of each curve's box


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


def make_step_labels(view: MatrixView, steps: np.ndarray, size: float, theme: Theme,
                     record: Recorder, tr: Translate) -> VGroup:
    """'step N' left of each row (N is recorded like every drawn number)."""
    labels = VGroup()
    for s, step in enumerate(steps):
        n = fmt(step, 0)
        record("history_steps", (s,), n)
        label = make_text(tr(f"step {n}", f"第 {n} 步"), size, theme.muted)
        labels.add(label.next_to(view.row_rect_of(s), LEFT, buff=0.2))
    return labels


def make_weights_table(history, keys: list[int], labels: list[str], colors: list[str],
                       focus_label: str, theme: Theme, record: Recorder, tr: Translate,
                       max_w: float, max_h: float) -> SnapshotTable:
    """The followed word's attention row at every snapshot, one column per shown key."""
    n_s = len(history.steps)
    step_w = widest([tr(f"step {int(x)}", f"第 {int(x)} 步") for x in history.steps], 22) + 0.3
    layout = fit_cells(n_s, len(keys), max_w - step_w, max_h, 2, max_font=26)
    layout = CellLayout(min(layout.cell_w, 1.2), layout.cell_h, max(layout.font_size, MIN_FONT),
                        True)
    view = MatrixView(history.weights[:, keys], key="history_weights", theme=theme,
                      layout=layout, heat=True, numbers_in_rows=set(range(n_s)),
                      col_labels=[labels[j] for j in keys], col_colors=[colors[j] for j in keys],
                      record=record, index_map=lambda s, c: (s, keys[c]), max_cols=64)
    steps = make_step_labels(view, history.steps, min(22, layout.font_size), theme, record, tr)
    title = make_sub(tr("weights", "权重"), focus_label, 26, theme.w, theme.accent)
    title.next_to(VGroup(view, steps), UP, buff=0.2).align_to(steps, LEFT)
    return SnapshotTable(view, steps, title, VGroup())


def make_pairs_table(history, q_label: str, k_label: str, theme: Theme, record: Recorder,
                     tr: Translate, max_w: float, max_h: float) -> SnapshotTable:
    """Q[followed]·K[partner] at every snapshot: the products pair by pair, sign-coloured,
    and their sum, the cell of Q·Kᵀ."""
    n_s, d_k = history.products.shape
    pairs = pairs_to_show(d_k)
    folded = len(pairs) < d_k
    step_w = widest([tr(f"step {int(x)}", f"第 {int(x)} 步") for x in history.steps], 22) + 0.3
    cols = len(pairs) + 2 + folded  # the pairs, "…", the Σ column (twice as wide)
    layout = fit_cells(n_s, cols, max_w - step_w, max_h, 2, max_font=26)
    layout = CellLayout(min(layout.cell_w, 1.2), layout.cell_h, max(layout.font_size, MIN_FONT),
                        True)
    view = MatrixView(history.products[:, pairs], key="history_products", theme=theme,
                      layout=layout, heat=False, record=record, max_cols=64,
                      col_labels=[f"q{subscript(m + 1)}k{subscript(m + 1)}" for m in pairs],
                      index_map=lambda s, c: (s, pairs[c]),  # agreeing signs add, opposite subtract
                      cell_style=lambda s, c: (sign_color(history.agreement[s, pairs[c]], theme), 0.12))
    extra = VGroup()
    right = view.cells.get_right()[0]
    if folded:
        more = make_text("…", layout.font_size, theme.muted)
        extra.add(more.move_to([right + 0.3, view.row_rect_of(0).get_y(), 0]))
        right += 0.6
    sums = VGroup()
    for s in range(n_s):
        text = fmt(history.scores[s], 2)
        record("history_scores", (s,), text)
        cell = make_text(f"= {text}", layout.font_size, theme.text, weight="BOLD")
        sums.add(cell.move_to([right + 0.25, view.row_rect_of(s).get_y(), 0], aligned_edge=LEFT))
    head = make_text("Σ = Q·Kᵀ", min(22, layout.font_size), theme.accent)
    head.next_to(sums, UP, buff=0.12).align_to(sums, LEFT)
    head.match_y(view.col_labels)
    extra.add(sums, head)
    steps = make_step_labels(view, history.steps, min(22, layout.font_size), theme, record, tr)
    title = make_text(f"Q[{q_label}] · K[{k_label}]", 26, theme.accent)
    title.next_to(VGroup(view, steps, extra), UP, buff=0.2).align_to(steps, LEFT)
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
               color: str, theme: Theme, record: Recorder, tr: Translate, width: float,
               decimals: int) -> Curve:
    """y against x in a box `width` × PLOT_H (y from 0 to its maximum), the snapshots
    marked on the curve; the first and last values beside the name."""
    box = Rectangle(width=width, height=PLOT_H, stroke_color=theme.grid, stroke_width=2)
    top = max(float(np.max(y)), 1e-9)
    x0, x_max = float(marks_at[0]), max(float(np.max(x)), float(marks_at[0]) + 1e-9)

    def point(px: float, py: float) -> np.ndarray:
        return box.get_corner(DL) + np.array([width * (px - x0) / (x_max - x0),
                                              PLOT_H * py / top, 0])

    line = VMobject(stroke_color=color, stroke_width=4)
    line.set_points_as_corners([point(a, b) for a, b in zip(x, y)])
    at = np.interp(marks_at, x, y)  # the curve's value at each snapshot (between samples)
    marks = VGroup(*[Dot(point(a, b), radius=0.06, color=theme.accent)
                     for a, b in zip(marks_at, at)])
    first, last = fmt(y[0], decimals), fmt(y[-1], decimals)
    record(key, (0,), first)
    record(key, (len(y) - 1,), last)
    title = VGroup(make_text(name, 22, color), make_text(f"{first} → {last}", 22, theme.text))
    title.arrange(RIGHT, buff=0.25).next_to(box, UP, buff=0.12).align_to(box, LEFT)
    first_step, last_step = fmt(marks_at[0], 0), fmt(x[-1], 0)  # the box starts at step 0
    record("history_steps", (0,), first_step)
    record("curve_step", (len(x) - 1,), last_step)
    s0 = make_text(tr(f"step {first_step}", f"第 {first_step} 步"), 18, theme.muted)
    s1 = make_text(tr(f"step {last_step}", f"第 {last_step} 步"), 18, theme.muted)
    s0.next_to(box, DOWN, buff=0.1).align_to(box, LEFT)
    s1.next_to(box, DOWN, buff=0.1).align_to(box, RIGHT)
    return Curve(box, line, marks, VGroup(title, s0, s1))


class LearningScene(ChapterScene):
    slug = "learning"

    def construct(self) -> None:
        self.show_title()
        self.show_task()
        self.show_attention_forming()
        self.show_vectors_aligning()
        self.show_curves()
        self.show_conclusion()
        self.finish()

    @property
    def history(self):
        return self.trace.history

    def k_name(self, j: int) -> str:
        return self.quoted(self.k_word(j))  # "itself" is not said here: it is a row of weights

    def w_text(self, s: int, j: int) -> str:
        text = fmt(self.history.weights[s, j], 2)
        self.drawn("history_weights", (s, j), text)
        return text

    def step_text(self, s: int) -> str:
        text = fmt(self.history.steps[s], 0)
        self.drawn("history_steps", (s,), text)
        return text

    # ---- steps -------------------------------------------------------------------------
    def show_task(self) -> None:
        h, n = self.history, len(self.history.steps)
        self.say(self.tr(
            f"Why does {self.quoted(self.focus_word)} look at {self.k_name(h.partner)}? This "
            f"model was {h.task_en}. We replay {n} snapshots of its training on this sentence.",
            f"为什么{self.quoted(self.focus_word)}会看向{self.k_name(h.partner)}？这个模型的"
            f"{h.task_zh}。我们把训练过程中的 {n} 个快照放到这个句子上重放。"))
        self.wait(1.6)

    def show_attention_forming(self) -> None:
        h, i = self.history, self.focus
        keys = keys_to_show(h.weights, h.partner, i)
        top = self.title_mob.get_bottom()[1] - 0.35
        table = make_weights_table(h, keys, self.k_labels, self.k_colors, self.q_labels[i],
                                   self.theme, self.drawn, self.tr, 2 * SAFE_X,
                                   top - SAFE_BOTTOM - 1.3)
        whole = table.group
        fit_width(whole, 2 * SAFE_X)
        whole.move_to(ORIGIN).align_to(UP * top, UP)
        v = table.view
        first, last = 0, len(h.steps) - 1
        w, p = self.quoted(self.focus_word), self.k_name(h.partner)
        if h.weights[first].max() < 0.5:
            self.say(self.tr(
                f"At step {self.step_text(first)}, {w} spreads its attention: "
                f"{self.w_text(first, h.partner)} to {p}.",
                f"第 {self.step_text(first)} 步时，{w}的注意力是分散的："
                f"给{p}的是 {self.w_text(first, h.partner)}。"))
        else:
            top = ranking(h.weights[first], np.ones(len(h.weights[first]), dtype=bool))[0]
            self.say(self.tr(
                f"At step {self.step_text(first)}, {w} already gives "
                f"{self.w_text(first, top)} to {self.k_name(top)}.",
                f"第 {self.step_text(first)} 步时，{w}已经给了{self.k_name(top)} "
                f"{self.w_text(first, top)}。"))
        self.play(FadeIn(VGroup(table.title, v.col_labels)), run_time=0.6)
        rows = [VGroup(table.steps[s], v.row_rect_of(s),
                       *[v.numbers[(s, c)] for c in range(len(keys)) if (s, c) in v.numbers])
                for s in range(len(h.steps))]
        self.play(FadeIn(rows[0]), run_time=0.5)
        self.wait(0.8)
        grew = h.weights[last, h.partner] > h.weights[first, h.partner]
        self.say(self.tr(
            f"As training goes on, its weight for {p} {'rises' if grew else 'falls'}: after "
            f"{self.step_text(last)} steps {w} gives {self.w_text(last, h.partner)} of its "
            f"attention to {p}.",
            f"随着训练进行，它给{p}的权重{'上升' if grew else '下降'}了："
            f"{self.step_text(last)} 步之后，{w}把 {self.w_text(last, h.partner)} 的注意力给了{p}。"))
        self.play(LaggedStart(*[FadeIn(r, shift=0.1 * DOWN) for r in rows[1:]], lag_ratio=0.35),
                  run_time=min(2.4, 0.5 + 0.3 * len(rows)))
        self.play(Create(v.col_box(keys.index(h.partner), self.theme.accent)), run_time=0.5)
        self.wait(1.4)

    def show_vectors_aligning(self) -> None:
        self.clear_stage()
        h, i = self.history, self.focus
        top = self.title_mob.get_bottom()[1] - 0.35
        table = make_pairs_table(h, self.q_labels[i], self.k_labels[h.partner], self.theme,
                                 self.drawn, self.tr, 2 * SAFE_X, top - SAFE_BOTTOM - 1.3)
        whole = table.group
        fit_width(whole, 2 * SAFE_X)
        whole.move_to(ORIGIN).align_to(UP * top, UP)
        d_k, last = h.products.shape[1], len(h.steps) - 1
        agree = [h.agreeing(s) for s in (0, last)]
        s0, s1 = fmt(h.scores[0], 2), fmt(h.scores[last], 2)
        self.drawn("history_scores", (0,), s0)
        self.drawn("history_scores", (last,), s1)
        self.say(self.tr(
            f"Why: the dot product Q·K, pair by pair. At step {self.step_text(0)}, "
            f"{agree[0]} of {d_k} pairs agree in sign and the sum is {s0}; after training "
            f"{agree[1]} of {d_k} agree and the sum is {s1}.",
            f"原因在点积 Q·K 的每一对里：第 {self.step_text(0)} 步时，{d_k} 对中有 {agree[0]} 对"
            f"同号，和为 {s0}；训练之后 {agree[1]} 对同号，和为 {s1}。"))
        v = table.view
        self.play(FadeIn(VGroup(table.title, v.col_labels, table.extra[-1])), run_time=0.6)
        rows = [VGroup(table.steps[s], v.row_rect_of(s), table.extra[-2][s],
                       *[v.numbers[(s, c)] for c in range(len(v.cols)) if (s, c) in v.numbers])
                for s in range(len(h.steps))]
        anims = [FadeIn(r, shift=0.1 * DOWN) for r in rows]
        if len(table.extra) > 2:
            anims.append(FadeIn(table.extra[0]))
        self.play(LaggedStart(*anims, lag_ratio=0.3), run_time=min(2.6, 0.6 + 0.3 * len(rows)))
        self.play(Create(VGroup(v.row_box(last, self.theme.accent),
                                SurroundingRectangle(table.extra[-2][last], buff=0.06,
                                                     color=self.theme.accent))), run_time=0.5)
        self.wait(1.8)

    def show_curves(self) -> None:
        self.clear_stage()
        h, th = self.history, self.theme
        width = (2 * SAFE_X - 1.2) / 2
        loss = make_curve(h.curve_step, h.curve_loss, h.steps, self.tr("training loss", "训练损失"),
                          "curve_loss", th.negative, th, self.drawn, self.tr, width, 3)
        acc = make_curve(h.curve_step, h.curve_accuracy, h.steps,
                         self.tr("held-out accuracy", "留出集准确率"), "curve_accuracy",
                         th.positive, th, self.drawn, self.tr, width, 3)
        plots = VGroup(loss.group, acc.group).arrange(RIGHT, buff=1.0)
        top = self.title_mob.get_bottom()[1] - 0.5
        plots.move_to(ORIGIN).align_to(UP * top, UP)
        note = make_text(self.tr("● the snapshots: the rows of the tables before",
                                 "● 快照：前面表格中的各行"), 20, th.accent)
        note.next_to(plots, DOWN, buff=0.35)
        last = len(h.curve_loss) - 1
        self.say(self.tr(
            f"Training lowered the loss from {fmt(h.curve_loss[0], 3)} to "
            f"{fmt(h.curve_loss[last], 3)}; held-out accuracy rose from "
            f"{fmt(h.curve_accuracy[0], 3)} to {fmt(h.curve_accuracy[last], 3)}.",
            f"训练把损失从 {fmt(h.curve_loss[0], 3)} 降到 {fmt(h.curve_loss[last], 3)}；"
            f"留出集准确率从 {fmt(h.curve_accuracy[0], 3)} 升到 {fmt(h.curve_accuracy[last], 3)}。"))
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
        if h.scores[last] > h.scores[0] and h.weights[last, h.partner] > h.weights[0, h.partner]:
            text = self.tr(
                f"Nobody wrote this rule: training moved the query of {w} and the key of {p} "
                "until their products agree, so their dot product, and the attention, grew.",
                f"没有人写下这条规则：是训练让{w}的查询和{p}的键对齐，"
                "所以它们的点积和注意力都变大了。")
        else:
            text = self.tr(
                f"Training did not pull {w} towards {p}: the model needed that attention "
                "elsewhere for its task.",
                f"训练并没有让{w}更关注{p}：为了完成任务，模型把注意力用在了别处。")
        self.say(text)
        self.wait(2.2)
