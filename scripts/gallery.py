"""The release gallery: the storyboard of every case of the lint corpus on one HTML page.

    .venv/bin/python scripts/gallery.py --out gallery/ [-j 2] [--case NAME ...]

A row per case (tests/data/lint_corpus.toml): its name, sentence and options as flags,
the weights that made its numbers, its lint problem count (the problem lines folded
under it) and its storyboard, the contact sheet shown and the A4 handout linked. The
images are files beside the page (NAME.png, NAME.pdf), linked relatively, so the folder
can be moved or zipped. Look through it by eye before a release. Each case is made in
one worker process (storyboard, then lint): about 1.5 times the corpus lint's time.
"""

from __future__ import annotations

import argparse
import html
import sys
import time
from collections.abc import Callable
from concurrent.futures import as_completed
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository: tests.support
from attention_video.pipeline.commands.app import make_trace  # noqa: E402
from attention_video.pipeline.run.lint import lint_video  # noqa: E402
from attention_video.pipeline.run.stills import make_storyboard  # noqa: E402
from attention_video.pipeline.run.workers import LocalPool  # noqa: E402

from tests.support.lint_corpus import Case, chosen_cases, load_recorded, longest_first  # noqa: E402

PAGE = "index.html"


@dataclass(frozen=True)
class Row:
    """One case on the page."""

    case: Case
    source: str  # the weights that made its numbers
    tokens: int
    png: str  # file names beside the page
    pdf: str
    stills: int
    problems: tuple[str, ...]  # the lint's lines
    summary: str  # the lint's summary line
    seconds: float


def make_row(case: Case, out: Path) -> Row:
    """The storyboard and the lint of `case`, in this process."""
    start = time.perf_counter()
    settings = case.settings
    trace = make_trace(settings, lambda s: None)
    board = make_storyboard(settings, trace, out / f"{case.name}.png", jobs=1)
    checked = lint_video(settings, trace, jobs=1)
    return Row(case, trace.source, len(trace.key_tokens), board.png.name, board.pdf.name,
               len(board.stills), tuple(str(p) for p in checked.problems), checked.summary(),
               time.perf_counter() - start)


def make_rows(cases: list[Case], out: Path, jobs: int,
              on_done: Callable[[Row], None] = lambda r: None) -> list[Row]:
    """Every case's row, made by `jobs` worker processes, in corpus order."""
    rows: dict[str, Row] = {}
    order = longest_first(cases, load_recorded())
    if jobs <= 1:
        for case in order:
            rows[case.name] = row = make_row(case, out)
            on_done(row)
    else:
        pool = LocalPool(min(jobs, len(cases)))
        try:
            futures = [pool.submit(make_row, case, out) for case in order]
            for done in as_completed(futures):
                row = done.result()
                rows[row.case.name] = row
                on_done(row)
        except BaseException:
            pool.stop()
            raise
        pool.shutdown(wait=True)
    return [rows[c.name] for c in cases]


STYLE = """
body { font-family: "Noto Sans", "Noto Sans CJK SC", sans-serif; margin: 1.5em; color: #1a1a1a; }
table { border-collapse: collapse; width: 100%; }
td, th { border-top: 1px solid #d0d0d0; padding: 0.6em; vertical-align: top; text-align: left; }
td.case { width: 26em; }
.name { font-weight: bold; font-size: 1.1em; }
.sentence { font-size: 1.2em; margin: 0.3em 0; }
.count { font-weight: bold; color: #a01010; }
.count.clean { color: #107010; }
details pre { white-space: pre-wrap; font-size: 0.8em; max-height: 30em; overflow: auto; }
.board { max-height: 40em; overflow: auto; display: block; }
.board img { width: 100%; max-width: 60em; }
"""


def render_page(rows: list[Row], recorded: dict, seconds: float) -> str:
    """The page: a header with the totals, then a table with one row per case."""
    esc = html.escape
    total = sum(len(r.problems) for r in rows)
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             "<title>Lint corpus gallery</title>", f"<style>{STYLE}</style></head><body>",
             "<h1>Lint corpus gallery</h1>",
             f"<p>{len(rows)} cases of <code>tests/data/lint_corpus.toml</code>, "
             f"{total} lint problems, made in {seconds:.0f} s on "
             f"{time.strftime('%Y-%m-%d %H:%M')}. Each storyboard shows every caption's "
             "still (click for full size); the PDF is its A4 handout.</p>",
             "<table><thead><tr><th>case</th><th>storyboard</th></tr></thead><tbody>"]
    for r in rows:
        n = len(r.problems)
        was = recorded.get(r.case.name)
        then = "" if was is None else f" (recorded: {was.total})"
        lines = esc("\n".join(r.problems))
        count = (f'<span class="count clean">no problems</span>{then}' if not n else
                 f'<details><summary><span class="count">{n} problems</span>{then}</summary>'
                 f"<pre>{lines}</pre></details>")
        flags = esc(r.case.flags()) or "(the defaults)"
        parts.append(
            f'<tr class="case" id="{esc(r.case.name)}"><td class="case">'
            f'<div class="name"><a href="#{esc(r.case.name)}">{esc(r.case.name)}</a></div>'
            f'<div class="sentence" dir="auto">{esc(r.case.sentence)}</div>'
            f"<div><code>{flags}</code></div>"
            f"<div>{esc(r.source)} weights, {r.tokens} tokens, {r.stills} stills</div>"
            f"<div>{count}</div></td>"
            f'<td><a class="board" href="{esc(r.png)}"><img src="{esc(r.png)}" loading="lazy" '
            f'alt="storyboard of {esc(r.case.name)}"></a>'
            f'<a href="{esc(r.pdf)}">A4 handout (PDF)</a></td></tr>')
    parts += ["</tbody></table></body></html>", ""]
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("gallery"),
                        help="folder for the page and its images (default gallery/)")
    parser.add_argument("-j", "--jobs", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--case", action="append", default=[], metavar="NAME",
                        help="only this case (repeatable)")
    args = parser.parse_args(argv)
    cases = chosen_cases(args.case, parser.error)
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()

    def done(r: Row) -> None:
        print(f"{r.case.name:28s} {r.stills:3d} stills {len(r.problems):4d} problems "
              f"{r.seconds:6.1f} s", flush=True)

    rows = make_rows(cases, out, args.jobs, done)
    page = out / PAGE
    page.write_text(render_page(rows, load_recorded(), time.perf_counter() - start),
                    encoding="utf-8")
    print(f"gallery: {page} ({len(rows)} cases, {time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
