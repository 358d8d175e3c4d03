"""Text as the video draws it: numbers formatted once, captions wrapped once, and every
Text built once per (string, size, weight), kept in memory and on disk, then copied.

Building a Text with Pango costs ~50 ms; a copy of a kept one ~0.6 ms, and copies are
~40x cheaper again once the parsed SVG path of each glyph is dropped (DESIGN.md).
"""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from functools import lru_cache
from importlib.metadata import version
from pathlib import Path

from manim import MarkupText, Text, VMobject

FONT = "Noto Sans CJK SC"  # Latin, digits and CJK in one face; Pango falls back for the rest
_MANIM = version("manim")
_cache_folder: Path | None = None  # where built texts are kept across runs
BUILD_VERSION = 2  # part of every kept text's key: raise it when _build_text changes


@lru_cache(maxsize=1)
def fonts_digest() -> str:
    """A hash of the installed font families: a text built before a font was installed
    (drawn as boxes, or as nothing) is not served after it."""
    import manimpango

    return hashlib.sha256("\n".join(sorted(manimpango.list_fonts())).encode()).hexdigest()[:16]


def use_text_cache(folder: Path | None) -> None:
    """Keep built texts in `folder` across runs (None: memory only). The renderer calls
    this before a scene is built."""
    global _cache_folder
    _cache_folder = Path(folder) if folder is not None else None


# ---- numbers -------------------------------------------------------------------------
def fmt(value: float, decimals: int = 2) -> str:
    """A number as drawn: fixed decimals, a real minus sign, never '-0.00'."""
    s = f"{value:.{decimals}f}"
    if float(s) == 0.0:
        s = s.lstrip("-")
    return s.replace("-", "−")


def parse_number(text: str) -> float:
    """The value of a drawn number (the inverse of fmt; thousands separators and a
    trailing ellipsis allowed). Tests use it to read numbers back off the screen."""
    return float(text.replace("−", "-").replace(",", "").replace("…", "").strip())


def decimals_of(text: str) -> int:
    """How many decimals a drawn number shows: its display precision."""
    core = text.replace("−", "-").strip()
    return len(core.split(".")[1]) if "." in core else 0


# ---- words and captions -----------------------------------------------------------------
class Translate:
    """The one way a scene picks its words: tr(english, chinese) gives the text in the
    video's caption language. Passed to builders that write words."""

    def __init__(self, language: str):
        self.language = language

    def __call__(self, en: str, zh: str) -> str:
        return zh if self.language == "zh" else en


def short_label(text: str, max_chars: int = 10) -> str:
    """Shorten a long word visibly: 'extraordinarily' → 'extraordi…'."""
    return text if len(text) <= max_chars else text[: max_chars - 1] + "…"


_CLOSING = set("，。；：、！？）》」』,.;:!?)")


def _is_wide(ch: str) -> bool:
    return ord(ch) >= 0x2E80


def columns(text: str) -> int:
    """Width in columns: a CJK character counts two."""
    return sum(2 if _is_wide(c) else 1 for c in text)


def wrap(text: str, width: int) -> list[str]:
    """Greedy wrap to `width` columns (a CJK character counts two). Lines break at spaces,
    between CJK characters, or (preferred in the second half of a line) after punctuation;
    never inside a run of Latin letters or digits."""
    text = " ".join(text.split())
    lines: list[str] = []
    while columns(text) > width:
        cols, cut, punct = 0, 0, 0
        for i, ch in enumerate(text):
            cols += 2 if _is_wide(ch) else 1
            if cols > width:
                break
            nxt = text[i + 1] if i + 1 < len(text) else ""
            if nxt in _CLOSING:
                continue  # never start a line with closing punctuation
            if ch == " " or _is_wide(ch) or _is_wide(nxt):
                cut = i + 1
            if ch in _CLOSING and (ch == " " or _is_wide(ch) or nxt in (" ", "") or _is_wide(nxt)):
                punct = i + 1
        if punct > 0.5 * cut:
            cut = punct
        if cut == 0:  # one unbreakable run longer than a line
            cut = max(1, i)
        lines.append(text[:cut].strip())
        text = text[cut:].strip()
    lines.append(text)
    return [line for line in lines if line] or [""]


# ---- built text -------------------------------------------------------------------------
@lru_cache(maxsize=8192)
def built_text(text: str, font_size: float, weight: str = "NORMAL") -> Text:
    """The kept Text for (text, size, weight): from memory, from the disk cache, or built
    with Pango and kept. Never modify it: copy it (make_text) or only measure it."""
    path = None
    if _cache_folder is not None:
        key = hashlib.sha256(repr((text, font_size, weight, FONT, _MANIM, BUILD_VERSION,
                                   fonts_digest())).encode()).hexdigest()
        path = _cache_folder / key[:2] / f"{key[2:24]}.pkl"
        try:
            return pickle.loads(path.read_bytes())
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ValueError):
            pass
    t = _build_text(text, font_size, weight)
    if path is not None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=".tmp", dir=path.parent)
            try:  # a unique name, then a rename: a reader never sees half a file
                with os.fdopen(fd, "wb") as f:
                    f.write(pickle.dumps(t, protocol=pickle.HIGHEST_PROTOCOL))
                os.replace(tmp, path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError:
            pass
    return t


def _build_text(text: str, font_size: float, weight: str) -> Text:
    """Pango's drawing of `text`, never an empty object. Manim 0.22's Text draws no
    glyph for some short right-to-left words ("שלום", "القط"; ManimCommunity/manim #3932)
    that MarkupText draws; a string with no visible glyph at all (a zero-width joiner, a
    variation selector, a lone skin-tone modifier, a colour emoji, whose bitmap the SVG
    path reader drops) is drawn as its code points instead (see stand_in)."""
    t = _pango_text(text, font_size, weight)
    if not _has_glyphs(t) and text.strip():
        t = MarkupText(_escape_markup(text), font=FONT, font_size=font_size, weight=weight)
    if not _has_glyphs(t):
        t = _pango_text(code_points(text) if text.strip() else "␣", font_size * 0.7, weight)
    for m in t.family_members_with_points():
        if hasattr(m, "path_obj"):
            del m.path_obj  # copies are ~40× cheaper without the parsed SVG path
    return t


def _pango_text(text: str, font_size: float, weight: str) -> Text:
    try:
        return Text(text, font=FONT, font_size=font_size, weight=weight, disable_ligatures=True)
    except ValueError:  # emoji sequences (❤️, 🐈‍⬛) are one glyph for several characters
        return Text(text, font=FONT, font_size=font_size, weight=weight)


def _has_glyphs(t: VMobject) -> bool:
    return t.has_points() or any(m.has_points() for m in t.family_members_with_points())


def _escape_markup(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def code_points(text: str) -> str:
    """'\u200d' → 'U+200D': how a string that draws as nothing is shown instead."""
    return " ".join(f"U+{ord(c):04X}" for c in text if not c.isspace()) or "␣"


@lru_cache(maxsize=8192)
def is_stand_in(text: str, font_size: float = 28, weight: str = "NORMAL") -> bool:
    """True when `text` draws as nothing and make_text shows its code points instead."""
    if any(c.isalnum() for c in text):  # letters and digits of any script draw (Text or
        return False                     # MarkupText); what remains are marks and emoji
    t = _pango_text(text, float(round(font_size, 1)), weight)
    if _has_glyphs(t) or not text.strip():
        return not text.strip()
    return not _has_glyphs(MarkupText(_escape_markup(text), font=FONT, font_size=font_size,
                                      weight=weight))


def make_text(text: str, font_size: float = 28, color: str | None = None,
              weight: str = "NORMAL", muted: str | None = None) -> Text:
    """A Text built once per (string, size, weight) and copied after that. A string that
    draws as nothing comes out as its code points ('U+200D'), in `muted` if given."""
    t = built_text(text, float(round(font_size, 1)), weight).copy()
    if muted and is_stand_in(text, font_size, weight):
        color = muted
    if color:
        t.set_color(color)
    return t


def fit_width(mob: VMobject, max_width: float) -> VMobject:
    """Scale down (never up) so the object is at most max_width wide."""
    if mob.width > max_width > 0:
        mob.scale_to_fit_width(max_width)
    return mob
