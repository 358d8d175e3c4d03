"""Chapter `linear` · Linear layers: X·W_Q, X·W_K, X·W_V give Q, K, V, one row per word.

With RoPE (trace.rope), Q and K here are the rows before their turn, and the chapter ends
with the turn that makes Q_rot and K_rot, the rows the scores use (scenes.rotary.show_rope).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from attention_video.attncore.trace import AttentionTrace
from attention_video.fastmanim import *  # noqa: F403
from attention_video.scenes.base import ChapterScene
from attention_video.scenes.context import ChapterContext
from attention_video.scenes.layout import (
    BUFF_BOX,
    BUFF_LABEL,
    BUFF_LARGE,
    BUFF_MEDIUM,
    BUFF_NOTE,
    BUFF_TIGHT,
    SAFE_BOTTOM,
    SAFE_X,
    STAGE_TOP,
    text_width,
)
from attention_video.scenes.rotary import show_rope
from attention_video.scenes.text import fit_width, fmt, fmt_row, make_text
from attention_video.scenes.widgets import (
    CellLayout,
    MatrixView,
    fit_cells,
    label_width,
    make_matrix,
    make_row_vector,
    shown_columns,
)

LAYERS = {  # result → (input side, weight name, theme colour attribute)
    "Q": ("query", "W_Q", "q"),
    "K": ("key", "W_K", "k"),
    "V": ("key", "W_V", "v"),
}
ROW_BOX_BUFF = BUFF_BOX  # a followed row's box, round it (MatrixView.row_box's)
MAX_COLS, MAX_ROWS = 6, 8  # wider or taller matrices are folded ("…", "⋮")
STAGE_BUFF = BUFF_MEDIUM  # between a matrix and the "·" or "=" beside it
DOT_FONT, EQ_FONT = 40, 36  # the "·" and "=" of X · W = R
TAG_FONT = 28  # "X", "W_Q", "Q" above their matrices
TAG_ROOM = 1.25  # above the grids: the names; below W: "learned" and its shape
READOUT_ROOM = 0.75  # below the stage: the followed row read out large (heat maps only)
READOUT_LABEL_ROOM = 2.5  # left of the read-out row: its label, e.g. "Q[milk]"
SHOWN_NUMBERS = 4  # numbers of the followed row quoted in the caption
ENTRY_ROOM = 1.05  # below the stage: one entry of Q made term by term (two lines)
ENTRY_FONT = 22
ENTRY_TERMS = 6  # terms written out; wider rows show the first ENTRY_TERMS − 1, then "…"
ENTRY_COLUMN = 0  # the column of W_Q whose entry is made before the viewer's eyes
ROWS_GAP = BUFF_LARGE  # between Q, K and V side by side at the end
ROWS_TAG_ROOM = 0.9  # above Q, K and V side by side: their names
# Beside each of Q, K and V: its row labels and the gap after it. Not the measured labels:
# long words then make the row wider and fit_width shrinks it all a little, which keeps
# the numbers legible where cells sized around 1.9-wide labels would only show colours.
ROWS_LABEL_ROOM = 1.2


@dataclass
class LayerStage:
    """X · W = R for one linear layer, with the names and notes around it."""

    X: MatrixView
    W: MatrixView
    R: MatrixView
    x_tag: Text  # "X" ("X (target)"/"X (source)" in cross-attention)
    w_tag: Text  # "W_Q"
    r_tag: Text  # "Q"
    dot: Text
    eq: Text
    learned: Text  # "learned" below W
    shape: Text  # "d × d_k" below that
    whole: VGroup

    def layer_parts(self) -> list[Mobject]:
        """What belongs to this layer alone (X may stay on screen for the next one)."""
        return [self.W, self.R, self.dot, self.eq, self.learned, self.shape, self.w_tag,
                self.r_tag]


def stage_layout(trace: AttentionTrace, name: str, labels: list[str], top: float) -> CellLayout:
    """One cell size for X, W and R of the layer that makes `name`, so that X · W = R,
    its row labels and its notes fit between `top` and the caption."""
    w_name = LAYERS[name][1]
    d, dk = getattr(trace.head, w_name).shape
    n = trace.n_q if LAYERS[name][0] == "query" else trace.n_k
    rows = max(n, len(shown_columns(d, MAX_ROWS)))
    cols = len(shown_columns(d, MAX_COLS)) + 2 * len(shown_columns(dk, MAX_COLS))
    signs_w = text_width("·", DOT_FONT) + text_width("=", EQ_FONT) + 4 * STAGE_BUFF
    max_w = 2 * SAFE_X - label_width(labels) - signs_w
    layout = fit_cells(rows, cols, max_w, top - SAFE_BOTTOM - TAG_ROOM - ENTRY_ROOM, 2)
    if not layout.numbers:  # heat map: keep room below for the followed row read out large
        layout = fit_cells(rows, cols, max_w,
                           top - SAFE_BOTTOM - TAG_ROOM - max(READOUT_ROOM, ENTRY_ROOM), 2)
    return layout


def made(trace: AttentionTrace, name: str) -> tuple[np.ndarray, str]:
    """The rows X · W_name makes, and the key they are recorded under. With RoPE the trace's
    Q and K are the turned rows (what the scores use), so this chapter shows them before
    their turn (trace.rope); V is never turned."""
    rope = trace.rope
    if rope is None or name == "V":
        return getattr(trace.head, name), name
    if name == "Q":
        return rope.Q_before[trace.head_index], "Q_before"
    kv = trace.kv_heads[trace.head_index] if trace.kv_heads is not None else trace.head_index
    return rope.K_before[kv], "K_before"


def make_layer_stage(trace: AttentionTrace, name: str, labels: list[str], colors: list[str],
                     ctx: ChapterContext, top: float) -> LayerStage:
    """X · W = R for the layer that makes `name`, hanging from `top`, fitted above the
    caption. `labels`/`colors` are the words of its input side."""
    side, w_name, color_attr = LAYERS[name]
    X = trace.X_q if side == "query" else trace.X
    W = getattr(trace.head, w_name)
    R, r_key = made(trace, name)
    d, dk = W.shape
    layout = stage_layout(trace, name, labels, top)
    decimals = 1 if trace.on_grid else 2
    x_view = make_matrix(X, "X_q" if (side == "query" and trace.cross) else "X", ctx.theme, 0, 0,
                         decimals=decimals, row_labels=labels, row_colors=colors,
                         max_cols=MAX_COLS, record=ctx.record, layout=layout)
    w_view = make_matrix(W, w_name, ctx.theme, 0, 0, decimals=decimals, max_cols=MAX_COLS,
                         max_rows=MAX_ROWS, record=ctx.record, layout=layout)
    r_view = make_matrix(R, r_key, ctx.theme, 0, 0, decimals=2, max_cols=MAX_COLS, record=ctx.record,
                         layout=layout)
    dot, eq = make_text("·", DOT_FONT, ctx.theme.text), make_text("=", EQ_FONT, ctx.theme.text)
    row = VGroup(x_view, dot, w_view, eq, r_view).arrange(RIGHT, buff=STAGE_BUFF)
    for v in (x_view, w_view, r_view):  # matrices hang from a common top line
        v.align_to(x_view.grid_only(), UP)
    middle = x_view.grid_only().get_center()[1]
    dot.set_y(middle)
    eq.set_y(middle)

    color = getattr(ctx.theme, color_attr)
    x_name = "X" if not trace.cross else ("X (target)" if side == "query" else "X (source)")
    x_tag = make_text(x_name, TAG_FONT, ctx.theme.text, weight="BOLD")
    w_tag = make_text(w_name, TAG_FONT, color, weight="BOLD")
    r_tag = make_text(name, TAG_FONT, color, weight="BOLD")
    for tag, view in ((x_tag, x_view), (w_tag, w_view), (r_tag, r_view)):
        tag.next_to(view.grid_only(), UP, buff=BUFF_LABEL)
    learned = make_text(ctx.tr("learned") if trace.trained else
                        ctx.tr("learned (here still random)"),
                        20, color).next_to(w_view.grid_only(), DOWN, buff=BUFF_LABEL)
    shape = make_text(f"{d} × {dk}", 18, ctx.theme.muted).next_to(learned, DOWN, buff=BUFF_TIGHT)
    whole = VGroup(row, x_tag, w_tag, r_tag, learned, shape)
    fit_width(whole, 2 * SAFE_X)
    whole.set_x(0).align_to(UP * top, UP)
    return LayerStage(x_view, w_view, r_view, x_tag, w_tag, r_tag, dot, eq, learned, shape,
                      whole)


@dataclass
class EntryLine:
    """One entry of R made before the viewer's eyes: the row of X against one column of
    W, pair by pair (x × w + …), then the products and their sum, the entry's value."""

    pairs: VGroup  # "R[word, c] = x₁ × w₁ + x₂ × w₂ + …"
    sums: VGroup  # "= p₁ + p₂ + … (+ b) = value"
    value: Mobject  # the value, last in `sums`

    @property
    def group(self) -> VGroup:
        return VGroup(self.pairs, self.sums)


def signed(text: str) -> str:
    """A term of a sum as written: negatives in brackets, "(−0.32)"."""
    return f"({text})" if text.startswith("−") else text


def make_entry_line(trace: AttentionTrace, name: str, i: int, c: int, word: str, color: str,
                    ctx: ChapterContext, max_w: float) -> EntryLine:
    """R[i, c] = Σₘ X[i, m] · W[m, c] (+ b[c]) written out, every number recorded."""
    X = trace.X_q if name == "Q" else trace.X
    W, b = getattr(trace.head, LAYERS[name][1]), getattr(trace.head, f"b_{name}")
    terms = trace.projection_terms(name, i, c)  # (d_model,)
    d = len(terms)
    shown = list(range(d)) if d <= ENTRY_TERMS else list(range(ENTRY_TERMS - 1))
    x_dec = 1 if trace.on_grid else 2
    p_dec = 2 if trace.on_grid else 3
    pair_texts, product_texts = [], []
    for m in shown:
        x, w, prod = fmt(X[i, m], x_dec), fmt(W[m, c], x_dec), fmt(terms[m], p_dec)
        ctx.record("X_q" if (name == "Q" and trace.cross) else "X", (i, m), x)
        ctx.record(LAYERS[name][1], (m, c), w)
        ctx.record(f"xw_product_{name}", (i, m, c), prod)
        pair_texts.append(f"{signed(x)} × {signed(w)}")
        product_texts.append(signed(prod))
    more = " + …" if len(shown) < d else ""  # the caption says how many pairs
    R, r_key = made(trace, name)
    value = fmt(R[i, c], 2)
    ctx.record(r_key, (i, c), value)
    bias = ""
    if trace.head.has_bias:
        bt = fmt(b[c], 3)
        ctx.record(f"b_{name}", (c,), bt)
        bias = f" + b {signed(bt)}"
    head = make_text(f"{name}[{word}, {c + 1}] =", ENTRY_FONT, color)
    pairs = VGroup(head, make_text(" + ".join(pair_texts) + more, ENTRY_FONT, ctx.theme.text))
    pairs.arrange(RIGHT, buff=BUFF_NOTE)
    value_mob = make_text(value, ENTRY_FONT, color, weight="BOLD")
    sums = VGroup(make_text("= " + " + ".join(product_texts) + more
                            + bias + " =", ENTRY_FONT, ctx.theme.text), value_mob)
    sums.arrange(RIGHT, buff=BUFF_NOTE)
    VGroup(pairs, sums).arrange(DOWN, aligned_edge=LEFT, buff=BUFF_LABEL)
    sums.align_to(pairs[1], LEFT)
    line = EntryLine(pairs, sums, value_mob)
    fit_width(line.group, max_w)
    return line


@dataclass
class ShownLayer:
    """A layer on screen: its stage and the boxes around the followed word's rows."""

    stage: LayerStage
    boxes: VGroup


class LinearScene(ChapterScene):
    slug = "linear"

    def construct(self) -> None:
        self.show_title()
        self.top = STAGE_TOP
        shown = None
        for name in ("Q", "K", "V"):
            shown = self.show_layer(name, shown)
        self.show_three_rows()
        if self.trace.rope is not None:  # the rows above are X · W; the scores use them turned
            show_rope(self)  # Q_rot = RoPE(Q), K_rot = RoPE(K), before any score (scenes.rotary)
        self.finish()

    def words(self, side: str) -> tuple[list[str], list[str]]:
        """Labels and colours of the query side's or the key side's words."""
        if side == "query":
            return self.q_labels, self.q_colors
        return self.k_labels, self.k_colors

    def followed_row(self, name: str) -> int:
        """The followed word's row in this layer's input: its own row, or in cross-attention
        (keys and values come from the source sentence) the row of its partner."""
        if name == "Q" or not self.trace.cross:
            return self.focus
        return self.partner

    def show_layer(self, name: str, previous: ShownLayer | None) -> ShownLayer:
        t, h = self.trace, self.trace.head
        side = LAYERS[name][0]
        stage = make_layer_stage(t, name, *self.words(side), self.ctx, self.top)
        same_input = previous is not None and (not t.cross or name != "K")
        if previous is None:
            self.play(FadeIn(stage.X, stage.x_tag), run_time=0.6)
        elif not same_input:  # one X, then the other: never two numbers in one place
            self.play(FadeOut(previous.stage.X, previous.stage.x_tag), run_time=0.3)
            self.play(FadeIn(stage.X, stage.x_tag), run_time=0.3)
        else:  # keep the very same X on screen
            stage.X, stage.x_tag = previous.stage.X, previous.stage.x_tag
        if previous is not None:
            self.play(FadeOut(*previous.stage.layer_parts(), *previous.boxes), run_time=0.4)
        if previous is None:
            self.say(self.tr("We follow \"{word}\" through every step that follows.",
                             word=self.focus_word))
            if self.trace.decoder:
                self.say(self.decoder_rows_caption())
        bias = " + b" + name if h.has_bias else ""
        d, dk = h.W_Q.shape
        same = (self.tr(" Each entry is made as Q's was: a row of X against a column of W_{name}.",
                        name=name)
                if name != "Q" else "")
        self.say(self.tr("{name} = X · W_{name}{bias}: every row of X goes through the same learned {d} × "
                         "{dk} matrix W_{name}.{same}",
                         name=name, bias=bias, d=d, dk=dk, same=same))
        self.makes("W_" + name, made(self.trace, name)[1])
        self.play(FadeIn(stage.dot, stage.W, stage.w_tag, stage.learned, stage.shape, stage.eq,
                         stage.r_tag, stage.R.cells), run_time=0.8)
        return ShownLayer(stage, self.follow_row(stage, name))

    def decoder_rows_caption(self) -> str:
        """Said once: a decoder row is named for the word it writes, not the one it reads."""
        t, i = self.trace, self.focus
        reads = t.query_inputs[i].text
        return self.tr("The target rows come from the decoder: X = {x_label_q}. Row {i} writes \"{word}\" "
                       "(it reads the word before it, \"{reads}\"); every target row is named for the "
                       "word it writes.",
                       x_label_q=self.x_label_q, i=i + 1, word=self.focus_word, reads=reads)

    def follow_row(self, stage: LayerStage, name: str) -> VGroup:
        """The followed word's row of X travels through W and lands as its row of R.
        Returns the boxes drawn around the two rows."""
        X, W, R = stage.X, stage.W, stage.R
        i = self.followed_row(name)
        word = self.k_word(i) if (name != "Q" and self.trace.cross) else self.q_word(i)
        box_x = X.row_box(i, self.theme.accent)
        # R's right edge may stand on the safe area's: its box keeps inside it
        box_r = R.row_box(i, self.theme.accent,
                          buff=max(0.0, min(ROW_BOX_BUFF, SAFE_X - R.row_rect_of(i).get_right()[0])))
        self.play(Create(box_x), run_time=0.4)
        if name == "Q":
            self.make_one_entry(stage, i, word)
        traveller = VGroup(X.row_rect_of(i).copy(),
                           *[X.numbers[(i, j)].copy() for j in X.cols if (i, j) in X.numbers])
        self.play(traveller.animate.move_to(W.grid_only()).set_opacity(0.0), run_time=0.8)
        self.remove(traveller)
        rest = [n for n in R.number_group if n not in self.mobjects]  # one entry is there
        self.play(FadeIn(VGroup(*rest)), Create(box_r), run_time=0.7)
        rows, key = made(self.trace, name)
        row = rows[i]
        readout = None
        if not R.layout.numbers:  # cells too small for numbers: read the row out large
            readout = make_row_vector(row, key, i, self.theme, 2 * SAFE_X - READOUT_LABEL_ROOM,
                                      record=self.drawn, label=f"{name}[{word}]",
                                      label_color=getattr(self.theme, LAYERS[name][2]))
            readout.next_to(stage.whole, DOWN, buff=BUFF_LABEL)
            self.play(FadeIn(readout), run_time=0.4)
        self.say(self.tr("The row of \"{word}\" in X becomes its row of {name}: ({row}).",
                         word=word, name=name, row=fmt_row(row, SHOWN_NUMBERS)))
        self.wait(1.0)
        if readout is not None:
            self.play(FadeOut(readout), run_time=0.3)
        return VGroup(box_x, box_r)

    def make_one_entry(self, stage: LayerStage, i: int, word: str) -> None:
        """One number of Q made before the viewer's eyes: the followed row of X against a
        column of W_Q, pair by pair, summed, landing in its cell; then the rest fill in."""
        c = ENTRY_COLUMN
        line = make_entry_line(self.trace, "Q", i, c, self.q_labels[i], self.theme.q, self.ctx,
                               2 * SAFE_X)
        line.group.next_to(stage.whole, DOWN, buff=BUFF_NOTE).set_x(0)
        col = stage.W.col_box(c, self.theme.q)
        cell = stage.R.cell_box(i, c, self.theme.q)
        rows, key = made(self.trace, "Q")
        value = fmt(rows[i, c], 2)
        self.drawn(key, (i, c), value)
        d = self.trace.d_model
        self.say(self.tr("One number of Q, made before your eyes: X's row for \"{word}\" times column {c} "
                         "of W_Q, {d} pairs multiplied and added up: {value}.",
                         word=word, c=c + 1, d=d, value=value))
        self.play(Create(col), run_time=0.4)
        self.play(FadeIn(line.pairs), run_time=0.6)
        self.play(FadeIn(line.sums), run_time=0.6)
        target = stage.R.numbers.get((i, c))
        landing = [TransformFromCopy(line.value, target)] if target is not None else []
        self.play(*landing, Create(cell), run_time=0.7)
        self.wait(1.0)
        self.play(FadeOut(line.group, col, cell), run_time=0.4)

    def show_three_rows(self) -> None:
        """Q, K and V side by side: each row still belongs to its word."""
        self.clear_stage()
        theme = self.theme
        max_w = (2 * SAFE_X) / 3 - ROWS_LABEL_ROOM
        views, shown = VGroup(), []
        for name, (side, _, color_attr) in LAYERS.items():
            labels, colors = self.words(side)
            v = make_matrix(*made(self.trace, name), theme, max_w,
                            self.top - SAFE_BOTTOM - ROWS_TAG_ROOM,
                            row_labels=labels if name == "Q" or self.trace.cross
                            or len(labels) <= MAX_ROWS else None,  # long: only Q names the rows
                            row_colors=colors, max_cols=MAX_COLS, record=self.drawn)
            tag = make_text(name, TAG_FONT, getattr(theme, color_attr), weight="BOLD")
            tag.next_to(v.grid_only(), UP, buff=BUFF_LABEL)
            views.add(VGroup(v, tag))
            shown.append((name, v))
        views.arrange(RIGHT, buff=ROWS_GAP, aligned_edge=UP)
        fit_width(views, 2 * SAFE_X - 0.1)  # the row boxes drawn round the grids stay inside too
        views.set_x(0).align_to(UP * self.top, UP)
        boxes = [v.row_box(self.followed_row(name), theme.accent) for name, v in shown]
        self.say(self.tr("Each row still belongs to its word: \"{word}\" now has a query; the keys and "
                         "values are the source words' rows.", word=self.focus_word) if self.trace.cross
                 else self.tr("Each row still belongs to its word: \"{word}\" now has a query, a key and a value.",
                              word=self.focus_word))
        self.play(FadeIn(views), run_time=0.8)
        self.play(*[Create(b) for b in boxes], run_time=0.5)
        self.wait(1.5)
