"""The summary: Attention(Q, K, V) = softmax(Q·Kᵀ/√d_k)·V, each term in its colour and
tied back to the chapter that showed it (when the video played it), with the followed
word's real rows below."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
from attention_video.attncore.attention import ranking
from attention_video.attncore.chapters import number
from attention_video.fastmanim import *  # noqa: F403
from attention_video.scenes.base import ChapterScene
from attention_video.scenes.catalogue import Translate
from attention_video.scenes.context import ChapterContext
from attention_video.scenes.labels import subscript
from attention_video.scenes.layout import (
    BUFF_BLOCK,
    BUFF_BLOCK_WIDE,
    BUFF_MEDIUM,
    BUFF_ROW,
    BUFF_SECTION,
    BUFF_SMALL,
    BUFF_SNUG,
    BUFF_TIGHT,
    LABEL_FILL,
    SAFE_BOTTOM,
    SAFE_X,
    font_for_row,
)
from attention_video.scenes.precision import weight_decimals
from attention_video.scenes.rotary import PLAIN, TURNED, score_names
from attention_video.scenes.text import fit_width, fmt, make_text, typeset
from attention_video.scenes.themes import Theme
from attention_video.scenes.widgets import MatrixView, Recorder, fit_cells, make_sub

MAX_COLS = 8  # long vectors: first ones, "…", last one
DECIMALS = 2
FORMULA_FONT = 44
LINK_FONT = 20  # the chapter labels under the formula
LINK_MAX_W = 3.4
LINK_DROP = 0.6  # from the formula down to its chapter labels
ROWS_DROP = BUFF_BLOCK_WIDE  # from the chapter labels down to the followed word's rows
MAX_CELL_W, MAX_CELL_H = 1.05, 0.55  # a number's cell in those rows, at most
ROW_GAP = BUFF_MEDIUM  # between two rows
PART_GAP = BUFF_BLOCK  # between a row's name, its numbers and its chapter note
EDGE_ROOM = BUFF_SMALL  # spare width at the frame's edges
ROWS_MARGIN = BUFF_ROW  # spare height above the caption
VECTOR_FRAME_BUFF = 0.05  # a vector row's frame, round it: a lone row has no neighbours for
#                           its frame to cover, so it stands wider than a grid row's BUFF_BOX
WORD_LABELS_H = 0.7  # the key words over the weights row (two levels when staggered)
STAGGER = 0.32  # how much higher every other word sits when words are wider than cells
SUM_TERMS = 3  # terms of Z written out in the caption


# ---- the formula --------------------------------------------------------------------------
@dataclass
class FormulaTerm:
    """A term of the formula that is tied to the chapter that computed it."""

    glyphs: VGroup  # its characters in the formula; the chapter label hangs below them
    label: str  # where it was computed: "ch. 2: Q = X·W_Q"
    color: str
    also: VGroup | None = None  # another part underlined with it ("softmax(" with "/ √d_k)")


@dataclass
class Formula:
    line: VGroup  # the whole formula: one Text on one baseline (its √ drawn with its bar)
    terms: list[FormulaTerm]  # in reading order


SQRT_D_K = "√dₖ"  # drawn as one piece with its bar over dₖ (scenes.text.join_radicals)


def spans(text: str, parts: list[str]) -> list[tuple[int, int]]:
    """Locate each substring in order in text: [(start, end)].
    Text has one submobject per character (spaces included), so these index glyphs."""
    out, at = [], 0
    for sub in parts:
        start = text.index(sub, at)
        out.append((start, start + len(sub)))
        at = start + len(sub)
    return out


Refs = dict[str, "int | None"]  # a chapter's slug → its number, None when the video skips it


def chapter_label(ref: int | None, tr: Translate, what: str) -> str:
    """'ch. 2: what' when the video played the chapter, else just 'what' (`what` is in the
    caption language already)."""
    if ref is None:
        return what
    return tr("ch. {ref}: {what}", ref=ref, what=what)


def make_formula(ctx: ChapterContext, normalized: bool, has_bias: bool, refs: Refs,
                 size: float = FORMULA_FONT, rotary: bool = False) -> Formula:
    """The formula as one Text (one baseline), its terms coloured, each linked to the
    chapter that computed it (`refs`: the chapters the video plays). `rotary`: Q is X·W_Q
    turned by RoPE (a decoder with rotary positions)."""
    q, k, v, w = ctx.theme.q, ctx.theme.k, ctx.theme.v, ctx.theme.w
    n = TURNED if rotary else PLAIN  # the rows the scores use: Q_rot, K_rot with RoPE
    if normalized:  # (substring, colour, the term it is, if it gets a chapter label)
        text = f"Attention(Q, K, V) = softmax({n.scores} / {SQRT_D_K})·V"
        parts = [("Q", q, ""), ("K", k, ""), ("V", v, ""), ("softmax(", w, "softmax("),
                 (n.q, q, "Q"), (f"{n.k}ᵀ", k, "K"), (f"/ {SQRT_D_K})", w, "softmax"), ("V", v, "V")]
    else:
        text = f"Z = ({n.scores})·V"
        parts = [("Z", ctx.theme.z, ""), (n.q, q, "Q"), (f"{n.k}ᵀ", k, "K"), ("V", v, "V")]
    # the glyphs are found by their place in the text as drawn: typeset (Q_rot is Qᵣₒₜ, in
    # Unicode's small letters, one glyph each; scenes.text.typeset)
    text = typeset(text)[0]
    parts = [(typeset(part)[0], color, term) for part, color, term in parts]
    written = make_text(text, size, ctx.theme.text)
    glyphs = {}
    for (start, end), (_, color, term) in zip(spans(text, [p[0] for p in parts]), parts):
        part = written[start:end].set_color(color)
        if term:
            glyphs[term] = part
    line = VGroup(written)
    q_def = "Q = X·W_Q" + (" + b_Q" if has_bias else "")
    if rotary:
        q_def = f"{n.q} = RoPE({q_def.removeprefix('Q = ')})"
    terms = [FormulaTerm(glyphs["Q"], chapter_label(refs["linear"], ctx.tr, q_def), q),
             FormulaTerm(glyphs["K"], chapter_label(refs["factor"], ctx.tr, ctx.tr("factor matrix")), k)]
    if normalized:  # softmax( … / √d_k) is one step: linked at its "/ √d_k)" end
        terms.append(FormulaTerm(glyphs["softmax"],
                                 chapter_label(refs["softmax"], ctx.tr, ctx.tr("scale, softmax")), w,
                                 also=glyphs["softmax("]))
    terms.append(FormulaTerm(glyphs["V"], chapter_label(refs["weighted_sum"], ctx.tr,
                                                        ctx.tr("weighted sum")), v))
    return Formula(line, terms)


@dataclass
class ChapterLinks:
    """Under the formula: each term underlined, a line down to its chapter label."""

    labels: VGroup
    lines: VGroup
    underlines: VGroup
    note: Text | None  # without softmax: the article's simplification, said on screen
    whole: VGroup


def spread_labels(labels: list[VGroup], xs: list[float], gap: float = BUFF_BLOCK) -> None:
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


def make_chapter_links(formula: Formula, ctx: ChapterContext,
                       normalized: bool) -> ChapterLinks:
    """The chapter labels below the placed formula, tied to its terms."""
    terms = formula.terms
    labels = [fit_width(make_text(term.label, LINK_FONT, term.color), LINK_MAX_W)
              for term in terms]
    for lab in labels:
        lab.next_to(formula.line, DOWN, buff=LINK_DROP)
    spread_labels(labels, [term.glyphs.get_x() for term in terms])
    base = formula.line.get_bottom()[1] - 0.06
    lines = VGroup(*[
        Line([term.glyphs.get_x(), base - 0.05, 0], lab.get_top() + UP * 0.06,
             stroke_color=term.color, stroke_width=2)
        for term, lab in zip(terms, labels)])
    marked = ([(term.glyphs, term.color) for term in terms]
              + [(term.also, term.color) for term in terms if term.also is not None])
    underlines = VGroup(*[
        Line([g.get_left()[0], base, 0], [g.get_right()[0], base, 0],
             stroke_color=color, stroke_width=3) for g, color in marked])
    labels = VGroup(*labels)
    whole = VGroup(labels, lines, underlines)
    note = None
    if not normalized:
        skipped = number("softmax")
        note = make_text(ctx.tr("as in the article: no division by √dₖ, no softmax (ch. {skipped} skipped)",
                            skipped=skipped),
                         LINK_FONT, ctx.theme.muted)
        fit_width(note, 2 * SAFE_X).next_to(labels, DOWN, buff=BUFF_ROW).set_x(0)
        whole.add(note)
    return ChapterLinks(labels, lines, underlines, note, whole)


# ---- the followed word's rows -------------------------------------------------------------
@dataclass
class VectorRow:
    """One row of numbers (shortened with "…" beyond MAX_COLS) framed in its term's
    colour, with the key words over its columns for the weights."""

    view: MatrixView
    frame: Rectangle
    words: VGroup  # empty unless the row has word labels
    group: VGroup  # all of the above


def make_vector_row(values: np.ndarray, key: str, index_map, ctx: ChapterContext, cell_w: float,
                    cell_h: float, box_color: str,
                    words: tuple[list[str], list[str]] | None = None,
                    mask: np.ndarray | None = None, decimals: int = DECIMALS) -> VectorRow:
    """`words`: (labels, colours) over the columns, in the order of `values`; `mask`
    (same order): False where attending is not allowed (greyed, its exact 0 muted);
    `decimals`: its quantity's precision (scenes.precision)."""
    cols = min(values.shape[-1], MAX_COLS)
    layout = fit_cells(1, cols, cell_w * cols, cell_h, decimals, max_font=26)
    view = MatrixView(values[None, :], key=key, theme=ctx.theme, layout=layout, decimals=decimals,
                      max_cols=MAX_COLS, record=ctx.record, heat=False, numbers_in_rows={0},
                      index_map=index_map, mask=None if mask is None else mask[None, :],
                      masked_numbers=True)
    frame = view.row_box(0, box_color, buff=VECTOR_FRAME_BUFF, width=3)
    labels = make_col_words(view, *words) if words is not None else VGroup()
    return VectorRow(view, frame, labels, VGroup(view, frame, labels))


def make_col_words(view: MatrixView, labels: list[str], colors: list[str]) -> VGroup:
    """Word labels over the columns; when a word is wider than its cell, the labels take
    turns on two levels so each may be up to two cells wide and still legible."""
    shown = [j for j in view.cols if j is not None]
    cells = [view.cell_at[(0, j)] for j in shown]
    w = cells[0].width
    texts = [make_text(labels[j], 20, colors[j]) for j in shown]
    stagger = any(t.width > w * 0.98 for t in texts)
    out = VGroup()
    for k, (cell, t) in enumerate(zip(cells, texts)):
        fit_width(t, w * (1.9 if stagger else 0.98))
        t.next_to(cell, UP, buff=BUFF_SNUG + (STAGGER if stagger and k % 2 else 0))
        out.add(t)
    return out


def make_tag(tag: str, theme: Theme) -> VGroup:
    """The small muted note right of a row (one or two lines)."""
    lines = VGroup(*[make_text(line, 18, theme.muted) for line in tag.split("\n")])
    return lines.arrange(DOWN, buff=BUFF_TIGHT, aligned_edge=LEFT)


@dataclass
class RowSpec:
    """One of the followed word's rows before it is laid out."""

    name: VGroup  # the symbol with the word as subscript, e.g. Z with "milk"
    vector: VectorRow
    tag: str  # the note right of it: the chapter that computed it


class SummaryScene(ChapterScene):
    slug = "summary"

    def construct(self) -> None:
        self.show_title()
        formula = self.show_formula()
        self.show_chapter_links(formula)
        self.show_followed_rows()
        self.show_multi_head()
        self.finish(2.0)

    # ---- the formula ---------------------------------------------------------------------
    @property
    def refs(self) -> Refs:
        """The chapters the formula's terms come from, numbered when the video plays them."""
        return {slug: self.chapter_ref(slug) for slug in self.entry.reads_plan}

    def show_formula(self) -> Formula:
        t = self.trace
        formula = make_formula(self.ctx, t.normalized, t.head.has_bias, self.refs,
                               rotary=t.rope is not None)
        fit_width(formula.line, 2 * SAFE_X)
        formula.line.next_to(self.title_mob, DOWN, buff=BUFF_SECTION).set_x(0)
        names = score_names(t)
        if t.rope is not None and t.normalized:
            self.say(self.tr("Everything this video showed, in one line: Attention(Q, K, V) = "
                             "softmax({scores} / √dₖ)·V, where {q} and {k} are Q and K turned by "
                             "RoPE.", scores=names.scores, q=names.q, k=names.k))
        elif t.rope is not None:
            self.say(self.tr("Without softmax, as in the article: Z = ({scores})·V, where {q} and {k} "
                             "are Q and K turned by RoPE. The raw factors weigh V directly (no "
                             "division by √dₖ, no softmax).",
                             scores=names.scores, q=names.q, k=names.k))
        elif t.normalized:
            self.say(self.tr("Everything this video showed, in one line: Attention(Q, K, V) = softmax(Q·Kᵀ / "
                             "√dₖ)·V."))
        else:
            self.say(self.tr("Without softmax, as in the article: Z = (Q·Kᵀ)·V. The raw factors weigh V "
                             "directly (no division by √dₖ, no softmax)."))
        self.play(Write(formula.line), run_time=1.5)
        self.wait(0.8)
        return formula

    def show_chapter_links(self, formula: Formula) -> None:
        links = make_chapter_links(formula, self.ctx, self.trace.normalized)
        self.links = links.whole
        self.say(self.steps_caption())
        self.play(Create(links.underlines), Create(links.lines), FadeIn(links.labels),
                  *([FadeIn(links.note)] if links.note is not None else []), run_time=1.0)
        self.wait(1.6)

    def steps_caption(self) -> str:
        """Each term named with the chapter that showed it, where the video played it."""
        refs, normalized = self.refs, self.trace.normalized
        tr = self.tr
        steps = [("linear", tr("Q from the linear layer")),
                 ("factor", tr("{scores} the factor matrix", scores=score_names(self.trace).scores))]
        if normalized:
            steps.append(("softmax", tr("scaling and softmax")))
        steps.append(("weighted_sum", tr("the weighted sum of V")))
        named = tr.context("comma", ", ").join(
            tr("{what} (ch. {ref})", what=what, ref=refs[slug]) if refs[slug] else what
            for slug, what in steps)
        if any(refs[slug] for slug, _ in steps):
            text = tr("Each term is a step we took: {steps}", steps=named)
        else:
            text = tr("Each term is one step: {steps}", steps=named)
        if normalized:
            return text + tr(".")
        return text + tr("; ch. {n} was skipped.", n=number("softmax"))

    # ---- the followed word's rows ---------------------------------------------------------
    def key_order(self) -> list[int]:
        """The keys in the weights row: the largest weights first when not all fit
        (sentence order otherwise)."""
        t, i = self.trace, self.focus
        if t.n_k <= MAX_COLS:
            return list(range(t.n_k))
        return list(ranking(t.head.weights[i], np.ones(t.n_k, dtype=bool)))

    def row_tags(self, reordered: bool) -> list[str]:
        """The note right of each row: the chapter that computed it."""
        t = self.trace
        refs = self.refs
        steps = [("linear", self.tr("linear layer")),
                 ("softmax", "softmax") if t.normalized else ("factor", score_names(t).scores),
                 ("weighted_sum", self.tr("weighted sum"))]
        tags = [self.tr("ch. {refs}", refs=refs[slug]) if refs[slug] else what
                for slug, what in steps]
        if reordered:
            tags[1] += "\n" + self.tr("largest first")
        if len(t.heads) > 1:
            tags.append("MultiHead =\n" + self.multi_head_text())
        return tags

    def row_specs(self, record: Recorder, shrink: float = 0.0) -> list[RowSpec]:
        """Q_i, the weights row, Z_i (and the multi-head output) of the followed word;
        `shrink` takes that much off each row's height."""
        t, th, i = self.trace, self.theme, self.focus
        h = t.head
        multi = len(t.heads) > 1
        n_rows = 3 + multi
        order = self.key_order()
        tags = self.row_tags(order != list(range(t.n_k)))
        top = self.links.get_bottom()[1] - ROWS_DROP
        reserve = ROWS_MARGIN + WORD_LABELS_H + ROW_GAP * (n_rows - 1)
        cell_h = min(MAX_CELL_H, (top - SAFE_BOTTOM - reserve) / n_rows) - shrink
        size = font_for_row(cell_h, LABEL_FILL, hi=26)
        word, word_col = self.q_labels[i], self.q_colors[i]
        weights_name = self.tr("weights") if t.normalized else score_names(t).scores
        names = [make_sub(score_names(t).q, word, size, th.q, word_col),
                 make_sub(weights_name, word, size * 0.8, th.w, word_col),
                 make_sub("Z", word, size, th.z, word_col)]
        if multi:
            names.append(make_sub("out", word, size * 0.8, th.text, word_col))
        name_w = max(name.width for name in names)
        tag_w = max(make_tag(tag, th).width for tag in tags)
        avail_w = 2 * SAFE_X - name_w - tag_w - 2 * PART_GAP - EDGE_ROOM
        cols = max(min(h.Q.shape[1], MAX_COLS), min(t.n_k, MAX_COLS),
                   min(t.d_model, MAX_COLS) if multi else 1)
        kw = {"ctx": dataclasses.replace(self.ctx, record=record),  # (a trial fit records apart)
              "cell_w": min(MAX_CELL_W, avail_w / cols), "cell_h": cell_h}
        vectors = [
            make_vector_row(h.Q[i], "Q", lambda _r, m: (i, m), box_color=th.q, **kw),
            make_vector_row(h.weights[i, order], "weights", lambda _r, c: (i, order[c]),
                            box_color=th.w,
                            words=([self.k_labels[j] for j in order],
                                                   [self.k_colors[j] for j in order]),
                            mask=h.mask[i, order], decimals=weight_decimals(t.normalized), **kw),
            make_vector_row(h.Z[i], "Z", lambda _r, m: (i, m), box_color=th.z, **kw),
        ]
        if multi:
            vectors.append(make_vector_row(t.output[i], "output", lambda _r, m: (i, m),
                                           box_color=th.text, **kw))
        return [RowSpec(name, vec, tag) for name, vec, tag in zip(names, vectors, tags)]

    def make_rows(self, record: Recorder, shrink: float = 0.0) -> VGroup:
        """The followed word's rows, one under the other, vectors on one left edge."""
        specs = self.row_specs(record, shrink)
        rows = VGroup()
        for spec in specs:
            grid = spec.vector.view.grid_only()
            tag = make_tag(spec.tag, self.theme).next_to(grid, RIGHT, buff=PART_GAP)
            spec.name.next_to(grid, LEFT, buff=PART_GAP)
            rows.add(VGroup(spec.name, spec.vector.group, tag))
        rows.arrange(DOWN, buff=ROW_GAP, aligned_edge=LEFT)
        left = specs[0].vector.view.grid_only().get_left()[0]
        for row, spec in zip(rows, specs):  # align the vectors (not the names) on one edge
            row.shift(RIGHT * (left - spec.vector.view.grid_only().get_left()[0]))
        return rows

    def show_followed_rows(self) -> None:
        h, i = self.trace.head, self.focus
        room = self.links.get_bottom()[1] - ROWS_DROP - (SAFE_BOTTOM + 0.15)
        trial = self.make_rows(Recorder())  # measure first; numbers are recorded once, below
        shrink = max(0.0, (trial.height - room) / len(trial))
        rows = self.make_rows(self.drawn, shrink)
        fit_width(rows, 2 * SAFE_X)
        if rows.height > room:  # a last resort
            rows.scale_to_fit_height(room)
        rows.next_to(self.links, DOWN, buff=ROWS_DROP).set_x(0)
        self.rows = rows
        # Z as the sum its weights make: the largest terms, generated from the numbers
        ranked = h.ranking(i, by_size=True)
        terms = []
        for j in ranked[:SUM_TERMS]:
            w = fmt(h.weights[i, j], weight_decimals(self.trace.normalized))
            self.drawn("weights", (i, j), w)
            terms.append(f"{w if not w.startswith('−') else f'({w})'}·V({self.k_labels[j]})")
        word = self.quoted(self.focus_word)
        if len(ranked) > SUM_TERMS:
            self.say(self.tr("For {word}: Z = {terms} + …", word=word, terms=" + ".join(terms)))
        else:
            self.say(self.tr("For {word}: Z = {terms}.", word=word, terms=" + ".join(terms)))
        self.play(LaggedStart(*[FadeIn(r, shift=0.2 * UP) for r in rows[:3]], lag_ratio=0.3),
                  run_time=1.6)
        self.wait(2.2)

    # ---- several heads --------------------------------------------------------------------
    def multi_head_text(self) -> str:
        h = len(self.trace.heads)
        # numbered from 0, as the heads are everywhere else ("we followed head 0": Z₀)
        zs = (", ".join(f"Z{subscript(k)}" for k in range(h)) if h <= 4
              else f"Z₀, …, Z{subscript(h - 1)}")
        return f"Concat({zs})·W_O"

    def show_multi_head(self) -> None:
        t = self.trace
        h = len(t.heads)
        if h <= 1:
            return
        last = subscript(h - 1)
        self.say(self.tr("This layer has {h} heads; we followed head {head_index}. Each head computes its "
                         "own Z; MultiHead = Concat(Z₀…Z{last})·W_O joins them into the output row.",
                         h=h, head_index=t.head_index, last=last))
        self.play(FadeIn(self.rows[-1]), run_time=0.6)  # the output row: Concat(Z₀…Z_{h−1})·W_O
        self.wait(2.0)
