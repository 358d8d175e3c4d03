"""Position by rotation (chapter `dot`, for a decoder with RoPE): the followed query's first
pair and its partner key's, each drawn before and after its turn at their true angles
and lengths, then q·k of the same two rows placed elsewhere: the same distance apart
gives the same score, one step further apart another.

Every number is attncore.rotary's reading of the trace (RotaryReading); the builders
only build, and `show_rotation` plays them in the chapter's scene. Both pairs are drawn
at one scale, so their lengths compare, in the colours of Q and K (a word's colour on a
mark without its word is lost to colour-blind viewers: the panel's title names it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from attention_video.attncore.rotary import PairTurn, Placement, RotaryReading, rotary_reading
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
from attention_video.scenes.text import fit_width, fmt, make_text
from manim import (
    DOWN,
    LEFT,
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
    radians = str(turn.position)
    lines.append(make_text(ctx.tr("turned {radians} rad = {degrees}°", radians=radians,
                                  degrees=degrees), NUMBER_FONT, theme.text))
    numbers = VGroup(*lines).arrange(DOWN, aligned_edge=LEFT, buff=BUFF_NOTE)
    numbers.next_to(plane.origin + RIGHT * half, RIGHT, buff=BUFF_NOTE)
    return TurnPanel(turn, plane, axes, before, after, arc, mark, head, numbers)


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
    heads = [tr("positions"), tr("apart"), "q·k", ""]
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


# ---- played in chapter `dot` -------------------------------------------------------------
def show_rotation(scene) -> None:
    """Chapter `dot`'s RoPE section (the scene's trace has `rope`): the two pairs turn, then the
    same rows at other positions. `scene` is the chapter's ChapterScene; the arrows are kept
    in scene.turns for the tests to measure."""
    t, i, j = scene.trace, scene.focus, scene.partner
    reading = rotary_reading(t, i, j)
    ctx, tr = scene.ctx, scene.tr
    scene.clear_stage()
    unit = turn_unit([reading.query, reading.key], PANEL_SIDE)
    y = STAGE_TOP - 0.5 - PANEL_SIDE / 2  # room for the panels' titles
    q_name, k_name = f"Q[{scene.q_labels[i]}]", f"K[{scene.k_labels[j]}]"
    panels = [
        make_turn_panel(reading.query, tr("{name}, pair 0, position {position}", name=q_name,
                                          position=i),
                        scene.theme.q, unit, np.array([0.0, y, 0]), ctx,
                        ("rope_Q_before", "Q"), ((reading.head, i), (i,))),
        make_turn_panel(reading.key, tr("{name}, pair 0, position {position}", name=k_name,
                                        position=j),
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
    scene.turns = panels
    q_turn, k_turn = (fmt(p.turn.degrees, 0) for p in panels)
    scene.say(tr("This decoder adds no P to its words: RoPE turns every pair of numbers of q "
                 "and k by an angle that grows with the word's position. Pair 0 turns one radian "
                 "per position: {q_name} at position {i} turns by {q_turn}°.",
                 q_name=q_name, i=i, q_turn=q_turn))
    query = panels[0]
    scene.play(FadeIn(VGroup(query.axes, query.title, query.before)), run_time=0.5)
    play_turn(scene, query)
    scene.wait(1.0)
    key = panels[1]
    scene.say(tr("{k_name} at position {j} turns by {k_turn}°. The later pairs turn more slowly "
                 "(pair m by base^(−2m/d_k) radians per position, base {base}); a turn keeps each "
                 "pair's length.", k_name=k_name, j=j, k_turn=k_turn,
                 base=fmt(t.rope.base, 0)))
    scene.play(FadeIn(VGroup(key.axes, key.title, key.before)), run_time=0.5)
    play_turn(scene, key)
    scene.wait(1.0)
    show_placements(scene, reading, panels)


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


def show_placements(scene, reading: RotaryReading, panels: list[TurnPanel]) -> None:
    """The same rows at other positions: the score depends on the distance alone."""
    i, j, tr = scene.focus, scene.partner, scene.tr
    cell = f"= Q·Kᵀ[{scene.q_labels[i]}, {scene.k_labels[j]}]"
    table = make_placement_table(reading, i, j, cell, scene.ctx)
    fit_width(table.group, 2 * SAFE_X)
    bottom = min(p.group.get_bottom()[1] for p in panels) - BUFF_MEDIUM
    if table.group.height > bottom - SAFE_BOTTOM:
        table.group.scale_to_fit_height(bottom - SAFE_BOTTOM)
    table.group.move_to(UP * (bottom + SAFE_BOTTOM) / 2)
    here, moved, further = reading.here, reading.moved, reading.further
    value = fmt(here.dot, 2)
    scene.drawn("scores", (i, j), value)
    scene.say(tr("Each pair's angle changes by the difference of the two turns, so q·k depends "
                 "on how far apart the words are, not where they stand. At positions {p_q} and "
                 "{p_k}: {value}, the cell of Q·Kᵀ.",
                 p_q=here.p_q, p_k=here.p_k, value=value))
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


