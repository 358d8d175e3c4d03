"""Lint every case of the lint corpus (tests/data/lint_corpus.toml) and say what it cost.

    .venv/bin/python scripts/lint_corpus.py [-j 2] [--case NAME ...] [--show] [--record]

One line per case (problems, chapters, CPU seconds), then the total wall and CPU time:
the corpus should lint in about 8 minutes on 2 cores, as CI runs it. `--record` writes
today's problems per case and chapter to tests/data/lint_corpus_problems.toml, which
tests/scenes/test_lint_corpus.py reads (after a scene fix, or when a case is added).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository: tests.support
from tests.support.lint_corpus import CaseLint, chosen_cases, load_recorded, write_recorded  # noqa: E402
from tests.support.lint_corpus import lint_cases as run  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-j", "--jobs", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--case", action="append", default=[], metavar="NAME",
                        help="lint only this case (repeatable)")
    parser.add_argument("--record", action="store_true",
                        help="write the problems to tests/data/lint_corpus_problems.toml")
    parser.add_argument("--show", action="store_true",
                        help="print each case's problems under its line")
    args = parser.parse_args(argv)
    cases = chosen_cases(args.case, parser.error)
    if args.record and args.case:
        parser.error("--record writes the whole corpus: give no --case")
    recorded = load_recorded()

    def done(r: CaseLint) -> None:
        was = recorded.get(r.name)
        change = "" if was is None or was.total == len(r.lines) else f" (recorded {was.total})"
        print(f"{r.name:28s} {len(r.lines):4d} problems{change:15s} "
              f"{len(r.result.chapters):2d} chapters  {r.source:11s} {r.tokens:2d} tokens  "
              f"{r.cpu_seconds:6.1f} CPU-s", flush=True)
        if args.show:
            for line in r.lines:
                print(f"    {line}", flush=True)

    start = time.perf_counter()
    results = run(cases, args.jobs, done)
    wall = time.perf_counter() - start
    cpu = sum(r.cpu_seconds for r in results.values())
    problems = sum(len(r.lines) for r in results.values())
    print(f"{len(results)} cases, {problems} problems; {wall:.0f} s wall with {args.jobs} "
          f"workers, {cpu:.0f} CPU-s in the workers")
    if args.record:
        write_recorded(results, cases)
        print("recorded in tests/data/lint_corpus_problems.toml")
    return 0


if __name__ == "__main__":
    sys.exit(main())
