"""Chapter 9 · Summary: Attention(Q, K, V) = softmax(Q·Kᵀ/√d_k)·V, each term in its colour
and tied back to the chapter that showed it, with the followed word's real rows below."""

from __future__ import annotations

import numpy as np
from manim import *

from scenes.base import ChapterScene
from scenes.ch6_weighted_sum import make_sub
from scenes.widgets import (
    MIN_FONT,
    SAFE_BOTTOM,
    SAFE_X,
    MatrixView,
    Recorder,
    Theme,
    fit_cells,
    fit_width,
    fmt,
    make_text,
)

MAX_COLS = 8  # long vectors: first ones, "…", last one
DECIMALS = 2
SUBSCRIPTS = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


def spans(text: str, parts: list[tuple[str, str]]) -> list[tuple[int, int, str]]:
    """Locate each (substring, name) in order in text: [(start, end, name)].
    Text has one submobject per character (spaces included), so these index glyphs."""
    out, at = [], 0
    for sub, name in parts:
        start = text.index(sub, at)
        out.append((start, start + len(sub), name))
        at = start + len(sub)
    return out


def make_formula(theme: Theme, normalized: bool, size: float = 44) -> tuple[Text, dict]:
    """The formula as one Text (one baseline), its terms coloured; returns the glyph groups
    of the terms that get a chapter label: "Q", "K", "softmax", "V"."""
    if normalized:
        text = "Attention(Q, K, V) = softmax(Q·Kᵀ / √d_k)·V"
        parts = [("Q", "q"), ("K", "k"), ("V", "v"), ("softmax(", "w"), ("Q", "Q"),
                 ("Kᵀ", "K"), ("/ √d_k)", "w2"), ("V", "V")]
    else:
        text = "Z = (Q·Kᵀ)·V"
        parts = [("Z", "z"), ("Q", "Q"), ("Kᵀ", "K"), ("V", "V")]
    colors = {"q": theme.q, "Q": theme.q, "k": theme.k, "K": theme.k, "v": theme.v,
              "V": theme.v, "w": theme.w, "w2": theme.w, "z": theme.accent}
    formula = make_text(text, size, theme.text)
    terms = {}
    for start, end, name in spans(text, parts):
        glyphs = formula[start:end]
        glyphs.set_color(colors[name])
        terms[name] = glyphs
    if normalized:  # softmax( … / √d_k) is one step: linked at its "/ √d_k)" end
        terms["softmax"] = terms.pop("w2")
        terms["softmax"].partner = terms.pop("w")
    for name in ("q", "k", "v", "z"):
        terms.pop(name, None)
    return formula, terms


def spread_labels(labels: list[VGroup], xs: list[float], gap: float = 0.3) -> None:
    """Put labels in one row, each as close to its x as it can be without overlapping,
    and the row within the frame."""
    order = sorted(range(len(labels)), key=lambda a: xs[a])
    right = -np.inf
    for a in order:
        lab = labels[a]
        left = max(xs[a] - lab.width / 2, right + gap)
        lab.set_x(left + lab.width / 2)
        right = left + lab.width
    row = VGroup(*labels)
    if row.get_right()[0] > SAFE_X:
        row.shift(LEFT * (row.get_right()[0] - SAFE_X))
    if row.get_left()[0] < -SAFE_X:
        fit_width(row, 2 * SAFE_X)
        row.set_x(0)


def make_vector_row(values: np.ndarray, key: str, index_map, theme: Theme, cell_w: float,
                    cell_h: float, record: Recorder, box_color: str,
                    col_labels: list[str] | None = None,
                    col_colors: list[str] | None = None) -> MatrixView:
    """One row of numbers (shortened with "…" beyond MAX_COLS), framed in its term's colour."""
    cols = min(values.shape[-1], MAX_COLS)
    layout = fit_cells(1, cols, cell_w * cols, cell_h, DECIMALS, max_font=26)
    mv = MatrixView(values[None, :], key=key, theme=theme, layout=layout, decimals=DECIMALS,
                    max_cols=MAX_COLS, record=record, heat=False, numbers_in_rows={0},
                    col_labels=col_labels, col_colors=col_colors, index_map=index_map)
    mv.frame = mv.row_box(0, box_color, buff=0.05, width=3)
    mv.add(mv.frame)
    return mv


def make_tag(tag: str, theme: Theme) -> VGroup:
    """The small muted note right of a row (one or two lines)."""
    lines = VGroup(*[make_text(line, 18, theme.muted) for line in tag.split("\n")])
    return lines.arrange(DOWN, buff=0.06, aligned_edge=LEFT)


def make_col_labels(mv: MatrixView, labels: list[str], colors: list[str]) -> VGroup:
    """Word labels over the columns; when a word is wider than its cell, the labels take
    turns on two levels so each may be up to two cells wide and still legible."""
    cells = [(c, mv.cell_at[(0, j)]) for c, j in enumerate(mv.cols) if j is not None]
    w = cells[0][1].width
    texts = [make_text(labels[j], 20, colors[j]) for j in (j for j in mv.cols if j is not None)]
    stagger = any(t.width > w * 0.98 for t in texts)
    out = VGroup()
    for k, ((_, cell), t) in enumerate(zip(cells, texts)):
        fit_width(t, w * (1.9 if stagger else 0.98))
        t.next_to(cell, UP, buff=0.08 + (0.32 if stagger and k % 2 else 0))
        out.add(t)
    return out


class SummaryScene(ChapterScene):
    chapter = 9
    title_en = "Summary: the whole formula"
    title_zh = "总结：完整的公式"
    reads_trace = ("query_tokens", "key_tokens", "heads", "head_index", "focus", "normalized",
                   "cross", "source", "model_name", "layer", "seed", "output", "W_O")
    reads_focus = True

    def construct(self) -> None:
        self.show_title()
        formula, terms = self.show_formula()
        self.show_chapter_links(formula, terms)
        self.show_followed_rows()
        self.show_multi_head()
        self.finish(2.0)

    # ---- the formula ---------------------------------------------------------------------
    def show_formula(self) -> tuple[Text, dict]:
        t = self.trace
        formula, terms = make_formula(self.theme, t.normalized)
        fit_width(formula, 2 * SAFE_X)
        formula.next_to(self.title_mob, DOWN, buff=0.45).set_x(0)
        if t.normalized:
            en = "Everything this video showed, in one line: Attention(Q, K, V) = softmax(Q·Kᵀ / √d_k)·V."
            zh = "这个视频展示的一切，写成一行：Attention(Q, K, V) = softmax(Q·Kᵀ / √d_k)·V。"
        else:
            en = ("Without softmax, as in the article: Z = (Q·Kᵀ)·V. "
                  "The raw factors weigh V directly (no √d_k, no softmax).")
            zh = "没有 softmax，和文章中一样：Z = (Q·Kᵀ)·V。原始因子直接给 V 加权（不除以 √d_k，也不做 softmax）。"
        self.say(en, zh)
        anims = [Write(formula)]
        self.play(*anims, run_time=1.5)
        self.wait(0.8)
        return formula, terms

    def chapter_labels(self) -> dict[str, tuple[str, str]]:
        """Term → (label, colour): where in the video each term was computed."""
        th, bias = self.theme, self.trace.head.has_bias
        q = "Q = X·W_Q" + (" + b_Q" if bias else "")
        if self.settings.language == "zh":
            out = {"Q": (f"第2章：{q}", th.q), "K": ("第3章：因子矩阵", th.k),
                   "softmax": ("第5章：缩放、softmax", th.w), "V": ("第6章：加权求和", th.v)}
        else:
            out = {"Q": (f"ch. 2: {q}", th.q), "K": ("ch. 3: factor matrix", th.k),
                   "softmax": ("ch. 5: scale, softmax", th.w), "V": ("ch. 6: weighted sum", th.v)}
        return out

    def show_chapter_links(self, formula: Text, terms: dict) -> None:
        info = self.chapter_labels()
        names = [n for n in ("Q", "K", "softmax", "V") if n in terms]
        labels = [fit_width(make_text(info[n][0], 20, info[n][1]), 3.4) for n in names]
        for lab in labels:
            lab.next_to(formula, DOWN, buff=0.6)
        spread_labels(labels, [terms[n].get_x() for n in names])
        marked = [(n, terms[n]) for n in names]
        if "softmax" in terms:
            marked.append(("softmax", terms["softmax"].partner))
        base = formula.get_bottom()[1] - 0.06
        links = VGroup(*[
            Line([terms[n].get_x(), base - 0.05, 0], lab.get_top() + UP * 0.06,
                 stroke_color=info[n][1], stroke_width=2)
            for n, lab in zip(names, labels)])
        underlines = VGroup(*[
            Line([g.get_left()[0], base, 0], [g.get_right()[0], base, 0],
                 stroke_color=info[n][1], stroke_width=3) for n, g in marked])
        self.links = VGroup(*labels, links, underlines)
        note = None
        if not self.trace.normalized:  # the article's simplification, said on screen too
            note = make_text(self.tr("as in the article: no √d_k, no softmax (ch. 5 skipped)",
                                     "与文章相同：不除以 √d_k，不做 softmax（跳过第5章）"),
                             20, self.theme.muted)
            fit_width(note, 2 * SAFE_X).next_to(VGroup(*labels), DOWN, buff=0.2).set_x(0)
            self.links.add(note)
        if self.trace.normalized:
            en = ("Each term is a step we took: Q from the linear layer (ch. 2), Q·Kᵀ the factor "
                  "matrix (ch. 3), scaling and softmax (ch. 5), the weighted sum of V (ch. 6).")
            zh = "每一项都是我们走过的一步：Q 来自线性层（第2章），Q·Kᵀ 是因子矩阵（第3章），缩放和 softmax（第5章），V 的加权求和（第6章）。"
        else:
            en = ("Each term is a step we took: Q from the linear layer (ch. 2), Q·Kᵀ the factor "
                  "matrix (ch. 3), the weighted sum of V (ch. 6); ch. 5 was skipped.")
            zh = "每一项都是我们走过的一步：Q 来自线性层（第2章），Q·Kᵀ 是因子矩阵（第3章），V 的加权求和（第6章）；跳过了第5章。"
        self.say(en, zh)
        self.play(Create(underlines), Create(links), FadeIn(VGroup(*labels)),
                  *([FadeIn(note)] if note is not None else []), run_time=1.0)
        self.wait(1.6)

    # ---- the followed word's rows ---------------------------------------------------------
    def row_specs(self, record: Recorder, shrink: float = 0.0) -> list[tuple[VGroup, MatrixView, str]]:
        """(name tag, vector, chapter tag) for Q_i, the weights row, Z_i (and the output);
        `shrink` takes that much off each row's height."""
        t, th, i = self.trace, self.theme, self.focus
        h = t.head
        zh = self.settings.language == "zh"
        word, wcol = self.q_labels[i], self.q_colors[i]
        n_rows = 3 + (len(t.heads) > 1)
        # more keys than fit: the largest weights first (sentence order otherwise)
        order = (sorted(range(t.n_k), key=lambda j: (-h.weights[i, j], j)) if t.n_k > MAX_COLS
                 else list(range(t.n_k)))
        tags = [self.tr("ch. 2", "第2章"),
                self.tr("ch. 5", "第5章") if t.normalized else self.tr("ch. 3", "第3章"),
                self.tr("ch. 6", "第6章")]
        if order != list(range(t.n_k)):
            tags[1] += "\n" + self.tr("largest first", "从大到小")
        if n_rows == 4:
            tags.append("MultiHead =\n" + self.multi_head_text())
        tag_w = max(make_tag(tag, th).width for tag in tags)
        avail_w = 2 * SAFE_X - 2.6 - tag_w - 0.7  # name tags left, chapter tags right
        cols = max(min(h.Q.shape[1], MAX_COLS), min(t.n_k, MAX_COLS),
                   min(t.d_model, MAX_COLS) if n_rows == 4 else 1)
        cell_w = min(1.05, avail_w / cols)
        top = self.links.get_bottom()[1] - 0.35
        reserve = 0.2 + 0.7 + 0.25 * (n_rows - 1)  # margin, word labels (two levels), gaps
        cell_h = min(0.55, (top - SAFE_BOTTOM - reserve) / n_rows) - shrink
        kw = {"theme": th, "cell_w": cell_w, "cell_h": cell_h, "record": record}
        size = max(MIN_FONT, min(26, cell_h * 0.62 / 0.0106))
        specs = []
        Q = make_vector_row(h.Q[i], "Q", lambda a, m: (i, m), box_color=th.q, **kw)
        specs.append((make_sub("Q", word, size, th.q, wcol), Q, tags[0]))
        w_name = ("weights" if t.normalized else "Q·Kᵀ") if not zh else ("权重" if t.normalized else "Q·Kᵀ")
        W = make_vector_row(h.weights[i, order], "weights", lambda a, c: (i, order[c]),
                            box_color=th.w, **kw)
        W.add(make_col_labels(W, [self.k_labels[j] for j in order],
                              [self.k_colors[j] for j in order]))
        for c, j in enumerate(order):
            if not h.mask[i, j] and (0, c) in W.cell_at:  # masked: greyed, weight exactly 0
                W.cell_at[(0, c)].set_fill(th.grid, 0.6)
                W.numbers[(0, c)].set_color(th.muted)
        specs.append((make_sub(w_name, word, size * 0.8, th.w, wcol), W, tags[1]))
        Z = make_vector_row(h.Z[i], "Z", lambda a, m: (i, m), box_color=th.v, **kw)
        specs.append((make_sub("Z", word, size, th.v, wcol), Z, tags[2]))
        if n_rows == 4:
            out_row = make_vector_row(t.output[i], "output", lambda a, m: (i, m), box_color=th.text, **kw)
            specs.append((make_sub("out", word, size * 0.8, th.text, wcol), out_row, tags[3]))
        return specs

    def make_rows(self, record: Recorder, shrink: float = 0.0) -> VGroup:
        """The followed word's rows, one under the other, vectors on one left edge."""
        specs = self.row_specs(record, shrink)
        rows = VGroup()
        for name, vec, tag in specs:
            tag_t = make_tag(tag, self.theme)
            row = VGroup(name, vec, tag_t)
            name.next_to(vec.grid_only(), LEFT, buff=0.3)
            tag_t.next_to(vec.grid_only(), RIGHT, buff=0.3)
            rows.add(row)
        rows.arrange(DOWN, buff=0.25, aligned_edge=LEFT)
        for row in rows:  # align the vectors (not the name tags) on one left edge
            row.shift(RIGHT * (rows[0][1].grid_only().get_left()[0] - row[1].grid_only().get_left()[0]))
        return rows

    def show_followed_rows(self) -> None:
        t, h, i = self.trace, self.trace.head, self.focus
        room = self.links.get_bottom()[1] - 0.35 - (SAFE_BOTTOM + 0.15)
        trial = self.make_rows(Recorder())  # measure first; numbers are recorded once, below
        n_rows = len(self.row_specs(Recorder()))
        shrink = max(0.0, (trial.height - room) / n_rows)
        rows = self.make_rows(self.drawn, shrink)
        fit_width(rows, 2 * SAFE_X)
        if rows.height > room:  # a last resort
            rows.scale_to_fit_height(room)
        rows.next_to(self.links, DOWN, buff=0.35).set_x(0)
        self.rows = rows
        # Z as the sum its weights make: the largest terms, generated from the numbers
        allowed = [j for j in range(t.n_k) if h.mask[i, j]]
        ranked = sorted(allowed, key=lambda j: (-abs(h.weights[i, j]), j))
        terms = []
        for j in ranked[:3]:
            w = fmt(h.weights[i, j], DECIMALS)
            self.drawn("weights", (i, j), w)
            terms.append(f"{w if not w.startswith('−') else f'({w})'}·V({self.k_labels[j]})")
        more = " + …" if len(ranked) > 3 else "."
        word = self.quoted(self.focus_word)
        self.say(f"For {word}: Z = " + " + ".join(terms) + more,
                 f"对{word}来说：Z = " + " + ".join(terms) + more.replace(".", "。"))
        vectors = rows[:3]
        self.play(LaggedStart(*[FadeIn(r, shift=0.2 * UP) for r in vectors], lag_ratio=0.3),
                  run_time=1.6)
        self.wait(2.2)

    def multi_head_text(self) -> str:
        h = len(self.trace.heads)
        zs = (", ".join(f"Z{str(k + 1).translate(SUBSCRIPTS)}" for k in range(h)) if h <= 4
              else f"Z₁, …, Z{str(h).translate(SUBSCRIPTS)}")
        return f"Concat({zs})·W_O"

    def show_multi_head(self) -> None:
        t = self.trace
        h = len(t.heads)
        if h <= 1:
            return
        line = self.rows[-1]  # the output row: Concat(Z₁…Z_h)·W_O
        zh_ = str(h).translate(SUBSCRIPTS)
        en = (f"This layer has {h} heads; we followed head {t.head_index}. Each head computes its "
              f"own Z; MultiHead = Concat(Z₁…Z{zh_})·W_O joins them into the output row.")
        zh = (f"这一层有 {h} 个头；我们跟随的是第 {t.head_index} 个头。每个头算出自己的 Z；"
              f"MultiHead = Concat(Z₁…Z{zh_})·W_O 把它们拼接成输出行。")
        self.say(en, zh)
        self.play(FadeIn(line), run_time=0.6)
        self.wait(2.0)
