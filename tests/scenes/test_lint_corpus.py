"""The lint corpus (tests/data/lint_corpus.toml, issue 28): every case's pictures pass the
lint (slow tier; a case with problems recorded today is an expected failure that turns
into a loud one when its scenes are fixed, and a case never gets more problems than
recorded); and, in the fast tier, the corpus parses, every case's settings validate and
it still covers every mode of the README, so it cannot silently shrink."""

from __future__ import annotations

import unicodedata

import pytest
from attention_video.attncore.chapters import SLUGS
from attention_video.attncore.settings import LANGUAGES, PACE_RANGE, THEMES, Settings

from tests.support.lint_corpus import Case, CaseLint, lint_cases, load_cases, load_recorded

CASES = load_cases()
RECORDED = load_recorded()
MIN_CASES_PER_CHAPTER = 5  # "every chapter linted in several cases"
RECORD = "scripts/lint_corpus.py --record"


# ---- fast: the corpus file ------------------------------------------------------------
def test_the_corpus_parses_into_enough_uniquely_named_cases():
    names = [c.name for c in CASES]
    assert len(CASES) >= 40
    assert len(set(names)) == len(names), "case names are test ids: each once"
    assert all(n and n.replace("-", "").isalnum() and n == n.lower() for n in names)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_every_case_s_settings_validate(case: Case):
    s = case.settings
    assert isinstance(s, Settings) and s.sentence == case.sentence


def test_every_case_has_a_record_and_every_record_a_case():
    assert sorted(RECORDED) == sorted(c.name for c in CASES), (
        f"the recorded problems are stale: run {RECORD}")


def scripts_of(text: str) -> set[str]:
    """Writing systems (and emoji) a sentence uses, by Unicode character name."""
    found = set()
    for ch in text:
        name = unicodedata.name(ch, "")
        for script in ("ARABIC", "HEBREW", "CJK", "HIRAGANA", "KATAKANA", "LATIN"):
            if name.startswith(script):
                found.add(script)
        if ord(ch) >= 0x1F300 or ch == "\u2764":
            found.add("EMOJI")
    return found


def test_the_corpus_covers_every_mode_of_the_readme():
    settings = [c.settings for c in CASES]
    sources = {r.source for r in RECORDED.values()}
    assert sources >= {"tiny", "pretrained", "translation", "random"}
    pretrained = {r.tokens for r in RECORDED.values() if r.source == "pretrained"}
    assert min(pretrained) == 3 and max(pretrained) == 32 and len(pretrained) >= 5, (
        "pretrained sentences of one word ([CLS] w [SEP]) to 32 tokens")
    assert any(r.tokens == 1 for r in RECORDED.values()), "a one-token sentence"
    assert any(s.translate for s in settings)
    assert any(s.target for s in settings)
    assert any(s.causal and s.heads >= 2 for s in settings)
    assert any(s.causal and s.heads >= 4 for s in settings)
    assert any(not s.softmax for s in settings)
    assert any(s.weights == "tiny" and s.heads >= 2 for s in settings)
    assert {s.theme for s in settings} == set(THEMES)
    assert {s.language for s in settings} == set(LANGUAGES), (
        "a case per caption language Settings accepts (es: see lint_corpus.toml)")
    assert {s.pace for s in settings} >= {PACE_RANGE[0], 1.0, PACE_RANGE[1]}
    scripts = set().union(*(scripts_of(c.sentence) for c in CASES))
    assert scripts >= {"LATIN", "ARABIC", "HEBREW", "CJK", "HIRAGANA", "EMOJI"}


def place(s: Settings) -> int:
    """Where the followed word given by name is among the sentence's words."""
    return s.sentence.lower().split().index(s.query.lower())


def test_the_followed_word_is_the_first_the_last_and_a_repeated_one():
    settings = [c.settings for c in CASES]
    assert any(s.query is None and s.query_index is None for s in settings)  # the last, by default
    named = [(place(s), len(s.sentence.split())) for s in settings if s.query is not None]
    assert any(p == 0 for p, _ in named), "the first word"
    assert any(p == n - 1 for p, n in named), "the last word, by name"
    # a repeated word can only be told by its index (tokens: see lint_corpus.toml)
    assert sum(1 for s in settings if s.query_index is not None) >= 2


def test_every_chapter_is_linted_in_several_cases():
    for slug in SLUGS:
        cases = [n for n, r in RECORDED.items() if slug in r.chapters]
        assert len(cases) >= MIN_CASES_PER_CHAPTER, (slug, cases)


# ---- slow: the lint of every case -----------------------------------------------------
def marked(case: Case):
    was = RECORDED.get(case.name)
    if was is None or was.total == 0:
        return pytest.param(case, id=case.name)
    by_chapter = ", ".join(f"{slug} {n}" for slug, n in was.chapters.items() if n)
    return pytest.param(case, id=case.name, marks=pytest.mark.xfail(strict=True, raises=AssertionError, reason=(
        f"{was.total} problems recorded ({by_chapter}): the scenes are being fixed; when "
        f"this passes, run {RECORD}")))


@pytest.fixture(scope="session")
def corpus_lint(request) -> dict[str, CaseLint]:
    """The lint of every corpus case this session runs, two cases at a time."""
    wanted = {item.callspec.params["case"].name for item in request.session.items
              if hasattr(item, "callspec") and isinstance(item.callspec.params.get("case"), Case)
              and item.get_closest_marker("slow")}
    return lint_cases([c for c in CASES if c.name in wanted], jobs=2)


@pytest.mark.slow
@pytest.mark.xdist_group("lint-corpus")  # with --dist loadgroup: the corpus linted once
@pytest.mark.parametrize("case", [marked(c) for c in CASES])
def test_the_case_passes_the_lint(case: Case, corpus_lint: dict[str, CaseLint]):
    assert corpus_lint[case.name].lines == []


@pytest.mark.slow
@pytest.mark.xdist_group("lint-corpus")
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_the_case_has_no_more_problems_than_recorded(case: Case,
                                                     corpus_lint: dict[str, CaseLint]):
    got, was = corpus_lint[case.name], RECORDED[case.name]
    assert (got.source, got.tokens) == (was.source, was.tokens), f"run {RECORD}"
    assert sorted(got.chapters) == sorted(was.chapters), f"run {RECORD}"
    worse = {ch: (n, was.chapters[ch]) for ch, n in got.chapters.items() if n > was.chapters[ch]}
    assert not worse, (f"more problems than recorded (chapter: now, then) {worse}:\n"
                       + "\n".join(got.lines))
