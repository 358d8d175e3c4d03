"""The picture lint: checks of one caption's picture as a projector shows it (README,
"Checking a picture", lists the rules and their thresholds). Pure functions, no pipeline: a scene's mobjects are
read into plain `Mark`s (`marks_of`; an object that looks as it did in an earlier picture of
the chapter is not read again: `MarkCache`), then each rule is a function of marks (or of a
caption's timing) that returns `Finding`s, so a rule is tested on a handful of synthetic
mobjects and the same rules serve the --lint command, a test, or a notebook.

Rules: texts overlap; a line crosses a text; outside the safe area (captions and titles:
the title-safe area); text under the size floor; contrast with what lies under a text; the
picture stands still long enough before its caption leaves and nothing changes while the
caption is up; word colours stay apart under simulated colour blindness, or each coloured
mark carries its word; one number at every frame (no number fades in over one fading out);
no stroke runs along another and no arrowhead lies hidden (lines); a label stays near its
mark and one name labels one thing (label); a sign is written, not only coloured, and one
word in two colours is indexed (colour); a plot states its scale (chart); every state the
picture rests in is up for its reading time (state).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, fields
from functools import lru_cache
from operator import attrgetter
from typing import Any, NamedTuple

import numpy as np
from attention_video.scenes.labels import subscript
from attention_video.scenes.layout import (
    DIGIT_HEIGHT,
    LABEL_REACH,
    SAFE_X,
    SAFE_Y,
    TITLE_SAFE_X,
    TITLE_SAFE_Y,
)
from attention_video.scenes.pacing import MIN_CAPTION_SECONDS
from attention_video.scenes.text import read_text
from attention_video.scenes.themes import MIN_CONTRAST, blend, contrast
from manim import (
    Arrow,
    DashedLine,
    DashedVMobject,
    ImageMobject,
    MarkupText,
    Mobject,
    Text,
    VMobject,
    config,
)
from manim.mobject.geometry.tips import ArrowTip
from manim.utils.family import extract_mobject_family_members
from manim.utils.iterables import remove_list_redundancies

# ---- thresholds ----------------------------------------------------------------------
REFERENCE_LINES = 1080  # sizes are judged in pixels of a 1080p frame
# The size floor: a digit's height in pixels at 1080p. The back row of a lecture room laid
# out by the usual 6-screen-heights rule sees 22 px of 1080 (2 % of the picture's height)
# under 12 arcminutes, about 2.4x the 5 arcminutes at which a 20/20 eye makes out a letter:
# the margin a projector's blur and washed-out contrast leave for reading. It is also the
# digit height of the layout's smallest font (layout.MIN_FONT, ~23 px), so a text shrunk
# below that font to fit is caught.
MIN_TEXT_PX = 22.0
# MIN_CONTRAST (scenes.widgets, WCAG AA's 4.5:1 for text) is the contrast floor.
HOLD_SHARE = 0.5  # the picture stands complete for at least half of its caption's reading time
MIN_HOLD = MIN_CAPTION_SECONDS  # ... and never under 1.5 s
# Word colours: CIEDE2000 distance under simulated colour blindness. About 2 is just
# noticeable side by side; a viewer who must match a colour across the frame to its word
# needs several times that, so 10.
MIN_WORD_DELTA_E = 10.0
CVD_TYPES = ("deuteranomaly", "protanomaly")  # at severity 100: deuteranopia, protanopia
CVD_NAMES = {"deuteranomaly": "deuteranopia", "protanomaly": "protanopia"}
MARK_REACH = 0.45  # a coloured mark carries its word when the word is written this close
OVERLAP_SLACK = 0.02  # ink boxes may touch by this much (~3 px at 1080p: antialiasing)
CROSS_SLACK = 0.03  # a line may graze a text's ink box by this much
FRAME_SLACK = 1e-3  # rounding at the safe area's edge
COVERED_OPACITY = 0.99  # a fill this opaque drawn over a text hides it
SAMPLES_PER_CURVE = 4  # a Bézier stroke is checked as this many straight pieces


@dataclass(frozen=True)
class Finding:
    """One problem in one picture: the rule it breaks and what a reader needs to find it."""

    rule: str  # "overlap", "crossing", "safe-area", "size", "contrast", "hold", "moves",
    #            "colour", "numbers", "lines", "label", "chart", "state", "notation"
    message: str  # names the objects by what they show: 'text "0.61" overlaps text "cat"'


@dataclass(frozen=True)
class Problem:
    """A finding placed in the video: chapter number and caption number (1-based)."""

    chapter: int
    caption: int
    finding: Finding
    also: tuple[int, ...] = ()  # later captions of the chapter with the same finding

    @property
    def rule(self) -> str:
        return self.finding.rule

    def __str__(self) -> str:
        more = f" (also captions {_ranges(self.also)})" if self.also else ""
        return f"ch {self.chapter} caption {self.caption}: {self.finding.message}{more}"


@dataclass(eq=False)
class Mark:
    """One drawn thing, read off a mobject: a text (as a whole), a stroke or a filled shape."""

    kind: str  # "text", "line" (a visible stroke) or "shape" (a fill only, or an image)
    shows: str  # what it shows, for a problem line: 'text "cat"', "arrow", "rectangle"
    box: tuple[float, float, float, float]  # ink box: left, bottom, right, top (scene units)
    order: int  # drawing order: later marks are drawn over earlier ones
    ident: int  # the mobject's id(), to follow it from one moment to the next
    signature: tuple = ()  # what it looks like: a change means it moved, morphed or faded
    text: str = ""  # a text's string
    colors: tuple[str, ...] = ()  # text: its glyphs' colours; line: stroke; shape: fill
    opacity: float = 1.0  # text or shape: fill opacity; line: stroke opacity
    font_px: float = 0.0  # text: digit height in pixels at 1080p
    segments: np.ndarray | None = None  # line: (n, 2, 2) straight pieces of its strokes
    outline: np.ndarray | None = None  # shape: (n, 2) polygon of its fill
    owner: int = 0  # id() of the nearest group it was built in (an arrow and its label)
    top_id: int = 0  # id() of the scene's top-level object it belongs to
    top: str = ""  # what that object shows and where (a matrix, not one of its cells)
    framed: bool = False  # of a caption or the title: held to the title-safe area (set as
    #                       read, while they are alive: an id() outlives its object)
    stroke: float = 0.0  # line: the stroke's width in scene units
    role: str = ""  # "tip" (an arrowhead); a line: "closed" (an outline: a box, a cell),
    #                 "plot" (a polyline running left to right) or ""


# ---- reading mobjects ------------------------------------------------------------------
def _hex(rgbas: np.ndarray) -> str:
    """#rrggbb of the first colour of a VMobject's fill_rgbas or stroke_rgbas (read
    directly: building Manim's colour objects cost a third of the lint's time)."""
    return _rgb_hex(np.asarray(rgbas[0][:3]) * 255)


def _alpha(rgbas: np.ndarray) -> float:
    return float(rgbas[0][3])


def _box(points: np.ndarray) -> tuple[float, float, float, float]:
    x, y = points[:, 0], points[:, 1]  # (one column at a time: a third of the time of axis=0)
    return float(x.min()), float(y.min()), float(x.max()), float(y.max())


def _polyline(vm: VMobject) -> np.ndarray:
    """The straight pieces (n, 2, 2) that approximate `vm`'s cubic Bézier curves."""
    pts = vm.points
    n = len(pts) // 4
    if n == 0:
        return np.zeros((0, 2, 2))
    curves = pts[: 4 * n, :2].reshape(n, 4, 2)  # (n, 4, 2) anchor, handle, handle, anchor
    t = np.linspace(0, 1, SAMPLES_PER_CURVE + 1)[:, None]
    basis = np.hstack([(1 - t) ** 3, 3 * (1 - t) ** 2 * t, 3 * (1 - t) * t ** 2, t ** 3])
    samples = np.einsum("sk,nkd->nsd", basis, curves)  # (n, s, 2)
    return np.stack([samples[:, :-1], samples[:, 1:]], axis=2).reshape(-1, 2, 2)


def describe(mob: Mobject) -> str:
    """What a mobject shows, as a problem line names it."""
    return _described(mob, [m for m in mob.get_family() if isinstance(m, (Text, MarkupText))])


def _described(mob: Mobject, texts: Sequence[Text | MarkupText]) -> str:
    """describe(mob), given the texts of its family (in get_family's order)."""
    if isinstance(mob, (Text, MarkupText)):
        return f'text "{_text_of(mob)}"'
    if texts:
        more = f" and {len(texts) - 1} more" if len(texts) > 1 else ""
        return f'group with text "{_text_of(texts[0])}"{more}'
    if isinstance(mob, Arrow):
        return "arrow"
    return type(mob).__name__.lower()


def _text_of(mob: Text | MarkupText) -> str:
    return read_text(mob).replace("\u200e", "").replace("\n", " ")  # as read: no markup


def _font_px(mob: Text | MarkupText) -> float:
    if _extent(mob, 1) <= 0 or not getattr(mob, "initial_height", 0):
        return 0.0
    # Manim measures a text's size by its height: a text standing upright (a column's word,
    # scenes.widgets.col_label) has its line's height across, as its width
    size = mob.font_size * mob.width / mob.height if _upright(mob) else mob.font_size
    return size * DIGIT_HEIGHT * REFERENCE_LINES / config.frame_height


def _extent(mob: Mobject, dim: int) -> float:
    """mob.width (dim 0) or mob.height (dim 1) as Manim measures it (the spread of every
    point of its family, Mobject.length_over_dim), in one pass: a tenth of Manim's walk."""
    columns = [m.points[:, dim] for m in mob.get_family() if len(m.points)]
    if not columns:
        return 0.0
    column = np.concatenate(columns)
    return float(column.max() - column.min())


def _upright(mob: Text | MarkupText) -> bool:
    """Whether the text's line runs up the screen: its first and last glyphs further apart
    up than across (a text of one glyph is taken to lie along its line, and so is one with
    a combining mark: a vowel sign drawn over its letter, as in "ने", is not the next
    letter up)."""
    if any(unicodedata.category(c).startswith("M") for c in _text_of(mob)):
        return False
    glyphs = [m for m in mob.submobjects if m.has_points()]
    if len(glyphs) < 2:
        return False
    run = glyphs[-1].get_center() - glyphs[0].get_center()
    return bool(abs(run[1]) > abs(run[0]))


def _signature(mob: Mobject) -> tuple:
    """A cheap fingerprint of how a mobject looks: its points, colours and opacities."""
    parts = []
    for m in mob.get_family():
        if isinstance(m, VMobject) and len(m.points):
            # (ndarray.round: np.round's dispatch cost more than the rounding)
            parts.append((len(m.points), round(float(m.points.sum()), 4),
                          round(float(np.abs(m.points).sum()), 4),
                          tuple(m.fill_rgbas.round(3).ravel()),
                          tuple(m.stroke_rgbas.round(3).ravel()),
                          round(float(m.stroke_width), 2)))
        elif isinstance(m, ImageMobject):
            parts.append((_box(m.points), float(getattr(m, "fill_opacity", 1.0))))
    return tuple(parts)


def _stroke_units(vm: VMobject) -> float:
    """A stroke's width in scene units (Manim's Cairo camera draws width × 0.01 units)."""
    return float(vm.stroke_width) * 0.01


def _line_role(vm: VMobject) -> str:
    """"tip" for an arrowhead, "closed" for an outline that ends where it starts, "plot"
    for a polyline of CHART_PIECES straight pieces or more running left to right."""
    if isinstance(vm, ArrowTip):
        return "tip"
    pts = vm.points
    if len(pts) >= 4 and np.allclose(pts[0, :2], pts[-1, :2], atol=1e-6):
        return "closed"
    n = len(pts) // 4
    if n >= CHART_PIECES:
        curves = pts[: 4 * n, :2].reshape(n, 4, 2)
        chord = curves[:, 3] - curves[:, 0]  # (n, 2)
        handle = curves[:, 1:3] - curves[:, :1]  # (n, 2, 2) from each curve's start
        bend = np.abs(chord[:, None, 0] * handle[..., 1] - chord[:, None, 1] * handle[..., 0])
        dx = chord[:, 0]
        if np.all(bend <= 1e-6 * (1 + np.abs(chord).sum(axis=1))[:, None]) and (
                np.all(dx >= -1e-9) or np.all(dx <= 1e-9)):
            return "plot"
    return ""


def text_look(mobjects: Sequence[Mobject], skip: Iterable[Mobject] = ()) -> dict[int, tuple[str, tuple]]:
    """id() → (string, look) of every text in `mobjects` but those in `skip` (captions):
    a cheap fingerprint (its glyphs' shape wherever it stands, and its first glyph's
    opacity) that changes when a text morphs or fades, not when it moves, to time how long
    each state of a picture is up."""
    out: dict[int, tuple[str, tuple]] = {}
    skipped = {id(m) for m in skip}

    def walk(m: Mobject) -> None:
        if id(m) in skipped:
            return
        if isinstance(m, (Text, MarkupText)):
            glyphs = [g for g in m.submobjects if isinstance(g, VMobject) and len(g.points)]
            if glyphs and _alpha(glyphs[0].fill_rgbas) > 0.01:
                pts = np.concatenate([g.points for g in glyphs])
                pts = pts - pts.mean(axis=0)
                out[id(m)] = (_text_of(m), (len(pts), round(float(np.abs(pts).sum()), 3),
                                            round(_alpha(glyphs[0].fill_rgbas), 2)))
            return
        for sub in m.submobjects:
            walk(sub)

    for m in mobjects:
        walk(m)
    return out


def _visible_stroke(vm: VMobject) -> bool:
    return vm.stroke_width > 0 and _alpha(vm.stroke_rgbas) > 0.01


class MarkCache:
    """What marks_of reads off mobjects, kept for the next picture by what the mobject looks
    like (_look_key: its class, points, colours and stroke, byte for byte), not by which
    object it is: a chapter's pictures share most of their objects, and reading each of
    them again at every picture was most of the lint's own time (issue 45). An object
    moved, recoloured or refilled in place has another key, and is read again."""

    LIMIT = 50_000  # entries per table (a chapter makes a few thousand); a full one starts again

    def __init__(self) -> None:
        self.leaves: dict[tuple, _LeafRead] = {}
        self.glyphs: dict[tuple, tuple[_GlyphRead | None, ...]] = {}  # a text's, by its key
        self.texts: dict[tuple, _TextRead] = {}

    @staticmethod
    def kept(table: dict, key: tuple | None, read: Callable[[Any], Any], mob: Mobject) -> Any:
        """table[key], read off `mob` once; `key` None: not kept (read now)."""
        if key is None:
            return read(mob)
        got = table.get(key)
        if got is None:
            if len(table) >= MarkCache.LIMIT:
                table.clear()
            got = table[key] = read(mob)
        return got


def _look_key(vm: VMobject) -> tuple:
    """Everything of a VMobject that its marks are read from (class, how many parts, points,
    fill and stroke colours, stroke width), exactly: two with one key make the same marks."""
    p, fill, stroke = vm.points, vm.fill_rgbas, vm.stroke_rgbas
    return (type(vm), len(vm.submobjects), p.shape, p.dtype, p.tobytes(),
            fill.shape, fill.dtype, fill.tobytes(), stroke.shape, stroke.dtype,
            stroke.tobytes(), float(vm.stroke_width))


def _frozen(a: np.ndarray) -> np.ndarray:
    """`a`, read-only: a kept reading is shared by the marks of many pictures."""
    a.setflags(write=False)
    return a


class _Stroke(NamedTuple):
    color: str
    opacity: float
    segments: np.ndarray  # (n, 2, 2), read-only
    width: float  # scene units
    role: str


class _Fill(NamedTuple):
    color: str
    opacity: float
    outline: np.ndarray  # (n, 2), read-only
    role: str


class _LeafRead(NamedTuple):
    """What one drawn VMobject (not a glyph, not a dash) shows, wherever it is in a scene."""

    shows: str
    box: tuple[float, float, float, float]
    signature: tuple
    stroke: _Stroke | None  # None: no visible stroke
    fill: _Fill | None  # None: no visible fill


def _read_leaf(leaf: VMobject) -> _LeafRead:
    shows = "arrow" if isinstance(leaf, (Arrow, ArrowTip)) else describe(leaf)
    box = _box(leaf.points)
    shows += f" at ({(box[0] + box[2]) / 2:.1f}, {(box[1] + box[3]) / 2:.1f})"
    stroke = fill = None
    if _visible_stroke(leaf):
        stroke = _Stroke(_hex(leaf.stroke_rgbas), _alpha(leaf.stroke_rgbas),
                         _frozen(_polyline(leaf)), _stroke_units(leaf), _line_role(leaf))
    if _alpha(leaf.fill_rgbas) > 0.01:
        outline = (leaf.points[::4, :2].copy() if len(leaf.points) >= 4
                   else leaf.points[:, :2].copy())
        fill = _Fill(_hex(leaf.fill_rgbas), _alpha(leaf.fill_rgbas), _frozen(outline),
                     "tip" if isinstance(leaf, ArrowTip) else "")
    return _LeafRead(shows, box, _signature(leaf), stroke, fill)


class _GlyphRead(NamedTuple):
    opacity: float
    color: str
    box: tuple[float, float, float, float]


def _read_glyphs(family: list[Mobject]) -> tuple[_GlyphRead | None, ...]:
    """Each glyph of a text's family read (None: a part without points, or not a VMobject)."""
    return tuple(_GlyphRead(_alpha(g.fill_rgbas), _hex(g.fill_rgbas), _box(g.points))
                 if isinstance(g, VMobject) and len(g.points) else None for g in family)


class _TextGlyphs(NamedTuple):
    """A text met in one picture: its key (see _text_key) and its glyphs' readings by id()."""

    key: tuple | None
    glyphs: dict[int, _GlyphRead | None]


def _text_glyphs(text: Text | MarkupText, cache: MarkCache) -> _TextGlyphs:
    """A text's key and its glyphs' readings, kept under the key (a text read in an
    earlier picture costs one walk of its family: no glyph is read again)."""
    family = text.get_family()
    key = _text_key(text, family)
    reads = cache.kept(cache.glyphs, key, _read_glyphs, family)
    return _TextGlyphs(key, {id(m): r for m, r in zip(family, reads)})


class _TextRead(NamedTuple):
    text: str  # as read (_text_of)
    font_px: float
    signature: tuple


def _read_text(text: Text | MarkupText) -> _TextRead:
    return _TextRead(_text_of(text), _font_px(text), _signature(text))


def _text_key(text: Text | MarkupText, family: list[Mobject]) -> tuple | None:
    """What a text's reading (_TextRead) is made of: its family's (_family_key: the look of
    every part, its strings), its size as built and the frame; None (not kept) if a part is
    not a VMobject. `family`: its family."""
    looks = _family_key(family)
    if looks is None:
        return None
    return (getattr(text, "initial_height", 0), getattr(text, "_font_size", None),
            config.frame_height, looks)


def _family_key(family: list[Mobject]) -> tuple | None:
    """The look of every part of a family (see _look_key: in family order, each with how
    many parts it has, which fixes the tree) and every text's strings (describe names a
    group by its texts); None (not kept) if a part is not a VMobject."""
    if not all(isinstance(m, VMobject) for m in family):
        return None
    return tuple((_look_key(m), getattr(m, "original_text", None), getattr(m, "text", None))
                 if isinstance(m, (Text, MarkupText)) else _look_key(m) for m in family)


def marks_of(mobjects: Sequence[Mobject], cache: MarkCache | None = None,
             framed: Iterable[Mobject] = ()) -> list[Mark]:
    """The marks of a scene's mobjects (scene.mobjects), in drawing order: each text whole,
    each stroke a line, each fill a shape. Invisible marks are left out, and so is a text
    an opaque fill drawn after it hides. `cache`: what earlier pictures read (a chapter's
    pictures share one); None: read everything now. `framed`: the caption and title
    among `mobjects` (their marks are Mark.framed)."""
    cache = MarkCache() if cache is None else cache
    owner: dict[int, int] = {}
    top_of: dict[int, int] = {}
    text_of: dict[int, Text | MarkupText] = {}
    dashed_of: dict[int, Mobject] = {}  # a dash → its dashed line (one line, one mark)
    texts_in: dict[int, list] = {}  # a top-level object → every text met in its family

    def walk(m: Mobject, group: int, in_text: Text | MarkupText | None, top: int,
             dashed: Mobject | None = None) -> None:
        if isinstance(m, (Text, MarkupText)):
            texts_in[top].append(m)
            if in_text is None:
                in_text = m
        if dashed is None and isinstance(m, (DashedLine, DashedVMobject)) and m.submobjects:
            dashed = m
        owner[id(m)] = group
        top_of[id(m)] = top
        if in_text is not None:
            text_of[id(m)] = in_text
        if dashed is not None and dashed is not m:
            dashed_of[id(m)] = dashed
        inner = id(m) if m.submobjects and in_text is None else group
        for sub in m.submobjects:  # a dashed arrow's head is a head, not one more dash
            walk(sub, inner, in_text, top, None if isinstance(sub, ArrowTip) else dashed)

    tops = {id(top): top for top in mobjects}
    for top in mobjects:
        texts_in[id(top)] = []
        walk(top, id(top), None, id(top))
    leaves = extract_mobject_family_members(mobjects, use_z_index=True,
                                            only_those_with_points=True)
    marks: list[Mark] = []
    seen_texts: dict[int, Mark] = {}
    met_texts: dict[int, _TextGlyphs] = {}
    seen_dashed: dict[int, Mark] = {}
    for order, leaf in enumerate(leaves):
        text = text_of.get(id(leaf))
        if text is not None:
            met = met_texts.get(id(text))
            if met is None:
                met = met_texts[id(text)] = _text_glyphs(text, cache)
            _add_glyph(seen_texts, marks, text, met, leaf, order, owner, top_of, cache)
            continue
        dashed = dashed_of.get(id(leaf))
        if dashed is not None and isinstance(leaf, VMobject):
            _add_dash(seen_dashed, marks, dashed, leaf, order, owner, top_of)
            continue
        if isinstance(leaf, ImageMobject):
            pixels = np.asarray(leaf.get_pixel_array(), dtype=float)
            mean = pixels[..., :3].reshape(-1, 3).mean(axis=0) if pixels.size else np.zeros(3)
            marks.append(Mark("shape", "image", _box(leaf.points), order, id(leaf),
                              _signature(leaf), colors=(_rgb_hex(mean),),
                              outline=np.array(leaf.points[:, :2]), owner=owner[id(leaf)],
                              top_id=top_of[id(leaf)]))
            continue
        if not isinstance(leaf, VMobject):
            continue
        # its parts are read with it (describe, _signature: an arrow's head, say)
        key = _family_key(leaf.get_family()) if leaf.submobjects else _look_key(leaf)
        read = cache.kept(cache.leaves, key, _read_leaf, leaf)
        if read.stroke is not None:
            s = read.stroke
            marks.append(Mark("line", read.shows, read.box, order, id(leaf), read.signature,
                              colors=(s.color,), opacity=s.opacity, segments=s.segments,
                              owner=owner[id(leaf)], top_id=top_of[id(leaf)], stroke=s.width,
                              role=s.role))
        if read.fill is not None:
            f = read.fill
            marks.append(Mark("shape", read.shows, read.box, order, id(leaf), read.signature,
                              colors=(f.color,), opacity=f.opacity, outline=f.outline,
                              owner=owner[id(leaf)], top_id=top_of[id(leaf)], role=f.role))
    _name_tops(marks, tops, texts_in)
    framing = {id(m) for m in framed}
    for m in marks:
        m.framed = m.top_id in framing
    return _unhidden(marks)


def _name_tops(marks: list[Mark], tops: dict[int, Mobject], texts_in: dict[int, list]) -> None:
    """Each mark's `top`: what its top-level object shows, placed by its marks' centre.
    `texts_in`: the texts met walking each one's family (a text met twice counts where
    get_family keeps it: at its last place)."""
    boxes: dict[int, list] = {}
    for m in marks:
        boxes.setdefault(m.top_id, []).append(m.box)
    names = {}
    for key, group in boxes.items():
        b = np.array(group)
        x, y = (b[:, 0].min() + b[:, 2].max()) / 2, (b[:, 1].min() + b[:, 3].max()) / 2
        top = tops.get(key)
        shows = 'object' if top is None else _described(top, remove_list_redundancies(texts_in[key]))
        names[key] = f"{shows} at ({x:.1f}, {y:.1f})"
    for m in marks:
        m.top = names[m.top_id]


def _add_glyph(seen: dict[int, Mark], marks: list[Mark], text: Text | MarkupText,
               met: _TextGlyphs, glyph: VMobject, order: int, owner: dict[int, int],
               top_of: dict[int, int], cache: MarkCache) -> None:
    """Fold one glyph into its text's mark (made at the text's first visible glyph)."""
    g = met.glyphs.get(id(glyph))
    if g is None or g.opacity <= 0.01:
        return
    mark = seen.get(id(text))
    if mark is None:
        t = cache.kept(cache.texts, met.key, _read_text, text)
        mark = Mark("text", f'text "{t.text}"', g.box, order, id(text), t.signature,
                    text=t.text, colors=(g.color,), opacity=g.opacity, font_px=t.font_px,
                    owner=owner[id(text)], top_id=top_of[id(text)])
        seen[id(text)] = mark
        marks.append(mark)
        return
    left, bottom, right, top = g.box
    mark.box = (min(mark.box[0], left), min(mark.box[1], bottom),
                max(mark.box[2], right), max(mark.box[3], top))
    if g.color not in mark.colors:
        mark.colors += (g.color,)
    mark.opacity = min(mark.opacity, g.opacity)


def _add_dash(seen: dict[int, Mark], marks: list[Mark], dashed: Mobject, dash: VMobject,
              order: int, owner: dict[int, int], top_of: dict[int, int]) -> None:
    """Fold one dash into its dashed line's mark (made at its first visible dash)."""
    if not _visible_stroke(dash):
        return
    mark = seen.get(id(dashed))
    if mark is None:
        dashes = [m.points for m in dashed.family_members_with_points()
                  if not isinstance(m, ArrowTip)]  # a dashed arrow's head is its own mark
        box = _box(np.concatenate(dashes))
        shows = f"{describe(dashed)} at ({(box[0] + box[2]) / 2:.1f}, {(box[1] + box[3]) / 2:.1f})"
        mark = Mark("line", shows, box, order, id(dashed), _signature(dashed),
                    colors=(_hex(dash.stroke_rgbas),), opacity=_alpha(dash.stroke_rgbas),
                    segments=_polyline(dash), owner=owner[id(dashed)], top_id=top_of[id(dashed)])
        seen[id(dashed)] = mark
        marks.append(mark)
        return
    mark.segments = np.concatenate([mark.segments, _polyline(dash)])
    color = _hex(dash.stroke_rgbas)
    if color not in mark.colors:
        mark.colors += (color,)


def _unhidden(marks: list[Mark]) -> list[Mark]:
    """The marks but the texts an opaque fill drawn after the text covers whole (its ink
    box): every text against every such fill at once."""
    covers = [m for m in marks if m.kind == "shape" and m.opacity >= COVERED_OPACITY]
    if not covers:
        return marks
    boxes = _boxes(covers)
    orders = np.array([m.order for m in covers])
    return [m for m in marks if m.kind != "text" or not np.any(
        (orders > m.order) & (boxes[:, 0] <= m.box[0]) & (boxes[:, 1] <= m.box[1])
        & (boxes[:, 2] >= m.box[2]) & (boxes[:, 3] >= m.box[3]))]


# ---- geometry ------------------------------------------------------------------------
def _overlap(a: tuple, b: tuple, slack: float) -> bool:
    return (min(a[2], b[2]) - max(a[0], b[0]) > slack
            and min(a[3], b[3]) - max(a[1], b[1]) > slack)


def _shrunk(box: tuple, by: float) -> tuple:
    return box[0] + by, box[1] + by, box[2] - by, box[3] - by


def _segments_cross_box(segments: np.ndarray, box: tuple) -> bool:
    """Whether any straight piece passes through the box (Liang–Barsky, all at once)."""
    left, bottom, right, top = box
    if left >= right or bottom >= top or not len(segments):
        return False
    p0, d = segments[:, 0], segments[:, 1] - segments[:, 0]
    t0, t1 = np.zeros(len(segments)), np.ones(len(segments))
    ok = np.ones(len(segments), bool)
    for axis, lo, hi in ((0, left, right), (1, bottom, top)):
        dd, pp = d[:, axis], p0[:, axis]
        flat = np.abs(dd) < 1e-12
        ok &= ~(flat & ((pp < lo) | (pp > hi)))
        with np.errstate(divide="ignore", invalid="ignore"):
            a, b = (lo - pp) / dd, (hi - pp) / dd
        near, far = np.where(flat, -np.inf, np.minimum(a, b)), np.where(flat, np.inf, np.maximum(a, b))
        t0, t1 = np.maximum(t0, near), np.minimum(t1, far)
    return bool(np.any(ok & (t0 <= t1)))


def _inside(points: np.ndarray, polygon: np.ndarray) -> np.ndarray:
    """Even–odd rule: which of `points` (m, 2) lie inside `polygon` (n, 2)."""
    x, y = points[:, 0:1], points[:, 1:2]
    a, b = polygon, np.roll(polygon, -1, axis=0)
    crosses = (a[:, 1] > y) != (b[:, 1] > y)
    with np.errstate(divide="ignore", invalid="ignore"):
        at = a[:, 0] + (y - a[:, 1]) * (b[:, 0] - a[:, 0]) / (b[:, 1] - a[:, 1])
    return np.count_nonzero(crosses & (x < at), axis=1) % 2 == 1


# ---- the rules over one picture ------------------------------------------------------
def _boxes(marks: Sequence[Mark]) -> np.ndarray:
    return np.array([m.box for m in marks], float).reshape(-1, 4)


def _meeting(box: tuple, boxes: np.ndarray, slack: float) -> np.ndarray:
    """Which of `boxes` overlap `box` by more than `slack` both ways."""
    return ((np.minimum(boxes[:, 2], box[2]) - np.maximum(boxes[:, 0], box[0]) > slack)
            & (np.minimum(boxes[:, 3], box[3]) - np.maximum(boxes[:, 1], box[1]) > slack))


def overlaps(marks: Sequence[Mark]) -> list[Finding]:
    """No two texts' ink boxes overlap."""
    texts = [m for m in marks if m.kind == "text"]
    boxes = _boxes(texts)
    out = []
    for i, a in enumerate(texts):
        for j in np.flatnonzero(_meeting(a.box, boxes[i + 1:], OVERLAP_SLACK)):
            out.append(Finding("overlap", f"{a.shows} overlaps {texts[i + 1 + j].shows}"))
    return out


def crossings(marks: Sequence[Mark]) -> list[Finding]:
    """No line or arrow crosses a text that is not its own (one built in the same group as
    the line, such as an arrow's label)."""
    texts = [m for m in marks if m.kind == "text"]
    boxes = _boxes(texts)
    out = []
    for line in (m for m in marks if m.kind == "line" and m.segments is not None):
        for j in np.flatnonzero(_meeting(line.box, boxes, -CROSS_SLACK)):
            t = texts[j]
            if t.owner != line.owner and _segments_cross_box(line.segments,
                                                             _shrunk(t.box, CROSS_SLACK)):
                out.append(Finding("crossing", f"{line.shows} crosses {t.shows}"))
    return out


def outside_safe_area(marks: Sequence[Mark], half_width: float = SAFE_X,
                      half_height: float = SAFE_Y, title_width: float = TITLE_SAFE_X,
                      title_height: float = TITLE_SAFE_Y) -> list[Finding]:
    """Everything inside the frame's action-safe area (scenes.layout.SAFE_X, SAFE_Y: 93 %),
    and the captions and titles (Mark.framed) inside its title-safe area (TITLE_SAFE_X,
    TITLE_SAFE_Y: 90 %, SMPTE ST 2046-1); one finding per object of the scene (a matrix,
    not each of its cells), by how far it reaches out."""
    worst: dict[str, tuple[float, str]] = {}
    for m in marks:
        left, bottom, right, top = m.box
        w, h, area = ((title_width, title_height, "title-safe") if m.framed
                      else (half_width, half_height, "safe"))
        over = max(-w - left, right - w, -h - bottom, top - h)
        if over > FRAME_SLACK:
            name = m.top or m.shows
            worst[name] = max(worst.get(name, (0.0, area)), (over, area))
    return [Finding("safe-area", f"{name} is {over:.2f} outside the {area} area")
            for name, (over, area) in worst.items()]


def too_small(marks: Sequence[Mark], floor_px: float = MIN_TEXT_PX) -> list[Finding]:
    """No text whose digits are under `floor_px` tall at 1080p."""
    return [Finding("size", f"{m.shows} is {m.font_px:.0f} px at 1080p (floor {floor_px:.0f})")
            for m in marks if m.kind == "text" and 0 < m.font_px < floor_px - 0.05]


# A plain-text formula's marks: "^" for an exponent or a transpose (K^T), "_" between two
# letters or digits for a subscript (W_Q, d_k). On screen they are typeset (Kᵀ, dₖ, W with
# a lowered Q: scenes.text.typeset); a word that holds one ("snake_case") is the reader's.
RAW_NOTATION = re.compile(r"\^|(?<=[^\W_])_(?=[^\W_])")


def raw_notation(marks: Sequence[Mark], words: Iterable[str] = ()) -> list[Finding]:
    """No text written as plain-text maths ("Q_rot·K_rot^T"): sub- and superscripts are
    typeset; `words`: the sentence's tokens, which are shown as they are written."""
    own = tuple(w for w in words if RAW_NOTATION.search(w))
    return [Finding("notation", f"{m.shows} writes maths as plain text (\"^\" or \"_\"): "
                                f"typeset its sub- and superscripts")
            for m in marks if m.kind == "text" and RAW_NOTATION.search(_without(m.text, own))]


def _without(text: str, words: tuple[str, ...]) -> str:
    for w in words:
        text = text.replace(w, " ")
    return text


# ---- lines on lines, labels and their marks ------------------------------------------
PARALLEL_DEGREES = 8.0  # two strokes this near parallel ...
MIN_ALONG = 0.3  # ... whose edges are closer than a stroke width over this length (~40 px
#                  at 1080p) lie on each other: the eye sees one line
TIP_COVERED = 0.4  # an arrowhead with this share of its box under another one is hidden
SAME_SPAN = 0.02  # two strokes whose boxes differ by less than this (~3 px) are one drawn again
_SYMBOL = re.compile(r"[^\W\d_][′']?")  # a one-letter name: θ, q, k′


def _pieces(segments: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Starts, unit directions and lengths of a stroke's non-empty straight pieces."""
    start, d = segments[:, 0], segments[:, 1] - segments[:, 0]
    length = np.linalg.norm(d, axis=1)
    keep = length > 1e-9
    return start[keep], d[keep] / length[keep, None], length[keep]


def running_along(a: np.ndarray, b: np.ndarray, gap: float,
                  degrees: float = PARALLEL_DEGREES) -> float:
    """The length of stroke `a` (its straight pieces, (n, 2, 2)) that runs along stroke `b`:
    pieces within `degrees` of parallel whose centre lines are within `gap` where they
    overlap, summed over a's pieces (each counted once, by its longest overlap)."""
    pa, ua, la = _pieces(a)
    pb, ub, lb = _pieces(b)
    if not len(la) or not len(lb):
        return 0.0
    parallel = np.abs(ua @ ub.T) >= np.cos(np.radians(degrees))  # (n, m)
    normal = np.stack([-ua[:, 1], ua[:, 0]], axis=1)  # (n, 2)
    rel0 = pb[None] - pa[:, None]  # (n, m, 2) b's start from a's start
    rel1 = rel0 + (ub * lb[:, None])[None]  # (n, m, 2) b's end
    t0, t1 = (np.einsum("nmd,nd->nm", r, ua) for r in (rel0, rel1))  # along a
    d0, d1 = (np.einsum("nmd,nd->nm", r, normal) for r in (rel0, rel1))  # across a
    lo = np.maximum(np.minimum(t0, t1), 0)
    hi = np.minimum(np.maximum(t0, t1), la[:, None])
    overlap = np.clip(hi - lo, 0, None)
    with np.errstate(divide="ignore", invalid="ignore"):
        at = np.where(np.abs(t1 - t0) > 1e-9, ((lo + hi) / 2 - t0) / (t1 - t0), 0.5)
    across = np.abs(d0 + (d1 - d0) * at)  # b's offset from a where they overlap
    run = np.where(parallel & (across <= gap), overlap, 0.0)
    return float(run.max(axis=1).sum())


def lines_on_lines(marks: Sequence[Mark], min_along: float = MIN_ALONG) -> list[Finding]:
    """No two strokes run along each other (near-parallel, edges closer than a stroke width,
    over `min_along` or more), and no arrowhead lies hidden under another one or under a
    fill drawn over it. Outlines (boxes, cells) may share edges: a table's grid does."""
    lines = [m for m in marks if m.kind == "line" and m.segments is not None
             and m.role == "" and len(m.segments)]
    boxes = _boxes(lines)
    out = []
    for i, a in enumerate(lines):
        for j in np.flatnonzero(_meeting(_grown(a.box, a.stroke * 2), boxes[i + 1:], -1e-9)):
            b = lines[i + 1 + j]
            if b.owner == a.owner:
                continue
            gap = (a.stroke + b.stroke) / 2 + max(a.stroke, b.stroke)
            along = min(running_along(a.segments, b.segments, gap),
                        running_along(b.segments, a.segments, gap))
            if along >= min_along:
                out.append(Finding("lines", f"{a.shows} runs along {b.shows} for {along:.2f} "
                                            f"(one line to the eye)"))
    return out + hidden_tips(marks)


def hidden_tips(marks: Sequence[Mark], share: float = TIP_COVERED) -> list[Finding]:
    """No arrowhead with `share` of its box under another arrow's head, or its centre under
    an opaque fill drawn after it."""
    tips = list({m.ident: m for m in marks if m.role == "tip"}.values())  # stroked or filled
    out = []
    for i, a in enumerate(tips):
        area = max((a.box[2] - a.box[0]) * (a.box[3] - a.box[1]), 1e-12)
        for b in tips[i + 1:]:
            if b.owner == a.owner:
                continue
            w = min(a.box[2], b.box[2]) - max(a.box[0], b.box[0])
            h = min(a.box[3], b.box[3]) - max(a.box[1], b.box[1])
            small = min(area, (b.box[2] - b.box[0]) * (b.box[3] - b.box[1]))
            if w > 0 and h > 0 and w * h >= share * max(small, 1e-12):
                out.append(Finding("lines", f"the head of {a.shows} lies under the head of "
                                            f"{b.shows}"))
        centre = np.array([[(a.box[0] + a.box[2]) / 2, (a.box[1] + a.box[3]) / 2]])
        for m in marks:
            if (m.kind == "shape" and m.role != "tip" and m.order > a.order and m.owner != a.owner
                    and m.opacity >= 0.5 and m.outline is not None and len(m.outline) >= 3
                    and _overlap(m.box, a.box, 0.0) and _inside(centre, m.outline)[0]):
                out.append(Finding("lines", f"the head of {a.shows} is hidden under {m.shows}"))
                break
    return out


def _labels(marks: Sequence[Mark]) -> list[tuple[Mark, list[Mark]]]:
    """Each label with the marks it names: a text built in one group with strokes or fills
    and at most one other text (an arrow and its word, an arc and its θ)."""
    groups: dict[int, list[Mark]] = {}
    for m in marks:
        groups.setdefault(m.owner, []).append(m)
    out = []
    for members in groups.values():
        texts = [m for m in members if m.kind == "text"]
        named = [m for m in members if m.kind != "text"]
        if named and 1 <= len(texts) <= 2:
            out += [(t, named) for t in texts]
    return out


def _box_points(points: np.ndarray, box: tuple) -> float:
    """The shortest distance from any of `points` (k, 2) to a box (0 inside it)."""
    dx = np.maximum(np.maximum(box[0] - points[:, 0], points[:, 0] - box[2]), 0)
    dy = np.maximum(np.maximum(box[1] - points[:, 1], points[:, 1] - box[3]), 0)
    return float(np.min(np.hypot(dx, dy))) if len(points) else np.inf


def _ink_points(m: Mark) -> np.ndarray:
    """Points along a mark's ink: a stroke's pieces at thirds, a fill's box corners and
    centre."""
    if m.kind == "line" and m.segments is not None and len(m.segments):
        t = np.array([0, 1 / 3, 2 / 3, 1])[None, :, None]
        return (m.segments[:, :1] + t * (m.segments[:, 1:] - m.segments[:, :1])).reshape(-1, 2)
    left, bottom, right, top = m.box
    return np.array([[left, bottom], [right, top], [left, top], [right, bottom],
                     [(left + right) / 2, (bottom + top) / 2]])


def _gap(m: Mark, box: tuple) -> float:
    """The shortest distance from a mark's ink to a box (0 where they touch): exact for a
    stroke (every piece measured, not sampled: a long shaft passes close to a word between
    its ends), the box of a fill otherwise."""
    if m.kind == "line" and m.segments is not None and len(m.segments):
        return _box_segments(box, np.asarray(m.segments, dtype=float))
    return _box_points(_ink_points(m), box)


def _box_segments(box: tuple, segments: np.ndarray) -> float:
    """The shortest distance from a box (left, bottom, right, top) to any of `segments`
    (k, 2, 2): 0 if one crosses it; else the least of each end's distance to the box and
    each corner's distance to each segment (the closest pair of a segment and a box has
    one of the two at an end or a corner)."""
    a, b = segments[:, 0, :2], segments[:, 1, :2]  # (k, 2)
    ends = _box_points(np.concatenate([a, b]), box)
    left, bottom, right, top = box
    corners = np.array([[left, bottom], [left, top], [right, bottom], [right, top]])
    d = b - a  # (k, 2)
    length = np.maximum((d ** 2).sum(axis=1), 1e-12)  # (k,)
    t = np.clip(((corners[:, None, :] - a[None]) * d[None]).sum(axis=2) / length, 0, 1)  # (4, k)
    nearest = a[None] + t[..., None] * d[None]  # (4, k, 2)
    to_corner = float(np.min(np.hypot(*(nearest - corners[:, None, :]).transpose(2, 0, 1))))
    return 0.0 if _segments_cross_box(segments, box) else min(ends, to_corner)


def far_labels(marks: Sequence[Mark], reach: float = LABEL_REACH) -> list[Finding]:
    """Every label within `reach` of the mark it names (its group's strokes and fills)."""
    out = []
    for label, named in _labels(marks):
        gap = min(_gap(m, label.box) for m in named)
        if gap > reach:
            nearest = min(named, key=lambda m: _gap(m, label.box))
            out.append(Finding("label", f"{label.shows} is {gap:.2f} from {nearest.shows}, "
                                        f"the mark it names (at most {reach})"))
    return out


def repeated_names(marks: Sequence[Mark],
                   word_colors: Iterable[str] | None = None) -> list[Finding]:
    """No one-letter name (θ, q) labels two different marks in one picture: θ₁ and θ₂. A
    label in a word's colour (`word_colors`) is that word, not a symbol: a one-character
    word ("了", "a") may name its arrow and its shadow, which are the one word's."""
    words = {c.lower() for c in word_colors or ()}
    seen: dict[str, list[Mark]] = {}
    for label, _ in _labels(marks):
        if _SYMBOL.fullmatch(label.text.strip()) and not words & set(label.colors):
            seen.setdefault(label.text.strip(), []).append(label)
    return [Finding("label", f'{len(same)} marks are each labelled "{name}": '
                             f"{', '.join(m.shows for m in same[:3])}")
            for name, same in seen.items() if len({m.owner for m in same}) > 1
            and not _copies(same, marks)]


def _copies(labels: list[Mark], marks: Sequence[Mark]) -> bool:
    """Whether the marks labelled alike are one thing drawn again (small multiples: each
    panel's "q" names the one query, drawn at one scale in every panel): the stroke in
    each label's colour nearest to it is, for every label, the same stroke moved: the
    same span (a stroke drawn dashed in one panel, solid in another, is one line)."""
    spans = []
    for label in labels:
        ink = {c.lower() for c in label.colors}
        strokes = [m for m in marks if m.kind == "line" and m.segments is not None
                   and len(m.segments) and ink & {c.lower() for c in m.colors}]
        if not strokes:
            return False
        nearest = min(strokes, key=lambda m: _gap(m, label.box))
        pts = nearest.segments.reshape(-1, nearest.segments.shape[-1])[:, :2]
        spans.append(pts.max(axis=0) - pts.min(axis=0))
    return all(np.allclose(p, spans[0], atol=SAME_SPAN) for p in spans[1:])


# ---- told by colour alone ------------------------------------------------------------
SIGN_GLYPHS = "+−-✓✗"  # a sign told in writing
# Sign colours are judged as every viewer sees them: normal vision and the three
# dichromacies (tritanopia too: a blue–orange pair that red–green blindness keeps apart
# could still merge for a tritanope).
SIGN_CVD_TYPES = ("deuteranomaly", "protanomaly", "tritanomaly")


@lru_cache(maxsize=4096)  # a picture asks it for each of its cells, with a few opacities
def signs_apart(positive: str, negative: str, background: str, opacity: float = 1.0) -> float:
    """The smallest CIEDE2000 distance between the two sign colours laid at `opacity` over
    `background`, seen with normal vision or simulated deuteranopia, protanopia or
    tritanopia: what is left to tell a positive cell from a negative one by colour."""
    pos, neg = blend(positive, background, opacity), blend(negative, background, opacity)
    seen = [ciede2000(np.array(_lab(pos)), np.array(_lab(neg)))]
    seen += [ciede2000(np.array(seen_as(pos, k)), np.array(seen_as(neg, k)))
             for k in SIGN_CVD_TYPES]
    return min(seen)


def sign_by_colour_alone(marks: Sequence[Mark], positive: str, negative: str,
                         background: str) -> list[Finding]:
    """A fill in the sign colours (a product's box, a heat map's cell) tells its sign to
    every viewer: either the two colours, at that fill's opacity over the background, stay
    MIN_WORD_DELTA_E apart under every simulated colour blindness (signs_apart: a
    diverging palette such as blue–red), or the sign is written on it too (a number,
    with its "−" or none, or +, −, ✓, ✗). A green–red pair fails: under deuteranopia the
    two are one khaki and only the writing is left."""
    signs = {positive.lower(), negative.lower()}
    texts = [m for m in marks if m.kind == "text"
             and (_is_number(m.text) or any(g in m.text for g in SIGN_GLYPHS))]
    boxes = _boxes(texts)
    bare = []
    for m in marks:
        if m.kind != "shape" or not signs & set(m.colors):
            continue
        if signs_apart(positive, negative, background, round(m.opacity, 2)) >= MIN_WORD_DELTA_E:
            continue
        on = _meeting(m.box, boxes, 0.0)
        if not any(_overlap(texts[j].box, m.box, 0.0)
                   and m.box[0] <= (texts[j].box[0] + texts[j].box[2]) / 2 <= m.box[2]
                   for j in np.flatnonzero(on)):
            bare.append(m)
    if not bare:
        return []
    return [Finding("colour", f"{len(bare)} mark{'s' if len(bare) > 1 else ''} in the sign "
                              f"colours tell the sign by colour alone (no +/− or number on "
                              f"them, and the two colours look alike to a colour-blind "
                              f"viewer): {', '.join(sorted({m.top for m in bare}))}")]


def same_words_by_colour(marks: Sequence[Mark],
                         word_colors: Iterable[str] | None = None) -> list[Finding]:
    """Two texts that say the same word (case aside: "The", "the") in different word
    colours (any colours, if `word_colors` is None) name different things told apart by
    colour alone: each needs its index (flies₁, flies₂)."""
    palette = None if word_colors is None else {c.lower() for c in word_colors}
    by_word: dict[str, set[str]] = {}
    for m in marks:
        if (m.kind == "text" and m.text.strip() and not _is_number(m.text)
                and len(m.colors) == 1 and (palette is None or m.colors[0] in palette)):
            by_word.setdefault(m.text.strip().casefold(), set()).add(m.colors[0])
    return [Finding("colour", f'"{word}" is written in {len(colors)} colours for different '
                              f"things, told apart by colour alone (index them: "
                              f"{word}{subscript(1)}, {word}{subscript(2)})")
            for word, colors in by_word.items() if len(colors) > 1]


# ---- charts state their scale --------------------------------------------------------
CHART_PIECES = 12  # an open stroke of this many pieces, running left to right, is a plot
CHART_REACH = 0.9  # its scale's numbers are written this close beside it


def _frame_of(plot: Mark, marks: Sequence[Mark]) -> tuple:
    """The box a plot is drawn in: the smallest outline around it (its axes' box), else
    its own box."""
    around = [m.box for m in marks if m.kind == "line" and m.role == "closed"
              and m.box[0] <= plot.box[0] + 1e-3 and m.box[1] <= plot.box[1] + 1e-3
              and m.box[2] >= plot.box[2] - 1e-3 and m.box[3] >= plot.box[3] - 1e-3]
    return min(around, key=lambda b: (b[2] - b[0]) * (b[3] - b[1]), default=plot.box)


def unscaled_charts(marks: Sequence[Mark], reach: float = CHART_REACH) -> list[Finding]:
    """A plotted curve (a polyline running left to right, see _line_role) states its scale:
    at least two numbers at different heights beside it (ticks on its y-axis, or its
    extremes labelled)."""
    numbers = [m for m in marks if m.kind == "text" and _is_number(m.text)]
    out = []
    for m in marks:
        if m.kind != "line" or m.role != "plot":
            continue
        left, bottom, right, top = _frame_of(m, marks)
        beside = {round((t.box[1] + t.box[3]) / 2, 2) for t in numbers
                  if bottom - 0.3 <= (t.box[1] + t.box[3]) / 2 <= top + 0.3
                  and (left - reach <= t.box[2] <= left + 0.05
                       or right - 0.05 <= t.box[0] <= right + reach)}
        if len(beside) < 2:
            out.append(Finding("chart", f"the plot {m.shows} states no scale: no numbers "
                                        f"beside its axis"))
    return out


def _blend(top: str, under: str, alpha: float) -> str:
    a = np.array([int(top[i:i + 2], 16) for i in (1, 3, 5)], float)
    b = np.array([int(under[i:i + 2], 16) for i in (1, 3, 5)], float)
    return _rgb_hex(alpha * a + (1 - alpha) * b)


def _rgb_hex(rgb: np.ndarray) -> str:
    """#rrggbb of 0–255 channels, rounded half to even as numpy rounds (in Python: numpy's
    round and clip on three numbers cost more than the lint's reading of a glyph)."""
    r, g, b = (min(255, max(0, round(v))) for v in np.asarray(rgb, dtype=float).tolist())
    return f"#{r:02x}{g:02x}{b:02x}"


def backdrop(marks: Sequence[Mark], point: np.ndarray, below: int, background: str,
             _shapes: tuple | None = None) -> str:
    """The colour under `point` before mark number `below` is drawn: the background with
    every fill drawn earlier that covers the point laid over it."""
    shapes, boxes, orders = _shapes or _shape_index(marks)
    color = background
    if not shapes:
        return color
    under = np.flatnonzero((orders < below) & (boxes[:, 0] <= point[0]) & (point[0] <= boxes[:, 2])
                           & (boxes[:, 1] <= point[1]) & (point[1] <= boxes[:, 3]))
    for i in under:  # in drawing order
        m = shapes[i]
        if len(m.outline) < 3 or _inside(point[None], m.outline)[0]:
            color = _blend(m.colors[0], color, min(1.0, m.opacity))
    return color


def _shape_index(marks: Sequence[Mark]) -> tuple[list[Mark], np.ndarray, np.ndarray]:
    """The fills among `marks` with their boxes and drawing orders as arrays (a picture has
    hundreds of cells; looking each up per text was most of the lint's time)."""
    shapes = [m for m in marks if m.kind == "shape" and m.outline is not None]
    boxes = np.array([m.box for m in shapes], float).reshape(-1, 4)
    return shapes, boxes, np.array([m.order for m in shapes], int)


@lru_cache(maxsize=8192)  # a picture has hundreds of texts in a few colours over a few fills
def _contrast_over(color: str, under: str, opacity: float) -> float:
    """The contrast of `color` laid at `opacity` over `under`, with `under`."""
    return contrast(_blend(color, under, opacity), under)


def low_contrast(marks: Sequence[Mark], background: str,
                 floor: float = MIN_CONTRAST) -> list[Finding]:
    """Every text's contrast with what lies under it (sampled across its ink box) at least
    `floor` (WCAG AA: 4.5:1), its own opacity counted."""
    out = []
    index = _shape_index(marks)
    for t in (m for m in marks if m.kind == "text"):
        left, bottom, right, top = t.box
        cx, cy, w, h = (left + right) / 2, (bottom + top) / 2, right - left, top - bottom
        worst, under_worst = 21.0, background
        for dx, dy in ((0, 0), (-0.35, -0.3), (0.35, -0.3), (-0.35, 0.3), (0.35, 0.3)):
            under = backdrop(marks, np.array([cx + dx * w, cy + dy * h]), t.order, background,
                             index)
            for color in t.colors:
                ratio = _contrast_over(color, under, t.opacity)
                if ratio < worst:
                    worst, under_worst = ratio, under
        if worst < floor:
            out.append(Finding("contrast", f"{t.shows} ({'/'.join(t.colors)}) on {under_worst} "
                                           f"has contrast {worst:.1f}:1 (floor {floor}:1)"))
    return out


def picture_findings(marks: Sequence[Mark], background: str, signs: tuple[str, str] = (),
                     word_colors: Iterable[str] | None = None,
                     tokens: Iterable[str] = ()) -> list[Finding]:
    """Every rule that looks at one picture; `signs` are the (positive, negative) colours,
    `word_colors` the words' colours (see same_words_by_colour) and `tokens` the sentence's words as
    labelled (see raw_notation)."""
    found = (overlaps(marks) + crossings(marks) + outside_safe_area(marks)
             + too_small(marks) + low_contrast(marks, background) + lines_on_lines(marks)
             + far_labels(marks) + repeated_names(marks, word_colors)
             + same_words_by_colour(marks, word_colors) + unscaled_charts(marks)
             + raw_notation(marks, tokens))
    if signs:
        found += sign_by_colour_alone(marks, *signs, background)
    return found


# ---- the rules over a caption's time ------------------------------------------------
@dataclass(frozen=True)
class CaptionTiming:
    """When a caption came, when its picture stopped changing, when the storyboard's still
    is taken (its picture complete) and when it left; what changed after the still."""

    shown: float  # the caption starts to appear
    reading: float  # its reading time (scenes.pacing)
    settled: float  # the picture's last change before the still (or `shown`, if later)
    still: float  # the picture is complete (ChapterScene.caption_ends)
    leaves: float  # the caption is replaced, or the chapter ends
    changes: tuple[str, ...] = ()  # what was played on the picture between still and leaves


def hold_findings(t: CaptionTiming) -> list[Finding]:
    """The picture stands complete and still before its caption leaves for at least half
    the caption's reading time (never under 1.5 s); nothing changes while it is up."""
    out = []
    need = max(HOLD_SHARE * t.reading, MIN_HOLD)
    held = t.still - max(t.settled, t.shown)
    if held < need - 1e-3:
        out.append(Finding("hold", f"the picture stands complete for {held:.1f} s before "
                                   f"the caption leaves (needs {need:.1f} s)"))
    if t.changes:
        shown = "; ".join(t.changes[:3]) + (f"; and {len(t.changes) - 3} more"
                                            if len(t.changes) > 3 else "")
        out.append(Finding("moves", f"the picture changes while the caption is up, "
                                    f"{t.leaves - t.still:.1f} s before it leaves: {shown}"))
    return out


@dataclass(frozen=True)
class Shown:
    """Texts that came onto the picture together and changed or left together: one state
    of the picture (a snapshot's table, a step's numbers)."""

    texts: tuple[str, ...]
    came: float  # when they were first seen whole
    went: float  # when they started to change or leave (or were covered)
    rested: float  # the longest the picture stood still while they were up
    reading: float  # how long they must be up (scenes.pacing.state_seconds)


def brief_states(states: Iterable[Shown], frame: float) -> list[Finding]:
    """Every state the picture rests in for more than a frame is up for its reading time
    (scenes.pacing.state_seconds), not only a caption's last one: a morph may pass through
    states without resting, but texts the picture stops on stay up long enough to be read."""
    out = []
    for s in states:
        up, need = s.went - s.came, s.reading
        if s.rested > frame + 1e-6 and up < need - 1e-3:
            shown = ", ".join(f'"{t}"' for t in s.texts[:3])
            more = f" and {len(s.texts) - 3} more" if len(s.texts) > 3 else ""
            out.append(Finding("state", f"the picture rests {s.rested:.1f} s on {shown}{more}, "
                                        f"up {up:.1f} s in all: too brief to read (needs "
                                        f"{need:.1f} s)"))
    return out


def _is_number(text: str) -> bool:
    return any(ch.isdigit() for ch in text)


def crossfades(outgoing: Sequence[Mark], incoming: Sequence[Mark]) -> list[Finding]:
    """One number at every frame: no text with a number in it fades out where another
    fades in during the same play (mid-play both are drawn, one through the other, as
    "step 7500" over "step 0"). `outgoing`: the marks of what a play removes, as they were;
    `incoming`: the marks of what it brings in, as they end."""
    leaving = [m for m in outgoing if m.kind == "text" and _is_number(m.text)]
    coming = [m for m in incoming if m.kind == "text" and _is_number(m.text)]
    pairs = [(old, new) for old in leaving for new in coming
             if old.ident != new.ident and _overlap(old.box, new.box, OVERLAP_SLACK)]
    if not pairs:
        return []
    old, new = pairs[0]
    more = f" (and {len(pairs) - 1} more)" if len(pairs) > 1 else ""
    return [Finding("numbers", f"{new.shows} fades in over {old.shows}{more}: two numbers on "
                               f"top of each other while it plays")]


def changed(before: Sequence[Mark], after: Sequence[Mark]) -> list[str]:
    """What differs between two pictures of one caption: objects that went, appeared or
    changed (moved, recoloured, faded), whether played or not."""
    old = {(m.ident, m.kind): m for m in before}
    new = {(m.ident, m.kind): m for m in after}
    kinds = (("is cleared", [old[k] for k in old.keys() - new.keys()]),
             ("appears", [new[k] for k in new.keys() - old.keys()]),
             ("changes", [old[k] for k in old.keys() & new.keys()
                          if old[k].signature != new[k].signature]))
    out = []
    for verb, marks in kinds:
        names = sorted({m.shows for m in marks}, key=lambda s: (not s.startswith("text"), s))
        if names:
            more = f" and {len(names) - 1} more" if len(names) > 1 else ""
            out.append(f"{names[0]}{more} {verb if not more else _plural(verb)}")
    return out


def _plural(verb: str) -> str:
    return {"is cleared": "are cleared", "appears": "appear", "changes": "change"}[verb]


# ---- word colours under colour blindness --------------------------------------------
def ciede2000(lab1: np.ndarray, lab2: np.ndarray) -> float:
    """CIEDE2000 colour difference of two CIELAB colours (Sharma, Wu & Dalal 2005)."""
    L1, a1, b1 = (float(v) for v in lab1)
    L2, a2, b2 = (float(v) for v in lab2)
    c_bar = (np.hypot(a1, b1) + np.hypot(a2, b2)) / 2
    g = 0.5 * (1 - np.sqrt(c_bar ** 7 / (c_bar ** 7 + 25.0 ** 7)))
    a1p, a2p = (1 + g) * a1, (1 + g) * a2
    c1p, c2p = np.hypot(a1p, b1), np.hypot(a2p, b2)
    h1p = np.degrees(np.arctan2(b1, a1p)) % 360 if c1p else 0.0
    h2p = np.degrees(np.arctan2(b2, a2p)) % 360 if c2p else 0.0
    dl, dc = L2 - L1, c2p - c1p
    dh = 0.0
    if c1p * c2p:
        dh = h2p - h1p
        dh = dh - 360 if dh > 180 else dh + 360 if dh < -180 else dh
    dH = 2 * np.sqrt(c1p * c2p) * np.sin(np.radians(dh / 2))
    l_bar, cp_bar = (L1 + L2) / 2, (c1p + c2p) / 2
    if c1p * c2p == 0:
        h_bar = h1p + h2p
    elif abs(h1p - h2p) <= 180:
        h_bar = (h1p + h2p) / 2
    else:
        h_bar = (h1p + h2p + 360) / 2 if h1p + h2p < 360 else (h1p + h2p - 360) / 2
    t = (1 - 0.17 * np.cos(np.radians(h_bar - 30)) + 0.24 * np.cos(np.radians(2 * h_bar))
         + 0.32 * np.cos(np.radians(3 * h_bar + 6)) - 0.20 * np.cos(np.radians(4 * h_bar - 63)))
    d_theta = 30 * np.exp(-(((h_bar - 275) / 25) ** 2))
    r_c = 2 * np.sqrt(cp_bar ** 7 / (cp_bar ** 7 + 25.0 ** 7))
    s_l = 1 + 0.015 * (l_bar - 50) ** 2 / np.sqrt(20 + (l_bar - 50) ** 2)
    s_c, s_h = 1 + 0.045 * cp_bar, 1 + 0.015 * cp_bar * t
    r_t = -np.sin(np.radians(2 * d_theta)) * r_c
    return float(np.sqrt((dl / s_l) ** 2 + (dc / s_c) ** 2 + (dH / s_h) ** 2
                         + r_t * (dc / s_c) * (dH / s_h)))


@lru_cache(maxsize=4096)
def _lab(color: str) -> tuple[float, float, float]:
    """CIELAB of a #rrggbb colour as seen with normal vision."""
    from colorspacious import cspace_convert  # lazy: only the colour rules need it

    rgb = np.array([int(color[i:i + 2], 16) / 255 for i in (1, 3, 5)])
    return tuple(float(v) for v in cspace_convert(rgb, "sRGB1", "CIELab"))


@lru_cache(maxsize=4096)
def seen_as(color: str, cvd: str) -> tuple[float, float, float]:
    """CIELAB of `color` as a viewer with `cvd` (colorspacious' Machado 2009 model at full
    severity) sees it."""
    from colorspacious import cspace_convert  # lazy: only the colour rule needs it

    rgb = np.array([int(color[i:i + 2], 16) / 255 for i in (1, 3, 5)])
    seen = np.clip(cspace_convert(rgb, {"name": "sRGB1+CVD", "cvd_type": cvd, "severity": 100},
                                  "sRGB1"), 0, 1)
    return tuple(float(v) for v in cspace_convert(seen, "sRGB1", "CIELab"))


@dataclass(frozen=True)
class Confusion:
    """Two words whose colours look alike to a viewer with a colour vision deficiency."""

    words: tuple[str, str]
    colors: tuple[str, str]
    cvd: str  # "deuteranopia" or "protanopia"
    delta_e: float


def confusable(word_colors: Sequence[tuple[str, str]],
               min_delta: float = MIN_WORD_DELTA_E) -> list[Confusion]:
    """Pairs of (word, colour) whose colours fall under `min_delta` CIEDE2000 apart under
    simulated deuteranopia or protanopia (worst of the two)."""
    out = []
    items = list(dict.fromkeys(word_colors))
    for i, (w1, c1) in enumerate(items):
        for w2, c2 in items[i + 1:]:
            if c1 == c2:
                continue
            worst = min((ciede2000(np.array(seen_as(c1, k)), np.array(seen_as(c2, k))), k)
                        for k in CVD_TYPES)
            if worst[0] < min_delta:
                out.append(Confusion((w1, w2), (c1, c2), CVD_NAMES[worst[1]], worst[0]))
    return out


def colour_findings(marks: Sequence[Mark], confusions: Iterable[Confusion],
                    *others: Sequence[Mark]) -> list[Finding]:
    """Marks in look-alike word colours that do not carry their word (see _carries): one
    finding for the picture (and `others`, more pictures of the same caption), naming the
    closest pair."""
    confusions = list(confusions)
    hit: dict[Confusion, None] = {}
    bare: set[str] = set()
    for picture in (marks, *others):
        texts = [m for m in picture if m.kind == "text"]
        parts = {m.ident: m for m in picture}  # an arrow's tip is a part of its arrow
        for c in confusions:
            for word, color in zip(c.words, c.colors):
                named = [t for t in texts if word in t.text]
                for m in picture:
                    if color not in m.colors or (m.kind == "text" and word in m.text):
                        continue
                    whole = parts.get(m.owner) if m.shows.startswith("arrow") else None
                    if whole is not None and color in whole.colors:
                        m = whole  # its word, written by the shaft, names the tip too
                    if not any(_carries(m, t) for t in named):
                        bare.add(_kind_of(m))
                        hit[c] = None
    if not hit:
        return []
    c = min(hit, key=lambda c: c.delta_e)
    others_said = (f" (and {len(hit) - 1} more pair{'s' if len(hit) > 2 else ''})"
                   if len(hit) > 1 else "")
    return [Finding("colour", f'the colours of "{c.words[0]}" ({c.colors[0]}) and '
                              f'"{c.words[1]}" ({c.colors[1]}) look alike under {c.cvd} '
                              f"(ΔE00 {c.delta_e:.1f} < {MIN_WORD_DELTA_E:.0f}){others_said}, "
                              f"and marks in them carry no word: {', '.join(sorted(bare))}")]


def _carries(mark: Mark, word: Mark) -> bool:
    """Whether the text `word` names `mark`: written on or near it, or, for a filled shape
    (a table's cell or row), at the end of its row or column as a table labels them."""
    if _overlap(_grown(mark.box, MARK_REACH), word.box, 0.0):
        return True
    if mark.kind != "shape":
        return False
    x = (word.box[0] + word.box[2]) / 2
    y = (word.box[1] + word.box[3]) / 2
    return mark.box[1] <= y <= mark.box[3] or mark.box[0] <= x <= mark.box[2]


def _kind_of(m: Mark) -> str:
    """A mark's kind without its place: 'arrow', 'rectangle', 'text "0.12"'."""
    return m.shows.split(" at (")[0]


def _grown(box: tuple, by: float) -> tuple:
    return box[0] - by, box[1] - by, box[2] + by, box[3] + by


# ---- a caption's picture, and gathering problems ------------------------------------
@dataclass
class CaptionPicture:
    """What the lint knows of one caption: its number, its pictures at the two moments
    (the still and as it leaves) and its timing."""

    caption: int  # 1-based, in its chapter
    text: str
    still: list[Mark]
    leaving: list[Mark]
    timing: CaptionTiming
    played: tuple[Finding, ...] = ()  # found while its plays ran (crossfades)


def caption_findings(p: CaptionPicture, background: str,
                     confusions: Sequence[Confusion] = (), signs: tuple[str, str] = (),
                     word_colors: Iterable[str] | None = None,
                     tokens: Iterable[str] = ()) -> list[Finding]:
    """Every rule on one caption: both pictures, its timing, the colours; each finding once."""
    tokens = tuple(tokens)
    words = None if word_colors is None else tuple(word_colors)
    found = picture_findings(p.still, background, signs, words, tokens)
    if not same_picture(p.still, p.leaving):  # most pictures stand still until they leave
        found += picture_findings(p.leaving, background, signs, words, tokens)
    changes = tuple(dict.fromkeys(list(p.timing.changes) + changed(p.still, p.leaving)))
    timing = CaptionTiming(p.timing.shown, p.timing.reading, p.timing.settled, p.timing.still,
                           p.timing.leaves, changes)
    found += hold_findings(timing)
    found += colour_findings(p.still, confusions, p.leaving)
    found += list(p.played)
    return list(dict.fromkeys(found))


def same_picture(a: Sequence[Mark], b: Sequence[Mark]) -> bool:
    """Whether two lists of marks are equal in every field (the rules over one picture are
    functions of its marks: equal marks, equal findings)."""
    return len(a) == len(b) and all(
        _plain_fields(x) == _plain_fields(y)
        and all(_same_array(getattr(x, f), getattr(y, f)) for f in _ARRAY_FIELDS)
        for x, y in zip(a, b))


_ARRAY_FIELDS = ("segments", "outline")
_plain_fields = attrgetter(*(f.name for f in fields(Mark) if f.name not in _ARRAY_FIELDS))


def _same_array(x: np.ndarray | None, y: np.ndarray | None) -> bool:
    return x is y or (x is not None and y is not None and np.array_equal(x, y))


def gather(chapter: int, per_caption: Sequence[tuple[int, Sequence[Finding]]]) -> list[Problem]:
    """One Problem per distinct finding of a chapter, at the first caption that has it and
    naming the later ones, so a badge off the safe area is one line, not one per caption."""
    first: dict[Finding, int] = {}
    later: dict[Finding, list[int]] = {}
    for caption, findings in per_caption:
        for f in findings:
            if f in first:
                if caption != first[f] and caption not in later[f]:
                    later[f].append(caption)
            else:
                first[f], later[f] = caption, []
    return [Problem(chapter, first[f], f, tuple(later[f])) for f in first]


def _ranges(numbers: Sequence[int]) -> str:
    """3, 4, 5, 7 → '3–5, 7'."""
    out: list[str] = []
    run: list[int] = []
    for n in sorted(numbers):
        if run and n == run[-1] + 1:
            run.append(n)
            continue
        if run:
            out.append(f"{run[0]}–{run[-1]}" if len(run) > 1 else str(run[0]))
        run = [n]
    if run:
        out.append(f"{run[0]}–{run[-1]}" if len(run) > 1 else str(run[0]))
    return ", ".join(out)
