"""The lint corpus (tests/data/lint_corpus.toml) as data, and running the lint on it.

Shared by tests/scenes/test_lint_corpus.py, scripts/lint_corpus.py (which measures the corpus
and records its problems in tests/data/lint_corpus_problems.toml) and scripts/gallery.py
(the storyboards of every case on one HTML page). Not part of the installed package.
"""

from __future__ import annotations

import time
import tomllib
from collections.abc import Callable, Iterable
from concurrent.futures import as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from attention_video.attncore.chapters import number
from attention_video.attncore.settings import Settings, flag, parse_chapters
from attention_video.pipeline.commands.app import make_trace
from attention_video.pipeline.run.lint import LintResult, lint_video
from attention_video.pipeline.run.workers import LocalPool

from tests.support.paths import DATA

CORPUS = DATA / "lint_corpus.toml"
PROBLEMS = DATA / "lint_corpus_problems.toml"  # today's problems, per case and chapter
QUALITY = "l"  # the lint measures in scene units, not pixels: the smallest frame will do


@dataclass(frozen=True)
class Case:
    """One sentence with its options, as the corpus file has them."""

    name: str
    sentence: str
    options: dict[str, Any] = field(default_factory=dict, hash=False)

    @property
    def settings(self) -> Settings:
        values = dict(self.options)
        if isinstance(values.get("chapters"), str):  # "2-5", as on the command line
            values["chapters"] = parse_chapters(values["chapters"])
        return Settings(sentence=self.sentence, quality=QUALITY, **values)

    def flags(self) -> str:
        """The options as render.py's flags: `--translate --theme light --chapters 1-4`."""
        out = []
        for key, value in self.options.items():
            if value is False:  # --no-softmax, --no-positional
                out.append("--no-" + flag(key)[2:])
            elif value is True:
                out.append(flag(key))
            elif isinstance(value, list):
                out.append(f"{flag(key)} {','.join(str(v) for v in value)}")
            else:
                shown = f'"{value}"' if isinstance(value, str) and " " in value else value
                out.append(f"{flag(key)} {shown}")
        return " ".join(out)


@dataclass(frozen=True)
class Recorded:
    """A case's lint as recorded: problems per chapter linted, and what the trace was."""

    chapters: dict[str, int]  # slug → problems, for every chapter the case plays
    source: str  # the weights that made its numbers (tiny, pretrained, translation, random)
    tokens: int  # key tokens ([CLS] and [SEP] included for the pretrained model)
    seconds: float  # the case's lint, one process, when recorded (for scheduling)

    @property
    def total(self) -> int:
        return sum(self.chapters.values())


@dataclass
class CaseLint:
    """A case linted now."""

    name: str
    result: LintResult
    source: str
    tokens: int
    cpu_seconds: float

    @property
    def chapters(self) -> dict[str, int]:
        return {c.chapter: len(c.problems) for c in self.result.chapters}

    @property
    def lines(self) -> list[str]:
        return [str(p) for p in self.result.problems]


def load_cases(path: Path = CORPUS) -> list[Case]:
    with open(path, "rb") as f:
        data = tomllib.load(f)
    return [Case(c["name"], c["sentence"], dict(c.get("options", {}))) for c in data["case"]]


def chosen_cases(names: list[str], fail) -> list[Case]:
    """The corpus's cases named (all of them when none is); `fail(message)` hears of a
    name that is not a case (a script's parser.error)."""
    cases = load_cases()
    unknown = set(names) - {c.name for c in cases}
    if unknown:
        fail(f"no such case: {', '.join(sorted(unknown))}")
    return [c for c in cases if c.name in names] if names else cases


def load_recorded(path: Path = PROBLEMS) -> dict[str, Recorded]:
    if not path.exists():
        return {}
    with open(path, "rb") as f:
        data = tomllib.load(f)
    return {name: Recorded(dict(r["chapters"]), r["source"], r["tokens"], r["seconds"])
            for name, r in data.items()}


def lint_case(case: Case) -> CaseLint:
    """The lint of every chapter `case` plays, in this process (jobs=1)."""
    start = time.process_time()
    settings = case.settings
    trace = make_trace(settings, lambda s: None)
    result = lint_video(settings, trace, jobs=1)
    return CaseLint(case.name, result, trace.source, len(trace.key_tokens),
                    time.process_time() - start)


def longest_first(cases: Iterable[Case], recorded: dict[str, Recorded]) -> list[Case]:
    """The slowest cases first (as recorded; unrecorded ones first of all), so that two
    workers finish together."""
    return sorted(cases, key=lambda c: -recorded[c.name].seconds if c.name in recorded
                  else -1e9)


def lint_cases(cases: list[Case], jobs: int = 2,
               on_done: Callable[[CaseLint], None] = lambda r: None) -> dict[str, CaseLint]:
    """Every case linted by `jobs` worker processes, each case whole in one of them
    (Manim is imported once per worker, not once per case)."""
    results: dict[str, CaseLint] = {}
    order = longest_first(cases, load_recorded())
    if jobs <= 1:
        for case in order:
            results[case.name] = got = lint_case(case)
            on_done(got)
        return results
    pool = LocalPool(min(jobs, len(cases)))
    try:
        futures = [pool.submit(lint_case, case) for case in order]
        for done in as_completed(futures):
            got = done.result()
            results[got.name] = got
            on_done(got)
    except BaseException:
        pool.stop()
        raise
    pool.shutdown(wait=True)
    return results


def write_recorded(results: dict[str, CaseLint], cases: list[Case], path: Path = PROBLEMS) -> None:
    """Today's problems per case and chapter, in corpus order, as TOML."""
    lines = ["# Written by `scripts/lint_corpus.py --record`: the problems the lint found in each",
             "# case of lint_corpus.toml, per chapter it plays (a case with any is an expected",
             "# failure in tests/scenes/test_lint_corpus.py), the weights and tokens of its trace, and",
             "# its lint's CPU seconds when recorded (to start the slowest cases first).",
             ""]
    for case in cases:
        r = results[case.name]
        chapters = ", ".join(f"{slug} = {n}" for slug, n in
                             sorted(r.chapters.items(), key=lambda kv: number(kv[0])))
        lines += [f'["{case.name}"]', f"problems = {len(r.lines)}",
                  f'source = "{r.source}"', f"tokens = {r.tokens}",
                  f"seconds = {r.cpu_seconds:.1f}", f"chapters = {{ {chapters} }}", ""]
    path.write_text("\n".join(lines), encoding="utf-8")
