"""attncore.chapters: a chapter's row is the only place its title, what it shows and what
it costs are written; the title on screen, the companion page's highlights and the render
order are derived from the rows, and no other file keeps a table keyed by the slugs."""

from __future__ import annotations

import ast
import dataclasses
import re
import subprocess
from pathlib import Path

import pytest
from attention_video.attncore import Settings, build_trace, sources
from attention_video.attncore.chapters import CHAPTERS, SLUGS, Chapter, Cost, chapter
from attention_video.pipeline.outputs import page
from attention_video.pipeline.run import schedule
from attention_video.scenes.catalogue import Translate
from attention_video.scenes.titles import chapter_title

ROOT = Path(__file__).resolve().parents[2]
ROWS = "attncore/chapters.py"


def code_files() -> list[Path]:
    """The tracked Python files outside the tests."""
    names = subprocess.run(["git", "ls-files", "*.py"], cwd=ROOT, capture_output=True,
                           text=True, check=True).stdout.split()
    return [ROOT / n for n in names if not n.startswith("tests/")]


def slug_tables(source: str) -> list[int]:
    """The lines of dict displays keyed by three or more slugs, and of tuples, lists and
    sets that spell out three or more: a second table of the chapters."""
    found = []
    for node in ast.walk(ast.parse(source)):
        items = (node.keys if isinstance(node, ast.Dict) else
                 node.elts if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else [])
        named = [k for k in items if isinstance(k, ast.Constant) and k.value in SLUGS]
        if len(named) >= 3:
            found.append(node.lineno)
    return found


def test_every_row_names_a_title_what_it_shows_and_its_costs():
    for c in CHAPTERS:
        assert c.title and c.title.strip() == c.title, c.slug
        assert c.shows and set(c.shows) <= set(page.QUANTITIES), c.slug
        assert c.cost.small > 0 and (c.cost.large is None or c.cost.large > 0), c.slug


def test_the_title_the_page_and_the_order_are_derived_from_the_rows():
    en = Translate("en")
    for c in CHAPTERS:
        assert chapter_title(c.slug, en, heads=2) == f"{c.number} · {c.title}"
        assert page.SHOWS[c.slug] == c.shows
    assert chapter_title("heads", en, heads=1) == f"9 · {chapter('heads').one_head_title}"
    assert chapter_title("input", en, heads=1) == f"1 · {chapter('input').title}"
    # a model whose Q and K are turned (RoPE) names the turned rows where the title names Q, K
    assert chapter_title("factor", en, heads=2, rotary=True) == "3 · The factor matrix Q_rot·K_rotᵀ"
    assert chapter_title("dot", en, heads=2, rotary=True) == f"4 · {chapter('dot').title}"
    assert list(page.SHOWS) == list(SLUGS)


def test_the_schedule_reads_the_rows_cost_for_a_small_or_a_large_model():
    s = Settings(sentence="The black cat drank the milk", quality="l")
    tiny = build_trace(s)
    large = dataclasses.replace(tiny, source="pretrained", can=sources.source("pretrained").can)
    assert (schedule.cost_profile(tiny), schedule.cost_profile(large)) == ("small", "large")
    assert schedule.measured(tiny) == {c.slug: c.cost.small for c in CHAPTERS}
    assert schedule.measured(large) == {c.slug: c.cost.large for c in CHAPTERS
                                        if c.cost.large is not None}
    # a chapter never measured for a large model is counted as its longest
    longest = max(schedule.measured(large).values())
    assert schedule.expected_seconds("learning", large, s) == longest


def test_a_new_row_is_a_new_chapter_everywhere(monkeypatch):
    """A row added to the table is titled and highlighted with nothing else written."""
    row = Chapter("extra", "extra", "attention_video.scenes.chapters.summary", "SummaryScene",
                  "Extra: a test chapter", ("Z",), Cost(1.0, None))
    from attention_video.attncore import chapters as chapters_mod

    monkeypatch.setattr(chapters_mod, "SLUGS", (*SLUGS, "extra"))
    monkeypatch.setitem(chapters_mod.BY_SLUG, "extra", row)
    assert chapter_title("extra", Translate("en"), heads=2) == \
        f"{len(SLUGS) + 1} · Extra: a test chapter"


@pytest.mark.slow
def test_titles_are_written_only_in_their_rows():
    titles = {c.title for c in CHAPTERS} | ({c.one_head_title for c in CHAPTERS}
                                           | {c.rotary_title for c in CHAPTERS}) - {None}
    for path in code_files():
        rel = path.relative_to(ROOT).as_posix()
        if rel == ROWS:
            continue
        strings = {n.value for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                   if isinstance(n, ast.Constant) and isinstance(n.value, str)}
        assert not strings & titles, rel


@pytest.mark.slow
def test_no_table_keyed_by_the_slugs_outside_the_rows():
    found = {rel: lines for p in code_files()
             if (rel := p.relative_to(ROOT).as_posix()) != ROWS
             and (lines := slug_tables(p.read_text(encoding="utf-8")))}
    assert found == {}


@pytest.mark.parametrize("source, tables", [
    ('SHOWS = {"input": ("X",), "linear": ("Q",), "dot": ("K",)}', 1),
    ('ORDER = ("factor", "dot", "softmax")', 1),
    ('REFS = ("linear", "factor")', 0),  # two slugs: not a table of chapters
    ('HELP = {"heads": "…", "softmax": "…", "theme": "…"}', 0),  # settings that share a name
])
def test_the_table_check_finds_a_second_table(source, tables):
    assert len(slug_tables(source)) == tables


# A chapter named by its number ("chapter 4", "Chapter 10 ·", "chapters 4 and 8"), outside
# quotes (a caption's form, "ch. 2", or a progress line's, 'chapter 3 (factor matrix)') and
# options (--chapters 1-3): numbers move when the story changes, so code names the slug.
BY_NUMBER = re.compile(r"(?<![\"'\-\w])[Cc]hapters? \d")


def by_number(line: str) -> bool:
    return bool(BY_NUMBER.search(line.replace('"""', "   ")))  # a docstring's quotes quote no caption


def test_code_names_chapters_by_slug_not_number():
    found = {p.relative_to(ROOT).as_posix(): [n for n, line in enumerate(lines, 1)
                                              if by_number(line)]
             for p in code_files() if (lines := p.read_text(encoding="utf-8").splitlines())}
    assert {p: lines for p, lines in found.items() if lines} == {}
    assert by_number('"""Chapter 10 · Every head') and by_number("# chapters 4 and 8")
    assert not by_number("'chapter 3 (factor matrix)', --chapters 1-3, chapter `dot`")
