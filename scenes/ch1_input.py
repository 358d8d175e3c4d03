"""Chapter 1 · Input: sentence → tokens → embedding E (+ positional encoding P) → X."""

from __future__ import annotations

from manim import *  # noqa: F403

from scenes.base import ChapterScene
from scenes.widgets import (
    SAFE_BOTTOM,
    SAFE_X,
    Recorder,
    Theme,
    fit_width,
    make_label,
    make_matrix,
    make_text,
)


def make_token_chips(labels: list[str], colors: list[str], theme: Theme,
                     max_width: float = 2 * SAFE_X) -> VGroup:
    """The tokens as coloured chips in one line, or several lines when they don't fit."""
    chips = VGroup(*[make_label(t, 30, c, theme, max_width=2.2) for t, c in zip(labels, colors)])
    chips.arrange(RIGHT, buff=0.15)
    if chips.width > max_width:
        per_row = max(1, int(len(chips) * max_width / chips.width))
        rows = -(-len(chips) // per_row)
        chips.arrange_in_grid(rows=rows, buff=(0.12, 0.15), flow_order="rd")
        fit_width(chips, max_width)
    return chips


def make_embedding_sum(trace, theme: Theme, labels: list[str], colors: list[str],
                       record: Recorder, top: float, positional: bool) -> dict[str, VGroup]:
    """E + P = X side by side (or E → X), fitted between `top` and the caption."""
    n, d = trace.X_q.shape if trace.cross else trace.X.shape
    E, P, X = (trace.E_q, trace.P_q, trace.X_q) if trace.cross else (trace.E, trace.P, trace.X)
    prefix = "_q" if trace.cross else ""
    derived = trace.x_label not in ("E + P", "E")
    parts = 3 if positional or derived else 2
    max_h = top - SAFE_BOTTOM - 0.6
    label_w = min(1.9, max(len(s) for s in labels) * 0.17 + 0.3)
    max_w = (2 * SAFE_X - label_w - 0.9 * (parts - 1)) / parts
    decimals = 1 if trace.source == "random" else 2
    kw = dict(decimals=decimals, max_cols=6 if trace.source == "random" else 5, record=record)
    mats = {"E": make_matrix(E, "E" + prefix, theme, max_w, max_h, row_labels=labels,
                             row_colors=colors, **kw)}
    layout = mats["E"].layout
    if parts == 3:
        mats["P"] = make_matrix(P, "P" + prefix, theme, max_w, max_h, layout=layout, **kw)
    mats["X"] = make_matrix(X, "X" + prefix, theme, max_w, max_h, layout=layout, **kw)
    names = {"E": "E", "P": "P", "X": "X"}
    row = VGroup()
    for i, (k, m) in enumerate(mats.items()):
        if i:
            sign = "=" if (k == "X" and not derived) else ("→" if k == "X" else "+")
            m.op = make_text(sign, 36, theme.text)  # the sign in front of this matrix
            row.add(m.op)
        row.add(m)
    row.arrange(RIGHT, buff=0.3)
    for k, m in mats.items():
        name = make_text(names[k], 30, theme.accent if k == "X" else theme.text, weight="BOLD")
        name.next_to(m.grid_only(), UP, buff=0.15)
        m.name_tag = name
    whole = VGroup(row, *[m.name_tag for m in mats.values()])
    fit_width(whole, 2 * SAFE_X)
    whole.move_to(RIGHT * 0).align_to(UP * (top - 0.05), UP)
    return mats


class InputScene(ChapterScene):
    chapter = 1
    title_en = "Input: words become rows of numbers"
    title_zh = "输入：词变成一行行数字"
    reads_trace = ("query_tokens", "key_tokens", "E", "P", "X", "E_q", "P_q", "X_q", "x_label")
    reads_focus = False  # the followed word is picked up in chapter 2

    def construct(self) -> None:
        self.show_title()
        chips = self.show_tokens()
        self.show_embeddings(chips)
        self.finish()

    def tokens_and_colors(self) -> tuple[list[str], list[str], str]:
        if self.trace.cross:
            return self.q_labels, self.q_colors, self.settings.target or ""
        return self.k_labels, self.k_colors, self.settings.sentence

    def show_tokens(self) -> VGroup:
        labels, colors, _ = self.tokens_and_colors()
        chips = make_token_chips(labels, colors, self.theme).move_to(UP * 1.2)
        n = len(labels)
        self.say(f"The sentence is split into {n} token{'s' if n != 1 else ''}; "
                 "each keeps its own colour in every matrix that follows.",
                 f"句子被切分成 {n} 个词元；每个词元在后面所有矩阵里都保持自己的颜色。")
        self.play(LaggedStart(*[FadeIn(c, shift=0.2 * UP) for c in chips], lag_ratio=0.08),
                  run_time=min(2.5, 0.5 + 0.1 * n))
        self.wait(0.8)
        return chips

    def show_embeddings(self, chips: VGroup) -> dict:
        labels, colors, _ = self.tokens_and_colors()
        t = self.trace
        positional = bool(t.settings.get("positional", True)) or t.source != "random"
        mats = make_embedding_sum(t, self.theme, labels, colors, self.drawn,
                                  top=self.title_mob.get_bottom()[1] - 0.25, positional=positional)
        E = mats["E"]
        n, d = E.values.shape
        self.say(f"Each token looks up its embedding: a row of {t.d_model} numbers (E).",
                 f"每个词元查到自己的嵌入向量：一行 {t.d_model} 个数字（E）。")
        self.play(*[ReplacementTransform(c, lab) for c, lab in zip(chips, E.row_labels)],
                  FadeIn(E.cells), FadeIn(E.name_tag), run_time=1.2)
        self.play(FadeIn(E.number_group), run_time=0.6)
        self.wait(1.0)
        if "P" in mats:
            P = mats["P"]
            if t.trained:
                self.say("Its position is added: the model's learned position embedding P "
                         "(with the sentence-segment embedding).",
                         "再加上它的位置：模型学到的位置嵌入 P（含句段嵌入）。")
            else:
                self.say("Its position in the sentence is added: the sinusoidal positional "
                         "encoding P.", "再加上它在句子中的位置：正弦位置编码 P。")
            self.play(FadeIn(P, P.name_tag, P.op), run_time=0.8)
            self.wait(1.0)
        X = mats["X"]
        if t.x_label in ("E + P", "E"):
            self.say(f"X = {t.x_label}: one row per word, {n} × {d}. Everything after works on X.",
                     f"X = {t.x_label}：每个词一行，{n} × {d}。后面的一切都作用在 X 上。")
        else:
            if t.layer == 0:
                self.say(f"The model normalises the sum: X = {t.x_label} ({n} × {d}), "
                         "the input to layer 0.",
                         f"模型先把和归一化：X = {t.x_label}（{n} × {d}），即第 0 层的输入。")
            else:
                self.say(f"The input to layer {t.layer} is X = {t.x_label} ({n} × {d}): "
                         f"layers 0–{t.layer - 1} have already mixed the words.",
                         f"第 {t.layer} 层的输入是 X = {t.x_label}（{n} × {d}）："
                         f"第 0–{t.layer - 1} 层已经把词混合过了。")
        self.play(FadeIn(X, X.name_tag, X.op), run_time=0.8)
        self.wait(1.0)
        return mats
