"""Position by rotation, for a decoder with RoPE, in the order of its arithmetic.

Chapter `linear` ends with the turn (`show_rope`): Q = X·W_Q and K = X·W_K are turned into
Q_rot = RoPE(Q) and K_rot = RoPE(K) before any score is made. The followed query's first pair and
its partner key's are drawn before and after their turn at their true angles and lengths,
then every pair's angle θ = p · base to the power −2m/dₖ as a table, then the turned rows Q_rot and K_rot.
Chapter `dot` ends with why (`show_distance`): q_rot·k_rot of the same two rows placed elsewhere,
the same distance apart, gives the same score, one step further apart another.

The rows the scores use are named by `score_names` (Q_rot, K_rot and Q_rot·K_rotᵀ with RoPE;
Q, K and Q·Kᵀ without), so no chapter after the turn calls the turned rows by the name of
the rows before it.

Every number is attncore.rotary's reading of the trace (RotaryReading) or trace.rope's; the
builders only build, and `show_rope` and `show_distance` play them in the chapters' scenes.
Both pairs are drawn
at one scale, so their lengths compare, in the colours of Q and K (a word's colour on a
mark without its word is lost to colour-blind viewers: the panel's title names it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from attention_video.attncore.rotary import (
    PairTurn,
    Placement,
    RotaryReading,
    rotary_reading,
    turn_degrees,
)
from attention_video.attncore.trace import AttentionTrace
from attention_video.fastmanim import FadeIn
from attention_video.scenes.arrows import Plane, make_vector
from attention_video.scenes.context import ChapterContext
from attention_video.scenes.layout import (
    ARROW_STROKE,
    BUFF_HAIR,
    BUFF_MEDIUM,
    BUFF_NOTE,
    BUFF_SMALL,
    PANEL_FONT,
    SAFE_BOTTOM,
    SAFE_X,
    STAGE_TOP,
    TABLE_COL_GAP,
    TABLE_ROW_STEP,
    widest,
)
from attention_video.scenes.text import fit_width, fmt, fmt_row, make_text
from attention_video.scenes.widgets import Recorder, make_matrix
from manim import (
    DOWN,
    LEFT,
    ORIGIN,
    RIGHT,
    UP,
    UR,
    Arc,
    Create,
    DashedLine,
    Mobject,
    Rotate,
    VGroup,
)

PANEL_SIDE = 2.3  # the square each pair is drawn in
PANEL_GAP = 1.0  # between the two panels (a square with its numbers on the right)
PAIR_REACH = 0.45  # the longest pair reaches this share of its square from the centre
TURN_RADIUS = 0.45  # the arc of the turn
MARK_OUT = BUFF_SMALL  # the turn's label's box, this far outside its arc
NARROW_TURN = 30.0  # degrees: a narrower wedge gets its label beyond the after-arrow
TITLE_FONT = 22  # "Q[milk], pair 0, position 5"
TABLE_FONT = 26  # the placements' table
NUMBER_FONT = 20  # "before (0.12, −0.40)"


# ---- names -----------------------------------------------------------------------------
@dataclass(frozen=True)
class ScoreNames:
    """What the rows the scores use are called on screen and in captions."""

    q: str  # "Q_rot" (RoPE(Q)) or "Q"
    k: str  # "K_rot" or "K"

    @property
    def scores(self) -> str:
        """The factor matrix: "Q_rot·K_rotᵀ" or "Q·Kᵀ"."""
        return f"{self.q}·{self.k}ᵀ"


PLAIN = ScoreNames("Q", "K")
TURNED = ScoreNames("Q_rot", "K_rot")  # Q_rot = RoPE(Q), K_rot = RoPE(K): the turned rows


def score_names(trace: AttentionTrace) -> ScoreNames:
    """Q_rot and K_rot when RoPE turned the rows the scores use (trace.rope), else Q and K."""
    return TURNED if trace.rope is not None else PLAIN


# ---- one pair's turn ---------------------------------------------------------------------
@dataclass
class TurnPanel:
    """One pair before and after its turn, drawn from a common origin."""

    turn: PairTurn
    plane: Plane
    axes: VGroup  # the pair's two axes, faint
    before: Mobject  # the pair before the turn (muted)
    after: Mobject  # … after (the word's colour): what the scores use
    arc: Arc  # from before to after, anticlockwise by the turn
    mark: Mobject  # "+286°"
    title: Mobject
    numbers: VGroup  # "before (x, y)", "after (x, y)", "5 rad = 286°"

    @property
    def group(self) -> VGroup:
        return VGroup(self.axes, self.before, self.after, self.arc, self.mark, self.title,
                      self.numbers)

    def shift(self, by: np.ndarray) -> None:
        """Move the panel, its plane with it."""
        self.group.shift(by)
        self.plane = Plane(self.plane.origin + by, self.plane.unit)


def turn_unit(turns: list[PairTurn], side: float) -> float:
    """Scene length of a pair of length 1: the longest pair reaches PAIR_REACH of the
    square from its centre."""
    longest = max((t.length for t in turns), default=0.0)
    return PAIR_REACH * side / longest if longest > 0 else 1.0


def direction(x: float, y: float) -> float:
    """A pair's angle from the first axis, in radians."""
    return float(np.arctan2(y, x))


def make_turn_panel(turn: PairTurn, title: str, color: str, unit: float, centre: np.ndarray,
                    ctx: ChapterContext, keys: tuple[str, str],
                    rows: tuple[tuple[int, ...], tuple[int, ...]]) -> TurnPanel:
    """Pair 0 of one row at `centre`; `keys`: the Recorder keys of the row before and after
    the turn, `rows` their indices before the pair's column."""
    theme = ctx.theme
    plane = Plane(np.asarray(centre, dtype=float), unit)
    half = PANEL_SIDE / 2
    axes = VGroup(DashedLine(plane.origin + LEFT * half, plane.origin + RIGHT * half,
                             color=theme.grid, stroke_width=2, dash_length=0.06),
                  DashedLine(plane.origin + DOWN * half, plane.origin + UP * half,
                             color=theme.grid, stroke_width=2, dash_length=0.06))
    before = make_vector(plane, *turn.before, theme.muted, ARROW_STROKE - 1)
    after = make_vector(plane, *turn.after, color, ARROW_STROKE + 1)
    start = direction(*turn.before)
    sweep = float(np.radians(turn.degrees))
    arc = Arc(radius=TURN_RADIUS, start_angle=start, angle=sweep, arc_center=plane.origin,
              color=theme.accent, stroke_width=3)
    degrees = fmt(turn.degrees, 0)
    ctx.record("rope_turn", (turn.position, 0), degrees)
    mark = make_text(f"+{degrees}°", PANEL_FONT - 2, theme.accent)
    place_mark(mark, plane.origin, start, sweep, turn.degrees >= NARROW_TURN,
               [(plane.origin + LEFT * half, plane.origin + RIGHT * half),
                (plane.origin + DOWN * half, plane.origin + UP * half),
                (plane.origin, plane.point(*turn.before)), (plane.origin, plane.point(*turn.after))])
    head = make_text(title, TITLE_FONT, color, weight="BOLD")
    head.next_to(plane.origin + UP * half + LEFT * half, UR, buff=BUFF_SMALL)
    lines = []
    for name, key, row, pair, ink in (
            (ctx.tr("before"), keys[0], rows[0], turn.before, theme.muted),
            (ctx.tr("after"), keys[1], rows[1], turn.after, color)):
        texts = [fmt(v, 2) for v in pair]
        for c, text in enumerate(texts):
            ctx.record(key, (*row, c), text)
        lines.append(make_text(f"{name} ({texts[0]}, {texts[1]})", NUMBER_FONT, ink))
    lines.append(make_text(turned_text(turn.position, degrees, ctx), NUMBER_FONT, theme.text))
    numbers = VGroup(*lines).arrange(DOWN, aligned_edge=LEFT, buff=BUFF_NOTE)
    numbers.next_to(plane.origin + RIGHT * half, RIGHT, buff=BUFF_NOTE)
    return TurnPanel(turn, plane, axes, before, after, arc, mark, head, numbers)


def turned_text(radians: int, degrees: str, ctx: ChapterContext) -> str:
    """A turn of `radians` as the panel writes it, `degrees` its angle as drawn (0-360): past
    a whole turn, the whole turns are written too ("7 rad = 1 × 360° + 41°": 7 rad is not 41°)."""
    whole = int(np.degrees(radians) // 360.0)
    if whole == 0:
        return ctx.tr("turned {radians} rad = {degrees}°", radians=radians, degrees=degrees)
    return ctx.tr("turned {radians} rad = {whole} × 360° + {degrees}°", radians=radians,
                  whole=whole, degrees=degrees)


def crosses(mob: Mobject, a: np.ndarray, b: np.ndarray, pad: float = BUFF_HAIR) -> bool:
    """Whether the segment a-b passes through mob's box grown by pad (sampled finely)."""
    x0, x1 = mob.get_left()[0] - pad, mob.get_right()[0] + pad
    y0, y1 = mob.get_bottom()[1] - pad, mob.get_top()[1] + pad
    for u in np.linspace(0.0, 1.0, 101):
        p = a + u * (b - a)
        if x0 <= p[0] <= x1 and y0 <= p[1] <= y1:
            return True
    return False


def place_mark(mark: Mobject, origin: np.ndarray, start: float, sweep: float, inside: bool,
               strokes: list[tuple[np.ndarray, np.ndarray]]) -> None:
    """The turn's label just outside its arc, inside the wedge (outside it, past the after-
    arrow, for a narrow turn), at the first angle and distance where no stroke (the axes,
    the two arrows) crosses it."""
    if inside:
        turns = [start + sweep / 2 + k * sweep / 8 for k in (0, 1, -1, 2, -2, 3, -3)]
    else:
        turns = [start + sweep + np.radians(a) for a in (25, 40, 55, 70)]
    tries = [(at, extra) for extra in (0.0, 0.2, 0.4) for at in turns]
    for at, extra in tries + [tries[0]]:  # none free: the first place
        out = np.array([np.cos(at), np.sin(at), 0.0])
        reach = TURN_RADIUS + MARK_OUT + extra + (abs(out[0]) * mark.width
                                                  + abs(out[1]) * mark.height) / 2
        mark.move_to(origin + reach * out)  # its box clear of the arc
        if not any(crosses(mark, a, b) for a, b in strokes):
            return


# ---- the same rows placed elsewhere ------------------------------------------------------
@dataclass
class PlacementTable:
    """q·k of the same q and k rows at three pairs of positions, one row each."""

    heading: VGroup
    rows: list[VGroup]  # here, moved (same distance), further (one more apart)

    @property
    def group(self) -> VGroup:
        return VGroup(self.heading, *self.rows)


def make_placement_table(reading: RotaryReading, i: int, j: int, cell_name: str,
                         ctx: ChapterContext) -> PlacementTable:
    """Positions, distance and q·k for the cell itself, the same distance elsewhere and one
    step further apart; the cell's row names it."""
    tr, theme = ctx.tr, ctx.theme
    heads = [tr("positions"), tr("apart"), "q_rot·k_rot", ""]
    cells = []
    for place, note in ((reading.here, cell_name), (reading.moved, tr("the same distance")),
                        (reading.further, tr("one step further"))):
        dot = fmt(place.dot, 2)
        ctx.record("rope_dot", (i, j, place.p_q, place.p_k), dot)
        cells.append([f"{place.p_q}, {place.p_k}", str(place.distance), dot, note])
    font = TABLE_FONT
    widths = [max(widest([heads[c]], font - 4), widest([row[c] for row in cells], font))
              for c in range(4)]
    xs = np.cumsum([0.0] + [w + TABLE_COL_GAP for w in widths[:-1]])
    heading = VGroup(*[make_text(h, font - 4, theme.muted).move_to(RIGHT * x, aligned_edge=LEFT)
                       for h, x in zip(heads, xs) if h])
    rows = []
    for r, row in enumerate(cells):
        y = DOWN * (r + 1) * TABLE_ROW_STEP * TABLE_FONT / PANEL_FONT
        texts = [make_text(text, font, theme.accent if c == 3 else theme.text,
                           weight="BOLD" if c == 2 else "NORMAL") for c, text in enumerate(row)]
        for c, text in enumerate(texts):
            if c in (1, 2):  # numbers right-aligned in their columns
                text.move_to(RIGHT * (xs[c] + widths[c]) + y, aligned_edge=RIGHT)
            else:
                text.move_to(RIGHT * xs[c] + y, aligned_edge=LEFT)
        rows.append(VGroup(*texts))
    return PlacementTable(heading, rows)


# ---- every pair's angle --------------------------------------------------------------------
ANGLE_PAIRS = 8  # more pairs than this: the first ANGLE_PAIRS − 2, "…" and the last
ANGLE_FONT = 24


def shown_angle_pairs(n: int) -> list[int | None]:
    """The pairs the angle table shows of n; None marks the "…" column."""
    if n <= ANGLE_PAIRS:
        return list(range(n))
    return list(range(ANGLE_PAIRS - 2)) + [None, n - 1]


@dataclass
class AngleTable:
    """θ = p · base to the power −2m/dₖ of every pair m at the followed query's and its key's
    positions, in degrees of turn (0-360), one row per position."""

    formula: Mobject  # "θ = p · base to the power −2m/dₖ, base 100000, dₖ = 64"
    heading: VGroup  # "pair m", 0, 1, …
    rows: list[VGroup]  # one per position: its row's name, then the angles

    @property
    def group(self) -> VGroup:
        return VGroup(self.formula, self.heading, *self.rows)


def make_angle_table(trace: AttentionTrace, rows: list[tuple[str, int, str]],
                     ctx: ChapterContext) -> AngleTable:
    """`rows`: (name, position, colour) per row; each angle is read from trace.rope.angles
    and recorded as "rope_turn" (position, pair)."""
    theme, rope = ctx.theme, trace.rope
    pairs = shown_angle_pairs(rope.angles.shape[1])
    font = ANGLE_FONT
    head_texts = [ctx.tr("pair m")] + ["…" if m is None else str(m) for m in pairs]
    cells = []
    for name, p, _ in rows:
        line = [name]
        for m in pairs:
            if m is None:
                line.append("…")
                continue
            text = fmt(turn_degrees(rope.angles[p, m]), 0)
            ctx.record("rope_turn", (p, m), text)
            line.append(f"{text}°")
        cells.append(line)
    widths = [max(widest([head_texts[c]], font), widest([r[c] for r in cells], font))
              for c in range(len(head_texts))]
    xs = np.cumsum([0.0] + [w + TABLE_COL_GAP for w in widths[:-1]])

    def place(texts: list[Mobject], y: np.ndarray) -> VGroup:
        for c, text in enumerate(texts):
            if c == 0:
                text.move_to(RIGHT * xs[c] + y, aligned_edge=LEFT)
            else:  # numbers right-aligned in their columns
                text.move_to(RIGHT * (xs[c] + widths[c]) + y, aligned_edge=RIGHT)
        return VGroup(*texts)

    heading = place([make_text(h, font, theme.muted) for h in head_texts], ORIGIN)
    lines = [place([make_text(text, font, color if c == 0 else theme.text)
                    for c, text in enumerate(line)], DOWN * (r + 1) * TABLE_ROW_STEP * font / PANEL_FONT)
             for r, (line, (_, _, color)) in enumerate(zip(cells, rows))]
    formula = make_text(ctx.tr("θ = p · base to the power −2m/dₖ, base {base}, dₖ = {d_k}; in degrees of turn",
                               base=fmt(rope.base, 0), d_k=trace.d_k), font, theme.accent)
    formula.next_to(heading, UP, buff=BUFF_MEDIUM).align_to(heading, LEFT)
    return AngleTable(formula, heading, lines)


# ---- played at the end of chapter `linear` -------------------------------------------------
def make_turn_panels(scene, reading: RotaryReading) -> list[TurnPanel]:
    """Pair 0 of the followed query and of its partner key, side by side under the title."""
    i, j, ctx, tr = scene.focus, scene.partner, scene.ctx, scene.tr
    names = score_names(scene.trace)
    unit = turn_unit([reading.query, reading.key], PANEL_SIDE)
    y = STAGE_TOP - 0.5 - PANEL_SIDE / 2  # room for the panels' titles
    q_word, k_word = scene.q_labels[i], scene.k_labels[j]
    panels = [
        make_turn_panel(reading.query, tr("{name}, pair 0, position {position}",
                                          name=f"Q[{q_word}] → {names.q}[{q_word}]", position=i),
                        scene.theme.q, unit, np.array([0.0, y, 0]), ctx,
                        ("rope_Q_before", "Q"), ((reading.head, i), (i,))),
        make_turn_panel(reading.key, tr("{name}, pair 0, position {position}",
                                        name=f"K[{k_word}] → {names.k}[{k_word}]", position=j),
                        scene.theme.k, unit, np.array([0.0, y, 0]), ctx,
                        ("rope_K_before", "K"), ((reading.kv_head, j), (j,))),
    ]
    widths = [p.group.width for p in panels]
    fit = min(1.0, (2 * SAFE_X - PANEL_GAP) / sum(widths))  # long words: both shrink alike
    left = -(fit * sum(widths) + PANEL_GAP) / 2
    for panel, width in zip(panels, widths):
        if fit < 1.0:
            panel.group.scale(fit, about_point=panel.plane.origin)
            panel.plane = Plane(panel.plane.origin, panel.plane.unit * fit)
        panel.shift(RIGHT * (left - panel.group.get_left()[0]))
        left += fit * width + PANEL_GAP
    return panels


def show_rope(scene) -> None:
    """Chapter `linear`'s last step for a trace with `rope`: Q and K, just made, are turned
    into Q_rot and K_rot before any score uses them: pair 0 of the followed query and of its
    partner key turning, every pair's angle, then the turned rows. `scene` is the chapter's
    ChapterScene; the panels are kept in scene.turns for the tests to measure."""
    t, i, j = scene.trace, scene.focus, scene.partner
    reading = rotary_reading(t, i, j)
    tr = scene.tr
    scene.clear_stage()
    panels = make_turn_panels(scene, reading)
    scene.turns = panels
    q_turn, k_turn = (fmt(p.turn.degrees, 0) for p in panels)
    q_name, k_name = f"Q[{scene.q_labels[i]}]", f"K[{scene.k_labels[j]}]"
    scene.say(tr("This decoder adds no P to its words: before any score, RoPE turns every pair of "
                 "numbers of Q and K by an angle that grows with the word's position. Pair 0 turns "
                 "one radian per position: {q_name} at position {i} turns by {q_turn}°.",
                 q_name=q_name, i=i, q_turn=q_turn))
    query = panels[0]
    show_panel(scene, query)
    play_turn(scene, query)
    scene.wait(1.0)
    key = panels[1]
    scene.say(tr("{k_name} at position {j} turns by {k_turn}°. A turn keeps each pair's length.",
                 k_name=k_name, j=j, k_turn=k_turn))
    show_panel(scene, key)
    play_turn(scene, key)
    scene.wait(1.0)
    show_angles(scene, panels)
    show_turned_rows(scene)


def show_angles(scene, panels: list[TurnPanel]) -> None:
    """Every pair's angle at the two positions, under the panels."""
    t, i, j = scene.trace, scene.focus, scene.partner
    rows = [(f"Q[{scene.q_labels[i]}], p = {i}", i, scene.theme.q),
            (f"K[{scene.k_labels[j]}], p = {j}", j, scene.theme.k)]
    table = make_angle_table(t, rows, scene.ctx)
    fit_width(table.group, 2 * SAFE_X)
    bottom = min(p.group.get_bottom()[1] for p in panels) - BUFF_MEDIUM
    if table.group.height > bottom - SAFE_BOTTOM:
        table.group.scale_to_fit_height(bottom - SAFE_BOTTOM)
    table.group.move_to(UP * (bottom + SAFE_BOTTOM) / 2)
    n = t.rope.angles.shape[1]
    last = n - 1
    first = fmt(turn_degrees(t.rope.angles[i, 1 if n > 1 else 0]), 0)
    least = fmt(turn_degrees(t.rope.angles[i, last]), 0)
    scene.say(scene.tr("Each of the {n} pairs turns by its own angle, θ = p · base to the power −2m/dₖ: at "
                       "position {i}, pair 1 by {first}°, pair {last} by {least}°. The later pairs "
                       "turn ever more slowly.",
                       n=n, i=i, first=first, last=last, least=least))
    scene.play(FadeIn(table.group), run_time=0.6)
    scene.wait(1.5)


def show_turned_rows(scene) -> None:
    """Q_rot = RoPE(Q) and K_rot = RoPE(K) side by side, the followed rows boxed: the rows
    chapters `factor` and `dot` multiply."""
    t, i, theme = scene.trace, scene.focus, scene.theme
    names = score_names(t)
    h = t.head
    scene.clear_stage()
    # built narrower until both fit side by side: scaled down instead, their smallest texts
    # ("…", numbers at the size floor) would fall under it
    limit, max_w = 2 * SAFE_X - 0.1, SAFE_X - TURNED_LABEL_ROOM
    for _ in range(3):
        width = make_turned_views(scene, names, max_w)[0].width  # measured, not recorded
        if width <= limit:
            break
        max_w -= (width - limit) / 2 + 0.05
    views, shown = make_turned_views(scene, names, max_w, scene.drawn)
    fit_width(views, limit)
    views.set_x(0).align_to(UP * STAGE_TOP, UP)
    boxes = [view.row_box(row, theme.accent) for view, row in shown]
    before = t.rope.Q_before[t.head_index, i]
    q_word = scene.q_labels[i]
    scene.say(scene.tr("{q} = RoPE(Q) and {k} = RoPE(K): the turned rows, which every score uses "
                       "from here on. Q[{word}] = ({before}) became {q}[{word}] = ({after}).",
                       q=names.q, k=names.k, word=q_word,
                       before=fmt_row(before, TURNED_QUOTED),
                       after=fmt_row(h.Q[i], TURNED_QUOTED)))
    scene.makes("Q", "K")  # the trace's Q and K: the turned rows
    scene.play(FadeIn(views), run_time=0.8)
    scene.play(*[Create(b) for b in boxes], run_time=0.5)
    scene.wait(1.5)


def make_turned_views(scene, names: ScoreNames, max_w: float,
                      record: Recorder | None = None) -> tuple[VGroup, list]:
    """Q_rot and K_rot, each at most `max_w` wide (its grid), named above, side by side;
    with each view's followed row (the query's, the partner key's); their numbers recorded
    in `record` (None: built only to be measured)."""
    theme, h = scene.theme, scene.trace.head
    views, shown = VGroup(), []
    for name, rows, key, labels, colors, color, row in (
            (names.q, h.Q, "Q", scene.q_labels, scene.q_colors, theme.q, scene.focus),
            (names.k, h.K, "K", scene.k_labels, scene.k_colors, theme.k, scene.partner)):
        view = make_matrix(rows, key, theme, max_w, STAGE_TOP - SAFE_BOTTOM - TURNED_TAG_ROOM,
                           row_labels=labels, row_colors=colors, max_cols=TURNED_COLS,
                           record=record)
        tag = make_text(f"{name} = RoPE({name[0]})", 28, color, weight="BOLD")
        tag.next_to(view.grid_only(), UP, buff=BUFF_SMALL)
        views.add(VGroup(view, tag))
        shown.append((view, row))
    views.arrange(RIGHT, buff=PANEL_GAP, aligned_edge=UP)
    return views, shown


TURNED_COLS = 6  # Q_rot and K_rot side by side: wider rows are folded ("…")
TURNED_TAG_ROOM = 0.9  # above Q_rot and K_rot: their names
TURNED_LABEL_ROOM = 1.2  # beside each: its row labels and the gap
TURNED_QUOTED = 4  # numbers of the followed row quoted in the caption


def show_panel(scene, panel: TurnPanel) -> None:
    """The panel's title and its pair before the turn. The title heads the whole panel (its
    axes, both arrows, their numbers), so it comes in on its own, not as one group with
    the arrow as a label is (the lint pairs a group's one text with its strokes)."""
    scene.play(FadeIn(panel.title), FadeIn(VGroup(panel.axes, panel.before)), run_time=0.5)


def play_turn(scene, panel: TurnPanel) -> None:
    """A copy of the pair before the turn swings round the origin by the turn, anticlockwise,
    as its arc grows; where it stops, the pair after the turn takes its place."""
    moving = panel.before.copy().set_color(panel.after.get_color())
    sweep = float(np.radians(panel.turn.degrees))
    scene.play(Rotate(moving, angle=sweep, about_point=panel.plane.origin), Create(panel.arc),
               run_time=min(2.0, 0.6 + sweep / np.pi))
    scene.add(panel.after)
    scene.remove(moving)
    scene.play(FadeIn(VGroup(panel.mark, panel.numbers)), run_time=0.5)


# ---- played at the end of chapter `dot` ---------------------------------------------------
def show_distance(scene) -> None:
    """Chapter `dot`'s last step for a trace with `rope`: the same two rows (before their
    turn) placed at other positions: the score depends on the distance alone."""
    t, i, j, tr = scene.trace, scene.focus, scene.partner, scene.tr
    reading = rotary_reading(t, i, j)
    names = score_names(t)
    scene.clear_stage()
    cell = f"= {names.scores}[{scene.q_labels[i]}, {scene.k_labels[j]}]"
    table = make_placement_table(reading, i, j, cell, scene.ctx)
    fit_width(table.group, 2 * SAFE_X)
    bottom = STAGE_TOP - BUFF_MEDIUM
    if table.group.height > bottom - SAFE_BOTTOM:
        table.group.scale_to_fit_height(bottom - SAFE_BOTTOM)
    table.group.move_to(UP * (bottom + SAFE_BOTTOM) / 2)
    here, moved, further = reading.here, reading.moved, reading.further
    value = fmt(here.dot, 2)
    scene.drawn("scores", (i, j), value)
    scene.say(tr("Why the turn tells word order: the product of two turned rows depends only on "
                 "how far apart their words are. At positions {p_q} and {p_k}: {value}, the cell of "
                 "{scores}.", p_q=here.p_q, p_k=here.p_k, value=value, scores=names.scores))
    scene.play(FadeIn(VGroup(table.heading, table.rows[0])), run_time=0.6)
    scene.wait(1.0)
    scene.say(placement_caption(scene, moved, further))
    scene.play(FadeIn(VGroup(table.rows[1])), run_time=0.5)
    scene.play(FadeIn(VGroup(table.rows[2])), run_time=0.5)
    scene.wait(1.5)


def placement_caption(scene, moved: Placement, further: Placement) -> str:
    """The same rows elsewhere, worded from the numbers (equal at the same distance)."""
    same, other = fmt(moved.dot, 2), fmt(further.dot, 2)
    return scene.tr("The same two rows placed at positions {m_q} and {m_k}, again {d} apart, give "
                    "{same} again; at {f_q} and {f_k}, {d1} apart, they give {other}.",
                    m_q=moved.p_q, m_k=moved.p_k, d=moved.distance, same=same,
                    f_q=further.p_q, f_k=further.p_k, d1=further.distance, other=other)
