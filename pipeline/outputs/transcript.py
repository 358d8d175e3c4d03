"""--transcript FILE (.html or .md): the video as text, for a screen reader or a handout.

Every caption in playing order with its time and what its picture shows that it does not
say (its description, scenes.describe), headed by its chapter's title, then the
followed word's numbers as real tables (its Q, K and V rows, its score, scaled score and
weight against every key, its Z row), in the caption language. The HTML is one offline
file with landmarks, headings in order, a table caption and header cells for every table.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from attention_video.attncore.settings import Settings
from attention_video.attncore.trace import AttentionTrace
from attention_video.pipeline.outputs.chapters import chapter_title
from attention_video.pipeline.outputs.files import write_text_atomic
from attention_video.pipeline.records import ChapterResult
from attention_video.scenes.catalogue import Translate
from attention_video.scenes.precision import fmt, weight_decimals
from attention_video.scenes.questions import names
from attention_video.scenes.transcript_words import transcript_words
from attention_video.scenes.typeset import joined, unicode_text

FORMATS = {".html": "HTML", ".htm": "HTML", ".md": "Markdown"}


def transcript_path(value: str | Path) -> Path:
    """The --transcript path, if its ending names a format; ValueError in one line if not."""
    path = Path(value)
    if path.suffix.lower() not in FORMATS:
        ending = f"ends in {path.suffix!r}" if path.suffix else "has no ending"
        raise ValueError(f"{str(path)!r} {ending}; end it in .html (a page a screen reader "
                         "reads) or .md (Markdown)")
    return path


@dataclass(frozen=True)
class Line:
    seconds: float  # where the caption starts in the video
    text: str
    description: str = ""  # what the picture shows that the caption does not say


@dataclass(frozen=True)
class Section:
    anchor: str
    title: str
    lines: tuple[Line, ...]


@dataclass(frozen=True)
class Table:
    caption: str
    head: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]  # the first cell of each row is its header


def sections(chapters: Sequence[ChapterResult], language: str) -> list[Section]:
    """Each chapter's captions at their video times, under its title."""
    out, offset = [], 0.0
    for r in chapters:
        described = (r.descriptions if len(r.descriptions) == len(r.subtitles)
                     else [""] * len(r.subtitles))  # a clip kept before they were recorded
        lines = tuple(Line(offset + a, text, d) for (a, _, text), d in zip(r.subtitles, described))
        out.append(Section(f"chapter-{r.chapter}", chapter_title(r, language), lines))
        offset += r.duration
    return out


def tables(trace: AttentionTrace, words: dict[str, str]) -> list[Table]:
    """The followed word's numbers: its rows of Q, K, V and Z, and its row of scores."""
    h, i = trace.head, trace.focus
    Q, K, product = names(trace)
    columns = tuple(f"{m + 1}" for m in range(trace.d_k))
    rows = tuple((name, *(fmt(x, 2) for x in values)) for name, values in
                 ((Q, h.Q[i]), (K, h.K[i] if not trace.cross else h.K[trace.partner]),
                  ("V", h.V[i] if not trace.cross else h.V[trace.partner]), ("Z", h.Z[i])))
    vectors = Table(words["rows"], (words["row"], *columns), rows)
    w = weight_decimals(trace.normalized)  # as the video writes them
    scored = tuple((trace.key_tokens[j].text, fmt(h.scores[i, j], 2), fmt(h.scaled[i, j], 2),
                    fmt(h.weights[i, j], w)) if h.mask[i, j] else
                   (trace.key_tokens[j].text, "−∞", "−∞", fmt(0.0, w))
                   for j in range(trace.n_k))
    scores = Table(words["gives"], (words["word"], product, words["scaled"], words["weight"]),
                   scored)
    return [vectors, scores]


def clock(seconds: float) -> str:
    whole = int(seconds)
    return f"{whole // 60}:{whole % 60:02d}"


def write_transcript(path: Path, trace: AttentionTrace, chapters: Sequence[ChapterResult],
                     settings: Settings) -> Path:
    path = transcript_path(path)
    words = transcript_words(Translate(settings.language), settings.sentence,
                             trace.query_tokens[trace.focus].text, trace.normalized)
    parts = sections(chapters, settings.language), tables(trace, words)
    text = (markdown(*parts, words) if FORMATS[path.suffix.lower()] == "Markdown"
            else page(*parts, settings.language, words))
    write_text_atomic(path, text)
    return path


# ---- HTML --------------------------------------------------------------------------------
STYLE = """
body { font-family: system-ui, "Noto Sans", sans-serif; line-height: 1.5; max-width: 52rem;
       margin: 2rem auto; padding: 0 1rem; color: #1b1d23; background: #ffffff; }
time { font-variant-numeric: tabular-nums; color: #4a4f5c; margin-right: 0.6em; }
ol.captions { list-style: none; padding-left: 0; }
table { border-collapse: collapse; margin: 1rem 0; }
th, td { border: 1px solid #8a8f9c; padding: 0.2rem 0.6rem; text-align: right; }
th[scope=row], thead th { text-align: left; }
caption { text-align: left; font-weight: bold; padding-bottom: 0.3rem; }
a { color: #1a4fa0; }
p.description { margin: 0.2rem 0 0.6rem 3.2em; color: #33363f; }
span.picture { font-style: italic; }
sub, sup { line-height: 0; }
"""


def esc(text: str) -> str:
    return html.escape(text, quote=True)


def _marked(tag: str, inner: str) -> str:
    return f"<{tag}>{inner}</{tag}>"


def typeset_html(text: str) -> str:
    """Text escaped for HTML, its maths typeset as the video draws it (scenes.typeset):
    Kᵀ and dₖ in Unicode's small characters, W_Q's Q in <sub> (Unicode has no small Q)."""
    return joined(text, _marked, esc)


def page(parts: list[Section], numbers: list[Table], language: str,
         words: dict[str, str]) -> str:
    title = words["title"]
    nav = "\n".join(f'<li><a href="#{s.anchor}">{typeset_html(s.title)}</a></li>' for s in parts)
    body = "\n".join(_section_html(s, words) for s in parts)
    heading = words["numbers"]
    tables_html = "\n".join(_table_html(t) for t in numbers)
    return f"""<!doctype html>
<html lang="{esc(language)}">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{esc(unicode_text(title))}</title><style>{STYLE}</style></head>
<body>
<main>
<h1>{typeset_html(title)}</h1>
<nav aria-label="{esc(words['chapters'])}"><ol>
{nav}
<li><a href="#numbers">{typeset_html(heading)}</a></li>
</ol></nav>
{body}
<section id="numbers" aria-labelledby="numbers-title"><h2 id="numbers-title">{typeset_html(heading)}</h2>
{tables_html}
</section>
</main>
</body></html>
"""


def _section_html(s: Section, words: dict[str, str]) -> str:
    items = "\n".join(f'<li><time datetime="PT{line.seconds:.1f}S">{clock(line.seconds)}</time>'
                      f"{typeset_html(line.text)}{_description_html(line, words)}</li>"
                      for line in s.lines)
    return (f'<section id="{s.anchor}" aria-labelledby="{s.anchor}-title">'
            f'<h2 id="{s.anchor}-title">{typeset_html(s.title)}</h2>\n'
            f'<ol class="captions">\n{items}\n</ol></section>')


def _description_html(line: Line, words: dict[str, str]) -> str:
    if not line.description:
        return ""
    return (f'<p class="description"><span class="picture">{esc(words["picture"])}</span> '
            f"{typeset_html(line.description)}</p>")


def _table_html(t: Table) -> str:
    head = "".join(f'<th scope="col">{typeset_html(c)}</th>' for c in t.head)
    rows = "\n".join("<tr>" + f'<th scope="row">{typeset_html(r[0])}</th>'
                     + "".join(f"<td>{typeset_html(c)}</td>" for c in r[1:]) + "</tr>"
                     for r in t.rows)
    return (f"<table><caption>{typeset_html(t.caption)}</caption>\n<thead><tr>{head}</tr></thead>\n"
            f"<tbody>\n{rows}\n</tbody></table>")


# ---- Markdown ----------------------------------------------------------------------------
def md(text: str) -> str:
    """Text safe in Markdown: the characters it reads as markup escaped, its maths typeset
    (scenes.typeset): Kᵀ and dₖ in Unicode's small characters, W_Q's Q in <sub>, which
    GitHub and pandoc render (Unicode has no small Q)."""
    return joined(text, _marked, _md_escaped)


def _md_escaped(text: str) -> str:
    return "".join("\\" + c if c in "\\`*_[]<>#|" else c for c in text)


def markdown(parts: list[Section], numbers: list[Table], words: dict[str, str]) -> str:
    out = [f"# {md(words['title'])}", ""]
    for s in parts:
        out += [f"## {md(s.title)}", ""]
        for line in s.lines:
            out.append(f"- `{clock(line.seconds)}` {md(line.text)}")
            if line.description:
                out.append(f"  *{md(words['picture'])}* {md(line.description)}")
        out.append("")
    out += [f"## {md(words['numbers'])}", ""]
    for t in numbers:
        out += [f"**{md(t.caption)}**", "", "| " + " | ".join(md(c) for c in t.head) + " |",
                "|" + "|".join(["---"] + ["---:"] * (len(t.head) - 1)) + "|"]
        out += ["| " + " | ".join(md(c) for c in r) + " |" for r in t.rows]
        out.append("")
    return "\n".join(out)
