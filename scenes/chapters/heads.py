"""Chapter `heads` · Every head: each head of the shown layer as a small attention pattern (the
followed head outlined, the followed word's row marked, each head's strongest link for it
labelled, positional heads tagged); then the heads' Z rows for the followed word joined
side by side and multiplied by W_O, which gives the word's output row.

MultiHead(X) = Concat(Z_0, …, Z_{h−1})·W_O: the trace holds every head's Z, W_O and the
output, so every number drawn here is the trace's own.

A one-head model (the tiny and translation models) gets only the last step, Z·W_O, with
the caption that bigger models run many heads: its one pattern is chapter `factor`'s matrix."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from attention_video.attncore.attention import ranking
from attention_video.attncore.pretrained.heads import OFFSET_NAMES, SPECIAL
from attention_video.attncore.trace import AttentionTrace
from attention_video.fastmanim import *  # noqa: F403
from attention_video.scenes.base import ChapterScene
from attention_video.scenes.catalogue import Translate, isolated
from attention_video.scenes.claims import LABELLED, ROW_MARKS, Claim
from attention_video.scenes.context import ChapterContext
from attention_video.scenes.layout import (
    BUFF_BLOCK,
    BUFF_BOX,
    BUFF_HAIR,
    BUFF_LABEL,
    BUFF_NONE,
    BUFF_NOTE,
    BUFF_ROW,
    BUFF_SMALL,
    BUFF_SNUG,
    BUFF_TIGHT,
    MIN_FONT,
    SAFE_BOTTOM,
    SAFE_X,
    STAGE_TOP,
    text_width,
    widest,
)
from attention_video.scenes.precision import weight_decimals
from attention_video.scenes.text import fit_width, fmt, make_text
from attention_video.scenes.themes import Theme
from attention_video.scenes.widgets import (
    CellLayout,
    HeatView,
    MatrixView,
    NumberLabel,
    box_around,
    fit_cells,
    label_width,
)

MAX_HEAD_COLS = 6  # thumbnails per row: 12 heads make two rows of six
THUMB_MAX = 2.6  # the largest side of one thumbnail
LABELLED_MAX = 4.0  # … of one of up to three thumbnails, with word labels
THUMB_GAP = BUFF_BLOCK  # between thumbnails
NOTE_FONT = 18  # a thumbnail's head name, tag and link
LABELLED_CELL = 0.3  # thumbnails with cells at least this big get word labels
MAX_COLS = 8  # numbers shown per row before folding into "…"
DECIMALS = 2
OVERVIEW_GAP = BUFF_SMALL  # between the model overview's thumbnails
OVERVIEW_LABEL = 16  # its layer and head numbers
OVERVIEW_HEAD_H = 0.35  # the column numbers above its grid
KV_FONT = 20  # the grouped-query picture's head names
KV_DROP = 1.1  # from a key/value head's box down to its query heads
KV_GAP = 0.6  # between the groups
OUTPUT_DROP = 0.7  # from W_O down to the output row: room for the "output of …" line over the
#                    row, which stands left of W_O's shape


# ---- what each head says about the followed word ---------------------------------------
@dataclass(frozen=True)
class HeadLink:
    """One head's strongest link for the followed word, and whether it is positional."""

    head: int
    key: int  # the key the followed word weighs most in this head (ties: the first)
    pattern: str | None  # "previous token", "next token", "[CLS]/[SEP]" (as --list-heads
    #                      tags them) or None: the head's pattern depends on the words

    @property
    def positional(self) -> bool:
        return self.pattern in (OFFSET_NAMES[-1], OFFSET_NAMES[1])


def top_key(row: np.ndarray, allowed: np.ndarray) -> int:
    """The allowed key with the largest value in `row` (the first of equals)."""
    return ranking(row, allowed)[0]


def head_links(t: AttentionTrace) -> list[HeadLink]:
    """Every head's top key for the followed word; heads tagged (as --list-heads does) only
    for the encoders, whose sentences start and end with a special token ([CLS] … [SEP])."""
    tag = t.can.end_tokens and not t.cross
    return [HeadLink(h, top_key(head.weights[t.focus], head.mask[t.focus]),
                     head.pattern if tag else None)
            for h, head in enumerate(t.heads)]


def grid_shape(n: int) -> tuple[int, int]:
    """(rows, cols) of n thumbnails: as few rows as MAX_HEAD_COLS allows, balanced."""
    rows = math.ceil(n / MAX_HEAD_COLS)
    return rows, math.ceil(n / rows)


# ---- the thumbnails --------------------------------------------------------------------
@dataclass
class Thumb:
    """One head's pattern with its name (and tag) above and its top link below."""

    grid: MatrixView
    name: VGroup
    link: VGroup
    row_mark: Rectangle  # around the followed word's row
    top_cell: Rectangle  # around the top link's cell

    @property
    def block(self) -> VGroup:
        return VGroup(self.name, self.grid, self.link, self.row_mark, self.top_cell)



def end_tokens(t: AttentionTrace) -> tuple[str, str]:
    """The encoder's own first and last special tokens: [CLS] and [SEP], or <s> and </s>."""
    return t.key_tokens[0].text, t.key_tokens[-1].text


def pattern_name(pattern: str, tr: Translate, ends: tuple[str, str]) -> str:
    """A head's tag as --list-heads prints it, in the caption language; the end-token tag
    written with the model's own end tokens."""
    names = {OFFSET_NAMES[-1]: tr("previous token"), OFFSET_NAMES[1]: tr("next token"),
             SPECIAL: "/".join(ends)}
    return names.get(pattern, pattern)

@dataclass
class HeadGrid:
    thumbs: list[Thumb]
    outline: Rectangle  # around the followed head

    @property
    def group(self) -> VGroup:
        return VGroup(*[th.block for th in self.thumbs], self.outline)


@dataclass(frozen=True)
class ThumbWords:
    """The words and colours the thumbnails label."""

    q_labels: list[str]
    k_labels: list[str]
    q_colors: list[str]
    k_colors: list[str]


def thumb_side(t: AttentionTrace, tagged: bool, top: float, bottom: float) -> tuple[float, bool]:
    """The side of one thumbnail and whether it has room for word labels."""
    rows, cols = grid_shape(len(t.heads))
    note_h = 0.34 * (2 if tagged else 1) + 0.34  # name (+ tag) above, link below
    n = max(t.n_q, t.n_k)
    block_w = (2 * SAFE_X - (cols - 1) * THUMB_GAP) / cols
    side = min(THUMB_MAX, block_w, (top - bottom - rows * note_h - (rows - 1) * THUMB_GAP) / rows)
    if len(t.heads) <= 3 and side / n * LABELLED_MAX / THUMB_MAX >= LABELLED_CELL:
        side = min(LABELLED_MAX, block_w - 2.0, (top - bottom - 0.5 - rows * note_h) / rows)
        cell = side / n  # a column's word must fit its cell at the smallest legible size
        return side, cell >= LABELLED_CELL and widest([k.text for k in t.key_tokens], MIN_FONT) <= cell
    return side, False


def numbered_heads(heads: list[int], tr) -> str:
    """Head numbers worded as numbers, not a count: "head 4", "heads 2, 7" (head_list)."""
    return tr.plural("head {heads}", "heads {heads}", len(heads), heads=head_list(heads))


def head_list(heads: list[int]) -> str:
    """Head numbers as a caption lists them, a run of three or more as a range: "0, 2–10"."""
    runs: list[list[int]] = []
    for h in sorted(heads):
        if runs and h == runs[-1][-1] + 1:
            runs[-1].append(h)
        else:
            runs.append([h])
    return ", ".join(f"{r[0]}–{r[-1]}" if len(r) >= 3 else ", ".join(map(str, r)) for r in runs)


def link_text(query: str, key: str, weight: str, lines: int = 1) -> str:
    """"query → key weight", each word a bidi isolate: right-to-left words keep the arrow
    and the number where they are written (Pango reordered "ה → ה 0.48" as "0.48 ה → ה").
    lines=2 breaks it after the arrow, for a thumbnail too narrow for one line at the
    smallest legible size."""
    return f"{isolated(query)} →{chr(10) if lines == 2 else ' '}{isolated(key)} {weight}"


def make_thumb(t: AttentionTrace, link: HeadLink, side: float, labelled: bool, words: ThumbWords,
               link_font: float, ctx: ChapterContext, link_lines: int = 1) -> Thumb:
    head, i = t.heads[link.head], t.focus
    cell = side / max(t.n_q, t.n_k)
    layout = CellLayout(cell, cell, MIN_FONT, False)
    grid = MatrixView(head.weights, key="head_weights", theme=ctx.theme, layout=layout, heat=True,
                      mask=head.mask, max_cols=t.n_k, max_rows=t.n_q,
                      row_labels=words.q_labels if labelled else None,
                      row_colors=words.q_colors if labelled else None,
                      col_labels=words.k_labels if labelled else None,
                      col_colors=words.k_colors if labelled else None)
    cells = grid.grid_only()
    width = max(cells.width, 1.6)
    followed = link.head == t.head_index
    name = VGroup(make_text(ctx.tr("head {head}", head=link.head), NOTE_FONT,
                            ctx.theme.accent if followed else ctx.theme.text, weight="BOLD"))
    if link.pattern is not None:
        name.add(make_text(pattern_name(link.pattern, ctx.tr, end_tokens(t)), NOTE_FONT - 1,
                           ctx.theme.muted))
    name.arrange(DOWN, buff=BUFF_TIGHT)
    fit_width(name, width)
    name.next_to(grid, UP, buff=BUFF_SMALL).set_x(cells.get_x())
    weight = fmt(head.weights[i, link.key], weight_decimals(t.normalized))
    ctx.record("head_weights", (link.head, i, link.key), weight)
    text = link_text(words.q_labels[i], words.k_labels[link.key], weight, link_lines)
    link_mob = make_text(text, link_font, ctx.theme.text)
    link_mob.next_to(cells, DOWN, buff=BUFF_SMALL)
    # the followed row in its word's colour where its label names it; unlabelled, a colour
    # alone would be all that tells it (and past seven words colours can look alike to a
    # colour-blind viewer): the text colour, with the word written under the thumbnail
    row_mark = grid.row_box(i, words.q_colors[i] if labelled else ctx.theme.text, buff=BUFF_NONE,
                            width=3)
    top_cell = grid.cell_box(i, link.key, ctx.theme.accent, width=3)
    link_label = NumberLabel(link_mob, key="head_weights", index=(link.head, i, link.key),
                             text=weight)
    return Thumb(grid, name, link_label, row_mark, top_cell)


def make_head_grid(t: AttentionTrace, links: list[HeadLink], words: ThumbWords, ctx: ChapterContext,
                   top: float, bottom: float) -> HeadGrid:
    """Every head's pattern, in rows of up to MAX_HEAD_COLS, fitted between top and bottom."""
    tagged = any(link.pattern is not None for link in links)
    side, labelled = thumb_side(t, tagged, top, bottom)
    rows, cols = grid_shape(len(links))
    block_w = (2 * SAFE_X - (cols - 1) * THUMB_GAP) / cols
    sample = fmt(0.0, weight_decimals(t.normalized))  # as wide as the weights written
    texts = [link_text(words.q_labels[t.focus], words.k_labels[link.key], sample) for link in links]
    lines = 1 if widest(texts, MIN_FONT) <= block_w else 2  # two lines before a smaller font
    if lines == 2:
        texts = [part for text in texts for part in text.split(" → ")]
    link_font = max(MIN_FONT, min(NOTE_FONT, NOTE_FONT * block_w / widest(texts, NOTE_FONT)))
    thumbs = [make_thumb(t, link, side, labelled, words, link_font, ctx, lines)
              for link in links]
    blocks = VGroup(*[th.block for th in thumbs])
    blocks.arrange_in_grid(rows, cols, buff=THUMB_GAP, cell_alignment=DOWN)  # grids in line
    room = 2 * (SAFE_X - BUFF_SNUG - BUFF_HAIR)  # the followed head's outline stays inside too
    if blocks.width > room:  # a last resort; the sizes above normally fit
        blocks.scale_to_fit_width(room)
    if blocks.height > top - bottom:
        blocks.scale_to_fit_height(top - bottom)
    blocks.move_to(ORIGIN).align_to(UP * top, UP)
    followed = thumbs[t.head_index]
    outline = box_around(VGroup(followed.name, followed.grid, followed.link),
                         ctx.theme.accent, buff=BUFF_SNUG, width=4)
    return HeadGrid(thumbs, outline)


# ---- the model overview (every layer × head, bertviz's model view) -------------------------
def heat_image(A: np.ndarray, mask: np.ndarray, theme: Theme) -> np.ndarray:
    """One head's weights as RGBA pixels, one per cell, coloured as MatrixView's heat cells
    (value_fill: opacity 0.12 + 0.7·min(1, |a| / the 95th percentile) over the background;
    masked cells grey)."""
    scale = float(np.percentile(np.abs(A), 95)) if A.size else 1.0
    alpha = 0.12 + 0.7 * (np.minimum(1.0, np.abs(A) / scale) if scale else np.zeros_like(A))
    back, pos, neg, grid = (color_to_rgb(c) for c in
                            (theme.background, theme.positive, theme.negative, theme.grid))
    fill = np.where((A >= 0)[..., None], pos, neg)  # (n_q, n_k, 3)
    rgb = back * (1 - alpha[..., None]) + fill * alpha[..., None]
    rgb = np.where(mask[..., None], rgb, back * 0.45 + grid * 0.55)
    rgba = np.concatenate([rgb, np.ones(A.shape + (1,))], axis=-1)
    return np.round(rgba * 255).astype(np.uint8)


@dataclass
class Overview:
    """Every head of every layer as a heat-map thumbnail: layers as rows, or, for a deep
    model (30 layers × 9 heads), layers as columns so every thumbnail stays legible."""

    thumbs: list[list[ImageMobject]]  # [layer][head]
    frames: VGroup  # a thin border around each thumbnail
    layer_labels: VGroup
    head_labels: VGroup
    outline: Rectangle  # around the followed head
    row_marks: VGroup  # the followed word's row, a tick left of each thumbnail of the layer shown
    layers_across: bool = False  # layers as columns (their numbers above), heads as rows

    @property
    def group(self) -> Group:
        return Group(*[m for row in self.thumbs for m in row], self.frames, self.layer_labels,
                     self.head_labels, self.outline, self.row_marks)


@dataclass(frozen=True)
class OverviewGrid:
    """How the overview's thumbnails are laid out: rows × cols of side `side`, the row names'
    width on the left and the column numbers' height above."""

    layers_across: bool
    rows: int
    cols: int
    side: float
    gap: float
    label_w: float
    step: int  # every step-th column is numbered (all of them when they fit)


def overview_grid(n_layers: int, n_heads: int, width: float, height: float,
                  row_names: dict[bool, list[str]], col_names: dict[bool, list[str]]) -> OverviewGrid:
    """The larger thumbnails of the two layouts (layers as rows or as columns)."""
    best = None
    for across in (False, True):
        rows, cols = (n_heads, n_layers) if across else (n_layers, n_heads)
        gap = OVERVIEW_GAP if max(rows, cols) <= 12 else OVERVIEW_GAP / 2
        label_w = widest(row_names[across], OVERVIEW_LABEL) + 0.2
        side = min((width - label_w - (cols - 1) * gap) / cols,
                   (height - OVERVIEW_HEAD_H - (rows - 1) * gap) / rows)
        widest_col = widest(col_names[across], OVERVIEW_LABEL) + BUFF_SNUG
        step = max(1, math.ceil(widest_col / (side + gap)))
        grid = OverviewGrid(across, rows, cols, side, gap, label_w, step)
        if best is None or grid.side > best.side + 1e-9:
            best = grid
    return best


def make_overview(t: AttentionTrace, ctx: ChapterContext, top: float,
                  bottom: float) -> Overview:
    """The model_weights (layers, heads, n_q, n_k) as a grid of thumbnails fitted between
    top and bottom; the followed head (t.layer, t.head_index) outlined."""
    A = t.model_weights
    n_layers, n_heads, n_q, n_k = A.shape
    mask = t.head.mask
    layer_names = [ctx.tr("layer {layer}", layer=L) for L in range(n_layers)]
    head_names = [ctx.tr("head {head}", head=H) for H in range(n_heads)]
    numbers = {False: [str(H) for H in range(n_heads)], True: [str(L) for L in range(n_layers)]}
    g = overview_grid(n_layers, n_heads, 2 * SAFE_X, top - bottom,
                      {False: layer_names, True: head_names}, numbers)
    side, gap = g.side, g.gap
    w, h = side * min(1.0, n_k / n_q), side * min(1.0, n_q / n_k)  # cells stay square
    left = -(g.label_w + g.cols * w + (g.cols - 1) * gap) / 2 + g.label_w
    thumbs, frames = [], VGroup()
    for L in range(n_layers):
        row = []
        for H in range(n_heads):
            r, c = (H, L) if g.layers_across else (L, H)
            img = HeatView(heat_image(A[L, H], mask, ctx.theme), key="model_weights",
                           index=(L, H), shape=(n_q, n_k))
            img.set_resampling_algorithm(RESAMPLING_ALGORITHMS["nearest"])
            img.stretch_to_fit_width(w).stretch_to_fit_height(h)
            img.move_to([left + w / 2 + c * (w + gap), top - OVERVIEW_HEAD_H - h / 2 - r * (h + gap), 0])
            row.append(img)
            frames.add(Rectangle(width=w, height=h, stroke_width=1, stroke_color=ctx.theme.grid)
                       .move_to(img))
        thumbs.append(row)

    def color(chosen: bool, other: str) -> str:
        return ctx.theme.accent if chosen else other

    if g.layers_across:  # heads name the rows; layer numbers over the columns
        head_labels = VGroup(*[
            make_text(name, OVERVIEW_LABEL, color(H == t.head_index, ctx.theme.text))
            .next_to(thumbs[0][H], LEFT, buff=BUFF_NOTE) for H, name in enumerate(head_names)])
        shown = [L for L in range(n_layers) if L % g.step == 0 or L == t.layer]
        shown = [L for L in shown if L == t.layer or abs(L - t.layer) >= g.step]
        layer_labels = VGroup(*[
            make_text(str(L), OVERVIEW_LABEL, color(L == t.layer, ctx.theme.muted))
            .next_to(thumbs[L][0], UP, buff=BUFF_SNUG) for L in shown])
        word = make_text(ctx.tr("layer"), OVERVIEW_LABEL, ctx.theme.muted)
        word.next_to(layer_labels, LEFT, buff=BUFF_NONE).align_to(head_labels, RIGHT)
        word.match_y(layer_labels)
        layer_labels.add(word)
    else:
        layer_labels = VGroup(*[
            make_text(name, OVERVIEW_LABEL, color(L == t.layer, ctx.theme.text))
            .next_to(thumbs[L][0], LEFT, buff=BUFF_NOTE) for L, name in enumerate(layer_names)])
        head_labels = VGroup(*[
            make_text(str(H), OVERVIEW_LABEL, color(H == t.head_index, ctx.theme.muted))
            .next_to(thumbs[0][H], UP, buff=BUFF_SNUG) for H in range(n_heads)])
    outline = box_around(thumbs[t.layer][t.head_index], ctx.theme.accent, buff=BUFF_HAIR, width=4)
    y = lambda img: img.get_top()[1] - (t.focus + 0.5) * h / n_q  # noqa: E731
    tick = min(0.08, gap - 0.01)  # within the gap left of the thumbnail
    row_marks = VGroup(*[
        Line([img.get_left()[0] - tick, y(img), 0], [img.get_left()[0] - 0.01, y(img), 0],
             stroke_color=ctx.theme.accent, stroke_width=3) for img in thumbs[t.layer]])
    return Overview(thumbs, frames, layer_labels, head_labels, outline, row_marks,
                    g.layers_across)


# ---- grouped-query attention: query heads sharing key/value heads ------------------------
def kv_groups(kv_heads: tuple[int, ...]) -> dict[int, list[int]]:
    """Each key/value head and the query heads that read it, in order."""
    groups: dict[int, list[int]] = {}
    for h, g in enumerate(kv_heads):
        groups.setdefault(g, []).append(h)
    return dict(sorted(groups.items()))


@dataclass
class KVGroups:
    """One box per key/value head, over the query heads that read its K and V."""

    kv_boxes: dict[int, VGroup]  # kv head → its box and name
    q_chips: dict[int, VGroup]  # query head → its chip and name
    links: dict[int, Line]  # query head → the line up to its kv head's box
    outline: Rectangle  # around the followed query head's chip (its line is in the accent)

    @property
    def group(self) -> VGroup:
        return VGroup(*self.kv_boxes.values(), *self.q_chips.values(), *self.links.values(),
                      self.outline)


def make_chip(text: str, font: float, ink: str, frame: str, width: float, fill: float) -> VGroup:
    label = make_text(text, font, ink)
    box = RoundedRectangle(corner_radius=0.08, width=max(width, label.width + 0.3),
                           height=label.height + 0.3, stroke_color=frame, stroke_width=3,
                           fill_color=frame, fill_opacity=fill)
    return VGroup(box, label.move_to(box))


def make_kv_groups(kv_heads: tuple[int, ...], followed: int, ctx: ChapterContext,
                   top: float, bottom: float) -> KVGroups:
    """The key/value heads in a row at the top, each query head under the one it reads,
    joined to it by a line; fitted to the safe width between top and bottom."""
    theme, tr = ctx.theme, ctx.tr
    groups = kv_groups(kv_heads)
    q_names = {h: tr("Q head {head}", head=h) for h in range(len(kv_heads))}
    chip_w = widest(q_names.values(), KV_FONT) + 0.3
    kv_boxes, q_chips, columns = {}, {}, VGroup()
    for g, members in groups.items():
        chips = VGroup(*[make_chip(q_names[h], KV_FONT, theme.text, theme.q, chip_w, 0.08)
                         for h in members])  # the followed one is outlined, not recoloured
        chips.arrange(RIGHT, buff=BUFF_ROW)
        kv = make_chip(tr("K, V head {head}", head=g), KV_FONT + 2, theme.text, theme.k,
                       chips.width, 0.15)
        column = VGroup(kv, chips).arrange(DOWN, buff=KV_DROP)
        kv_boxes[g] = kv
        q_chips.update(zip(members, chips))
        columns.add(column)
    columns.arrange(RIGHT, buff=KV_GAP)
    room = 2 * (SAFE_X - BUFF_SNUG - BUFF_HAIR)  # the followed head's outline stays inside too
    if columns.width > room:
        columns.scale_to_fit_width(room)
    if columns.height > top - bottom:
        columns.scale_to_fit_height(top - bottom)
    columns.move_to(UP * (top + bottom) / 2)
    links = {h: Line(q_chips[h].get_top(), kv_boxes[g].get_bottom(), stroke_color=theme.muted,
                     stroke_width=2) for h, g in enumerate(kv_heads)}
    links[followed].set_stroke(theme.accent, width=4)
    outline = box_around(q_chips[followed], theme.accent, buff=BUFF_SNUG, width=4)
    return KVGroups(kv_boxes, q_chips, links, outline)


def heads_text(heads: list[int], tr: Translate) -> str:
    """"0, 1 and 2": a list of head numbers."""
    if len(heads) == 1:
        return str(heads[0])
    return tr("{first} and {last}", first=", ".join(str(h) for h in heads[:-1]), last=heads[-1])


# ---- the join --------------------------------------------------------------------------
@dataclass
class JoinView:
    """The followed word's joined Z row · W_O = its output row, with the shapes."""

    joined: MatrixView
    segments: VGroup  # a line and a head name over each head's part of the joined row
    w_o: MatrixView
    output: MatrixView
    symbols: VGroup  # "·" and "="
    shapes: VGroup  # "1 × h·d_k", "h·d_k × d_model", "1 × d_model", with names

    @property
    def group(self) -> VGroup:
        return VGroup(self.joined, self.segments, self.w_o, self.output, self.symbols, self.shapes)


def make_z_stack(t: AttentionTrace, ctx: ChapterContext, top: float,
                 bottom: float) -> MatrixView:
    """Every head's Z row for the followed word, one head per row (h × d_k)."""
    i, h = t.focus, len(t.heads)
    values = np.stack([head.Z[i] for head in t.heads])  # (h, d_k) drawn, not computed
    names = [ctx.tr("head {head}", head=k) for k in range(h)]
    colors = [ctx.theme.accent if k == t.head_index else ctx.theme.text for k in range(h)]
    room_w = 2 * SAFE_X - label_width(names, 24) - 1.0
    layout = fit_cells(h, min(t.d_k, MAX_COLS), min(room_w, 0.9 * MAX_COLS), top - bottom - 0.6,
                       DECIMALS, max_font=26)
    layout = CellLayout(layout.cell_w, layout.cell_h, max(layout.font_size, MIN_FONT), True)
    view = MatrixView(values, key="head_Z", theme=ctx.theme, layout=layout, decimals=DECIMALS,
                      max_cols=MAX_COLS, record=ctx.record, heat=False, row_labels=names,
                      row_colors=colors, index_map=lambda r, m: (r, i, m))
    return view


def make_join(t: AttentionTrace, ctx: ChapterContext, q_label: str,
              top: float, bottom: float) -> JoinView:
    """[joined Z row] · [W_O] on one line, [output] under W_O with its columns aligned."""
    i, h, d_k, d = t.focus, len(t.heads), t.d_k, t.d_model
    joined_values = np.concatenate([head.Z[i] for head in t.heads])  # (h·d_k,) laid side by side
    c1, c2 = min(h * d_k, MAX_COLS), min(d, MAX_COLS)
    r2 = min(h * d_k, MAX_COLS)
    symbol_w, label_w = 0.7, 0.4
    layout = fit_cells(r2 + 3, c1 + c2, 2 * SAFE_X - symbol_w - label_w, top - bottom - 1.3,
                       DECIMALS, max_font=24)
    layout = CellLayout(layout.cell_w, layout.cell_h, max(layout.font_size, MIN_FONT), True)
    joined = MatrixView(joined_values[None, :], key="head_Z", theme=ctx.theme, layout=layout,
                        decimals=DECIMALS, max_cols=MAX_COLS, record=ctx.record, heat=False,
                        index_map=lambda _r, c: (c // d_k, i, c % d_k))
    w_o = MatrixView(t.W_O, key="W_O", theme=ctx.theme, layout=layout, decimals=DECIMALS,
                     max_cols=MAX_COLS, max_rows=MAX_COLS, record=ctx.record, heat=False)
    output = MatrixView(t.output[i][None, :], key="output", theme=ctx.theme, layout=layout,
                        decimals=DECIMALS, max_cols=MAX_COLS, record=ctx.record, heat=False,
                        index_map=lambda _r, c: (i, c))
    dot = make_text("·", 40, ctx.theme.text)
    eq = make_text("=", 32, ctx.theme.text)
    joined.next_to(dot, LEFT, buff=BUFF_ROW)
    w_o.next_to(dot, RIGHT, buff=BUFF_ROW)
    joined.set_y(w_o.get_y())
    dot.set_y(w_o.get_y())
    output.next_to(w_o, DOWN, buff=OUTPUT_DROP).align_to(w_o, LEFT)
    eq.next_to(output, LEFT, buff=BUFF_ROW)
    segments = make_segments(joined, t, ctx)
    size = max(MIN_FONT, min(20, layout.font_size))
    times = "×"
    shapes = VGroup(
        make_text(f"1 {times} {h}·{d_k}" if h > 1 else f"1 {times} {d_k}", size,
                  ctx.theme.muted).next_to(joined, DOWN, buff=BUFF_NOTE),
        make_text(f"W_O   {h * d_k} {times} {d}", size, ctx.theme.muted).next_to(w_o, UP, buff=BUFF_LABEL),
        make_text(f"1 {times} {d}", size, ctx.theme.muted).next_to(output, DOWN, buff=BUFF_LABEL),
        fit_width(make_text(ctx.tr("output of {q_label}", q_label=q_label), size, ctx.theme.text),
                  2.6).next_to(output, UP, buff=BUFF_SMALL).align_to(output, LEFT),
    )
    view = JoinView(joined, segments, w_o, output, VGroup(dot, eq), shapes)
    whole = view.group
    if whole.width > 2 * SAFE_X:
        whole.scale_to_fit_width(2 * SAFE_X)
    if whole.height > top - bottom:
        whole.scale_to_fit_height(top - bottom)
    whole.move_to(ORIGIN).align_to(UP * top, UP)
    return view


def make_segments(joined: MatrixView, t: AttentionTrace, ctx: ChapterContext) -> VGroup:
    """Over the joined row: a line over each head's shown cells, with the head's number."""
    out = VGroup()
    parts: dict[int, list[int]] = {}
    for c in joined.cols:
        if c is not None:
            parts.setdefault(c // t.d_k, []).append(c)
    for h, cs in parts.items():
        cells = VGroup(*[joined.cell_at[(0, c)] for c in cs])
        color = ctx.theme.accent if h == t.head_index else ctx.theme.muted
        line = Line(cells.get_corner(UL) + UP * 0.08 + RIGHT * 0.04,
                    cells.get_corner(UR) + UP * 0.08 + LEFT * 0.04, stroke_color=color,
                    stroke_width=4)
        name = ctx.tr("head {head}", head=h)
        size = NOTE_FONT if text_width(name, NOTE_FONT) <= cells.width else MIN_FONT
        after_fold = cs[0] != joined.cols[0] and joined.cols[joined.cols.index(cs[0]) - 1] is None
        if text_width(name, size) > cells.width and not after_fold:
            name = str(h)
        label = make_text(name, size, color).next_to(line, UP, buff=BUFF_TIGHT)
        if label.width > cells.width:  # over the folded "…" cell on its left, which is empty
            label.align_to(line, RIGHT)
        out.add(VGroup(line, label))
    return out


class HeadsScene(ChapterScene):
    slug = "heads"

    def construct(self) -> None:
        self.show_title()
        if self.n_heads == 1:
            self.show_join()  # one head: its pattern is chapter `factor`'s; only W_O is new here
            self.finish()
            return
        if self.trace.model_weights is not None:
            self.show_overview()
        if self.trace.kv_heads is not None:
            self.show_kv_groups()
        links = head_links(self.trace)
        grid = self.show_patterns(links)
        self.show_links(grid, links)
        self.show_positional(links)
        self.show_z_rows()
        self.show_join()
        self.finish()

    # ---- helpers -------------------------------------------------------------------------
    @property
    def n_heads(self) -> int:
        return len(self.trace.heads)

    def link_text(self, link: HeadLink) -> str:
        text = fmt(self.trace.heads[link.head].weights[self.focus, link.key],
                   weight_decimals(self.trace.normalized))
        self.drawn("head_weights", (link.head, self.focus, link.key), text)
        return text

    def room(self) -> tuple[float, float]:
        return STAGE_TOP, SAFE_BOTTOM + 0.1

    # ---- steps ---------------------------------------------------------------------------
    def show_overview(self) -> None:
        """Every layer × head of the model, then why the followed head was chosen."""
        t = self.trace
        n_layers, n_heads = t.model_weights.shape[:2]
        top, bottom = self.room()
        view = make_overview(t, self.ctx, top, bottom)
        total = n_layers * n_heads
        name = t.model_name or self.tr("model")
        self.say(self.tr("The whole {name}: {n_layers} layers × {n_heads} heads = {total} attention "
                         "patterns for this sentence, one per thumbnail (rows are queries, columns keys).",
                         name=name, n_layers=n_layers, n_heads=n_heads, total=total))
        self.play(FadeIn(view.layer_labels), FadeIn(view.head_labels), run_time=0.4)
        self.play(LaggedStart(*[FadeIn(Group(*row)) for row in view.thumbs], lag_ratio=0.3),
                  FadeIn(view.frames), run_time=1.5)
        self.wait(2.5)
        self.say(self.tr("We follow layer {layer}, head {head_index} (outlined; the ticks mark the row of "
                         "\"{word}\"). {why_this_head}",
                         layer=t.layer, head_index=t.head_index, word=self.focus_word, why_this_head=self.why_this_head()))
        self.claim(Claim(ROW_MARKS, (t.focus,), dict(enumerate(view.row_marks)),
                         frames=dict(enumerate(view.thumbs[t.layer]))))
        self.play(Create(view.outline), Create(view.row_marks), run_time=0.6)
        self.wait(3.5)
        self.clear_stage()

    def why_this_head(self) -> str:
        """The reason --head auto gave (the core's HeadChoice, phrased), or the options."""
        why = self.head_why(brief=True)
        if why is None:
            return self.tr("It was chosen with --layer and --head.")
        return self.tr("--head auto chose it: {why}.", why=why)

    def show_kv_groups(self) -> None:
        """Grouped-query attention: which query heads share which K and V (trace.kv_heads)."""
        t, tr = self.trace, self.tr
        top, bottom = self.room()
        view = make_kv_groups(t.kv_heads, t.head_index, self.ctx, top, bottom)
        self.kv_view = view  # what tests measure
        groups = kv_groups(t.kv_heads)
        each = tr.context("semicolon", "; ").join(
            tr("{heads} read K, V head {kv}", heads=heads_text(members, tr), kv=g)
            for g, members in groups.items())
        self.say(tr("This layer has {n_q} query heads but only {n_kv} key/value heads "
                    "(grouped-query attention): query heads {each}.",
                    n_q=len(t.kv_heads), n_kv=len(groups), each=each))
        self.play(LaggedStart(*[FadeIn(box) for box in view.kv_boxes.values()], lag_ratio=0.2),
                  run_time=0.6)
        self.play(*[Create(line) for line in view.links.values()],
                  *[FadeIn(chip) for chip in view.q_chips.values()], run_time=0.8)
        self.wait(1.5)
        kv = t.kv_heads[t.head_index]
        mates = [h for h in groups[kv] if h != t.head_index]
        share = (tr(" with query heads {mates}", mates=heads_text(mates, tr)) if mates else "")
        self.say(tr("Heads sharing a K, V head get the same K and V rows but keep their own W_Q, "
                    "so each draws its own pattern. Head {head}, the one we follow, reads K, V "
                    "head {kv}{share}.", head=t.head_index, kv=kv, share=share))
        self.play(Create(view.outline), run_time=0.5)
        self.wait(2.0)
        self.clear_stage()

    def show_patterns(self, links: list[HeadLink]) -> HeadGrid:
        t, h = self.trace, self.n_heads
        top, bottom = self.room()
        words = ThumbWords(self.q_labels, self.k_labels, self.q_colors, self.k_colors)
        grid = make_head_grid(t, links, words, self.ctx, top, bottom)
        if h == 1:
            text = self.tr("The {value} has only one head, so there is one pattern. Bigger models run many "
                           "heads side by side, each with its own W_Q, W_K, W_V.",
                           value=t.model_name or 'model')
        elif t.kv_heads is not None:
            text = self.tr("Its {h} query heads, each with its own W_Q, draw {h} patterns: rows are "
                           "queries, columns keys, stronger colour a larger weight.", h=h)
        else:
            text = self.tr("This layer has {h} heads, each with its own W_Q, W_K and W_V, so each draws its "
                           "own pattern: rows are queries, columns keys, stronger colour a larger weight.",
                           h=h)
        if t.causal:
            text += self.tr(" Grey cells are masked: no word looks at later words.")
        self.say(text)
        self.play(LaggedStart(*[FadeIn(th.grid) for th in grid.thumbs], lag_ratio=0.1),
                  run_time=min(2.0, 0.6 + 0.1 * h))
        self.play(*[FadeIn(th.name) for th in grid.thumbs], run_time=0.4)
        self.wait(2.5)
        return grid

    def show_links(self, grid: HeadGrid, links: list[HeadLink]) -> None:
        t, w = self.trace, self.quoted(self.focus_word)
        mine = links[t.head_index]
        if self.n_heads == 1:
            text = self.tr("The row of {w} is marked; it looks most at {key} ({link_text}).",
                           w=w, key=self.key_name(mine.key), link_text=self.link_text(mine))
        else:
            others = [link for link in links if link.head != t.head_index]
            shown = others[:3]
            tr = self.tr
            links_o = tr.context("comma", ", ").join(
                tr("head {head} → {key} ({link})", head=k.head, key=self.key_name(k.key),
                   link=self.link_text(k)) for k in shown)
            more = len(others) - len(shown)
            end = tr(", and {more} more, each labelled.", more=more) if more else tr(".")
            text = tr("The row of {w} is marked in every head. Head {head}, the one we followed "
                      "(outlined), looks most at {key} ({link}); {others}{end}", w=w,
                      head=t.head_index, key=self.key_name(mine.key), link=self.link_text(mine),
                      others=links_o, end=end)
        self.say(text)
        if self.n_heads > 1:  # "…, and N more, each labelled": every head's label is drawn
            self.claim(Claim(LABELLED, tuple(k.head for k in others[len(shown):]),
                             {link.head: th.link for link, th in zip(links, grid.thumbs)}))
        self.play(*[Create(th.row_mark) for th in grid.thumbs], run_time=0.6)
        self.play(*[Create(th.top_cell) for th in grid.thumbs],
                  *[FadeIn(th.link) for th in grid.thumbs], Create(grid.outline), run_time=0.8)
        self.wait(4.0)

    def show_positional(self, links: list[HeadLink]) -> None:
        positional = [link.head for link in links if link.positional]
        special = [link.head for link in links if link.pattern == SPECIAL]
        if not positional and not special:
            return
        said = []
        if positional:
            said.append(self.tr("Heads tagged by position ({heads}) look at the previous or next "
                                "token whatever the word, so --head auto leaves them out.",
                                heads=numbered_heads(positional, self.tr)))
        if special:
            first, last = end_tokens(self.trace)
            said.append(self.tr("Heads tagged {tag} ({heads}) give most of every word's attention "
                                "to {first} and {last}, whatever the words.",
                                tag=f"{first}/{last}", first=first, last=last,
                                heads=numbered_heads(special, self.tr)))
        self.say(said[0] if len(said) == 1 else
                 self.tr.context("two sentences", "{first} {second}", first=said[0],
                                 second=said[1]))
        self.wait(3.5)

    def show_z_rows(self) -> None:
        t, w = self.trace, self.quoted(self.focus_word)
        self.clear_stage()
        top, bottom = self.room()
        stack = make_z_stack(t, self.ctx, top - 0.5, bottom)
        heading = make_text(self.tr("Z rows of {w}, one per head", w=w),
                            22, self.theme.text)
        heading.move_to(UP * (top - 0.15))
        stack.move_to(ORIGIN).align_to(UP * (heading.get_bottom()[1] - 0.3), UP)
        mark = stack.row_box(t.head_index, self.theme.accent, width=3)
        if self.n_heads == 1:
            text = self.tr("Each head hands {w} its Z row. Here there is only one: {d_k} numbers.",
                           w=w, d_k=t.d_k)
        else:
            text = self.tr("Each head hands {w} its own Z row of dₖ = {d_k} numbers: {n_heads} rows, the "
                           "one we followed marked.",
                           w=w, d_k=t.d_k, n_heads=self.n_heads)
        self.say(text)
        self.play(FadeIn(heading), FadeIn(stack), run_time=0.8)
        self.play(Create(mark), run_time=0.4)
        self.wait(2.5)

    def show_join(self) -> None:
        t, w, i = self.trace, self.quoted(self.focus_word), self.focus
        h, d_k, d = self.n_heads, t.d_k, t.d_model
        self.clear_stage()
        top, bottom = self.room()
        view = make_join(t, self.ctx, self.q_labels[i], top - 0.35, bottom)
        if h == 1:
            text = self.tr("This model has only one head: Z of {w} times W_O ({d_k} × {d}) gives its output "
                           "row. Bigger models run many heads and join their Z rows first.",
                           w=w, d_k=d_k, d=d)
        else:
            text = self.tr("Joined side by side, the {h} Z rows make one row of {h}·{d_k} = {h2} numbers. "
                           "Times W_O ({h2} × {d}) it gives the output row of {w}.",
                           h=h, d_k=d_k, h2=h * d_k, d=d, w=w)
        self.say(text)
        self.play(FadeIn(view.joined), FadeIn(view.segments), FadeIn(view.shapes[0]), run_time=0.7)
        self.play(FadeIn(view.symbols[0]), FadeIn(view.w_o), FadeIn(view.shapes[1]), run_time=0.7)
        self.play(FadeIn(view.symbols[1]), FadeIn(view.output), FadeIn(view.shapes[2:]),
                  run_time=0.7)
        self.wait(2.5)
        first = fmt(t.output[i, 0], DECIMALS)
        self.drawn("output", (i, 0), first)
        col = view.w_o.col_box(0, self.theme.accent, width=3)
        out_cell = view.output.cell_box(0, 0, self.theme.accent, width=3)
        row_box = box_around(view.joined.grid_only(), self.theme.accent, buff=BUFF_BOX, width=3)
        if h == 1:
            text = self.tr("Each output number mixes all {d_k} numbers of Z: {first}, the first, is "
                           "the row times W_O's first column.", d_k=d_k, first=first)
        else:
            text = self.tr("Each output number mixes every head: {first}, the first, is the joined "
                           "row times W_O's first column.", first=first)
        text += self.tr(" This row, 1 × {d}, is what the layer passes on for {w}.", d=d, w=w)
        self.say(text)
        self.play(Create(row_box), Create(col), Create(out_cell), run_time=0.6)
        self.wait(3.0)
