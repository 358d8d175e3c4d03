"""Text as the video draws it: numbers formatted once, captions wrapped once, and every
Text built once per (string, size, weight), kept in memory and on disk, then copied.

Building a Text with Pango costs ~50 ms; a copy of a kept one ~0.6 ms, and copies are
~40x cheaper again once the parsed SVG path of each glyph is dropped (DESIGN.md).
"""

from __future__ import annotations

import hashlib
import os
import pickle
from functools import lru_cache
from importlib.metadata import version
from pathlib import Path

from manim import Text, VMobject

FONT = "Noto Sans CJK SC"  # Latin, digits and CJK in one face; Pango falls back for the rest
_MANIM = version("manim")
_cache_folder: Path | None = None  # where built texts are kept across runs


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
        key = hashlib.sha256(repr((text, font_size, weight, FONT, _MANIM)).encode()).hexdigest()
        path = _cache_folder / key[:2] / f"{key[2:24]}.pkl"
        try:
            return pickle.loads(path.read_bytes())
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ValueError):
            pass
    t = _build_text(text, font_size, weight)
    if path is not None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_bytes(pickle.dumps(t, protocol=pickle.HIGHEST_PROTOCOL))
            os.replace(tmp, path)  # atomic: a reader never sees half a file
        except OSError:
            pass
    return t


def _build_text(text: str, font_size: float, weight: str) -> Text:
    try:
        t = Text(text, font=FONT, font_size=font_size, weight=weight, disable_ligatures=True)
    except ValueError:  # emoji sequences (❤️, 🐈‍⬛) are one glyph for several characters
        t = Text(text, font=FONT, font_size=font_size, weight=weight)
    for m in t.family_members_with_points():
        if hasattr(m, "path_obj"):
            del m.path_obj  # copies are ~40× cheaper without the parsed SVG path
    return t


def make_text(text: str, font_size: float = 28, color: str | None = None,
              weight: str = "NORMAL") -> Text:
    """A Text built once per (string, size, weight) and copied after that."""
    t = built_text(text, float(round(font_size, 1)), weight).copy()
    if color:
        t.set_color(color)
    return t


def fit_width(mob: VMobject, max_width: float) -> VMobject:
    """Scale down (never up) so the object is at most max_width wide."""
    if mob.width > max_width > 0:
        mob.scale_to_fit_width(max_width)
    return mob
