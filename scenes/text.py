"""Text as the video draws it: numbers formatted once, captions wrapped once, and every
Text built once per (string, size, weight), kept in memory and on disk, then copied.

Building a Text with Pango costs ~50 ms; a copy of a kept one ~0.6 ms, and copies are
~40x cheaper again once the parsed SVG path of each glyph (`path_obj`) is dropped
(measured with Manim 0.22: a Text copy cost 8-10 ms with it, whole scenes ran 1.5-2.4x
faster without it).
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Sequence
from decimal import Decimal
from functools import lru_cache
from pathlib import Path

import numpy as np
from attention_video import fastmanim
from attention_video.attncore.tokenize import CLOSING, OPENING
from attention_video.fastmanim.glyphs import GlyphText, copy_built
from attention_video.fastmanim.texts import code_digest, kept, use_text_cache  # noqa: F401 (use_text_cache: the renderer)
from attention_video.scenes.precision import fmt  # noqa: F401 (numbers as drawn: defined there, without Manim)
from attention_video.scenes.typeset import typeset as typeset_text
from manim import MarkupText, Text, VGroup, VMobject

# The font fallback chain, in order (scripts/setup.sh installs every face of it). Pango takes
# the comma-separated list as one family list: each character comes from the first face of
# the chain that has it, and only after the chain from fontconfig's own fallback. Naming the
# faces makes Arabic and Hebrew Noto rather than whatever covers them first (DejaVu), and
# emoji the monochrome Symbola rather than Noto Color Emoji, whose bitmap glyphs Manim's SVG
# reader drops.
FONT_CHAIN = (
    "Noto Sans CJK SC",      # Latin, digits, Greek, Cyrillic, Chinese, Japanese, Korean
    "Noto Sans Arabic",      # Arabic, Persian, Urdu (shaped, right to left)
    "Noto Sans Hebrew",      # Hebrew (right to left)
    "Noto Sans Devanagari",  # Hindi, Marathi, Nepali
    "Noto Sans Thai",        # Thai
    "Noto Sans",             # sub- and superscript letters (dₖ, Kᵀ) CJK SC lacks: sans, as
    #                          the rest (Symbola's are serif)
    "Symbola",               # emoji (Unicode 9, monochrome outlines) and symbols
)
EMOJI_FONT = "Symbola"
FONT = ", ".join(FONT_CHAIN)
# The files whose code builds a text (this module's _build_text, fastmanim's GlyphText and
# its store): their bytes are part of every kept text's key, as a chapter clip's key holds
# its scene's code, so an edit to any of them is never served a text built before it.
_FASTMANIM = Path(fastmanim.__file__).parent
BUILD_FILES = (Path(__file__), _FASTMANIM / "glyphs.py", _FASTMANIM / "texts.py")
BUILD_CODE = code_digest(BUILD_FILES)


# ---- numbers -------------------------------------------------------------------------
def fmt_row(values: Sequence[float], shown: int, decimals: int = 2) -> str:
    """A row quoted in a caption, in order: all of it if it has at most `shown` entries,
    else its first `shown` − 1 entries, "…" and its last one ("0.61, −1.02, 0.5, …, −3.41"),
    so no entry is ever quoted out of its place."""
    n = len(values)
    if n <= shown:
        return ", ".join(fmt(v, decimals) for v in values)
    first = [fmt(v, decimals) for v in values[: max(1, shown - 1)]]
    return ", ".join([*first, "…", fmt(values[n - 1], decimals)])


def _exact(text: str) -> Decimal:
    return Decimal(text.replace("−", "-").replace(",", "").strip())


def agrees_on_paper(exact: Decimal, result: str) -> bool:
    """Whether `exact`, worked out on paper from numbers as drawn, shows as `result` at its
    decimals (a tie either way)."""
    decimals = len(result.split(".")[1]) if "." in result else 0
    return abs(exact - _exact(result)) <= Decimal(5) / Decimal(10) ** (decimals + 1)


def adds_up(terms: Sequence[str], result: str) -> bool:
    """Whether numbers as drawn add up to a result as drawn: where they do not, the picture
    marks the result as made from the unrounded numbers ("≈")."""
    return agrees_on_paper(sum((_exact(t) for t in terms), Decimal(0)), result)


def multiplies_to(factors: Sequence[str], result: str) -> bool:
    """Whether numbers as drawn multiply to a result as drawn (as adds_up)."""
    product = Decimal(1)
    for f in factors:
        product *= _exact(f)
    return agrees_on_paper(product, result)


def equals_sign(exact_on_paper: bool) -> str:
    """"=" between drawn numbers and a drawn result they make on paper, "≈" where the
    result was made from the unrounded numbers and theirs differs."""
    return "=" if exact_on_paper else "≈"


def parse_number(text: str) -> float:
    """The value of a drawn number (the inverse of fmt; thousands separators and a
    trailing ellipsis allowed). Tests use it to read numbers back off the screen."""
    return float(text.replace("−", "-").replace(",", "").replace("…", "").strip())


def decimals_of(text: str) -> int:
    """How many decimals a drawn number shows: its display precision."""
    core = text.replace("−", "-").strip()
    return len(core.split(".")[1]) if "." in core else 0


# ---- words and captions -----------------------------------------------------------------
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
            if nxt in CLOSING or ch in OPENING:
                continue  # never start a line with closing punctuation, nor end with opening
            if ch == " " or _is_wide(ch) or _is_wide(nxt):
                cut = i + 1
            if ch in CLOSING and (ch == " " or _is_wide(ch) or nxt in (" ", "") or _is_wide(nxt)):
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
    return kept((text, font_size, weight, FONT, BUILD_CODE),
                lambda: _build_text(text, font_size, weight))


def _build_text(text: str, font_size: float, weight: str) -> Text:
    """Pango's drawing of `text`, never an empty object. Emoji are drawn in text
    presentation from the chain's monochrome face, and an emoji no outline face has is
    replaced by its code points (see drawable). Manim 0.22's Text draws no glyph for some
    short right-to-left words ("שלום", "القط"; ManimCommunity/manim #3932) that MarkupText
    draws; a string with no visible glyph at all (a zero-width joiner, a variation selector,
    an emoji newer than the emoji font) is drawn as its code points instead."""
    t = None
    plain, markup = typeset(text)
    if markup is not None:  # a subscript Unicode has no letters for: Pango lowers it
        t = MarkupText(markup, font=FONT, font_size=font_size, weight=weight,
                       warn_missing_font=False)
        text = plain
    elif not all(c.isspace() or _is_ignorable(c) for c in text):
        text = plain
        full = drawable(text)
        if full == drawable(text, stand_ins=False) or _draws_something(text, font_size, weight):
            t = _draw(full, font_size, weight)  # (not when only emoji code points would)
    if t is None or not _has_glyphs(t):
        t = _pango_text(code_points(text) if text.strip() else "␣", font_size * 0.7, weight)
    elif "√" in text and len(t.submobjects) == len(text):  # one glyph per character
        join_radicals(t, text)
    for m in t.family_members_with_points():
        if hasattr(m, "path_obj"):
            del m.path_obj  # copies are ~40× cheaper without the parsed SVG path
    t.id_to_vgroup_dict = {}  # the parser's groups (only Tex reads them): half the pickle
    return t


# ---- sub- and superscripts ---------------------------------------------------------------
def typeset(text: str) -> tuple[str, str | None]:
    """(plain, markup): plain-text maths ("Q_rot·K_rot^T", "d_k", "W_Q") drawn typeset, in
    Unicode's small characters, or (markup not None) lowered or raised by Pango where it
    has none (W with a small Q under its line): scenes.typeset."""
    return typeset_text(text, _escape_markup)


# ---- the radical ------------------------------------------------------------------------
RADICAL_STROKE = 0.085  # the drawn √'s stroke, as a share of its glyph's height (the font's
#                         own strokes: ~0.08 of the glyph at regular weight)


def _radicand_end(text: str, start: int) -> int:
    """The index past the radicand of the √ at `start`: the letters, digits and sub- and
    superscripts that follow it ("√dₖ", "√64")."""
    end = start + 1
    while end < len(text) and (text[end].isalnum() or unicodedata.category(text[end]) == "No"
                               or "ₐ" <= text[end] <= "ₜ"):
        end += 1
    return end


def _outline(points: np.ndarray, width: float) -> np.ndarray:
    """The closed outline (k, 2) of a polyline (n, 2) drawn `width` thick, its corners
    mitred (a miter at most twice the half-width, so the sharp bottom of a √ stays short)."""
    d = np.diff(points, axis=0)
    d /= np.linalg.norm(d, axis=1, keepdims=True)  # (n-1, 2) unit directions
    normal = np.stack([-d[:, 1], d[:, 0]], axis=1)  # (n-1, 2), left of each piece
    offsets = [normal[0]]
    for a, b in zip(normal[:-1], normal[1:]):
        m = a + b
        m /= np.linalg.norm(m)
        offsets.append(m / max(float(m @ a), 0.5))  # miter, clamped
    offsets.append(normal[-1])
    offsets = np.array(offsets) * width / 2  # (n, 2)
    return np.concatenate([points + offsets, (points - offsets)[::-1], points[:1] + offsets[:1]])


def join_radicals(t: Text, text: str) -> None:
    """Each √ of `t` (a Text of `text`, one glyph per character) redrawn as one piece with
    its bar over the radicand, as a formula writes it: a font's √ is a tick with a stub
    of a bar, which leaves "√dₖ" reading as a tick, a gap, then dₖ. The glyph keeps its
    place in the Text (one glyph per character), its outline replaced."""
    for start in [i for i, ch in enumerate(text) if ch == "√"]:
        end = _radicand_end(text, start)
        root = t[start]
        if end == start + 1 or not root.has_points():
            continue
        under = VGroup(*t[start + 1:end])
        left, right = root.get_left()[0], root.get_right()[0]
        bottom = root.get_bottom()[1]
        top = max(root.get_top()[1], under.get_top()[1] + 0.15 * root.height)
        h, w = top - bottom, right - left
        stroke = RADICAL_STROKE * h
        path = np.array([[left, bottom + 0.42 * h], [left + 0.18 * w, bottom + 0.5 * h],
                         [left + 0.45 * w, bottom + stroke / 2], [right - 0.05 * w, top - stroke / 2],
                         [under.get_right()[0] + 0.04 * h, top - stroke / 2]])  # (5, 2)
        outline = _outline(path, stroke)
        root.set_points_as_corners(np.column_stack([outline, np.zeros(len(outline))]))


LRM = "\u200e"  # LEFT-TO-RIGHT MARK


def _draw(text: str, font_size: float, weight: str) -> Text:
    """Text, or MarkupText when the text has right-to-left letters or Text draws nothing.
    With right-to-left letters Manim's Text may draw none of the line (short words) or only
    part of it: "الخ → <s> 0.28" came out as its "s" alone. Such a line starts with a
    left-to-right mark: every caption language reads left to right, and Pango would take a
    line that starts with an Arabic word for a right-to-left one ("s> 0.28> → الخ"); the
    right-to-left words inside keep their own order."""
    rtl = any(unicodedata.bidirectional(c) in ("R", "AL") for c in text)
    t = None if rtl else _pango_text(text, font_size, weight)
    if (t is None or not _has_glyphs(t)) and text.strip():
        t = MarkupText(LRM * rtl + _escape_markup(text), font=FONT, font_size=font_size,
                       weight=weight, warn_missing_font=False)
    return t


def _pango_text(text: str, font_size: float, weight: str) -> Text:
    """Manim's Text, its SVG read a glyph at a time (fastmanim.glyphs: the same paths)."""
    try:
        return GlyphText(text, font=FONT, font_size=font_size, weight=weight,
                         disable_ligatures=True, warn_missing_font=False)
    except ValueError:  # a glyph for several characters (a keycap, a mark), or none for one
        return GlyphText(text, font=FONT, font_size=font_size, weight=weight,
                         warn_missing_font=False)


# ---- emoji ------------------------------------------------------------------------------
# Unicode's Extended_Pictographic ranges (emoji-data.txt, Unicode 15), and the characters
# below U+1F000 among them that are emoji by default (Emoji_Presentation): Pango draws
# those, and any pictograph followed by U+FE0F, from an emoji font, i.e. the colour one.
_PICTOGRAPHIC = (
    (0x00A9, 0x00A9), (0x00AE, 0x00AE), (0x203C, 0x203C), (0x2049, 0x2049), (0x2122, 0x2122),
    (0x2139, 0x2139), (0x2194, 0x2199), (0x21A9, 0x21AA), (0x231A, 0x231B), (0x2328, 0x2328),
    (0x2388, 0x2388), (0x23CF, 0x23CF), (0x23E9, 0x23F3), (0x23F8, 0x23FA), (0x24C2, 0x24C2),
    (0x25AA, 0x25AB), (0x25B6, 0x25B6), (0x25C0, 0x25C0), (0x25FB, 0x25FE), (0x2600, 0x2605),
    (0x2607, 0x2612), (0x2614, 0x2685), (0x2690, 0x2705), (0x2708, 0x2712), (0x2714, 0x2714),
    (0x2716, 0x2716), (0x271D, 0x271D), (0x2721, 0x2721), (0x2728, 0x2728), (0x2733, 0x2734),
    (0x2744, 0x2744), (0x2747, 0x2747), (0x274C, 0x274C), (0x274E, 0x274E), (0x2753, 0x2755),
    (0x2757, 0x2757), (0x2763, 0x2767), (0x2795, 0x2797), (0x27A1, 0x27A1), (0x27B0, 0x27B0),
    (0x27BF, 0x27BF), (0x2934, 0x2935), (0x2B05, 0x2B07), (0x2B1B, 0x2B1C), (0x2B50, 0x2B50),
    (0x2B55, 0x2B55), (0x3030, 0x3030), (0x303D, 0x303D), (0x3297, 0x3297), (0x3299, 0x3299),
    (0x1F000, 0x1F0FF), (0x1F10D, 0x1F10F), (0x1F12F, 0x1F12F), (0x1F16C, 0x1F171),
    (0x1F17E, 0x1F17F), (0x1F18E, 0x1F18E), (0x1F191, 0x1F19A), (0x1F1AD, 0x1F1E5),
    (0x1F201, 0x1F20F), (0x1F21A, 0x1F21A), (0x1F22F, 0x1F22F), (0x1F232, 0x1F23A),
    (0x1F23C, 0x1F23F), (0x1F249, 0x1F3FA), (0x1F400, 0x1F53D), (0x1F546, 0x1F64F),
    (0x1F680, 0x1F6FF), (0x1F774, 0x1F77F), (0x1F7D5, 0x1F7FF), (0x1F80C, 0x1F80F),
    (0x1F848, 0x1F84F), (0x1F85A, 0x1F85F), (0x1F888, 0x1F88F), (0x1F8AE, 0x1F8FF),
    (0x1F90C, 0x1F93A), (0x1F93C, 0x1F945), (0x1F947, 0x1FAFF), (0x1FC00, 0x1FFFD),
)
_BMP_EMOJI_PRESENTATION = frozenset(
    [0x231A, 0x231B, 0x23E9, 0x23EA, 0x23EB, 0x23EC, 0x23F0, 0x23F3, 0x25FD, 0x25FE, 0x2614,
     0x2615, *range(0x2648, 0x2654), 0x267F, 0x2693, 0x26A1, 0x26AA, 0x26AB, 0x26BD, 0x26BE,
     0x26C4, 0x26C5, 0x26CE, 0x26D4, 0x26EA, 0x26F2, 0x26F3, 0x26F5, 0x26FA, 0x26FD, 0x2705,
     0x270A, 0x270B, 0x2728, 0x274C, 0x274E, 0x2753, 0x2754, 0x2755, 0x2757, 0x2795, 0x2796,
     0x2797, 0x27B0, 0x27BF, 0x2B1B, 0x2B1C, 0x2B50, 0x2B55])
_VS15, _VS16, _ZWJ, _KEYCAP = "\ufe0e", "\ufe0f", "\u200d", "\u20e3"


def is_pictographic(ch: str) -> bool:
    """Unicode's Extended_Pictographic property (what emoji are made of)."""
    cp = ord(ch)
    if cp < 0xA9:
        return False
    lo, hi = 0, len(_PICTOGRAPHIC)
    while lo < hi:  # binary search over the sorted ranges
        mid = (lo + hi) // 2
        if cp > _PICTOGRAPHIC[mid][1]:
            lo = mid + 1
        elif cp < _PICTOGRAPHIC[mid][0]:
            hi = mid
        else:
            return True
    return False


def _is_regional(ch: str) -> bool:  # the letters of a flag, 🇫🇷
    return 0x1F1E6 <= ord(ch) <= 0x1F1FF


def _is_modifier(ch: str) -> bool:  # skin tones 🏻…🏿
    return 0x1F3FB <= ord(ch) <= 0x1F3FF


def _is_ignorable(ch: str) -> bool:
    """A character meant to be invisible: a format character (joiners, marks of direction,
    tags), a control character or a variation selector."""
    cp = ord(ch)
    return (unicodedata.category(ch) in ("Cf", "Cc") or 0xFE00 <= cp <= 0xFE0F
            or 0xE0100 <= cp <= 0xE01EF)


def _is_control(ch: str) -> bool:  # C0/C1 controls but a line break or a tab
    return unicodedata.category(ch) == "Cc" and ch not in "\n\t"


def _is_tag(ch: str) -> bool:  # the tag letters of a subdivision flag, 🏴󠁧󠁢󠁳󠁣󠁴󠁿
    return 0xE0020 <= ord(ch) <= 0xE007F


def _starts_emoji(text: str, i: int) -> bool:
    ch, nxt = text[i], text[i + 1] if i + 1 < len(text) else ""
    if _is_regional(ch) or _is_modifier(ch):
        return True
    if ch in "0123456789#*":  # a keycap, 1️⃣ or 1⃣
        return nxt == _KEYCAP or (nxt == _VS16 and text[i + 2:i + 3] == _KEYCAP)
    if not is_pictographic(ch):
        return False
    return (ord(ch) >= 0x1F000 or ord(ch) in _BMP_EMOJI_PRESENTATION or nxt == _VS16
            or (nxt != "" and _is_modifier(nxt)))


def emoji_runs(text: str) -> list[tuple[str, bool]]:
    """`text` cut into (piece, is_emoji): an emoji piece is one emoji with what joins it
    (variation selectors, skin tones, a keycap, tags, zero-width joiners and the pictographs
    they join, a flag's two letters)."""
    out: list[tuple[str, bool]] = []
    i, start, n = 0, 0, len(text)
    while i < n:
        if not _starts_emoji(text, i):
            i += 1
            continue
        if start < i:
            out.append((text[start:i], False))
        j = i + 1
        if _is_regional(text[i]) and j < n and _is_regional(text[j]):
            j += 1
        while j < n:
            c = text[j]
            if c in (_VS15, _VS16, _KEYCAP) or _is_modifier(c) or _is_tag(c):
                j += 1
            elif c == _ZWJ and j + 1 < n and is_pictographic(text[j + 1]):
                j += 2
            else:
                break
        out.append((text[i:j], True))
        start = i = j
    if start < n:
        out.append((text[start:], False))
    return out


def _text_presentation(emoji: str) -> str:
    """An emoji as the monochrome font draws it: each part followed by U+FE0E (text
    presentation, so Pango does not switch to the colour font), joiners and tags dropped.
    A ZWJ sequence (🐈‍⬛) becomes its parts side by side (🐈⬛): no monochrome font has
    the joined glyphs."""
    out = []
    for c in emoji:
        if c in (_VS15, _VS16, _ZWJ) or _is_tag(c):
            continue
        out.append(c)
        if is_pictographic(c) or _is_regional(c) or _is_modifier(c):
            out.append(_VS15)
    return "".join(out)


@lru_cache(maxsize=1024)
def _emoji_draws(form: str) -> bool:
    return _has_glyphs(_pango_text(form, 28.0, "NORMAL"))


def drawable(text: str, stand_ins: bool = True) -> str:
    """`text` as it is handed to Pango: each emoji in text presentation (drawn from the
    chain's monochrome font), or, when no outline font has it (emoji newer than Unicode 9,
    such as 🫠, exist only in Noto Color Emoji), as its code points (left out with
    stand_ins=False)."""
    if any(_is_control(c) for c in text):  # Pango's C strings end at a NUL
        text = "".join(c for c in text if not _is_control(c))
    runs = emoji_runs(text)
    if not any(is_emoji for _, is_emoji in runs):
        return text
    parts: list[str] = []
    for piece, is_emoji in runs:
        form = _text_presentation(piece) if is_emoji else piece
        if is_emoji and not _emoji_draws(form):
            if not stand_ins:
                continue
            form = code_points(piece)
            if parts and parts[-1] and not parts[-1][-1].isspace():
                form = " " + form
            parts.append(form + " ")
            continue
        if parts and parts[-1].endswith(" ") and form[:1].isspace():
            form = form.lstrip()
        parts.append(form)
    return "".join(parts).strip() if stand_ins else "".join(parts)


def _has_glyphs(t: VMobject) -> bool:
    return t.has_points() or any(m.has_points() for m in t.family_members_with_points())


def _escape_markup(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def code_points(text: str) -> str:
    """'\u200d' → 'U+200D': how a string that draws as nothing is shown instead."""
    return " ".join(f"U+{ord(c):04X}" for c in text if not c.isspace()) or "␣"


def _draws_something(text: str, font_size: float, weight: str) -> bool:
    """Whether anything of `text` but the code points of its emoji draws."""
    if all(c.isspace() or _is_ignorable(c) for c in text):
        return False  # (HarfBuzz would draw a lone variation selector as a dotted circle)
    if any(c.isalnum() for c in text):  # letters and digits of any script draw (Text or
        return True                      # MarkupText); what remains are marks and emoji
    return _has_glyphs(_draw(drawable(text, stand_ins=False), font_size, weight))


@lru_cache(maxsize=8192)
def is_stand_in(text: str, font_size: float = 28, weight: str = "NORMAL") -> bool:
    """True when nothing of `text` draws and make_text shows its code points instead."""
    return not _draws_something(text, float(round(font_size, 1)), weight)


@lru_cache(maxsize=8192)
def _coloured(text: str, font_size: float, weight: str, color: str | None) -> Text:
    """The kept text in `color`: set_color, which parses the colour once per glyph and
    stroke, runs once per (string, size, weight, colour), not once per copy."""
    t = copy_built(built_text(text, font_size, weight))
    if color:
        t.set_color(color)
    return t


def make_text(text: str, font_size: float = 28, color: str | None = None,
              weight: str = "NORMAL", muted: str | None = None) -> Text:
    """A Text built once per (string, size, weight) and copied after that. A string that
    draws as nothing comes out as its code points ('U+200D'), in `muted` if given."""
    if muted and is_stand_in(text, font_size, weight):
        color = muted
    return copy_built(_coloured(text, float(round(font_size, 1)), weight, color))


def fit_width(mob: VMobject, max_width: float) -> VMobject:
    """Scale down (never up) so the object is at most max_width wide."""
    if mob.width > max_width > 0:
        mob.scale_to_fit_width(max_width)
    return mob


def read_text(mob: Text | MarkupText) -> str:
    """What a reader takes in from a text mobject: its string, without the Pango markup a
    typeset text (typeset) is drawn with."""
    text = getattr(mob, "original_text", None) or mob.text
    if isinstance(mob, MarkupText):
        text = html.unescape(re.sub(r"<[^>]*>", "", text))
    return text


def texts_in(mob: VMobject) -> list[str]:
    """The strings of every text drawn in `mob` (to time how long a picture is read)."""
    if isinstance(mob, (Text, MarkupText)):
        return [read_text(mob)]
    return [t for sub in mob.submobjects for t in texts_in(sub)]


def visible_texts(mob: VMobject) -> list[str]:
    """The strings of the texts in `mob` that can be seen (not faded to nothing)."""
    if isinstance(mob, (Text, MarkupText)):
        if mob.get_fill_opacity() < 0.05:
            return []
        return [read_text(mob)]
    return [t for sub in mob.submobjects for t in visible_texts(sub)]
