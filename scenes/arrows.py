"""Vectors drawn as arrows in their plane (chapters `dot` and `learning`): the followed word's query
along a line, each key at its true angle to it and its true length, and the keys'
shadows on the query's line, whose lengths times |q| are the scores.

    q·k = |q| · |k| · cos θ = |q| · (the shadow of k on q's line)

Everything drawn is read from attention_video.attncore.geometry.QueryGeometry (a trace reading); one
scale (a Plane) maps every vector of a picture, and of every snapshot of chapter `learning`, so
lengths and the angles to the query are to scale. The angles between two keys are not:
each key is turned from the query alone. Builders only build; chapters animate.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from attention_video.attncore.geometry import QueryGeometry
from attention_video.scenes.context import ChapterContext
from attention_video.scenes.layout import (
    ARC_RADIUS,
    ARC_STEP,
    ARROW_LABEL_FONT,
    ARROW_LABEL_ROOM,
    ARROW_STROKE,
    ARROW_TIP,
    AXIS_OVERHANG,
    BUFF_HAIR,
    BUFF_LABEL,
    BUFF_NONE,
    BUFF_SMALL,
    BUFF_TIGHT,
    LABELLED_ARROW,
    SAFE_X,
    SAFE_Y,
    SHADOW_ROW,
    SHADOW_STROKE,
    TABLE_COL_GAP,
    TABLE_ROW_STEP,
    text_width,
    widest,
)
from attention_video.scenes.lint import MARK_REACH, confusable
from attention_video.scenes.text import fmt, make_text
from attention_video.scenes.themes import Theme
from attention_video.scenes.widgets import Recorder
from manim import (
    DOWN,
    LEFT,
    RIGHT,
    UP,
    Arc,
    Arrow,
    DashedLine,
    Dot,
    Line,
    Mobject,
    VGroup,
)

Q_LABEL_FONT = ARROW_LABEL_FONT + 2  # the query's name, bold
MIN_ARROW = 1e-3  # scene length under which a vector is drawn as a dot (it has no direction)
SIDE_GAP = BUFF_LABEL  # a word written beside its arrow (no room at the tip) clears its line by this
LABEL_REACH = MARK_REACH - 0.02  # a word names its arrow within this of its shaft (the lint's
#                                  reach, less a margin for rounding)
TIP_SHARE = 0.3  # an arrow's tip is at most this share of its length (make_vector)
STROKE_CLEAR = 0.05  # a word's box clears every line of the picture by this: a line has a width,
#                      so a word keeps a little more than the BUFF_HAIR it keeps from another


# ---- which keys are drawn --------------------------------------------------------------------
def keys_to_draw(g: QueryGeometry, featured: int, most: int) -> tuple[list[int], list[int]]:
    """(drawn, named): the featured key, the highest-scoring others and the least aligned,
    at most `most`, in score order; the other allowed keys are only named."""
    ranked = list(g.by_score())
    least = g.least_aligned()
    chosen = {featured, least} if featured in ranked else {least}
    for j in ranked:
        if len(chosen) >= most:
            break
        chosen.add(j)
    drawn = [j for j in ranked if j in chosen]
    return drawn, [j for j in ranked if j not in chosen]


def labelled_picture(build: Callable[[list[int]], ArrowPicture], drawn: list[int],
                     named: list[int], keep: set[int], colors: dict[int, str] | None = None,
                     ) -> tuple[ArrowPicture, list[int], list[int]]:
    """The picture `build(drawn)`, with every arrow carrying its word: while a key outside
    `keep` finds no free place for its word, the lowest-scoring such key is named instead
    of drawn (a word-less arrow would be told from its neighbours by colour alone). Two
    arrows in `colors` that a colour-blind viewer cannot tell apart (scenes.lint.confusable)
    are not drawn together either: the lower-scoring one outside `keep` is named. Then,
    while a key of `keep` has no word, the lowest-scoring other key is named instead of
    drawn if that gives a kept key its word. Returns the picture, the keys drawn and the
    keys named, each in score order."""
    drawn, named = list(drawn), list(named)
    picture = build(drawn)
    order = {k: r for r, k in enumerate(picture.geometry.by_score())}
    alike = look_alike(drawn, colors or {}, keep, order)
    if alike:
        drawn = [k for k in drawn if k not in alike]
        named = sorted(named + alike, key=order.__getitem__)
        picture = build(drawn)

    def bare(p: ArrowPicture, keys: list[int]) -> list[int]:
        return [k for k in keys if k not in p.labels]

    while missing := bare(picture, drawn):
        loose = [k for k in missing if k not in keep]
        out = loose[-1] if loose else next((k for k in reversed(drawn) if k not in keep), None)
        if out is None:
            break
        fewer = [k for k in drawn if k != out]
        trial = build(fewer)
        if not loose and len(bare(trial, fewer)) >= len(missing):
            break  # naming another key would not give a kept key its word
        drawn, picture = fewer, trial
        named = sorted(named + [out], key=order.__getitem__)
    return picture, drawn, named


def look_alike(drawn: list[int], colors: dict[int, str], keep: set[int],
               order: dict[int, int]) -> list[int]:
    """The drawn keys to name instead, so that no two drawn arrows have colours that look
    alike under colour blindness: of each such pair, the lower-scoring key outside `keep`."""
    out: list[int] = []
    for a, b in itertools.combinations(sorted(drawn, key=order.__getitem__), 2):
        if a in out or b in out or a not in colors or b not in colors:
            continue
        if confusable([(str(a), colors[a]), (str(b), colors[b])]):
            lower = b if b not in keep else a if a not in keep else None
            if lower is not None:
                out.append(lower)
    return out


# ---- the scale -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Plane:
    """Where vectors land on screen: the arrows' common tail and the scene length of a
    vector of length 1, the same for every arrow drawn with it."""

    origin: np.ndarray  # (3,) scene point
    unit: float

    def point(self, along: float, across: float) -> np.ndarray:
        return self.origin + self.unit * np.array([along, across, 0.0])

    def length(self, scene_length: float) -> float:
        """The vector length a scene length stands for (tests measure arrows with it)."""
        return scene_length / self.unit


def q_label_room(q_name: str) -> float:
    """Right of the query's tip: its name, beyond the end of its line."""
    return AXIS_OVERHANG + 0.1 + text_width(q_name, Q_LABEL_FONT, "BOLD")


def fit_plane(geoms: list[QueryGeometry], keys: list[int], left: float, right: float,
              bottom: float, top: float, shadows: int, q_name: str) -> Plane:
    """The largest scale at which the query and `keys` of every picture in `geoms` fit the
    box (left, right, bottom, top), with `shadows` bars under the query's line, the
    query's name right of its tip and room for the labels at the other tips; centred."""
    xs = [0.0] + [g.q_norm for g in geoms] + [float(g.shadows[j]) for g in geoms for j in keys]
    ys = [0.0] + [float(g.heights[j]) for g in geoms for j in keys]
    x0, x1, y1 = min(xs), max(xs), max(ys)
    band = shadows * SHADOW_ROW + (SHADOW_ROW / 2 if shadows else 0.0)  # bars under the line
    right_room = max(ARROW_LABEL_ROOM, q_label_room(q_name))
    room_w = right - left - ARROW_LABEL_ROOM - right_room
    room_h = top - bottom - band - 2 * ARROW_LABEL_ROOM
    unit = min(room_w / max(x1 - x0, 1e-9), room_h / max(y1, 1e-9))
    x_mid = (left + ARROW_LABEL_ROOM + right - right_room) / 2 - unit * (x0 + x1) / 2
    y_mid = (bottom + band + top) / 2 - unit * y1 / 2
    return Plane(np.array([x_mid, y_mid, 0.0]), unit)


# ---- the picture -----------------------------------------------------------------------------
@dataclass
class ArrowPicture:
    """One query and its keys as arrows in the plane, with what chapters label them by.

    The parts are keyed by key index; a key without an arrow (a zero vector) has a dot.
    """

    geometry: QueryGeometry
    plane: Plane
    axis: DashedLine  # the query's line
    q_arrow: Mobject
    q_label: Mobject
    arrows: dict[int, Mobject]  # key → its arrow (or a dot for a zero key)
    labels: dict[int, Mobject]  # key → its word at the tip (left out where it would overlap)
    drops: dict[int, DashedLine] = field(default_factory=dict)  # tip → its shadow bar
    shadows: dict[int, Line] = field(default_factory=dict)  # key → its bar under the line
    bar_labels: dict[int, Mobject] = field(default_factory=dict)  # key → its word by its bar
    arcs: dict[int, VGroup] = field(default_factory=dict)  # key → its angle's arc and "θ"

    @property
    def keys(self) -> list[int]:
        return list(self.arrows)

    @property
    def group(self) -> VGroup:
        return VGroup(self.axis, *self.shadows.values(), *self.drops.values(),
                      *self.arcs.values(), *self.arrows.values(), self.q_arrow,
                      *self.labels.values(), *self.bar_labels.values(), self.q_label)

    def key_group(self, j: int) -> VGroup:
        """Key j's arrow and label (what joins the picture when the key does)."""
        return VGroup(*(p for p in (self.arrows.get(j), self.labels.get(j)) if p is not None))

    def shadow_group(self, j: int) -> VGroup:
        """Key j's drop, its bar and the word beside the bar."""
        return VGroup(*(p for p in (self.drops.get(j), self.shadows.get(j),
                                    self.bar_labels.get(j)) if p is not None))


def make_vector(plane: Plane, along: float, across: float, color: str,
                stroke: float = ARROW_STROKE) -> Mobject:
    """An arrow from the plane's origin to (along, across); a dot when it has no length."""
    end = plane.point(along, across)
    if np.linalg.norm(end - plane.origin) < MIN_ARROW:
        return Dot(plane.origin, radius=0.06, color=color)
    return Arrow(plane.origin, end, buff=BUFF_NONE, color=color, stroke_width=stroke,
                 tip_length=ARROW_TIP, max_tip_length_to_length_ratio=TIP_SHARE,
                 max_stroke_width_to_length_ratio=12)


def _overlaps(a: Mobject, others: list[Mobject], pad: float = BUFF_HAIR) -> bool:
    for b in others:
        if (abs(a.get_x() - b.get_x()) < (a.width + b.width) / 2 + pad
                and abs(a.get_y() - b.get_y()) < (a.height + b.height) / 2 + pad):
            return True
    return False


Segment = tuple[np.ndarray, np.ndarray]  # a straight stroke of the picture, end to end


def _hits(mob: Mobject, segment: Segment, pad: float = STROKE_CLEAR) -> bool:
    """Whether the straight `segment` passes through `mob`'s box grown by `pad`
    (Liang–Barsky clipping of the segment to the box)."""
    (x0, y0), (x1, y1) = segment[0][:2], segment[1][:2]
    lo = (mob.get_x() - mob.width / 2 - pad, mob.get_y() - mob.height / 2 - pad)
    hi = (mob.get_x() + mob.width / 2 + pad, mob.get_y() + mob.height / 2 + pad)
    t0, t1 = 0.0, 1.0
    for p, q in ((-(x1 - x0), x0 - lo[0]), (x1 - x0, hi[0] - x0),
                 (-(y1 - y0), y0 - lo[1]), (y1 - y0, hi[1] - y0)):
        if p == 0:
            if q < 0:
                return False
            continue
        r = q / p
        if p < 0:
            t0 = max(t0, r)
        else:
            t1 = min(t1, r)
        if t0 > t1:
            return False
    return True


def _free(mob: Mobject, placed: list[Mobject], strokes: list[Segment]) -> bool:
    """Clear of the labels placed, of every stroke and inside the safe area."""
    inside = (abs(mob.get_x()) + mob.width / 2 <= SAFE_X
              and abs(mob.get_y()) + mob.height / 2 <= SAFE_Y)
    return inside and not _overlaps(mob, placed) and not any(_hits(mob, s) for s in strokes)


def _tip_label(text: str, color: str, tip: np.ndarray, origin: np.ndarray,
               placed: list[Mobject], strokes: list[Segment] = ()) -> Mobject | None:
    """A word just beyond an arrow's tip, along the arrow (or above, below, left or right
    of the tip, or further out, or beside the arrow), clear of the labels already placed
    and of the picture's strokes (its arrows, shadow drops and bars); None where every
    place is taken."""
    label = make_text(text, ARROW_LABEL_FONT, color)
    out = tip - origin
    length = float(np.linalg.norm(out))
    direction = out / length if length > 0 else UP
    reach = 0.12 + (abs(direction[0]) * label.width + abs(direction[1]) * label.height) / 2
    half_w, half_h = label.width / 2, label.height / 2
    places = [tip + direction * reach, tip + UP * (0.1 + half_h), tip + DOWN * (0.1 + half_h),
              tip + RIGHT * (0.12 + half_w), tip + LEFT * (0.12 + half_w),
              tip + UP * (0.1 + half_h) + RIGHT * half_w, tip + UP * (0.1 + half_h) + LEFT * half_w,
              tip + direction * (reach + 0.25),
              tip + DOWN * (0.1 + half_h) + RIGHT * half_w,
              tip + DOWN * (0.1 + half_h) + LEFT * half_w]
    # then beside the arrow itself, on either side, nearer the tip first: clear of the
    # arrow's line by SIDE_GAP, so that its word is written on it rather than left out
    across = np.array([-direction[1], direction[0], 0.0])
    side = SIDE_GAP + abs(across[0]) * half_w + abs(across[1]) * half_h
    places += [tip - out * back + across * sign * side
               for back in (0.15, 0.35, 0.55) for sign in (1, -1)]
    # last, anywhere on rings round the tip, nearest first: never further than a reader
    # (and the lint, scenes.lint.MARK_REACH) takes a word to name the arrow it is by
    places += [tip + ring * np.array([np.cos(a), np.sin(a), 0.0])
               for ring in (0.35, 0.6) for a in np.linspace(0, 2 * np.pi, 16, endpoint=False)]
    for place in places:
        label.move_to(place)
        if _free(label, placed, list(strokes)) and _by_arrow(label, tip, origin):
            return label
    return None  # crowded in: its colour names it, as the table beside the arrows does


def _by_arrow(label: Mobject, tip: np.ndarray, origin: np.ndarray) -> bool:
    """Whether `label` is written close enough to the arrow from `origin` to `tip` to name
    it: its box within LABEL_REACH of the box of the arrow's shaft, which stops short of
    the tip by the tip's length (as the lint judges it, scenes.lint._carries)."""
    out = tip - origin
    length = float(np.linalg.norm(out))
    end = tip - out / length * min(ARROW_TIP, TIP_SHARE * length) if length > 0 else tip
    lo, hi = np.minimum(end, origin) - LABEL_REACH, np.maximum(end, origin) + LABEL_REACH
    return (label.get_left()[0] <= hi[0] and label.get_right()[0] >= lo[0]
            and label.get_bottom()[1] <= hi[1] and label.get_top()[1] >= lo[1])


def _strokes(plane: Plane, g: QueryGeometry, keys: list[int], shadows: list[int]) -> list[Segment]:
    """The straight strokes of a picture: the query's and every key's arrow, and the dashed
    drop from each shadowed key's tip to its bar."""
    out = [(plane.origin, plane.point(g.q_norm, 0.0))]
    out += [(plane.origin, plane.point(g.shadows[j], g.heights[j])) for j in keys]
    for row, j in enumerate(shadows):
        tip = plane.point(g.shadows[j], g.heights[j])
        y = plane.origin[1] - (row + 1) * SHADOW_ROW
        out.append((tip, np.array([tip[0], y, 0.0])))  # the drop
        out.append((np.array([plane.origin[0], y, 0.0]), np.array([tip[0], y, 0.0])))  # the bar
    return out


def make_arrow_picture(g: QueryGeometry, keys: list[int], plane: Plane, q_name: str,
                       k_names: dict[int, str], k_colors: dict[int, str], theme: Theme, *,
                       shadows: list[int] = (), arcs: list[int] = ()) -> ArrowPicture:
    """The query along its line and `keys` at their true angles and lengths; `shadows`:
    the keys whose shadow bars are drawn under the line (stacked in that order), with a
    dashed drop from each tip; `arcs`: the keys whose angle to the query is marked."""
    q_arrow = make_vector(plane, g.q_norm, 0.0, theme.q, ARROW_STROKE + 1)
    xs = [0.0, g.q_norm] + [float(g.shadows[j]) for j in keys]
    axis = DashedLine(plane.point(min(xs), 0) + LEFT * AXIS_OVERHANG,
                      plane.point(max(xs), 0) + RIGHT * AXIS_OVERHANG,
                      color=theme.grid, stroke_width=2, dash_length=0.08)
    q_label = make_text(q_name, Q_LABEL_FONT, theme.q, weight="BOLD")
    q_label.next_to(plane.point(max(xs), 0) + RIGHT * AXIS_OVERHANG, RIGHT, buff=BUFF_SMALL)
    bar_labels = {j: bar_label(k_names[j], k_colors[j], plane.origin + DOWN * (row + 1) * SHADOW_ROW,
                               plane.point(g.shadows[j], 0) + DOWN * (row + 1) * SHADOW_ROW)
                  for row, j in enumerate(shadows)}
    placed: list[Mobject] = [q_label, *bar_labels.values()]
    strokes = _strokes(plane, g, keys, list(shadows))
    strokes.append((axis.get_start(), axis.get_end()))  # the query's line, dashed past its tip
    arcs = [(n, j) for n, j in enumerate(arcs) if not np.isnan(g.angles[j])]
    # each further arc a little wider, so the θs stay apart; every word clear of every arc
    curves = [s for n, j in arcs for s in _arc_segments(plane, g, j, n * ARC_STEP)]
    arrows, labels = {}, {}
    for j in sorted(keys, key=lambda j: -g.k_norms[j]):  # longest first get their labels
        arrows[j] = make_vector(plane, float(g.shadows[j]), float(g.heights[j]), k_colors[j])
        if g.k_norms[j] * plane.unit < LABELLED_ARROW:
            arrows[j].set_z_index(1)  # a short arrow is drawn over the long ones, never hidden
        label = _tip_label(k_names[j], k_colors[j],
                                              plane.point(g.shadows[j], g.heights[j]),
                                              plane.origin, placed,
                                              strokes + curves)  # its own arrow too
        if label is not None:
            labels[j] = label
            placed.append(label)
    arrows = {j: arrows[j] for j in keys}  # in the order asked for
    picture = ArrowPicture(g, plane, axis, q_arrow, q_label, arrows,
                           {j: labels[j] for j in keys if j in labels})
    for row, j in enumerate(shadows):
        y = -(row + 1) * SHADOW_ROW
        start, end = plane.origin + UP * y, plane.point(g.shadows[j], 0) + UP * y
        if abs(end[0] - start[0]) >= MIN_ARROW:  # a shadow of length 0 draws nothing
            picture.shadows[j] = Line(start, end, color=k_colors[j], stroke_width=SHADOW_STROKE)
        tip = plane.point(g.shadows[j], g.heights[j])
        if abs(tip[1] - end[1]) > MIN_ARROW:
            picture.drops[j] = DashedLine(tip, [tip[0], end[1], 0], color=k_colors[j],
                                          stroke_width=2, dash_length=0.06)
    picture.bar_labels = bar_labels
    for n, j in arcs:
        picture.arcs[j] = make_angle_arc(plane, g, j, theme.muted, theme, n * ARC_STEP,
                                         strokes + curves, placed)
        placed.append(picture.arcs[j][1])
    return picture


def _box_gap(mob: Mobject, points: np.ndarray) -> float:
    """The shortest distance from mob's box to any of `points` (k, 3) (0 inside it)."""
    x0, x1 = mob.get_left()[0], mob.get_right()[0]
    y0, y1 = mob.get_bottom()[1], mob.get_top()[1]
    dx = np.maximum(np.maximum(x0 - points[:, 0], points[:, 0] - x1), 0)
    dy = np.maximum(np.maximum(y0 - points[:, 1], points[:, 1] - y1), 0)
    return float(np.min(np.hypot(dx, dy)))


def _arc_radius(plane: Plane, g: QueryGeometry, j: int, wider: float) -> float:
    """Key j's angle arc: half the shorter arrow, within [0.2, ARC_RADIUS], plus `wider`."""
    shortest = min(g.q_norm, float(g.k_norms[j])) * plane.unit
    return max(0.2, min(ARC_RADIUS, shortest / 2)) + wider


def _arc_segments(plane: Plane, g: QueryGeometry, j: int, wider: float,
                  pieces: int = 8) -> list[Segment]:
    """Key j's angle arc as straight chords (for placing the θs clear of every arc)."""
    radius = _arc_radius(plane, g, j, wider)
    at = np.linspace(0.0, float(np.radians(g.angles[j])), pieces + 1)
    points = [plane.origin + radius * np.array([np.cos(a), np.sin(a), 0.0]) for a in at]
    return list(zip(points[:-1], points[1:]))


def bar_label(name: str, color: str, start: np.ndarray, end: np.ndarray) -> Mobject:
    """A shadow bar's word, so that the bar says whose it is in words as well as colour:
    right of a bar that runs right, right of the line's start for one that runs left
    (the bars below it run further left, so their drops pass left of it)."""
    label = make_text(name, ARROW_LABEL_FONT, color)
    at = end if end[0] >= start[0] else start
    return label.next_to(at, RIGHT, buff=BUFF_SMALL)


def make_angle_arc(plane: Plane, g: QueryGeometry, j: int, color: str, theme: Theme,
                   wider: float = 0.0, strokes: list[Segment] = (),
                   placed: list[Mobject] = ()) -> VGroup:
    """The arc from the query's line to key j's arrow (in a neutral `color`: the arrow it
    ends on names the key), and a "θ" beside it (outside the wedge when the angle is too
    narrow for it), moved round the arc where an arrow or a label would cross it, and the
    arc drawn wider (still inside the key's arrow) where the fan of arrows near the origin
    leaves the θ no room within reach of its arc."""
    theta = float(np.radians(g.angles[j]))
    base = _arc_radius(plane, g, j, wider)
    longest = max(base, 0.9 * float(g.k_norms[j]) * plane.unit)  # an arc within the key's arrow
    radii = [r for r in (base, base + 0.25, base + 0.5, base + 0.75) if r <= longest]
    for radius in radii:
        arc = Arc(radius=radius, start_angle=0, angle=theta, arc_center=plane.origin,
                  color=color, stroke_width=3)
        mark = _theta_near(arc, plane, theta, radius, theme, strokes, placed)
        if mark is not None:
            return VGroup(arc, mark)
    # no room near any of them: further out from the first (a far θ, which the lint
    # reports, rather than one on an arrow), or, failing that, just outside it
    arc = Arc(radius=base, start_angle=0, angle=theta, arc_center=plane.origin, color=color,
              stroke_width=3)
    first = theta / 2 if g.angles[j] >= 30 else theta + np.radians(14)
    mark = make_text("θ", ARROW_LABEL_FONT, theme.text)
    for out in (0.55, 0.8, 1.1, 1.4):
        for at in (first, theta + np.radians(14), theta + np.radians(28), -np.radians(14)):
            mark.move_to(plane.origin + (base + out) * np.array([np.cos(at), np.sin(at), 0.0]))
            if _free(mark, list(placed), list(strokes)):
                return VGroup(arc, mark)
    mark.move_to(plane.origin + (base + 0.2) * np.array([np.cos(first), np.sin(first), 0.0]))
    return VGroup(arc, mark)


def _theta_near(arc: Arc, plane: Plane, theta: float, radius: float, theme: Theme,
                strokes: list[Segment], placed: list[Mobject]) -> Mobject | None:
    """A "θ" for an arc of `radius`: outside it (inside the wedge when the angle is wide),
    mid-angle first, then round it; only where its ink is within LABEL_REACH of the arc's
    (further, the θ names nothing) and clear of every stroke and label. None: no room."""
    mark = make_text("θ", ARROW_LABEL_FONT, theme.text)
    first = theta / 2 if np.degrees(theta) >= 30 else theta + np.radians(14)
    turns = [first, theta + np.radians(14), theta + np.radians(28), -np.radians(14),
             theta / 2, theta / 4, 3 * theta / 4, theta + np.radians(42), -np.radians(28),
             *np.radians(np.arange(0, 360, 15))]  # then all round, where it is still near
    half = max(mark.width, mark.height) / 2
    outs = [0.2, 0.3, 0.4, 0.5] + ([-(half + 0.08)] if radius > 2 * half + 0.2 else [])
    ink = np.array([plane.origin + radius * np.array([np.cos(a), np.sin(a), 0.0])
                    for a in np.linspace(0.0, theta, 24)])  # (24, 3) along the arc
    own = list(zip(ink[:-1], ink[1:]))  # the arc itself: the θ stays off it
    for out in outs:
        for at in turns:
            mark.move_to(plane.origin + (radius + out) * np.array([np.cos(at), np.sin(at), 0.0]))
            if (_box_gap(mark, ink) <= LABEL_REACH
                    and _free(mark, list(placed), list(strokes) + own)):
                return mark
    return None


# ---- the numbers -----------------------------------------------------------------------------
@dataclass(frozen=True)
class GeometryKeys:
    """The Recorder keys the numbers of one picture are checked under (tests/scene_truth):
    `dot`'s query against the trace's head, or `learning`'s snapshot s of the history."""

    prefix: str  # "" for the head, "history_" for a snapshot
    q_index: tuple  # (i,) or (s,)
    pair: tuple  # (i,) or (s,): prepended to a key's index

    def q_norm(self) -> tuple[str, tuple]:
        return f"{self.prefix}q_norm", self.q_index

    def of(self, name: str, j: int) -> tuple[str, tuple]:
        return f"{self.prefix}{name}", (*self.pair, j)


def norm_text(g: QueryGeometry, j: int | None, keys: GeometryKeys, record: Recorder) -> str:
    """|q| (j None) or |k_j| as drawn, recorded."""
    if j is None:
        text = fmt(g.q_norm, 2)
        record(*keys.q_norm(), text)
        return text
    text = fmt(g.k_norms[j], 2)
    record(*keys.of("k_norm", j), text)
    return text


def angle_text(g: QueryGeometry, j: int, keys: GeometryKeys, record: Recorder) -> str:
    """θ_j in whole degrees as drawn ("—" for a zero vector, which has no angle)."""
    if np.isnan(g.angles[j]):
        return "—"
    text = fmt(g.angles[j], 0)
    record(*keys.of("angle", j), text)
    return f"{text}°"


def cos_text(g: QueryGeometry, j: int, keys: GeometryKeys, record: Recorder) -> str:
    if np.isnan(g.angles[j]):
        return "—"
    text = fmt(g.cosines[j], 3)
    record(*keys.of("cos", j), text)
    return text


def shadow_text(g: QueryGeometry, j: int, keys: GeometryKeys, record: Recorder) -> str:
    text = fmt(g.shadows[j], 2)
    record(*keys.of("shadow", j), text)
    return text


@dataclass
class KeyTable:
    """Numbers beside the arrows, one row per key: its word (left-aligned, in its colour),
    then its numbers (right-aligned), under a muted heading."""

    heading: VGroup
    rows: dict[int, VGroup]  # key → its word and numbers

    @property
    def group(self) -> VGroup:
        return VGroup(self.heading, *self.rows.values())


def make_key_table(heads: list[str], cells: list[tuple[int, list[str]]],
                   colors: dict[int, str] | list[str], theme: Theme, font: float,
                   bold: Callable[[int, int], bool]) -> KeyTable:
    """`cells`: (key, [word, number, …]) per row; `bold(key, column)` picks bold cells."""
    n = len(heads)
    widths = [max(widest([heads[c]], font - 4), widest([row[c] for _, row in cells], font))
              for c in range(n)]
    xs = np.cumsum([0.0] + [w + TABLE_COL_GAP for w in widths[:-1]])
    heading = VGroup(*[make_text(h, font - 4, theme.muted).move_to(RIGHT * x, aligned_edge=LEFT)
                       for h, x in zip(heads, xs)])
    rows = {}
    for r, (j, row) in enumerate(cells):
        y = DOWN * (r + 1) * TABLE_ROW_STEP
        texts = [make_text(t, font, colors[j] if c == 0 else theme.text,
                           weight="BOLD" if bold(j, c) else "NORMAL") for c, t in enumerate(row)]
        texts[0].move_to(RIGHT * xs[0] + y, aligned_edge=LEFT)
        for c in range(1, n):  # numbers right-aligned in their columns
            texts[c].move_to(RIGHT * (xs[c] + widths[c]) + y, aligned_edge=RIGHT)
        rows[j] = VGroup(*texts)
    return KeyTable(heading, rows)


def make_not_to_scale_note(ctx: ChapterContext, font: float = 18,
                           max_w: float | None = None) -> VGroup:
    """Said wherever keys are drawn together: only their angles to the query are true.
    Two lines; when one is wider than `max_w`, the two are rewrapped as one paragraph at
    its spaces (a language's longer words are never shrunk under the font); only a single
    word still too wide is shrunk."""
    lines = (ctx.tr("each key at its true angle to q and its true length;"),
             ctx.tr("the angles between two keys are not to scale"))
    if max_w is not None and any(text_width(line, font) > max_w for line in lines):
        lines = tuple(break_to_width(" ".join(lines), font, max_w))  # one paragraph, rewrapped
    note = VGroup(*[make_text(line, font, ctx.theme.muted) for line in lines]).arrange(
        DOWN, aligned_edge=LEFT, buff=BUFF_TIGHT)
    if max_w is not None and note.width > max_w:
        note.scale_to_fit_width(max_w)
    return note


def break_to_width(line: str, font: float, max_w: float) -> list[str]:
    """`line` as lines no wider than `max_w` at `font`, broken at spaces (greedy)."""
    out: list[str] = []
    for word in line.split(" "):
        if out and text_width(f"{out[-1]} {word}", font) <= max_w:
            out[-1] = f"{out[-1]} {word}"
        else:
            out.append(word)
    return out or [line]

