"""Chapter `input` · Input: sentence → tokens → embedding E (+ positional encoding P) → X."""

from __future__ import annotations

from dataclasses import dataclass

from attention_video.attncore.sources import LEARNED
from attention_video.attncore.trace import AttentionTrace
from attention_video.fastmanim import *  # noqa: F403
from attention_video.scenes.base import ChapterScene
from attention_video.scenes.context import ChapterContext
from attention_video.scenes.layout import (
    BUFF_BLOCK,
    BUFF_NOTE,
    BUFF_TIGHT,
    SAFE_BOTTOM,
    SAFE_X,
    STAGE_TOP,
    widest,
)
from attention_video.scenes.text import fit_width, make_text
from attention_video.scenes.widgets import (
    MatrixView,
    label_width,
    make_matrix,
    make_token_chips,
)

SIGN_FONT = 36  # the "+", "=" or "→" between two matrices
NAME_FONT = 30  # "E", "P", "X" above their matrices
SIGN_BUFF = BUFF_BLOCK  # between a matrix and the sign beside it
NAME_ROOM = 0.55  # above the grids: the matrix names
STEP_FONT = 20  # "layers 0–4" under the arrow to a later layer's X


@dataclass
class Term:
    """One matrix of E + P = X, its name above it and the sign in front of it."""

    view: MatrixView
    name: Text
    sign: Mobject | None  # None for the first term (E); the arrow to X may carry its step

    def parts(self) -> list[Mobject]:
        """What appears when the term is shown."""
        return [self.view, self.name] + ([self.sign] if self.sign is not None else [])


@dataclass
class EmbeddingSum:
    """E + P = X (or E → X, or E = X), laid out in one row below the title."""

    E: Term
    P: Term | None  # None when no positional encoding is added
    X: Term
    whole: VGroup


def embedding_signs(trace: AttentionTrace, positional: bool) -> list[str]:
    """The sign in front of each matrix after E: "+" P, then "=" X (the sum itself) or
    "→" X (X derived from the sum, e.g. normalised); no P (no positions added, as in a
    decoder with RoPE): E "=" or "→" X."""
    derived = trace.x_label not in ("E + P", "E")
    to_x = "→" if derived else "="
    return ["+", to_x] if positional else [to_x]


def layers_below(trace: AttentionTrace, ctx: ChapterContext) -> str | None:
    """The layers between E + P and a later layer's input X ("layers 0–4"), written under
    the arrow to X; None where X is made from E + P directly (layer 0, or the encoder's
    output of a translation model, which its caption tells)."""
    if trace.x_from not in (trace.HIDDEN, trace.NORMED_HIDDEN) or trace.layer == 0:
        return None
    if trace.layer == 1:
        return ctx.tr("layer 0")
    return ctx.tr("layers 0–{last}", last=trace.layer - 1)


def make_embedding_sum(trace: AttentionTrace, ctx: ChapterContext, labels: list[str],
                       colors: list[str], top: float,
                       positional: bool) -> EmbeddingSum:
    """E + P = X side by side (or E → X), hanging from `top`, fitted above the caption."""
    query_side = trace.cross and not trace.decoder  # a decoder: the source is the input
    E, P, X = (trace.E_q, trace.P_q, trace.X_q) if query_side else (trace.E, trace.P, trace.X)
    suffix = "_q" if query_side else ""
    signs = embedding_signs(trace, positional)
    step = layers_below(trace, ctx)
    parts = len(signs) + 1
    sign_room = widest(signs, SIGN_FONT) + 2 * SIGN_BUFF
    max_w = (2 * SAFE_X - label_width(labels) - sign_room * (parts - 1)) / parts
    max_h = top - SAFE_BOTTOM - NAME_ROOM
    kw = dict(decimals=1 if trace.on_grid else 2, max_cols=6 if trace.on_grid else 5,
              record=ctx.record)
    e_view = make_matrix(E, "E" + suffix, ctx.theme, max_w, max_h, row_labels=labels,
                         row_colors=colors, **kw)
    p_view = (make_matrix(P, "P" + suffix, ctx.theme, max_w, max_h, layout=e_view.layout, **kw)
              if parts == 3 else None)
    x_view = make_matrix(X, "X" + suffix, ctx.theme, max_w, max_h, layout=e_view.layout, **kw)

    views = [v for v in (e_view, p_view, x_view) if v is not None]
    sign_texts: list[Mobject] = [make_text(s, SIGN_FONT, ctx.theme.text) for s in signs]
    row = VGroup(views[0])
    for sign, view in zip(sign_texts, views[1:]):
        row.add(sign, view)
    row.arrange(RIGHT, buff=SIGN_BUFF)
    names = []
    for view, name in zip(views, ("E", "P", "X") if p_view is not None else ("E", "X")):
        color = ctx.theme.accent if name == "X" else ctx.theme.text
        names.append(make_text(name, NAME_FONT, color, weight="BOLD")
                     .next_to(view.grid_only(), UP, buff=BUFF_NOTE))
    if step:  # X is a hidden state: the layers below made it from the sum, as the arrow says
        arrow = sign_texts[-1]
        gap = views[-1].grid_only().get_left()[0] - views[-2].grid_only().get_right()[0] - BUFF_NOTE
        label = make_text(step, STEP_FONT, ctx.theme.muted)
        if label.width > gap and " " in step:  # two lines over the arrow: "layers" / "0–4"
            label = VGroup(*[make_text(line, STEP_FONT, ctx.theme.muted)
                             for line in step.rsplit(" ", 1)]).arrange(DOWN, buff=BUFF_TIGHT)
        fit_width(label, gap)
        sign_texts[-1] = VGroup(arrow, label.next_to(arrow, UP, buff=BUFF_NOTE))
    whole = VGroup(row, *names, *sign_texts[-1:] if step else ())
    fit_width(whole, 2 * SAFE_X)
    whole.set_x(0).align_to(UP * top, UP)

    terms = [Term(view, name, sign) for view, name, sign in zip(views, names, [None, *sign_texts])]
    return EmbeddingSum(E=terms[0], P=terms[1] if p_view is not None else None, X=terms[-1],
                        whole=whole)


class InputScene(ChapterScene):
    slug = "input"

    def construct(self) -> None:
        self.show_title()
        chips = self.show_tokens()
        whole = self.show_embeddings(chips)
        self.show_source(whole)
        self.finish()

    def tokens_and_colors(self) -> tuple[list[str], list[str]]:
        """The words chapter `input` embeds: the target sentence's in cross-attention (the source
        sentence's for a trained encoder–decoder, whose decoder rows `linear` explains)."""
        if self.trace.cross and not self.trace.decoder:
            return self.q_labels, self.q_colors
        return self.k_labels, self.k_colors

    def show_tokens(self) -> VGroup:
        labels, colors = self.tokens_and_colors()
        chips = make_token_chips(labels, colors, self.theme).move_to(UP * 1.2)
        n = len(labels)
        self.say(self.tr.plural("The sentence is split into {n} token; each keeps its own colour "
                                "in every matrix that follows.",
                                "The sentence is split into {n} tokens; each keeps its own colour "
                                "in every matrix that follows.", n))
        self.bring_in(chips, 0.8)
        return chips

    def show_embeddings(self, chips: VGroup) -> VGroup:
        """E (+ P) = X of the sentence the chapter embeds; returns the sum as drawn."""
        labels, colors = self.tokens_and_colors()
        t = self.trace
        positional = t.positional
        s = make_embedding_sum(t, self.ctx, labels, colors, top=STAGE_TOP, positional=positional)
        E = s.E.view
        n, d = E.values.shape
        self.say(self.tr("Each token looks up its embedding: a row of {d_model} numbers (E).",
                         d_model=t.d_model))
        self.play(*[ReplacementTransform(c, lab) for c, lab in zip(chips, E.row_labels)],
                  FadeIn(E.cells), FadeIn(s.E.name), run_time=1.2)
        self.play(FadeIn(E.number_group), run_time=0.6)
        self.wait(1.0)
        if s.P is not None:
            if layers_below(t, self.ctx) is not None:  # E + P is only layer 0's input
                self.say(self.tr("Layer 0's input adds its position: the model's learned position "
                                 "embedding P (with the sentence-segment embedding)."))
            elif t.can.positions == LEARNED:
                self.say(self.tr("Its position is added: the model's learned position embedding P (with the "
                                 "sentence-segment embedding)."))
            else:
                self.say(self.tr("Its position in the sentence is added: the sinusoidal positional encoding P."))
            self.play(FadeIn(*s.P.parts()), run_time=0.8)
            self.wait(1.0)
        self.say(self.x_caption(n, d))
        self.makes("X", "X_q")
        self.play(FadeIn(*s.X.parts()), run_time=0.8)
        self.wait(1.0)
        return s.whole

    def show_source(self, whole: VGroup) -> None:
        """Cross-attention (not an encoder–decoder, whose input is the source): the queries'
        sentence was embedded above; the keys and values come from the other one, whose
        tokens are shown here in their colours, before chapter `linear` draws its rows as
        X (source)."""
        t = self.trace
        if not t.cross or t.decoder:
            return
        chips = make_token_chips(self.k_labels, self.k_colors, self.theme)
        room = whole.get_bottom()[1] - BUFF_BLOCK - SAFE_BOTTOM
        if chips.height > room:  # no room under the sum: it makes way
            self.play(FadeOut(whole), run_time=0.5)
            chips.move_to(UP * (STAGE_TOP + SAFE_BOTTOM) / 2)
        else:
            chips.move_to(UP * (whole.get_bottom()[1] - BUFF_BLOCK + SAFE_BOTTOM) / 2)
        n = len(self.k_labels)
        self.say(self.tr.plural("The keys and values come from the other sentence: its {n} token "
                                "becomes a row of X (source) the same way.",
                                "The keys and values come from the other sentence: its {n} "
                                "tokens become the rows of X (source) the same way.", n))
        self.bring_in(chips, 1.0)

    def bring_in(self, chips: VGroup, hold: float) -> None:
        """Token chips rising in one after another, then `hold` seconds to read them."""
        self.play(LaggedStart(*[FadeIn(c, shift=0.2 * UP) for c in chips], lag_ratio=0.08),
                  run_time=min(2.5, 0.5 + 0.1 * len(chips)))
        self.wait(hold)

    def x_caption(self, n: int, d: int) -> str:
        """What X is: the sum itself, the normalised sum (layer 0), or a later layer's input."""
        t = self.trace
        if t.decoder:
            return self.tr("The encoder mixes the source words with self-attention: X = {x_label} ({n} × "
                           "{d}). The keys and values are read from X.",
                           x_label=self.x_label, n=n, d=d)
        if t.x_label in ("E + P", "E"):
            return self.tr("X = {x_label}: one row per word, {n} × {d}. Everything after works on X.",
                           x_label=self.x_label, n=n, d=d)
        if t.layer == 0 and not t.positional:
            return self.tr("The model normalises each row: X = {x_label} ({n} × {d}), the input to "
                           "layer 0. No position is added here.",
                           x_label=self.x_label, n=n, d=d)
        if t.layer == 0:
            return self.tr("The model normalises the sum: X = {x_label} ({n} × {d}), the input to layer 0.",
                           x_label=self.x_label, n=n, d=d)
        if t.layer == 1:
            return self.tr("The input to layer 1 is X = {x_label} ({n} × {d}): layer 0 has already mixed "
                           "the words.", x_label=self.x_label, n=n, d=d)
        return self.tr("The input to layer {layer} is X = {x_label} ({n} × {d}): layers 0–{layer2} have "
                       "already mixed the words.",
                       layer=t.layer, x_label=self.x_label, n=n, d=d, layer2=t.layer - 1)
