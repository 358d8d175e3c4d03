"""The storyboard's pages: the stills of every caption (pipeline.run.stills takes them)
laid out as a PNG contact sheet and an A4 PDF handout, their captions printed under them.
"""

from __future__ import annotations

import dataclasses
import struct
import subprocess
import unicodedata
import zlib
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from attention_video.attncore.tokenize import CLOSING, OPENING
from attention_video.pipeline.outputs.files import (
    OutputError,
    atomic_output,
    slug,
)
from attention_video.pipeline.records import ChapterStills, Still
from attention_video.scenes.typeset import unicode_text
from PIL import Image, ImageDraw, ImageFont

FRAME_ASPECT = 480 / 854  # height ÷ width of the video's frame (-q l's 854 × 480)
A4_PAGE = (1240, 1754)  # A4 at 150 dpi, portrait
PDF_DPI = 150
HANDOUT_GRID = (2, 3)  # stills per handout page: columns × rows
SHEET_WIDTH = 1920  # the contact sheet, in pixels
SHEET_COLUMNS = 3
PAPER, INK, MUTED, RULE = "#ffffff", "#1a1a1a", "#666666", "#d0d0d0"
# The fonts captions are printed in, first that has the glyph (scenes.text.FONT_CHAIN's).
PRINT_FONTS = ("Noto Sans CJK SC", "Noto Sans Arabic", "Noto Sans Hebrew",
               "Noto Sans Devanagari", "Noto Sans Thai", "Symbola")


def thumbnail(still: Still, size: tuple[int, int]) -> Image.Image:
    """The still at `size`: as taken, as its worker resized it, or resized now."""
    if (still.image.shape[1], still.image.shape[0]) == size:
        return Image.fromarray(still.image)
    made = still.resized.get(size)
    return Image.fromarray(made if made is not None else shrink(still.image, size))


def shrink(image: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    return np.asarray(Image.fromarray(image).resize(size, Image.Resampling.BICUBIC,
                                                    reducing_gap=2.0))


def storyboard_path(sentence: str, output: str | Path | None) -> Path:
    """`-o board.png` → board.png; default media/<sentence>-storyboard.png."""
    if output is None:
        return Path("media") / f"{slug(sentence)}-storyboard.png"
    path = Path(output)
    if path.suffix.lower() != ".png":
        raise OutputError(f"{path}: the storyboard is a .png (its .pdf handout goes beside "
                          "it); give a path such as board.png")
    return path


# ---- stills as vectors -------------------------------------------------------------------
@dataclass(frozen=True)
class VectorStill:
    """A still as the Cairo calls that drew it, in scene units (Manim's camera's own
    calls: paths, colours, line widths), replayed into the PDF handout."""

    background: str  # #rrggbb
    frame_width: float
    frame_height: float
    ops: tuple[tuple, ...]  # (method, *arguments)


class CairoRecorder:
    """Stands in for a cairo.Context: keeps the drawing calls a camera makes, to be played
    again on another context. Manim's camera draws into a BGRA image and so hands Cairo
    its colours as (b, g, r): they are put back in order here."""

    def __init__(self) -> None:
        self.ops: list[tuple] = []

    def set_source_rgba(self, b: float, g: float, r: float, a: float = 1.0) -> None:
        self.ops.append(("set_source_rgba", float(r), float(g), float(b), float(a)))

    def set_source(self, pattern: Any) -> None:
        stops = tuple((float(o), float(r), float(g), float(b), float(a))
                      for o, b, g, r, a in pattern.get_color_stops_rgba())
        self.ops.append(("gradient", tuple(float(v) for v in pattern.get_linear_points()), stops))

    def path(self, xy: np.ndarray, spans: tuple[tuple[int, int, bool], ...], n: int) -> None:
        """A whole path as one op (fastmanim.camera.trace_path draws it): the points drawn,
        (points, 2) in scene units, and each sub-path's (start, end, closed), `n` points a
        curve. One array pickles and replays far quicker than a call per curve."""
        self.ops.append(("path", xy, spans, n))

    def image(self, pixels: np.ndarray, x0: float, y0: float, x1: float, y1: float) -> None:
        """An image mobject's pixels (rows top first, RGBA) filling the box (x0, y0)–(x1, y1)
        in scene units: the camera draws these into the frame, not through Cairo."""
        rgba = np.ascontiguousarray(np.asarray(pixels, dtype=np.uint8)[:, :, :4])
        self.ops.append(("image", rgba, x0, y0, x1, y1))

    def __getattr__(self, name: str) -> Any:
        def record(*args: Any) -> None:  # plain numbers: enums and numpy's pickle slowly
            self.ops.append((name, *(int(a) if isinstance(a, int) else float(a) for a in args)))
        return record


def replay(ctx: Any, still: VectorStill, x: float, y: float, width: float, height: float) -> None:
    """Draw `still` into the rectangle (x, y, width, height) of `ctx` (its units; y down)."""
    ctx.save()
    ctx.rectangle(x, y, width, height)
    ctx.clip()
    ctx.set_source_rgb(*_rgb(still.background))
    ctx.paint()
    sx, sy = width / still.frame_width, height / still.frame_height
    ctx.translate(x + width / 2, y + height / 2)
    ctx.scale(sx, -sy)  # scene units, y up
    play_ops(ctx, still.ops)
    ctx.new_path()
    ctx.restore()


def play_ops(ctx: Any, ops: tuple[tuple, ...]) -> None:
    """The recorded calls made again on `ctx`, whose user space is scene units, y up."""
    import cairo

    for name, *args in ops:
        if name == "path":
            _trace_path(ctx, *args)
        elif name == "gradient":
            points, stops = args
            pattern = cairo.LinearGradient(*points)
            for stop in stops:
                pattern.add_color_stop_rgba(*stop)
            ctx.set_source(pattern)
        elif name == "image":
            _draw_image(ctx, *args)
        else:
            getattr(ctx, name)(*args)


def _trace_path(ctx: Any, xy: np.ndarray, spans: tuple[tuple[int, int, bool], ...],
                n: int) -> None:
    """The calls fastmanim.camera.trace_path made to draw the path, with the same numbers
    (here, where the handout is written, Manim is not imported)."""
    points = xy.tolist()
    ctx.new_path()
    for start, end, closed in spans:
        ctx.new_sub_path()
        ctx.move_to(*points[start])
        for i in range(start, end - n + 1, n):
            ctx.curve_to(*points[i + 1], *points[i + 2], *points[i + 3])
        if closed:
            ctx.close_path()


def _draw_image(ctx: Any, rgba: np.ndarray, x0: float, y0: float, x1: float, y1: float) -> None:
    """RGBA pixels (rows top first) filling the box (x0, y0)–(x1, y1) of a context in scene
    units (y up), each pixel a sharp square (a heat map's cells stay cells at any zoom)."""
    import cairo

    h, w = rgba.shape[:2]
    alpha = rgba[:, :, 3:4].astype(np.float64) / 255
    rgb = np.rint(rgba[:, :, :3] * alpha).astype(np.uint8)  # Cairo's alpha is premultiplied
    bgra = np.ascontiguousarray(np.dstack([rgb[:, :, ::-1], rgba[:, :, 3:4]]))  # (h, w, 4)
    surface = cairo.ImageSurface.create_for_data(memoryview(bgra).cast("B"), cairo.FORMAT_ARGB32,
                                                 w, h, w * 4)
    ctx.save()
    ctx.translate(x0, y1)  # the top-left corner
    ctx.scale((x1 - x0) / w, -(y1 - y0) / h)  # pixel rows go down the scene
    pattern = cairo.SurfacePattern(surface)
    pattern.set_filter(cairo.FILTER_NEAREST)
    ctx.set_source(pattern)
    ctx.rectangle(0, 0, w, h)
    ctx.fill()
    ctx.restore()


def _rgb(color: str) -> tuple[float, float, float]:
    return tuple(int(color[i:i + 2], 16) / 255 for i in (1, 3, 5))


# ---- printing captions -----------------------------------------------------------------
@cache
def _font_file(family: str) -> str | None:
    try:
        out = subprocess.run(["fc-match", "-f", "%{file}", family], capture_output=True,
                             text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return out or None


@cache
def _fonts(size: int) -> tuple[ImageFont.FreeTypeFont | ImageFont.ImageFont, ...]:
    fonts = []
    for family in PRINT_FONTS:
        path = _font_file(family)
        if path and all(getattr(f, "path", None) != path for f in fonts):
            fonts.append(ImageFont.truetype(path, size))
    return tuple(fonts) or (ImageFont.load_default(size),)


@lru_cache(maxsize=4096)
def _font_for(ch: str, size: int):
    """The first font of the chain that draws `ch` (a missing glyph draws as .notdef)."""
    fonts = _fonts(size)
    if ch.isspace() or len(fonts) == 1:
        return fonts[0]
    for font in fonts:
        if _glyph(font, ch, size) != _glyph(font, "\U0010fffd", size):
            return font
    return fonts[0]


def _glyph(font, ch: str, size: int) -> bytes:
    image = Image.new("L", (2 * size, 2 * size))
    ImageDraw.Draw(image).text((0, 0), ch, font=font, fill=255)
    return image.tobytes()


def _runs(text: str, size: int) -> list[tuple[Any, str]]:
    """`text` cut into runs of one font each. A combining mark (Devanagari's vowel signs,
    Arabic's harakat) or a zero-width joiner stays in its letter's run: alone, a font that
    lacks the script would draw it on a dotted circle, and the letter would lose its shape."""
    runs: list[tuple[Any, str]] = []
    for ch in text:
        if runs and (unicodedata.category(ch).startswith("M") or ch in "\u200c\u200d"):
            runs[-1] = (runs[-1][0], runs[-1][1] + ch)
            continue
        font = _font_for(ch, size)
        if runs and runs[-1][0] is font:
            runs[-1] = (font, runs[-1][1] + ch)
        else:
            runs.append((font, ch))
    return runs


def _width(text: str, size: int) -> float:
    return sum(font.getlength(run) for font, run in _runs(text, size))


def _tokens(text: str) -> list[str]:
    """Words with their trailing space; every CJK character is a word of its own, closing
    punctuation goes with what it closes and opening punctuation with what it opens."""
    out, word = [], ""
    for ch in text:
        if ch in CLOSING and not word and out:  # a line never starts with it
            out[-1] += ch
            continue
        if out and not word and out[-1][-1] in OPENING:  # nor ends with it
            word = out.pop()
        if ch == " " or "\u3000" <= ch <= "\u9fff" or "\uff00" <= ch <= "\uffef":
            out.append(word + ch)
            word = ""
        else:
            word += ch
    return out + ([word] if word else [])


def wrap(text: str, size: int, width: float, max_lines: int = 4) -> list[str]:
    lines, line = [], ""
    for tok in _tokens(text):
        if line and _width(line + tok.rstrip(), size) > width:
            lines.append(line.rstrip())
            line = tok.lstrip()
        else:
            line += tok
    if line.strip():
        lines.append(line.rstrip())
    if len(lines) > max_lines:
        lines = lines[:max_lines]
        lines[-1] = lines[-1].rstrip() + " …"
    return lines


def _print(draw: ImageDraw.ImageDraw, xy: tuple[float, float], text: str, size: int,
           fill: str) -> None:
    x, y = xy
    for font, run in _runs(text, size):
        draw.text((x, y), run, font=font, fill=fill)
        x += font.getlength(run)


# ---- the layout ------------------------------------------------------------------------
@dataclass(frozen=True)
class Sheet:
    """A page of stills in a grid, chapter headings across it; sizes in pixels."""

    width: int
    columns: int
    height: int | None  # None: one page as long as it needs (the contact sheet)
    margin: int
    gap: int
    text: int  # caption font size
    heading: int  # chapter heading font size
    rows: int | None = None  # stills rows per page (the handout), else as many as fit


def cell_width(sheet: Sheet) -> float:
    return (sheet.width - 2 * sheet.margin - (sheet.columns - 1) * sheet.gap) / sheet.columns


def thumb_size(sheet: Sheet) -> tuple[int, int]:
    """(width, height) of a still on `sheet`."""
    cell = cell_width(sheet)
    return round(cell), round(cell * FRAME_ASPECT)


@dataclass(frozen=True)
class Block:
    """A strip across a sheet, drawn on its own: a chapter heading, or a row of stills
    with their captions under them."""

    kind: str  # "heading" or "row"
    height: int  # pixels
    image: Image.Image | None = None  # sheet.width wide; None: laid out, not drawn
    title: str = ""  # a heading's
    stills: tuple[Still, ...] = ()  # a row's, with their captions' lines
    lines: tuple[tuple[str, ...], ...] = ()


def lay_out_blocks(stills: list[Still], sheet: Sheet) -> list[Block]:
    """Each chapter's heading and rows of stills, in the order of `stills`, with their
    heights and captions' lines but not drawn (the handout draws its own, as vectors)."""
    cell = cell_width(sheet)
    line_h = round(sheet.text * 1.35)
    size = thumb_size(sheet)
    blocks: list[Block] = []
    for ch in dict.fromkeys(s.chapter for s in stills):
        mine = [s for s in stills if s.chapter == ch]
        # printed as plain text: maths in Unicode's small characters (scenes.typeset)
        blocks.append(Block("heading", round(sheet.heading * 1.8),
                            title=unicode_text(mine[0].title)))
        for i in range(0, len(mine), sheet.columns):
            row = [(s, wrap(unicode_text(s.caption), sheet.text, cell))
                   for s in mine[i:i + sheet.columns]]
            top = 1  # the still's frame is drawn 1 px outside it
            height = top + size[1] + 8 + max(len(lines) for _, lines in row) * line_h + sheet.gap
            blocks.append(Block("row", height, stills=tuple(s for s, _ in row),
                                lines=tuple(tuple(lines) for _, lines in row)))
    return blocks


def draw_blocks(stills: list[Still], sheet: Sheet) -> list[Block]:
    """Each chapter's heading and rows of stills, in the order of `stills`, drawn."""
    return [dataclasses.replace(b, image=_draw_block(b, sheet))
            for b in lay_out_blocks(stills, sheet)]


def _draw_block(block: Block, sheet: Sheet) -> Image.Image:
    image = Image.new("RGB", (sheet.width, block.height), PAPER)
    draw = ImageDraw.Draw(image)
    if block.kind == "heading":
        _print(draw, (sheet.margin, sheet.heading * 0.3), block.title, sheet.heading, INK)
        draw.line((sheet.margin, image.height - 6, sheet.width - sheet.margin, image.height - 6),
                  fill=RULE, width=2)
        return image
    cell = cell_width(sheet)
    line_h = round(sheet.text * 1.35)
    size = thumb_size(sheet)
    top = 1  # the still's frame is drawn 1 px outside it
    for k, (still, lines) in enumerate(zip(block.stills, block.lines)):
        x = round(sheet.margin + k * (cell + sheet.gap))
        image.paste(thumbnail(still, size), (x, top))
        draw.rectangle((x - 1, top - 1, x + round(cell), top + size[1]), outline=RULE)
        for n, line in enumerate(lines):
            _print(draw, (x, top + size[1] + 8 + n * line_h), line, sheet.text, INK)
    return image


def paginate(blocks: list[Block], sheet: Sheet) -> list[list[Block]]:
    """Blocks onto pages of `sheet.height` (one page when it is None); a heading never
    ends a page."""
    pages: list[list[Block]] = [[]]
    used, rows = sheet.margin, 0
    for i, block in enumerate(blocks):
        # a heading goes where the row after it goes
        nxt = blocks[i + 1] if block.kind == "heading" and i + 1 < len(blocks) else None
        following = nxt.height if nxt is not None else 0
        adds_row = block.kind == "row" or nxt is not None
        full = sheet.height is not None and (
            used + block.height + following > sheet.height - sheet.margin
            or bool(adds_row and sheet.rows and rows >= sheet.rows))
        if full and pages[-1]:
            pages.append([])
            used, rows = sheet.margin, 0
        pages[-1].append(block)
        used += block.height
        rows += block.kind == "row"
    return pages


def compose(page: list[Block], sheet: Sheet) -> Image.Image:
    height = sheet.height or sheet.margin * 2 + sum(b.height for b in page)
    image = Image.new("RGB", (sheet.width, height), PAPER)
    y = sheet.margin
    for block in page:
        image.paste(block.image, (0, y))
        y += block.height
    return image


def write_pdf(path: Path, pages: list[list[Block]], sheet: Sheet) -> None:
    """The handout as a vector PDF: each still drawn again from its Cairo calls (or pasted,
    when it has none), headings and captions as text a reader can select and search."""
    import cairo

    pt = 72 / PDF_DPI  # points per pixel of the sheet's layout
    surface = cairo.PDFSurface(str(path), sheet.width * pt, (sheet.height or 0) * pt)
    surface.set_metadata(cairo.PDFMetadata.TITLE, "Attention, explained: storyboard")
    ctx = cairo.Context(surface)
    ctx.scale(pt, pt)  # lay out in the sheet's pixels
    cell = cell_width(sheet)
    size = thumb_size(sheet)
    line_h = round(sheet.text * 1.35)
    for page in pages:
        ctx.set_source_rgb(*_rgb(PAPER))
        ctx.paint()
        y = sheet.margin
        for block in page:
            if block.kind == "heading":
                _show(ctx, sheet.margin, y + sheet.heading * 0.3, block.title, sheet.heading, INK)
                ctx.set_source_rgb(*_rgb(RULE))
                ctx.set_line_width(2)
                ctx.move_to(sheet.margin, y + block.height - 6)
                ctx.line_to(sheet.width - sheet.margin, y + block.height - 6)
                ctx.stroke()
            for k, (still, lines) in enumerate(zip(block.stills, block.lines)):
                x, top = sheet.margin + k * (cell + sheet.gap), y + 1
                if isinstance(still.vector, VectorStill):
                    replay(ctx, still.vector, x, top, size[0], size[1])
                else:
                    _paste(ctx, thumbnail(still, size), x, top)
                ctx.set_source_rgb(*_rgb(RULE))
                ctx.set_line_width(1)
                ctx.rectangle(x - 0.5, top - 0.5, cell + 1, size[1] + 1)
                ctx.stroke()
                for n, line in enumerate(lines):
                    _show(ctx, x, top + size[1] + 8 + n * line_h, line, sheet.text, INK)
            y += block.height
        ctx.show_page()
    surface.finish()


def _show(ctx: Any, x: float, y: float, text: str, size: int, color: str) -> None:
    """`text` as PDF text, its top at y, each run in the print font that has its glyphs
    (the same runs the PNG sheet prints)."""
    ctx.set_source_rgb(*_rgb(color))
    ctx.set_font_size(size)
    for font, run in _runs(text, size):
        ctx.select_font_face(_family(font))
        ascent = ctx.font_extents()[0]
        ctx.move_to(x, y + ascent)
        ctx.show_text(run)
        x += ctx.text_extents(run).x_advance


def _family(font: Any) -> str:
    path = getattr(font, "path", None)
    return next((f for f in PRINT_FONTS if path and _font_file(f) == path), PRINT_FONTS[0])


def _paste(ctx: Any, image: Image.Image, x: float, y: float) -> None:
    import cairo

    rgba = np.asarray(image.convert("RGBA"))[:, :, [2, 1, 0, 3]].copy()  # Cairo's BGRA
    surface = cairo.ImageSurface.create_for_data(memoryview(rgba), cairo.FORMAT_ARGB32,
                                                 image.width, image.height)
    ctx.set_source_surface(surface, x, y)
    ctx.paint()


def draw_pages(stills: list[Still], sheet: Sheet) -> list[Image.Image]:
    """The stills laid out on pages (one page when `sheet.height` is None)."""
    return [compose(page, sheet) for page in paginate(draw_blocks(stills, sheet), sheet)]


CONTACT_SHEET = Sheet(width=SHEET_WIDTH, columns=SHEET_COLUMNS, height=None, margin=40,
                      gap=28, text=20, heading=30)
HANDOUT = Sheet(width=A4_PAGE[0], columns=HANDOUT_GRID[0], height=A4_PAGE[1], margin=70,
                gap=36, text=17, heading=26, rows=HANDOUT_GRID[1])
# (width, height) each still is drawn at: the contact sheet's, 595 × 334, big enough to read
STILL_SIZE = thumb_size(CONTACT_SHEET)


class PngRows:
    """A PNG compressed as its rows come in, top to bottom. No row filter and zlib level 1:
    twice as fast as Pillow's adaptive filters at the same level, and no larger on these
    flat-colour frames."""

    def __init__(self, width: int):
        self.width, self.height = width, 0
        self._zlib = zlib.compressobj(1)
        self._parts: list[bytes] = []

    def add(self, image: Image.Image) -> None:
        pixels = np.asarray(image.convert("RGB"))  # (h, width, 3)
        rows = np.zeros((pixels.shape[0], 1 + 3 * self.width), np.uint8)  # filter byte 0
        rows[:, 1:] = pixels.reshape(pixels.shape[0], -1)
        self._parts.append(self._zlib.compress(rows.tobytes()))  # zlib lets go of the GIL
        self.height += pixels.shape[0]

    def save(self, path: Path) -> None:
        def chunk(kind: bytes, data: bytes) -> bytes:
            return (struct.pack(">I", len(data)) + kind + data
                    + struct.pack(">I", zlib.crc32(kind + data)))

        header = struct.pack(">IIBBBBB", self.width, self.height, 8, 2, 0, 0, 0)  # 8-bit RGB
        data = b"".join(self._parts) + self._zlib.flush()
        path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", data)
                         + chunk(b"IEND", b""))


class Composer:
    """Lays out the contact sheet and the handout while the stills are still being taken:
    a chapter's strips are drawn as soon as its stills are back, on a thread of its own,
    and the sheet's rows are compressed in chapter order as soon as they are ready. Once
    the last chapter is in, little is left to do."""

    def __init__(self, chapters: list[str]):
        self.chapters = chapters
        self._thread = ThreadPoolExecutor(max_workers=1)
        self._sheet: dict[int, list[Block]] = {}
        self._handout: dict[int, list[Block]] = {}
        self._png = PngRows(CONTACT_SHEET.width)
        self._compressed = 0  # chapters[:_compressed] are in the PNG
        self._jobs: list[Future] = [self._thread.submit(self._start)]

    def add(self, stills: ChapterStills) -> None:
        self._jobs.append(self._thread.submit(self._draw, stills))

    def _start(self) -> None:
        for sheet in (CONTACT_SHEET, HANDOUT):  # fc-match runs once per font, not later
            _fonts(sheet.text), _fonts(sheet.heading)
        self._png.add(Image.new("RGB", (CONTACT_SHEET.width, CONTACT_SHEET.margin), PAPER))

    def _draw(self, stills: ChapterStills) -> None:
        self._sheet[stills.chapter] = draw_blocks(stills.stills, CONTACT_SHEET)
        self._handout[stills.chapter] = lay_out_blocks(stills.stills, HANDOUT)
        while (self._compressed < len(self.chapters)
               and self.chapters[self._compressed] in self._sheet):
            for block in self._sheet[self.chapters[self._compressed]]:
                self._png.add(block.image)
            self._compressed += 1

    def write(self, png: Path) -> tuple[Path, int]:
        """Write the contact sheet to `png` and the handout beside it (.pdf), atomically,
        once every chapter has been added; returns the PDF's path and page count."""
        try:
            for job in self._jobs:
                job.result()
        finally:
            self.close()
        missing = [ch for ch in self.chapters if ch not in self._sheet]
        if missing:
            raise ValueError(f"no stills for chapter(s) {missing}")
        self._png.add(Image.new("RGB", (CONTACT_SHEET.width, CONTACT_SHEET.margin), PAPER))
        blocks = [b for ch in self.chapters for b in self._handout[ch]]
        pages = paginate(blocks, HANDOUT)
        pdf = png.with_suffix(".pdf")
        with atomic_output(png) as tmp_png, atomic_output(pdf) as tmp_pdf:
            self._png.save(tmp_png)
            write_pdf(Path(tmp_pdf), pages, HANDOUT)
        return pdf, len(pages)

    def close(self) -> None:
        self._thread.shutdown(wait=True, cancel_futures=True)


def write_storyboard(stills: list[Still], png: Path) -> tuple[Path, int]:
    """Write the contact sheet to `png` and the handout beside it (.pdf), atomically;
    returns the PDF's path and page count."""
    chapters = list(dict.fromkeys(s.chapter for s in stills))
    composer = Composer(chapters)
    for ch in chapters:
        composer.add(ChapterStills(ch, [s for s in stills if s.chapter == ch], []))
    return composer.write(png)
