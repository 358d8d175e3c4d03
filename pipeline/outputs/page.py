"""The companion page: one offline HTML file beside the video, where the video plays with
its caption list and every matrix of the trace is a grid whose cells open to show how
they were made, and where in the video.

The page is the template folder page/ (plain HTML, CSS and JavaScript written here, no
framework, nothing fetched) with three things put in: the trace as its JSON export (every
number the page shows is read from it), the page's own data (the cues with the chapter
each belongs to, the words from the caption catalogue, both themes' colours, the geometry
of each query against its keys from attncore.geometry) and the video's relative path.

Which caption makes which quantity: the scenes record, as they draw each matrix, the
caption on screen (ChapterResult.made), and "show me in the video" seeks to that caption.
What a chapter shows while it plays (the highlight) comes from its row (SHOWS); a quantity
with no record (a chapter cached before records were kept) seeks to the first chapter of the
video that shows it. The cues carry their chapter's slug (from the chapter results), so no
caption's text is ever matched.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from attention_video.attncore.chapters import CHAPTERS
from attention_video.attncore.export import trace_to_dict
from attention_video.attncore.settings import Settings
from attention_video.attncore.trace import AttentionTrace
from attention_video.pipeline.outputs.files import (
    page_path,
    relative_href,
    write_text_atomic,
)
from attention_video.pipeline.outputs.subtitles import kept_cues
from attention_video.pipeline.records import ChapterResult
from attention_video.scenes.catalogue import Translate
from attention_video.scenes.page_words import page_words
from attention_video.scenes.themes import THEMES, family_colors, word_color

PAGE_DIR = Path(__file__).parent / "page"  # the template: page.html, page.css, page.js

# The quantities the page draws, in the order of the formula (its grids, top to bottom).
QUANTITIES = ("X", "W_Q", "W_K", "W_V", "Q", "K", "V", "scores", "scaled", "weights", "Z")

# With RoPE (trace.rope) the page's Q and K are X·W_Q and X·W_K, and the rows the scores
# use, turned, are two grids of their own, Q_rot and K_rot, between V and the scores.
TURNED = ("Q_rot", "K_rot")

# Each chapter and the quantities it shows, from its row (attncore.chapters). A quantity is
# made by the first chapter of the video that shows it; while a chapter plays, the page
# highlights what it shows.
SHOWS: dict[str, tuple[str, ...]] = {c.slug: c.shows for c in CHAPTERS}

# What a scene records as it draws, with RoPE, and the page's name for it: chapter `linear`
# draws Q and K before their turn (Q_before, K_before), every later chapter the turned rows
# (the trace's Q and K).
ROTARY_DRAWN = {"Q_before": "Q", "K_before": "K", "Q": "Q_rot", "K": "K_rot"}


def quantities(trace: AttentionTrace) -> tuple[str, ...]:
    """The page's grids, in the order of the formula."""
    if trace.rope is None:
        return QUANTITIES
    at = QUANTITIES.index("scores")
    return (*QUANTITIES[:at], *TURNED, *QUANTITIES[at:])


def page_shows(trace: AttentionTrace) -> dict[str, tuple[str, ...]]:
    """SHOWS, with RoPE in the page's names: chapter `linear` shows Q, K and their turn
    (Q_rot, K_rot); the later chapters multiply the turned rows."""
    if trace.rope is None:
        return SHOWS
    out = {}
    for slug, shows in SHOWS.items():
        if "W_Q" in shows:  # the chapter that makes Q and K also turns them
            out[slug] = (*shows, *TURNED)
        else:
            out[slug] = tuple({"Q": "Q_rot", "K": "K_rot"}.get(q, q) for q in shows)
    return out


@dataclass(frozen=True)
class PageCue:
    """A caption of the video: its time in the whole video and the chapter it belongs to."""

    start: float  # seconds
    end: float
    text: str
    chapter: str  # its slug


def page_cues(chapters: list[ChapterResult]) -> list[PageCue]:
    """Every chapter's cues in video time, each with its chapter's slug (the cues a
    subtitle file keeps: pipeline.outputs.subtitles.kept_cues)."""
    cues, offset = [], 0.0
    for r in chapters:
        cues += [PageCue(offset + a, offset + b, text, r.chapter)
                 for a, b, text in kept_cues(r.subtitles)]
        offset += r.duration
    return cues


def made_at(chapters: list[ChapterResult], cues: list[PageCue],
            rotary: bool = False) -> dict[str, int]:
    """Each quantity → the index in `cues` of the caption that was on screen when the video
    first drew it (ChapterResult.made, recorded by the scenes as they draw; `rotary`: in
    the page's names, ROTARY_DRAWN); a quantity not recorded (a cached chapter from before,
    or one never drawn) is left out, and the page seeks to its chapter's first caption
    instead (made_in)."""
    out: dict[str, int] = {}
    offset = 0.0
    for r in chapters:
        for drawn, t in sorted(r.made.items(), key=lambda kv: kv[1]):
            key = ROTARY_DRAWN.get(drawn) if rotary else drawn
            if key not in (*QUANTITIES, *TURNED, "X_q") or key in out:
                continue
            at = offset + t
            k = next((k for k, c in enumerate(cues) if c.chapter == r.chapter
                      and c.start - 1e-3 <= at < c.end), None)
            if k is not None:
                out[key] = k
        offset += r.duration
    return out


def made_in(chapters: list[str], shows: dict[str, tuple[str, ...]] = SHOWS,
            names: tuple[str, ...] = QUANTITIES) -> dict[str, str | None]:
    """Each quantity of `names` → the first of `chapters` (the video's, in order) that shows
    it (by `shows`); None when none does."""
    return {q: next((c for c in chapters if q in shows.get(c, ())), None) for q in names}


def _finite(values: Any) -> Any:
    """Nested lists and dicts of floats with NaN (a zero vector's angle) as None, which
    JSON holds (a NaN would make the page's JSON unreadable)."""
    if isinstance(values, list):
        return [_finite(v) for v in values]
    if isinstance(values, dict):
        return {k: _finite(v) for k, v in values.items()}
    return None if isinstance(values, float) and not math.isfinite(values) else values


def geometry(trace: AttentionTrace) -> list[dict[str, Any]]:
    """Per head, each query against every key as arrows in their plane
    (attncore.geometry, as chapter `dot` draws them): |q|, |k|, θ in degrees, the shadow."""
    out = []
    for h in trace.heads:
        rows = [h.geometry(i) for i in range(trace.n_q)]
        out.append({"q_norm": [g.q_norm for g in rows],
                    "k_norms": _finite(rows[0].k_norms.tolist()) if rows else [],
                    "angles": _finite([g.angles.tolist() for g in rows]),
                    "shadows": [g.shadows.tolist() for g in rows],
                    "heights": [g.heights.tolist() for g in rows]})
    return out


def colours(trace: AttentionTrace) -> dict[str, Any]:
    """Both themes (the video's palette: scenes.themes.THEMES) and the words' colours in
    each, as the scenes give them (scenes.base: a family per sentence in cross-attention)."""
    out = {}
    for name, theme in THEMES.items():
        if trace.cross:
            keys, queries = (family_colors(trace.n_k, "cool", theme),
                             family_colors(trace.n_q, "warm", theme))
        else:
            keys = [word_color(i, theme) for i in range(trace.n_k)]
            queries = keys[:trace.n_q]
        palette = {k: v for k, v in asdict(theme).items() if isinstance(v, str)}
        out[name] = {"palette": palette, "keys": keys, "queries": queries}
    return out


def page_data(trace: AttentionTrace, cues: list[PageCue], video_src: str, settings: Settings,
              chapters: list[str], made: dict[str, int] | None = None,
              deck: str | None = None) -> dict[str, Any]:
    """What the page's script reads besides the trace (`deck`: the --slides deck's href,
    relative to the page, when it is made too)."""
    shows = page_shows(trace)
    return {
        "video": video_src,
        "deck": deck,
        "sentence": settings.sentence,
        "language": settings.language,
        "theme": settings.theme,
        "cues": [asdict(c) for c in cues],
        "chapters": chapters,
        "shows": {c: list(shows.get(c, ())) for c in chapters},
        "made_in": made_in(chapters, shows, quantities(trace)),
        "made_at": made or {},
        "words": page_words(Translate(settings.language)),
        "colours": colours(trace),
        "geometry": geometry(trace),
    }


# Characters that embedded JSON writes as \u escapes: < > & would let a sentence close the
# <script> element or move the HTML parser into its script-data escape states ('<!--<script>'
# made the first data block swallow the rest of the page); U+2028/U+2029 end a line in
# older JavaScript. JSON.parse reads the escapes back as the same characters.
_SCRIPT_ESCAPES = str.maketrans({ch: f"\\u{ord(ch):04x}" for ch in "<>&\u2028\u2029"})


def _script_json(value: Any) -> str:
    """JSON to sit inside a <script> element: none of < > & U+2028 U+2029 appears as such."""
    return json.dumps(_finite(value), ensure_ascii=False, separators=(",", ":"),
                      allow_nan=False).translate(_SCRIPT_ESCAPES)


def page_html(trace: AttentionTrace, cues: list[PageCue], video_src: str, settings: Settings,
              chapters: list[str], made: dict[str, int] | None = None,
              deck: str | None = None) -> str:
    """The page as one HTML text: the template with its style, script and data put in."""
    data = page_data(trace, cues, video_src, settings, chapters, made, deck)
    exported = trace_to_dict(trace, settings.to_dict())
    title = data["words"]["title"].replace("{sentence}", settings.sentence)
    parts = {"LANG": settings.language, "THEME": settings.theme, "TITLE": _escape(title),
             "VIDEO": _escape(video_src).replace('"', "&quot;"),
             "STYLE": (PAGE_DIR / "page.css").read_text(encoding="utf-8"),
             "SCRIPT": (PAGE_DIR / "page.js").read_text(encoding="utf-8"),
             "TRACE": _script_json(exported), "DATA": _script_json(data)}
    template = (PAGE_DIR / "page.html").read_text(encoding="utf-8")
    # One pass: a sentence that holds "@@TRACE@@" stays text.
    return re.sub(r"@@([A-Z]+)@@", lambda m: parts[m.group(1)], template)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def write_page(trace: AttentionTrace, chapters: list[ChapterResult], video: Path,
               settings: Settings, dest: Path | None = None, deck: Path | None = None) -> Path:
    """The page of `video` (made from `chapters` with `trace`), written atomically beside it
    (or to `dest`); it plays the video by its path relative to the page, and links to the
    --slides deck at `deck` when one is made."""
    dest = Path(dest) if dest is not None else page_path(video)
    slugs = [r.chapter for r in chapters]
    cues = page_cues(chapters)
    text = page_html(trace, cues, relative_href(video, dest), settings, slugs,
                     made_at(chapters, cues, trace.rope is not None),
                     relative_href(deck, dest) if deck is not None else None)
    write_text_atomic(dest, text)
    return dest

