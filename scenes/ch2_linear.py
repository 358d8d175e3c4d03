"""Chapter 2 · Linear layers: X·W_Q, X·W_K, X·W_V give Q, K, V, one row per word."""

from __future__ import annotations

from manim import *  # noqa: F403

from scenes.base import ChapterScene
from scenes.widgets import (
    SAFE_BOTTOM,
    SAFE_X,
    fit_cells,
    fit_width,
    fmt,
    make_matrix,
    make_row_vector,
    make_text,
    shown_columns,
)

LAYERS = {  # result → (input side, weight name, theme colour attribute)
    "Q": ("query", "W_Q", "q"),
    "K": ("key", "W_K", "k"),
    "V": ("key", "W_V", "v"),
}


def make_layer_stage(scene: ChapterScene, name: str, top: float) -> dict[str, Mobject]:
    """X · W = R for one layer, fitted between `top` and the caption."""
    t, theme, h = scene.trace, scene.theme, scene.trace.head
    side, w_name, color_attr = LAYERS[name]
    X = t.X_q if side == "query" else t.X
    labels = scene.q_labels if side == "query" else scene.k_labels
    colors = scene.q_colors if side == "query" else scene.k_colors
    W, R = getattr(h, w_name), getattr(h, name)
    n, d = X.shape
    dk = W.shape[1]
    random = t.source == "random"
    max_cols, max_rows = 6, 8
    cols = len(shown_columns(d, max_cols)) + 2 * len(shown_columns(dk, max_cols))
    rows = max(n, len(shown_columns(d, max_rows)))
    label_w = min(1.9, max(len(s) for s in labels) * 0.17 + 0.3)
    layout = fit_cells(rows, cols, 2 * SAFE_X - label_w - 1.6, top - SAFE_BOTTOM - 1.25, 2)
    if not layout.numbers:  # heat map: keep room below for the followed row read out large
        layout = fit_cells(rows, cols, 2 * SAFE_X - label_w - 1.6, top - SAFE_BOTTOM - 2.0, 2)
    x_view = make_matrix(X, "X_q" if (side == "query" and t.cross) else "X", theme, 0, 0,
                         decimals=1 if random else 2, row_labels=labels, row_colors=colors,
                         max_cols=max_cols, record=scene.drawn, layout=layout)
    w_view = make_matrix(W, w_name, theme, 0, 0, decimals=1 if random else 2, max_cols=max_cols,
                         max_rows=max_rows, record=scene.drawn, layout=layout)
    r_view = make_matrix(R, name, theme, 0, 0, decimals=2, max_cols=max_cols, record=scene.drawn,
                         layout=layout)
    dot, eq = make_text("·", 40, theme.text), make_text("=", 36, theme.text)
    row = VGroup(x_view, dot, w_view, eq, r_view).arrange(RIGHT, buff=0.25)
    for v in (x_view, w_view, r_view):  # matrices hang from a common top line
        v.align_to(x_view.grid_only(), UP)
    dot.move_to([dot.get_center()[0], x_view.grid_only().get_center()[1], 0])
    eq.move_to([eq.get_center()[0], x_view.grid_only().get_center()[1], 0])
    color = getattr(theme, color_attr)
    tags = {
        "X": make_text("X" if not t.cross else ("X (target)" if side == "query" else "X (source)"),
                       28, theme.text, weight="BOLD").next_to(x_view.grid_only(), UP, buff=0.12),
        "W": make_text(w_name, 28, color, weight="BOLD").next_to(w_view.grid_only(), UP, buff=0.12),
        "R": make_text(name, 28, color, weight="BOLD").next_to(r_view.grid_only(), UP, buff=0.12),
    }
    learned = make_text(scene.tr("learned", "可学习") if t.trained else
                        scene.tr("learned (here still random)", "可学习（此处仍是随机的）"),
                        20, color).next_to(w_view.grid_only(), DOWN, buff=0.12)
    shape = make_text(f"{d} × {dk}", 18, theme.muted).next_to(learned, DOWN, buff=0.06)
    whole = VGroup(row, *tags.values(), learned, shape)
    fit_width(whole, 2 * SAFE_X)
    whole.move_to(ORIGIN).align_to(UP * top, UP)
    return {"X": x_view, "W": w_view, "R": r_view, "dot": dot, "eq": eq, "learned": learned,
            "shape": shape, **{f"tag_{k}": v for k, v in tags.items()}, "all": whole}


class LinearScene(ChapterScene):
    chapter = 2
    title_en = "Linear layers: X becomes Q, K and V"
    title_zh = "线性层：X 变成 Q、K、V"
    reads_trace = ("query_tokens", "key_tokens", "X", "X_q", "heads", "head_index", "source",
                   "cross")
    reads_focus = True

    def construct(self) -> None:
        self.show_title()
        self.top = self.title_mob.get_bottom()[1] - 0.3
        stage = None
        for name in ("Q", "K", "V"):
            stage = self.show_layer(name, stage)
        self.show_three_rows()
        self.finish()

    def follow_index(self, name: str) -> int:
        """The followed word's row in this layer's input (its own row; for cross-attention
        the keys and values come from the source sentence, where the top key is followed)."""
        if name == "Q" or not self.trace.cross:
            return self.focus
        return int(self.trace.head.weights[self.focus].argmax())

    def show_layer(self, name: str, previous: dict | None) -> dict:
        t, h = self.trace, self.trace.head
        stage = make_layer_stage(self, name, self.top)
        X, W, R = stage["X"], stage["W"], stage["R"]
        same_input = previous is not None and (not t.cross or name != "K")
        if previous is None:
            self.play(FadeIn(X, stage["tag_X"]), run_time=0.6)
        elif not same_input:
            self.play(FadeOut(previous["X"], previous["tag_X"]), FadeIn(X, stage["tag_X"]),
                      run_time=0.5)
        else:
            X = previous["X"]  # keep the very same object on screen
            stage["X"], stage["tag_X"] = X, previous["tag_X"]
        if previous is not None:
            self.play(FadeOut(*[previous[k] for k in ("W", "R", "dot", "eq", "learned", "shape",
                                                      "tag_W", "tag_R", "box_x", "box_r")]),
                      run_time=0.4)
        if previous is None:
            self.say(f"We follow {self.quoted(self.focus_word)} through every step that follows.",
                     f"接下来我们跟随 {self.quoted(self.focus_word)} 走过每一步。")
        bias = " + b" + name if h.has_bias else ""
        d, dk = h.W_Q.shape
        self.say(f"{name} = X · W_{name}{bias}: every row of X goes through the same learned "
                 f"{d} × {dk} matrix W_{name}.",
                 f"{name} = X · W_{name}{bias}：X 的每一行都乘以同一个可学习的 {d} × {dk} 矩阵 W_{name}。")
        self.play(FadeIn(stage["dot"], W, stage["tag_W"], stage["learned"], stage["shape"],
                         stage["eq"], stage["tag_R"], R.cells), run_time=0.8)
        self.follow_row(stage, name)
        return stage

    def follow_row(self, stage: dict, name: str) -> None:
        """The followed word's row of X travels through W and lands as its row of R."""
        X, W, R = stage["X"], stage["W"], stage["R"]
        i = self.follow_index(name)
        word = self.k_word(i) if (name != "Q" and self.trace.cross) else self.q_word(i)
        box_x = X.row_box(i, self.theme.accent)
        box_r = R.row_box(i, self.theme.accent)
        stage["box_x"], stage["box_r"] = box_x, box_r
        self.play(Create(box_x), run_time=0.4)
        traveller = VGroup(X.row_rect_of(i).copy(),
                           *[X.numbers[(i, j)].copy() for j in X.cols if (i, j) in X.numbers])
        self.play(traveller.animate.move_to(W.grid_only()).set_opacity(0.0), run_time=0.8)
        self.remove(traveller)
        self.play(FadeIn(R.number_group), Create(box_r), run_time=0.7)
        row = getattr(self.trace.head, name)[i]
        shown = ", ".join(fmt(row[j]) for j in shown_columns(len(row), 4) if j is not None)
        more = ", …" if len(row) > 4 else ""
        if not R.layout.numbers:  # cells too small for numbers: read the row out large
            vec = make_row_vector(row, name, i, self.theme, 2 * SAFE_X - 2.5, record=self.drawn,
                                  label=f"{name}[{word}]", label_color=self.theme.accent)
            vec.next_to(stage["all"], DOWN, buff=0.12)
            stage["vec"] = vec
            self.play(FadeIn(vec), run_time=0.4)
        self.say(f"The row of {self.quoted(word)} in X becomes its row of {name}: ({shown}{more}).",
                 f"{self.quoted(word)} 在 X 中的一行变成它在 {name} 中的一行：（{shown}{more}）。")
        self.wait(1.0)
        if "vec" in stage:
            self.play(FadeOut(stage.pop("vec")), run_time=0.3)

    def show_three_rows(self) -> None:
        """Q, K and V side by side: each row still belongs to its word."""
        self.clear_stage()
        h, theme = self.trace.head, self.theme
        max_w = (2 * SAFE_X - 3 * 1.2) / 3
        views = VGroup()
        for name, (side, _, color_attr) in LAYERS.items():
            labels = self.q_labels if side == "query" else self.k_labels
            colors = self.q_colors if side == "query" else self.k_colors
            v = make_matrix(getattr(h, name), name, theme, max_w, self.top - SAFE_BOTTOM - 0.9,
                            row_labels=labels, row_colors=colors, max_cols=6, record=self.drawn)
            v.tag = make_text(name, 28, getattr(theme, color_attr), weight="BOLD")
            v.tag.next_to(v.grid_only(), UP, buff=0.12)
            views.add(VGroup(v, v.tag))
        views.arrange(RIGHT, buff=0.5, aligned_edge=UP)
        fit_width(views, 2 * SAFE_X)
        views.move_to(ORIGIN).align_to(UP * self.top, UP)
        boxes = [g[0].row_box(self.follow_index(n), theme.accent) for g, n in zip(views, "QKV")]
        self.say(self.tr(f"Each row still belongs to its word: {self.quoted(self.focus_word)} "
                         "now has a query, a key and a value.",
                         f"每一行仍然属于它的词：{self.quoted(self.focus_word)} 现在有了查询、键和值。"))
        self.play(FadeIn(views), run_time=0.8)
        self.play(*[Create(b) for b in boxes], run_time=0.5)
        self.wait(1.5)
