"""The companion page: one offline HTML file beside the video, where the video plays with
its caption list and every matrix of the trace is a grid whose cells open to show how
they were made, and where in the video.

The page is the template folder page/ (plain HTML, CSS and JavaScript written here, no
framework, nothing fetched) with three things put in: the part of the trace the page draws
(page_trace: every number the page shows is read from it, at the precision it shows), the
page's own data (the cues with the chapter
each belongs to, the video's chapter marks for its chapter menu and chapters track, the words from the caption catalogue, both themes' colours, the geometry
of each query against its keys from attncore.geometry) and the video's relative path. Its
poster frame, the video's first captioned picture, is a PNG beside it; with `embed`
(--page-embed) the video and the poster are inside the page as data URIs, one file.

Which caption makes which quantity: the scenes record, as they draw each matrix, the
caption on screen (ChapterResult.made), and "show me in the video" seeks to that caption.
What a chapter shows while it plays (the highlight) comes from its row (SHOWS); a quantity
with no record (a chapter cached before records were kept) seeks to the first chapter of the
video that shows it. The cues carry their chapter's slug (from the chapter results), so no
caption's text is ever matched.
"""

from __future__ import annotations

import base64
import dataclasses
import io
import json
import math
import mimetypes
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import numpy as np
from attention_video.attncore import questions as qs
from attention_video.attncore.chapters import CHAPTERS
from attention_video.attncore.export import ROTARY_NAMES
from attention_video.attncore.questions import Question
from attention_video.attncore.settings import Settings, default_head, flag
from attention_video.attncore.trace import AttentionTrace, HeadTrace
from attention_video.pipeline.outputs.chapters import chapter_marks
from attention_video.pipeline.outputs.files import (
    OutputError,
    atomic_output,
    page_path,
    poster_path,
    relative_href,
    write_text_atomic,
)
from attention_video.pipeline.outputs.subtitles import kept_cues
from attention_video.pipeline.outputs.video import frame_at
from attention_video.pipeline.records import ChapterResult, Cue
from attention_video.scenes.catalogue import Translate
from attention_video.scenes.labels import word_labels
from attention_video.scenes.page_words import page_words
from attention_video.scenes.precision import SCORES, WEIGHTS, weight_decimals
from attention_video.scenes.questions import worded
from attention_video.scenes.spoken import spoken
from attention_video.scenes.themes import THEMES, family_colors, word_color
from PIL import Image

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
    description: str = ""  # what its picture shows that it does not say (scenes.describe)
    # when the described narration says the description (--describe --voice), else while
    # the caption is up: the page's descriptions track and live region follow it
    described_start: float = 0.0
    described_end: float = 0.0


def page_cues(chapters: list[ChapterResult]) -> list[PageCue]:
    """Every chapter's cues in video time, each with its chapter's slug (the cues a
    subtitle file keeps: pipeline.outputs.subtitles.kept_cues)."""
    cues, offset = [], 0.0
    for r in chapters:
        described = dict(zip(r.subtitles, r.descriptions))
        said = dict(zip(r.subtitles, r.described_at))
        for a, b, text in kept_cues(r.subtitles):
            start, end = said.get((a, b, text)) or (a, b)
            cues.append(PageCue(offset + a, offset + b, text, r.chapter,
                                described.get((a, b, text), ""), offset + start, offset + end))
        offset += r.duration
    return cues


def made_at(chapters: list[ChapterResult], cues: list[PageCue],
            rotary: bool = False) -> dict[str, int]:
    """Each quantity → the index in `cues` of the caption on screen while the video draws
    it being made (ChapterResult.made, recorded by the scenes: ChapterScene.makes; the
    first chapter of the video that makes it; `rotary`: in the page's names, ROTARY_DRAWN);
    a quantity not recorded (made by no chapter played) is left out, and the page seeks to
    the first caption of the first chapter showing it instead (made_in)."""
    out: dict[str, int] = {}
    offset = 0.0
    for r in chapters:
        for drawn, t in sorted(r.made.items(), key=lambda kv: kv[1]):
            key = ROTARY_DRAWN.get(drawn, drawn) if rotary else drawn
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


# ---- the part of the trace the page draws (issue 41: light for every model) --------------
# The page embeds what it shows and what its explanations list, no more: a decoder's every
# head's full W_Q, W_K, W_V at full precision made its page 22.7 MB. page.js reads these.
MAX_SHOWN = 16  # a wider matrix shows its first MAX_SHOWN − 2 columns, "…" and its last
MAX_TERMS = 12  # a longer sum shows its first MAX_TERMS − 1 terms, the rest summed, its last
DECIMALS = SCORES  # every number the page writes but those of decimals(): the video's


def decimals(trace: AttentionTrace) -> dict[str, int]:
    """How many decimals the page writes each quantity with, as the video does
    (scenes.precision): the weights (and every head's, the model's overview), the exps and
    their sums at the weights' precision; every other quantity ("other") at the scores'."""
    weights = weight_decimals(trace.normalized)
    return {"weights": weights, "model_weights": weights, "exp_shifted": WEIGHTS,
            "exp_sum": WEIGHTS, "rest_exp_sum": WEIGHTS, "other": DECIMALS}


def drawn(n: int) -> list[int]:
    """The indices of n that a grid (or the list of a row's exps) shows: every one, or the
    first MAX_SHOWN − 2 and the last (page.js: shown())."""
    return list(range(n)) if n <= MAX_SHOWN else [*range(MAX_SHOWN - 2), n - 1]


def summed_apart(n: int) -> list[int]:
    """The terms of an n-term sum that the page does not write one by one (it writes their
    sum as one number): none, or every one between the first MAX_TERMS − 1 and the last."""
    return [] if n <= MAX_TERMS else list(range(MAX_TERMS - 1, n - 1))


def shown(a: Any) -> Any:
    """Numbers at the precision the page writes them (nested lists, as JSON holds them)."""
    return np.round(np.asarray(a, dtype=np.float64), DECIMALS).tolist()


def part(a: Any, *keep: Sequence[int] | None, places: int = DECIMALS) -> dict[str, Any]:
    """A matrix the page keeps (in part): its whole shape, the indices kept along each axis
    (None, or fewer axes given: all) and those entries at the precision the page writes
    them (`places` decimals: its quantity's, decimals()), as whole units of their last
    place (57 for 0.57, 457 for 0.457: two fewer characters a number). page.js (unpack)
    makes it an array indexed as the whole, sparse where entries were left out, so a cell
    is read by its own row and column."""
    a = np.asarray(a, dtype=np.float64)
    keep = (*keep, *[None] * (a.ndim - len(keep)))
    sub = a
    for axis, idx in enumerate(keep):
        if idx is not None:
            sub = np.take(sub, list(idx), axis=axis)
    whole = [k is None or list(k) == list(range(n)) for k, n in zip(keep, a.shape)]
    return {"part": list(a.shape), "keep": [None if w else list(k) for k, w in zip(keep, whole)],
            "decimals": places, "units": np.rint(sub * 10 ** places).astype(np.int64).tolist()}


def rest_of_products(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Σ over the terms a sum writes as one number (summed_apart) of x[i, m]·w[m, c]: what
    a cell of x·w is besides the terms written out. (n, c)"""
    m = summed_apart(x.shape[1])
    return x[:, m] @ w[m, :]  # (n, c)


def head_part(trace: AttentionTrace, h: HeadTrace, cols: list[int]) -> dict[str, Any]:
    """One head's matrices as the page draws them: the weights' shown rows and columns, the
    rows of Q, K, V, Z at their shown columns, the n × n matrices whole; and `rest`, the
    sum of each long sum's terms not written out (summed_apart), per cell. Each at its
    quantity's precision (decimals)."""
    rows_d, places = drawn(trace.d_model), decimals(trace)
    out: dict[str, Any] = {
        **{w: part(getattr(h, w), rows_d, cols) for w in ("W_Q", "W_K", "W_V")},
        **{b: part(getattr(h, b), cols) for b in ("b_Q", "b_K", "b_V")},
        **{m: part(getattr(h, m), None, cols) for m in ("Q", "K", "V", "Z")},
        **{m: part(getattr(h, m), places=places.get(m, DECIMALS))
           for m in ("scores", "scaled", "weights", "exp_shifted", "row_max", "exp_sum")},
        "mask": h.mask.tolist(),
    }
    rest = {"Q": rest_of_products(trace.X_q, h.W_Q), "K": rest_of_products(trace.X, h.W_K),
            "V": rest_of_products(trace.X, h.W_V)}
    out["rest"] = {k: part(v, None, cols) for k, v in rest.items()}
    out["rest"]["scores"] = part(rest_of_products(h.Q, h.K.T))  # the turned rows with RoPE
    out["rest"]["Z"] = part(rest_of_products(h.weights, h.V), None, cols)
    apart = [k for k in range(trace.n_k) if k not in drawn(trace.n_k)]  # the exps not listed
    out["rest"]["exp_sum"] = part(h.exp_shifted[:, apart].sum(axis=1), places=places["rest_exp_sum"])
    return out


def page_trace(trace: AttentionTrace) -> dict[str, Any]:
    """What page.js reads of the trace: its tokens and facts, and the numbers it draws and
    its explanations list (the followed layer's heads, each grid's shown rows and columns,
    the terms a sum writes out), each quantity at the precision the page writes it
    (`decimals`: page.js formats and checks each number at its own)."""
    cols_d, cols_k = drawn(trace.d_model), drawn(trace.d_k)
    return {
        "query_tokens": [{"text": t.text} for t in trace.query_tokens],
        "key_tokens": [{"text": t.text} for t in trace.key_tokens],
        **{k: getattr(trace, k) for k in ("focus", "head_index", "source", "layer", "cross",
                                          "normalized", "x_label", "x_from", "x_label_q",
                                          "positional")},
        "decimals": decimals(trace),
        "query_inputs": None if trace.query_inputs is None else
        [{"text": t.text} for t in trace.query_inputs],
        **{k: part(getattr(trace, k), None, cols_d) for k in ("E", "P", "X", "E_q", "P_q", "X_q")},
        "heads": [head_part(trace, h, cols_k) for h in trace.heads],
        "model_weights": None if trace.model_weights is None else
        part(trace.model_weights, places=decimals(trace)["model_weights"]),
        "kv_heads": None if trace.kv_heads is None else list(trace.kv_heads),
        "rope": None if trace.rope is None else rope_part(trace, cols_k),
    }


def rope_part(trace: AttentionTrace, cols: list[int]) -> dict[str, Any]:
    """The turn as the page explains it: Q and K before it at the shown columns and each
    one's partner in its pair, and per position and pair the angle with its cos and sin
    (each at display precision, as the explanation writes them)."""
    rope = trace.rope
    paired = sorted({c ^ 1 for c in cols} | set(cols))  # pair m: columns 2m and 2m + 1
    pairs = sorted({c // 2 for c in cols})
    return {"base": rope.base, "names": ROTARY_NAMES,
            "Q_before": part(rope.Q_before, None, None, paired),
            "K_before": part(rope.K_before, None, None, paired),
            **{name: part(f(rope.angles), None, pairs)
               for name, f in (("angles", np.asarray), ("cos", np.cos), ("sin", np.sin))}}


def geometry(trace: AttentionTrace) -> list[dict[str, Any]]:
    """Per head, each query against every key as arrows in their plane
    (attncore.geometry, as chapter `dot` draws them): |q|, |k|, θ in degrees, the shadow,
    at the precision the page writes them (θ in whole degrees, drawn to a tenth)."""
    out = []
    for h in trace.heads:
        rows = [h.geometry(i) for i in range(trace.n_q)]
        out.append({"q_norm": shown([g.q_norm for g in rows]),
                    "k_norms": shown(rows[0].k_norms) if rows else [],
                    "angles": np.round([g.angles for g in rows], 1).tolist(),
                    # whole degrees, rounded once from the true angle as chapter `dot` writes
                    # them (11.457° is 11°; rounding the tenth, 11.5, again would say 12°)
                    "degrees": [[None if np.isnan(a) else f"{a:.0f}" for a in g.angles]
                                for g in rows],
                    "shadows": shown([g.shadows for g in rows]),
                    "heights": shown([g.heights for g in rows])})
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
              poster: str = "", deck: str | None = None,
              marks: Sequence[Cue] = ()) -> dict[str, Any]:
    """What the page's script reads besides the trace (`deck`: the --slides deck's href,
    relative to the page, when it is made too; `marks`: each of `chapters` as (start,
    end, title), the video's chapter marks: pipeline.outputs.chapters)."""
    shows = page_shows(trace)
    labels = (*word_labels([t.text for t in trace.key_tokens]),
              *word_labels([t.text for t in trace.query_tokens]))
    return {
        "video": video_src,
        "poster": poster,  # the video's first captioned picture: a path, a data URI, or ""
        "deck": deck,
        "sentence": settings.sentence,
        "language": settings.language,
        "theme": settings.theme,
        "captions": settings.captions,  # burned into the picture or not: the page's track
        "describe": settings.describe,  # a descriptions track in the player too
        # each description also as it is said (scenes.spoken: "W_Q" is "W Q", "Kᵀ" "K
        # transpose"): the text the descriptions track and its live region give a screen
        # reader, which would read the typeset form symbol by symbol
        "cues": [{**asdict(c), "said": spoken(c.description, settings.language, labels)}
                 for c in cues],
        "chapters": chapters,
        "marks": [{"chapter": slug, "start": a, "end": b, "title": title}
                  for slug, (a, b, title) in zip(chapters, marks, strict=bool(marks))],
        "shows": {c: list(shows.get(c, ())) for c in chapters},
        "made_in": made_in(chapters, shows, quantities(trace)),
        "made_at": made or {},
        "words": page_words(Translate(settings.language)),
        "colours": colours(trace),
        "geometry": geometry(trace),
        "max_shown": MAX_SHOWN,
        "max_terms": MAX_TERMS,
        "remake": remake(settings, video_src),
        "questions": page_questions(trace, Translate(settings.language)),
    }


def withheld_cells(q: Question, trace: AttentionTrace) -> list[list[Any]]:
    """The cells of the followed head whose numbers give question `q`'s answer away: the page's
    predict mode hides them until it is answered."""
    row = range(trace.n_k)
    if q.kind in (qs.TOP_KEY, qs.CLOSEST_ANGLE):  # the followed word's whole row of scores
        return [[key, q.query, j] for key in ("scores", "scaled", "weights") for j in row]
    if q.kind == qs.SIGN:
        return [[key, q.query, q.key] for key in ("scores", "scaled", "weights")]
    if q.kind == qs.TOP_WEIGHT:
        return [["weights", q.query, j] for j in row]
    return []  # never drawn on the page (a shifted word, the training): nothing to hide


def page_questions(trace: AttentionTrace, tr: Translate) -> list[dict[str, Any]]:
    """The questions of attncore.questions, worded, each with the cells it withholds."""
    return [{"ask": w.ask, "options": list(w.options), "answer": w.answer,
             "reason": w.reason, "cells": withheld_cells(q, trace)}
            for q, w in zip(qs.questions(trace), worded(trace, tr), strict=True)]


# Settings a remake's command line leaves out: the sentence is its argument, the followed
# word is the one the page adds (its word picker), the output is the video beside the page.
_NOT_FLAGS = ("sentence", "query", "query_index", "output")


def remake(settings: Settings, video_src: str) -> list[str]:
    """The command line, as arguments, that makes this video and its page again in the
    page's folder: every setting that differs from its default, without the followed word
    (the page's word picker adds --query for another word; the page opened alone names it)."""
    args = ["python", "render.py", settings.sentence]
    for f in dataclasses.fields(settings):
        value = getattr(settings, f.name)
        unset = default_head(settings.weights) if f.name == "head" else f.default
        if f.name in _NOT_FLAGS or value == unset:
            continue
        if isinstance(value, bool):
            args.append(flag(f.name) if value else "--no-" + flag(f.name)[2:])
        elif isinstance(value, tuple):
            args += [flag(f.name), ",".join(value)]
        else:
            args += ["-q" if f.name == "quality" else flag(f.name), str(value)]
    return [*args, "-o", unquote(video_src), "--page"]


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
              chapters: list[str], made: dict[str, int] | None = None, poster: str = "",
              embedded: str | None = None, deck: str | None = None,
              marks: Sequence[Cue] = ()) -> str:
    """The page as one HTML text: the template with its style, script and data put in.
    `embedded`: the video itself as a data URI, which the player plays instead of
    `video_src` (then only named in the data)."""
    data = page_data(trace, cues, video_src, settings, chapters, made, poster, deck, marks)
    exported = page_trace(trace)
    title = data["words"]["title"].replace("{sentence}", settings.sentence)
    parts = {"LANG": settings.language, "THEME": settings.theme, "TITLE": _escape(title),
             "VIDEO": _attribute(embedded or video_src), "POSTER": _attribute(poster),
             "STYLE": (PAGE_DIR / "page.css").read_text(encoding="utf-8"),
             "SCRIPT": (PAGE_DIR / "page.js").read_text(encoding="utf-8"),
             "TRACE": _script_json(exported), "DATA": _script_json(data)}
    template = (PAGE_DIR / "page.html").read_text(encoding="utf-8")
    # One pass: a sentence that holds "@@TRACE@@" stays text.
    return re.sub(r"@@([A-Z]+)@@", lambda m: parts[m.group(1)], template)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _attribute(text: str) -> str:
    return _escape(text).replace('"', "&quot;")


# ---- the poster frame and the page with its video inside ---------------------------------
# A page with its video inside is one file for an LMS; over this size most refuse an upload
# (and a browser holds the whole of a data URI in memory), so --page-embed refuses it.
EMBED_LIMIT = 100_000_000  # bytes of the page


def poster_seconds(chapters: list[ChapterResult]) -> float:
    """When the video's first captioned picture is complete: the first caption's hold
    (ChapterResult.holds), else its start; 0 for a video without captions."""
    offset = 0.0
    for r in chapters:
        if r.subtitles:
            start, end, _ = r.subtitles[0]
            held = r.holds[0] if r.holds else start
            return offset + min(max(held, start), end)
        offset += r.duration
    return 0.0


def poster_png(video: Path, seconds: float) -> bytes:
    """The picture the video shows at `seconds`, as PNG bytes."""
    out = io.BytesIO()
    Image.fromarray(frame_at(video, seconds)).save(out, format="PNG", optimize=True)
    return out.getvalue()


def data_uri(content: bytes, mime: str) -> str:
    return f"data:{mime};base64," + base64.b64encode(content).decode("ascii")


def embedded_size(video: Path) -> int:
    """About how large the page with `video` inside is: its base64 and the page around it."""
    return math.ceil(Path(video).stat().st_size / 3) * 4 + 1_000_000


def write_page(trace: AttentionTrace, chapters: list[ChapterResult], video: Path,
               settings: Settings, dest: Path | None = None, embed: bool = False,
               deck: Path | None = None) -> Path:
    """The page of `video` (made from `chapters` with `trace`), written atomically beside it
    (or to `dest`), and its poster frame (the first captioned picture) beside it; it plays
    the video by its path relative to the page, and links to the --slides deck at `deck`
    when one is made. `embed`: one self-contained file, the video and the poster inside it
    as data URIs (OutputError, one line, when too large)."""
    dest = Path(dest) if dest is not None else page_path(video)
    if embed and embedded_size(video) > EMBED_LIMIT:
        raise OutputError(f"--page-embed: {video} would make a page of about "
                          f"{embedded_size(video) / 1e6:.0f} MB, over the "
                          f"{EMBED_LIMIT / 1e6:.0f} MB an LMS takes; use --page and upload the "
                          "page with the video beside it")
    slugs = [r.chapter for r in chapters]
    cues = page_cues(chapters)
    png = poster_png(video, poster_seconds(chapters))
    if embed:
        mime = mimetypes.guess_type(Path(video).name)[0] or "video/mp4"
        poster, inside = data_uri(png, "image/png"), data_uri(Path(video).read_bytes(), mime)
    else:
        still = poster_path(dest)
        with atomic_output(still) as tmp:
            tmp.write_bytes(png)
        poster = relative_href(still, dest)
        inside = None
    text = page_html(trace, cues, relative_href(video, dest), settings, slugs,
                     made_at(chapters, cues, trace.rope is not None), poster, inside,
                     relative_href(deck, dest) if deck is not None else None,
                     chapter_marks(chapters, settings.language))
    write_text_atomic(dest, text)
    return dest

