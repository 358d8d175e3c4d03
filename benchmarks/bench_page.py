"""Companion page benchmark: each page's size for every case of the lint corpus, and the
time each model's page takes to open in headless Chromium (not a test).

    .venv/bin/python benchmarks/bench_page.py              # every case, open times too
    .venv/bin/python benchmarks/bench_page.py --no-open    # sizes only

Budget (issue 41): every page under 2 MB, the decoder's open under 1 s. The page is built
as --page builds it, from the case's trace, with one made-up caption per chapter planned (a
page's size hardly depends on its captions); open time is the page's own figure
(body[data-ready-ms], since navigation began), the best of three opens.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from attention_video.pipeline.commands.app import make_trace  # noqa: E402
from attention_video.pipeline.outputs.page import page_html  # noqa: E402
from attention_video.pipeline.run.render import plan_chapters  # noqa: E402

from tests.support.lint_corpus import load_cases  # noqa: E402

BUDGET = 2_000_000  # bytes
CHROMIUM = "/usr/bin/chromium"


def build(case, folder: Path) -> tuple[str, Path]:
    """The page of `case`, written to `folder`: its model's name and its path."""
    settings = case.settings
    trace = make_trace(settings, lambda m: None)
    slugs = plan_chapters(settings, trace, lambda m: None)
    page = folder / f"{case.name}.page.html"
    page.write_text(page_html(trace, [], "video.mp4", settings, list(slugs)), encoding="utf-8")
    return trace.source, page


def open_ms(browser, page: Path) -> int:
    best = None
    for _ in range(3):
        tab = browser.new_page()
        tab.goto(page.as_uri())
        tab.wait_for_selector("body[data-ready='1']")
        ms = int(tab.get_attribute("body", "data-ready-ms"))
        best = ms if best is None else min(best, ms)
        tab.close()
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-open", action="store_true", help="sizes only, no browser")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        pages = [(case.name, *build(case, Path(tmp))) for case in load_cases()]
        largest: dict[str, tuple[int, str, Path]] = {}
        print(f"{'case':32} {'model':13} {'size':>10}")
        for name, source, page in pages:
            size = page.stat().st_size
            flag = "" if size < BUDGET else "  over 2 MB"
            print(f"{name:32} {source:13} {size / 1e6:8.3f} MB{flag}")
            if size > largest.get(source, (0,))[0]:
                largest[source] = (size, name, page)
        print("\nlargest page per model" + ("" if args.no_open else ", and its open time"))
        browser = None
        if not args.no_open:
            from playwright.sync_api import sync_playwright  # noqa: PLC0415 (only with a browser)

            pw = sync_playwright().start()
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        for source, (size, name, page) in sorted(largest.items()):
            opened = "" if browser is None else f"  opens in {open_ms(browser, page)} ms"
            print(f"  {source:13} {size / 1e6:6.3f} MB ({name}){opened}")
        if browser is not None:
            browser.close()
            pw.stop()


if __name__ == "__main__":
    main()
