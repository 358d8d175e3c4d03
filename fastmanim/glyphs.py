"""Pango's SVG of a text, turned into Manim paths a glyph at a time.

Manim's Text has Pango write an SVG (each glyph outline once, as a `<symbol>`, then a
`<use>` per character), and SVGMobject reads it with svgelements: every `<use>` is parsed
again, transformed and turned into a new VMobjectFromSVGPath. That is most of the cost of
a new text (28 ms for a number, 220 ms for a caption), and a new sentence has hundreds.

`GlyphText` reads the same file, but parses each distinct glyph outline once per process,
makes one path per style with Manim's own reader (on a one-glyph SVG), and then, for each
`<use>`, copies that path and computes its points with the floating-point operations
svgelements and Manim's path reader perform: `x·1 + y·0 + 1·e` for the use's translation, `(s + s + e)/3`
and `(s + e + e)/3` for a line's handles. Points, styles and order come out as Manim's
(tests/test_glyphs.py compares them exactly). An SVG that is anything but Pango's plain
list of glyphs (an image, a rectangle, a transform, an unknown element) is read by
Manim's own code instead.
"""

from __future__ import annotations

import copy
import re
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import svgelements as se
from manim import RIGHT, Text, VMobject

_SYMBOL = re.compile(r'<symbol overflow="visible" id="([^"]+)">\s*'
                     r'(?:<path style="([^"]*)" d="([^"]*)"/>\s*)?</symbol>')
_USE = re.compile(r'<use xlink:href="#([^"]+)" x="([-0-9.e]+)" y="([-0-9.e]+)"/>')
_TOKEN = re.compile(r'<g style="([^"]*)">|</g>|<use [^>]*/>')
_BODY = re.compile(r'\s*(?:<use [^>]*/>|<g style="[^"]*">|</g>|<g id="surface\d+">|</svg>)')
_DEFS = re.compile(r'\s*(?:<defs>|</defs>|<g>|</g>)')


@dataclass(frozen=True)
class Outline:
    """How the points of a use of one glyph outline are made from its raw points."""

    raw: np.ndarray  # (n, 2) the outline's points as written in the file
    points: np.ndarray  # (m,) which raw point each path point is (for "p" rows)
    first: np.ndarray  # (m,) for a handle: the segment's start; else -1
    last: np.ndarray  # (m,) for a handle: the segment's end
    near_start: np.ndarray  # (m,) bool: the handle at a third (else at two thirds)


class _Unreadable(Exception):
    """Not a plain glyph list: Manim's own reader takes it."""


_OUTLINES: dict[str, Outline] = {}
_STYLED: dict[tuple, VMobject] = {}


def _program(d: str) -> tuple[np.ndarray, list[tuple[str, int, int]]]:
    """The raw points of outline `d` and the rows of the points Manim's path reader makes
    of them (VMobjectFromSVGPath.handle_commands, four points per curve as for Cairo):
    ("p", k, 0) is raw point k, ("h1"/"h2", s, e) the handle at a third/two thirds of the
    line from s to e."""
    raw: list[tuple[float, float]] = []
    rows: list[tuple[str, int, int]] = []

    def point(p) -> int:
        raw.append((p.x, p.y))
        return len(raw) - 1

    def line(s: int, e: int) -> None:
        rows.extend((("p", s, 0), ("h1", s, e), ("h2", s, e), ("p", e, 0)))

    last = true_move = None
    for seg in se.Path(d):
        kind = seg.__class__
        if kind is se.Move:
            last = true_move = point(seg.end)
        elif kind is se.Line:
            end = point(seg.end)
            line(last, end)
            last = end
        elif kind is se.CubicBezier:
            c1, c2, end = point(seg.control1), point(seg.control2), point(seg.end)
            rows.extend((("p", last, 0), ("p", c1, 0), ("p", c2, 0), ("p", end, 0)))
            last = end
        elif kind is se.Close:
            # Manim closes with a line when the pen is over 1e-4 from the subpath's start;
            # a translation moves both points alike, so the outline's own points decide
            if np.linalg.norm(np.subtract(raw[last], raw[true_move])) > 0.0001:
                line(last, true_move)
                last = true_move
        else:
            raise _Unreadable(kind.__name__)
    return np.array(raw, dtype=float).reshape(-1, 2), rows


def _outline(d: str) -> Outline:
    outline = _OUTLINES.get(d)
    if outline is None:
        raw, rows = _program(d)
        outline = _OUTLINES[d] = Outline(
            raw, points=np.array([r[1] if r[0] == "p" else 0 for r in rows], dtype=int),
            first=np.array([r[1] if r[0] != "p" else -1 for r in rows], dtype=int),
            last=np.array([r[2] for r in rows], dtype=int),
            near_start=np.array([r[0] == "h1" for r in rows], dtype=bool))
    return outline


def _styled(owner: Text, owner_key: tuple, group: str, style: str) -> VMobject:
    """A path as Manim's reader makes and styles it for a glyph of path style `style` in a
    group styled `group` (made once per process from a one-glyph SVG); only its points
    depend on the glyph, and they are replaced."""
    key = (owner_key, group, style)
    path = _STYLED.get(key)
    if path is None:
        svg = ('<svg xmlns="http://www.w3.org/2000/svg" '
               'xmlns:xlink="http://www.w3.org/1999/xlink" version="1.1"><defs><g>'
               f'<symbol overflow="visible" id="g"><path style="{style}" '
               'd="M 0 0 L 1 0 L 1 -1 Z"/></symbol></g></defs><g id="surface1">'
               f'<g style="{group}"><use xlink:href="#g" x="0" y="0"/></g></g></svg>')
        with tempfile.TemporaryDirectory() as folder:
            file = Path(folder) / "glyph.svg"
            file.write_text(svg)
            owner.modify_xml_tree(ET.parse(file)).write(file)
            mobs, _ = owner.get_mobjects_from(se.SVG.parse(file))
        if len(mobs) != 1:
            raise _Unreadable(f"{len(mobs)} paths for one glyph")
        path = _STYLED[key] = mobs[0]
        if hasattr(path, "path_obj"):
            del path.path_obj  # copies are much cheaper without it (Text drops it too)
    return path


def _place(glyph: Outline, x: float, y: float) -> np.ndarray:
    """The glyph's path points for a use at (x, y): svgelements' `x·a + y·c + 1·e` with
    the use's translate(x, y), then Manim's points and line handles."""
    X, Y = glyph.raw[:, 0], glyph.raw[:, 1]
    t = np.zeros((len(glyph.raw), 3))
    t[:, 0] = X * 1.0 + Y * 0.0 + x
    t[:, 1] = X * 0.0 + Y * 1.0 + y
    out = t[glyph.points]
    handles = glyph.first >= 0
    if handles.any():
        s, e = t[glyph.first[handles]], t[glyph.last[handles]]
        near = glyph.near_start[handles][:, None]
        out[handles] = np.where(near, (s + s + e) / 3, (s + e + e) / 3)
    return out


def glyph_paths(owner: Text, svg_text: str) -> list[VMobject]:
    """The paths Manim's SVGMobject.get_mobjects_from makes of Pango's SVG, in order."""
    head, sep, body = svg_text.partition("</defs>")
    defs = head[head.find("<defs>"):] if sep else ""
    if not sep or not defs or _DEFS.sub("", _SYMBOL.sub("", defs)).strip():
        raise _Unreadable("defs")
    if _BODY.sub("", body).strip():
        raise _Unreadable("body")
    symbols = {m[1]: (m[2], m[3]) for m in _SYMBOL.finditer(defs)}
    owner_key = (tuple(sorted(owner.generate_config_style_dict().items())),
                 tuple(sorted(owner.path_string_config.items())))
    out: list[VMobject] = []
    groups: list[str] = []
    for m in _TOKEN.finditer(body):
        token = m[0]
        if token.startswith("<g"):
            groups.append(m[1])
        elif token == "</g>":
            if groups:
                groups.pop()
        else:
            use = _USE.fullmatch(token)
            if use is None or use[1] not in symbols or len(groups) != 1:
                raise _Unreadable(token)
            style, d = symbols[use[1]]
            if d is None or not d.strip():
                continue  # an empty glyph (a space): Manim makes no path of it either
            outline = _outline(d)
            if not len(outline.points):
                continue  # Manim drops a path without points
            path = copy_built(_styled(owner, owner_key, groups[0], style))
            path.points = _place(outline, float(use[2]), float(use[3]))
            out.append(path)
    return out


def copy_built(mob: VMobject) -> VMobject:
    """A copy of a kept text, several times quicker than Manim's generic deepcopy (a third
    of a scene's build time went there): arrays are copied directly, submobjects
    recursively, lists and dicts deeply (but not the SVG parser's map of groups); everything
    else (numbers, strings, colours) is immutable and shared."""
    cls = mob.__class__
    new = cls.__new__(cls)
    for key, value in mob.__dict__.items():
        if isinstance(value, np.ndarray):
            value = value.copy()
        elif key == "submobjects":
            value = [copy_built(sub) for sub in value]
        elif key == "id_to_vgroup_dict":  # SVGMobject's map of the groups it parsed, which
            value = {}  # only Tex reads; deep-copying it copied every glyph once more
        elif isinstance(value, (list, dict, set)):
            value = copy.deepcopy(value)
        setattr(new, key, value)
    new.original_id = str(id(mob))  # as Manim's own __deepcopy__ sets it
    return new


class GlyphText(Text):
    """Manim's Text, with Pango's SVG read a glyph at a time (see the module)."""

    def generate_mobject(self):
        path = self.get_file_path()
        try:
            mobs = glyph_paths(self, path.read_text(encoding="utf-8"))
        except (_Unreadable, ValueError, OSError):
            return super().generate_mobject()
        self.add(*mobs)
        self.id_to_vgroup_dict = {}
        self.flip(RIGHT)  # SVG's y points down
        return self
