"""Vectors drawn as arrows in their plane (chapters `dot` and `learning`): the followed word's query
along a line, each key at its true angle to it and its true length, and the keys'
shadows on the query's line, whose lengths times |q| are the scores.

    q·k = |q| · |k| · cos θ = |q| · (the shadow of k on q's line)

Everything drawn is read from attention_video.attncore.geometry.QueryGeometry (a trace reading); one
scale (a Plane) maps every vector of a picture, and of every snapshot of chapter `learning`, so
lengths and the angles to the query are to scale. The angles between two keys are not:
each key is turned from the query alone. Chapter `dot` draws one key per panel
(ArrowPanels), all panels at one scale, so that keys whose angles differ by less than a
degree (a real model's often do) are never drawn along each other. Chapter `learning` keeps
its keys in one picture, to be watched moving together, and draws a key that would lie on
another one under the query's line instead (keys_under): its angle to the query, its
length and its shadow are the same there. Builders only build; chapters animate.
"""

from __future__ import annotations

import itertools
import unicodedata
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
    BUFF_SECTION,
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
from attention_video.scenes.lint import MARK_REACH, MIN_ALONG, PARALLEL_DEGREES
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
DROP_CLEAR = 0.08  # a dashed drop starts this far off its key's arrow (two strokes' half
#                   widths, 0.035, and air), not on it
ROW_REFERENCE = "Ag"  # a word's height on a row of words is at least this text's (rising, falling)
ANGLE_MARK = "θ"  # an angle's arc is labelled so unless its picture names it otherwise
NEAR_QUERY_DEGREES = PARALLEL_DEGREES  # a key this near the query's line dashes the query's
#                                      arrow (the lint's "near parallel")
QUERY_DASH = 0.1  # the dashes of that query arrow, a little longer than the axis's 0.08
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
              bottom: float, top: float, shadows: int, q_name: str,
              below: float = ARROW_LABEL_ROOM, above: float = ARROW_LABEL_ROOM,
              under: frozenset[int] = frozenset()) -> Plane:
    """The largest scale at which the query and `keys` of every picture in `geoms` fit the
    box (left, right, bottom, top), with `shadows` bars under the query's line, the
    query's name right of its tip, room for the labels at the other tips (`above` the
    highest) and `below` the bars (for their words); the keys of `under` drawn under the
    query's line (keys_under), with room for their words under their tips; centred."""
    xs = [0.0] + [g.q_norm for g in geoms] + [float(g.shadows[j]) for g in geoms for j in keys]
    ys = [0.0] + [_across(g, j, under) for g in geoms for j in keys]
    x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)
    band = shadows * SHADOW_ROW + (SHADOW_ROW / 2 if shadows else 0.0)  # bars under the line
    right_room = max(ARROW_LABEL_ROOM, q_label_room(q_name))
    room_w = right - left - ARROW_LABEL_ROOM - right_room
    room_h = top - bottom - band - above - below
    unit = min(room_w / max(x1 - x0, 1e-9), room_h / max(y1, 1e-9))
    low = band  # under the line: the bars, or the keys drawn under it and their words
    if y0 < 0:  # those keys and their words must fit as well: the lesser scale of the two
        unit = min(unit, (top - bottom - above - below - ARROW_LABEL_ROOM) / (y1 - y0))
        low = max(band, -y0 * unit + ARROW_LABEL_ROOM)
    x_mid = (left + ARROW_LABEL_ROOM + right - right_room) / 2 - unit * (x0 + x1) / 2
    y_mid = (bottom + below - above + low + top) / 2 - unit * y1 / 2
    return Plane(np.array([x_mid, y_mid, 0.0]), unit)


def _across(g: QueryGeometry, j: int, under: frozenset[int]) -> float:
    """Key j's height over the query's line as drawn: under it for a key of `under`."""
    return -float(g.heights[j]) if j in under else float(g.heights[j])


def _crowd(g: QueryGeometry, a: int, b: int, unit: float) -> bool:
    """Whether keys a and b, drawn on one side of the query's line at scale `unit`, would lie
    on each other as the lint sees it (scenes.lint.lines_on_lines): within its near-parallel
    angle over a visible length (one line to the eye from the common tail), or their tips
    within a head's length (one head over the other)."""
    if np.isnan(g.angles[a]) or np.isnan(g.angles[b]):
        return False
    lengths = unit * np.array([g.k_norms[a], g.k_norms[b]])
    heads = np.minimum(ARROW_TIP, TIP_SHARE * lengths)
    tips = [unit * np.array([g.shadows[j], g.heights[j]]) for j in (a, b)]
    return bool((abs(g.angles[a] - g.angles[b]) < PARALLEL_DEGREES and min(lengths) >= MIN_ALONG)
                or np.linalg.norm(tips[0] - tips[1]) < max(heads))


def crowded_pairs(geoms: list[QueryGeometry], keys: list[int], under: frozenset[int],
                  units: list[float]) -> int:
    """How many pairs of `keys` drawn on one side of the query's line (`under` it, or over
    it) would lie on each other (_crowd), counted over every picture of `geoms`, each drawn
    at its scale in `units`."""
    return sum(_crowd(g, a, b, unit) for g, unit in zip(geoms, units)
               for a, b in itertools.combinations(keys, 2) if (a in under) == (b in under))


def keys_under(geoms: list[QueryGeometry], keys: list[int], kept: set[int],
               units: list[float]) -> frozenset[int]:
    """The keys to draw under the query's line rather than over it, the same through every
    picture of `geoms` (so a key never jumps sides from one snapshot to the next), each
    picture drawn at its scale in `units`: the fewest that leave the fewest pairs of keys on
    one side lying on each other (crowded_pairs); none of `kept` (the keys with a shadow or
    an arc, over the line). An angle to the query is the same on either side of its line,
    and so are a key's length and its shadow: only the angles between two keys change,
    which the picture says are not to scale (make_not_to_scale_note)."""
    movable = [j for j in keys if j not in kept]
    best: tuple[tuple[int, int], frozenset[int]] | None = None
    for n in range(2 ** len(movable)):
        under = frozenset(j for b, j in enumerate(movable) if n >> b & 1)
        crowded = crowded_pairs(geoms, keys, under, units)
        if best is None or (crowded, len(under)) < best[0]:
            best = ((crowded, len(under)), under)
    return best[1] if best is not None else frozenset()


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
    labels: dict[int, Mobject]  # key → its word at the tip (left out where it would overlap),
    #                             or under its bar (make_arrow_picture's `foot_words`)
    drops: dict[int, DashedLine] = field(default_factory=dict)  # tip → its shadow bar
    shadows: dict[int, Line] = field(default_factory=dict)  # key → its bar under the line
    bar_labels: dict[int, Mobject] = field(default_factory=dict)  # key → its word by its bar
    arcs: dict[int, VGroup] = field(default_factory=dict)  # key → its angle's arc and "θ"
    under: frozenset[int] = frozenset()  # the keys drawn under the query's line (keys_under)

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
                stroke: float = ARROW_STROKE, dashed: bool = False) -> Mobject:
    """An arrow from the plane's origin to (along, across); a dot when it has no length;
    `dashed`: its line dashed (the query's, under a key drawn within a few degrees of it)."""
    end = plane.point(along, across)
    if np.linalg.norm(end - plane.origin) < MIN_ARROW:
        return Dot(plane.origin, radius=0.06, color=color)
    if dashed:
        arrow = DashedLine(plane.origin, end, color=color, stroke_width=stroke,
                           dash_length=QUERY_DASH)
        tip = min(ARROW_TIP, TIP_SHARE * float(np.linalg.norm(end - plane.origin)))
        return arrow.add_tip(tip_length=tip, tip_width=tip)
    return Arrow(plane.origin, end, buff=BUFF_NONE, color=color, stroke_width=stroke,
                 tip_length=ARROW_TIP, max_tip_length_to_length_ratio=TIP_SHARE,
                 max_stroke_width_to_length_ratio=12)


def _near_query(g: QueryGeometry, j: int) -> bool:
    """Whether key j's arrow is within a few degrees of the query's: drawn solid, the two
    strokes would lie on each other from their common tail over a visible length, one line
    to the eye (the lint's "lines" rule), however true the angle. The query's line is then
    dashed under the key's solid one, so both are seen where they meet."""
    return bool(g.angles[j] < NEAR_QUERY_DEGREES)


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


def _strokes(plane: Plane, g: QueryGeometry, keys: list[int], shadows: list[int],
             under: frozenset[int] = frozenset()) -> list[Segment]:
    """The straight strokes of a picture: the query's and every key's arrow, and the dashed
    drop from each shadowed key's tip to its bar."""
    out = [(plane.origin, plane.point(g.q_norm, 0.0))]
    out += [(plane.origin, plane.point(g.shadows[j], _across(g, j, under))) for j in keys]
    for row, j in enumerate(shadows):
        tip = plane.point(g.shadows[j], g.heights[j])
        y = plane.origin[1] - (row + 1) * SHADOW_ROW
        out.append((tip, np.array([tip[0], y, 0.0])))  # the drop
        out.append((np.array([plane.origin[0], y, 0.0]), np.array([tip[0], y, 0.0])))  # the bar
    return out


def make_arrow_picture(g: QueryGeometry, keys: list[int], plane: Plane, q_name: str,
                       k_names: dict[int, str], k_colors: dict[int, str], theme: Theme, *,
                       shadows: list[int] = (), arcs: list[int] = (),
                       arc_marks: dict[int, str] | None = None, foot_words: bool = False,
                       under: frozenset[int] = frozenset()) -> ArrowPicture:
    """The query along its line and `keys` at their true angles and lengths; `shadows`:
    the keys whose shadow bars are drawn under the line (stacked in that order), with a
    dashed drop from each tip; `arcs`: the keys whose angle to the query is marked, each
    arc labelled "θ" or by its text in `arc_marks`; `foot_words`: each key's word is
    written once, under its shadow bar (a picture of one key, ArrowPanels), where it names
    the arrow, the drop and the bar together, rather than at the tip and by the bar;
    `under`: keys drawn under the query's line (keys_under), never one with a shadow or an
    arc (those are drawn over it)."""
    if under & {*shadows, *arcs}:
        raise ValueError("a key with a shadow or an arc is drawn over the query's line")
    dashed = any(_near_query(g, j) for j in keys)
    q_arrow = make_vector(plane, g.q_norm, 0.0, theme.q, ARROW_STROKE + 1, dashed=dashed)
    xs = [0.0, g.q_norm] + [float(g.shadows[j]) for j in keys]
    # a dashed query is its own line: the grey one goes on past its tip (two dashed lines
    # on each other would be one line to the eye), unless a shadow falls behind the tail
    start = (plane.point(g.q_norm, 0) if dashed and min(xs) >= 0
             else plane.point(min(xs), 0) + LEFT * AXIS_OVERHANG)
    axis = DashedLine(start,
                      plane.point(max(xs), 0) + RIGHT * AXIS_OVERHANG,
                      color=theme.grid, stroke_width=2, dash_length=0.08)
    q_label = make_text(q_name, Q_LABEL_FONT, theme.q, weight="BOLD")
    q_label.next_to(plane.point(max(xs), 0) + RIGHT * AXIS_OVERHANG, RIGHT, buff=BUFF_SMALL)
    strokes = _strokes(plane, g, keys, list(shadows), under)
    bar_labels = {j: bar_label(k_names[j], k_colors[j], plane.origin + DOWN * (row + 1) * SHADOW_ROW,
                               plane.point(g.shadows[j], 0) + DOWN * (row + 1) * SHADOW_ROW,
                               strokes)
                  for row, j in enumerate(shadows)} if not foot_words else {}
    feet = {j: foot_label(k_names[j], k_colors[j], plane, float(g.shadows[j]), row)
            for row, j in enumerate(shadows)} if foot_words else {}
    placed: list[Mobject] = [q_label, *bar_labels.values(), *feet.values()]
    strokes.append((axis.get_start(), axis.get_end()))  # the query's line, dashed past its tip
    arcs = [(n, j) for n, j in enumerate(arcs) if not np.isnan(g.angles[j])]
    # each further arc a little wider, so the θs stay apart; every word clear of every arc
    curves = [s for n, j in arcs for s in _arc_segments(plane, g, j, n * ARC_STEP)]
    arrows, labels = {}, dict(feet)
    for j in sorted(keys, key=lambda j: -g.k_norms[j]):  # longest first get their labels
        arrows[j] = make_vector(plane, float(g.shadows[j]), _across(g, j, under), k_colors[j])
        if g.k_norms[j] * plane.unit < LABELLED_ARROW:
            arrows[j].set_z_index(1)  # a short arrow is drawn over the long ones, never hidden
        if j in labels:
            continue  # named at its foot
        label = _tip_label(k_names[j], k_colors[j],
                                              plane.point(g.shadows[j], _across(g, j, under)),
                                              plane.origin, placed,
                                              strokes + curves)  # its own arrow too
        if label is not None:
            labels[j] = label
            placed.append(label)
    arrows = {j: arrows[j] for j in keys}  # in the order asked for
    picture = ArrowPicture(g, plane, axis, q_arrow, q_label, arrows,
                           {j: labels[j] for j in keys if j in labels}, under=under)
    for row, j in enumerate(shadows):
        y = -(row + 1) * SHADOW_ROW
        start, end = plane.origin + UP * y, plane.point(g.shadows[j], 0) + UP * y
        if abs(end[0] - start[0]) >= MIN_ARROW:  # a shadow of length 0 draws nothing
            picture.shadows[j] = Line(start, end, color=k_colors[j], stroke_width=SHADOW_STROKE)
        tip = plane.point(g.shadows[j], g.heights[j])
        top = drop_top(tip, plane.origin)
        if top[1] - end[1] > MIN_ARROW:
            picture.drops[j] = DashedLine(top, [tip[0], end[1], 0], color=k_colors[j],
                                          stroke_width=2, dash_length=0.06)
    picture.bar_labels = bar_labels
    for n, j in arcs:
        picture.arcs[j] = make_angle_arc(plane, g, j, theme.muted, theme, n * ARC_STEP,
                                         strokes + curves, placed,
                                         (arc_marks or {}).get(j, ANGLE_MARK))
        placed.append(picture.arcs[j][1])
    return picture


def drop_top(tip: np.ndarray, origin: np.ndarray) -> np.ndarray:
    """Where a key's dashed drop to its shadow starts: at the tip, or, for a key nearly
    square to the query (its drop would run along its own arrow), as far below the tip as
    the drop must be to stand DROP_CLEAR off the arrow: the two lines are told apart."""
    across = abs(tip[0] - origin[0])  # the arrow's run across per its rise (tip[1] − origin[1])
    rise = abs(tip[1] - origin[1])
    below = DROP_CLEAR * rise / across if across > 0 else rise
    return tip + DOWN * min(below, rise)


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


def foot_label(name: str, color: str, plane: Plane, shadow: float, row: int) -> Mobject:
    """A key's word under its shadow bar (row `row` under the query's line), ending where
    the bar ends and the drop from the tip lands (starting there, for a bar that runs
    left), so it is within a reader's reach (LABEL_REACH) of the bar, the drop and the
    arrow: it names all three. A word longer than its bar runs on past the bar's other end,
    at most ARROW_LABEL_ROOM beyond the arrows' tail."""
    label = make_text(name, ARROW_LABEL_FONT, color)
    # its top a hair under the bar (a stroke's width is 1/100 of a scene unit per point of
    # stroke_width): the words of the panels hang from one line, as close to their arrows
    # as the bar allows
    top = plane.origin[1] - (row + 1) * SHADOW_ROW - SHADOW_STROKE / 200 - BUFF_HAIR
    foot = plane.point(shadow, 0.0)[0]
    if shadow >= 0:
        left = max(foot - label.width, plane.origin[0] - ARROW_LABEL_ROOM)
    else:
        left = foot
    return label.move_to([left, top, 0.0], aligned_edge=LEFT + UP)


def bar_label(name: str, color: str, start: np.ndarray, end: np.ndarray,
              strokes: list[Segment] = ()) -> Mobject:
    """A shadow bar's word, so that the bar says whose it is in words as well as colour:
    right of a bar that runs right, right of the line's start for one that runs left
    (the bars below it run further left, so their drops pass left of it), or, where an
    arrow drawn under the query's line (keys_under) crosses that place, left of the
    bar's far end."""
    label = make_text(name, ARROW_LABEL_FONT, color)
    if end[0] >= start[0]:
        return label.next_to(end, RIGHT, buff=BUFF_SMALL)
    label.next_to(start, RIGHT, buff=BUFF_SMALL)
    if any(_hits(label, s) for s in strokes):
        label.next_to(end, LEFT, buff=BUFF_SMALL)
    return label


def make_angle_arc(plane: Plane, g: QueryGeometry, j: int, color: str, theme: Theme,
                   wider: float = 0.0, strokes: list[Segment] = (),
                   placed: list[Mobject] = (), text: str = "θ") -> VGroup:
    """The arc from the query's line to key j's arrow (in a neutral `color`: the arrow it
    ends on names the key), and its `text` ("θ", or the angle itself) beside it (outside
    the wedge when the angle is too narrow for it), moved round the arc where an arrow or
    a label would cross it, and the arc drawn wider (still inside the key's arrow) where
    the fan of arrows near the origin leaves the text no room within reach of its arc."""
    theta = float(np.radians(g.angles[j]))
    base = _arc_radius(plane, g, j, wider)
    longest = max(base, 0.9 * float(g.k_norms[j]) * plane.unit)  # an arc within the key's arrow
    radii = [r for r in (base, base + 0.25, base + 0.5, base + 0.75) if r <= longest]
    for radius in radii:
        arc = Arc(radius=radius, start_angle=0, angle=theta, arc_center=plane.origin,
                  color=color, stroke_width=3)
        mark = _text_near(arc, plane, theta, radius, theme, strokes, placed, text)
        if mark is not None:
            return VGroup(arc, mark)
    # no room near any of them: further out from the first (a far label, which the lint
    # reports, rather than one on an arrow), or, failing that, just outside it
    radius = base
    arc = Arc(radius=radius, start_angle=0, angle=theta, arc_center=plane.origin,
              color=color, stroke_width=3)
    mark = make_text(text, ARROW_LABEL_FONT, theme.text)
    half = np.hypot(mark.width, mark.height) / 2  # a wider text sits further out
    first = theta / 2 if g.angles[j] >= 30 else theta + np.radians(14)
    turns = [first, theta + np.radians(14), theta + np.radians(28), -np.radians(14),
             theta / 2, theta / 4, 3 * theta / 4, theta + np.radians(42), -np.radians(28)]
    for out in (0.2, 0.35, 0.55, 0.8, 1.1, 1.4):
        for at in turns:
            reach = radius + max(out, half + STROKE_CLEAR)
            mark.move_to(plane.origin + reach * np.array([np.cos(at), np.sin(at), 0.0]))
            if _free(mark, list(placed), list(strokes)):
                return VGroup(arc, mark)
    reach = radius + max(0.2, half + STROKE_CLEAR)
    mark.move_to(plane.origin + reach * np.array([np.cos(first), np.sin(first), 0.0]))
    return VGroup(arc, mark)


def _text_near(arc: Arc, plane: Plane, theta: float, radius: float, theme: Theme,
               strokes: list[Segment], placed: list[Mobject], text: str) -> Mobject | None:
    """The arc's `text` ("θ" or the angle) for an arc of `radius`: outside it (inside the
    wedge when the angle is wide), mid-angle first, then round it; only where its ink is
    within LABEL_REACH of the arc's (further, it names nothing) and clear of every stroke
    and label. None: no room."""
    mark = make_text(text, ARROW_LABEL_FONT, theme.text)
    first = theta / 2 if np.degrees(theta) >= 30 else theta + np.radians(14)
    turns = [first, theta + np.radians(14), theta + np.radians(28), -np.radians(14),
             theta / 2, theta / 4, 3 * theta / 4, theta + np.radians(42), -np.radians(28),
             *np.radians(np.arange(0, 360, 15))]  # then all round, where it is still near
    half = max(mark.width, mark.height) / 2
    clear = np.hypot(mark.width, mark.height) / 2 + STROKE_CLEAR  # a wider text sits further out
    outs = sorted({max(o, clear) for o in (0.2, 0.3, 0.4, 0.5)}) + (
        [-(half + 0.08)] if radius > 2 * half + 0.2 else [])
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


# ---- one key per panel -------------------------------------------------------------------------
PANEL_SPACE = BUFF_SECTION  # between two panels of keys, across and down
Box = tuple[float, float, float, float]  # (left, right, bottom, top) in scene units


def panel_boxes(n: int, cols: int, left: float, right: float, bottom: float,
                top: float) -> list[Box]:
    """`n` equal boxes filling (left, right, bottom, top) in `cols` columns, in reading order
    (left to right, then down), PANEL_SPACE apart."""
    rows = -(-n // cols)
    w = (right - left - (cols - 1) * PANEL_SPACE) / cols
    h = (top - bottom - (rows - 1) * PANEL_SPACE) / rows
    return [(left + c * (w + PANEL_SPACE), left + c * (w + PANEL_SPACE) + w,
             top - r * (h + PANEL_SPACE) - h, top - r * (h + PANEL_SPACE))
            for r, c in (divmod(n_, cols) for n_ in range(n))]


def fit_panels(g: QueryGeometry | list[QueryGeometry], keys: list[int], left: float,
               right: float, bottom: float, top: float, q_name: str,
               k_names: dict[int, str]) -> list[Plane]:
    """One plane per key of `keys` (in that order), each in its own box of a grid filling
    (left, right, bottom, top): the grid whose common scale is the largest. Every plane has
    that scale, and its origin at the same place in its box, so the panels' arrows and
    shadows compare across the grid as within one picture. `g`: the picture's geometry, or
    every snapshot's (chapter `learning`: one scale for all of them)."""
    geoms = g if isinstance(g, list) else [g]
    word = max(make_text(text, ARROW_LABEL_FONT, "#ffffff").height
               for text in [ROW_REFERENCE, *(k_names[j] for j in keys)])
    below = SHADOW_STROKE / 200 + BUFF_TIGHT + word - SHADOW_ROW / 2 + BUFF_SMALL  # the word
    #   under the bar, and air between it and the caption
    best: list[Plane] = []
    for cols in range(1, len(keys) + 1):
        planes = [fit_plane(geoms, keys, *box, 1, q_name, below=below, above=ARROW_TIP)
                  for box in panel_boxes(len(keys), cols, left, right, bottom, top)]
        if not best or planes[0].unit > best[0].unit + 1e-9:
            best = planes
    return best


@dataclass
class ArrowPanels:
    """Small multiples: the query and one key per panel, every panel at one scale, in score
    order. Each key keeps its true angle to the query, its true length and its shadow, and
    no arrow is drawn over another however close two keys' angles are (real models' keys
    often lie within a degree of each other). Each panel is an ArrowPicture of one key."""

    geometry: QueryGeometry
    panels: dict[int, ArrowPicture]  # key → its panel, in reading order

    @property
    def keys(self) -> list[int]:
        return list(self.panels)

    @property
    def arrows(self) -> dict[int, Mobject]:
        return {j: p.arrows[j] for j, p in self.panels.items()}

    @property
    def labels(self) -> dict[int, Mobject]:
        return {j: p.labels[j] for j, p in self.panels.items() if j in p.labels}

    @property
    def arcs(self) -> dict[int, VGroup]:
        return {j: p.arcs[j] for j, p in self.panels.items() if j in p.arcs}

    @property
    def group(self) -> VGroup:
        return VGroup(*(p.group for p in self.panels.values()))

    def key_group(self, j: int) -> VGroup:
        """Key j's panel without its shadow: the query, the key, their angle."""
        p = self.panels[j]
        return VGroup(p.axis, p.q_arrow, p.q_label, p.key_group(j), *p.arcs.values())

    def shadow_group(self, j: int) -> VGroup:
        return self.panels[j].shadow_group(j)


def make_arrow_panels(g: QueryGeometry, keys: list[int], planes: list[Plane], q_name: str,
                      k_names: dict[int, str], k_colors: dict[int, str], theme: Theme,
                      arc_marks: dict[int, str]) -> ArrowPanels:
    """One panel per key of `keys`, on `planes` (fit_panels): the query named `q_name`, the
    key at its true angle and length with its word, the arc of its angle labelled by its
    text in `arc_marks` (each angle its own label), and its shadow bar."""
    panels = {j: make_arrow_picture(g, [j], plane, q_name, k_names, k_colors, theme,
                                    shadows=[j], arcs=[j], arc_marks=arc_marks, foot_words=False)
              for j, plane in zip(keys, planes)}
    return ArrowPanels(g, panels)


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
                           max_w: float | None = None, either_side: bool = False) -> VGroup:
    """Said wherever keys are drawn together: only their angles to the query are true;
    `either_side`: and why some keys are drawn under the query's line (keys_under)."""
    first = ctx.tr("each key at its true angle to q and its true length;")
    if either_side:
        return make_note(ctx, (first, ctx.tr("the angles between two keys are not to scale, "
                                             "and a key under q's line is drawn there to keep "
                                             "it off another")), font, max_w)
    return make_note(ctx, (first, ctx.tr("the angles between two keys are not to scale")),
                     font, max_w)


def make_one_scale_note(ctx: ChapterContext, font: float = 18,
                        max_w: float | None = None) -> VGroup:
    """Said beside keys drawn one per panel (ArrowPanels): what is true in each, and that
    the panels share their scale."""
    return make_note(ctx, (ctx.tr("one key per panel, every panel at one scale:"),
                           ctx.tr("its true angle to q, its true length")), font, max_w)


def make_note(ctx: ChapterContext, lines: tuple[str, ...], font: float = 18,
              max_w: float | None = None) -> VGroup:
    """A muted note of `lines`; when one is wider than `max_w`, they are rewrapped as one
    paragraph at its spaces (a language's longer words are never shrunk under the font);
    only a single word still too wide is shrunk."""
    if max_w is not None and any(text_width(line, font) > max_w for line in lines):
        lines = tuple(break_to_width(" ".join(lines), font, max_w))  # one paragraph, rewrapped
    note = VGroup(*[make_text(line, font, ctx.theme.muted) for line in lines]).arrange(
        DOWN, aligned_edge=LEFT, buff=BUFF_TIGHT)
    if max_w is not None and note.width > max_w:
        note.scale_to_fit_width(max_w)
    return note


def break_to_width(line: str, font: float, max_w: float) -> list[str]:
    """`line` as lines no wider than `max_w` at `font`, broken at spaces (greedy); Chinese
    and Japanese, written without spaces, also between any two of their characters."""
    out: list[str] = []
    for word in line.split(" "):
        for piece in _wide_pieces(word, font, max_w):
            joined = f"{out[-1]}{piece}" if out and _east_asian(piece[:1]) else (
                f"{out[-1]} {piece}" if out else piece)
            if out and text_width(joined, font) <= max_w:
                out[-1] = joined
            else:
                out.append(piece)
    return out or [line]


def _east_asian(ch: str) -> bool:
    return bool(ch) and unicodedata.east_asian_width(ch) in ("W", "F")


def _wide_pieces(word: str, font: float, max_w: float) -> list[str]:
    """A word too wide for the line, cut between its East Asian characters (where those
    scripts break a line); any other word whole."""
    if text_width(word, font) <= max_w or not any(_east_asian(c) for c in word):
        return [word]
    pieces: list[str] = []
    for ch in word:
        if pieces and (not _east_asian(ch) or text_width(pieces[-1] + ch, font) <= max_w):
            pieces[-1] += ch  # (a comma or a Latin letter stays with what it follows)
        else:
            pieces.append(ch)
    return pieces

