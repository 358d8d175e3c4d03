"""The release gallery (scripts/gallery.py): for two corpus cases it writes one page with a
row per case, naming the case, its options and its problem count, and every image or
handout the page links is a file beside it."""

from __future__ import annotations

import importlib
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.support.paths import ROOT

SCRIPTS = ROOT / "scripts"
CASES = ("tiny-no-softmax", "random-no-positions")  # two quick ones, in corpus order


def load_gallery(monkeypatch):
    """scripts/gallery.py as a module its worker processes can import too (spawned
    workers start with this process's sys.path)."""
    monkeypatch.syspath_prepend(str(SCRIPTS))
    return importlib.import_module("gallery")


class Links(HTMLParser):
    """The page's rows (by id), the text of each and every relative link."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[str] = []
        self.text: dict[str, str] = {}
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "tr" and a.get("class") == "case":
            self.rows.append(a["id"] or "")
            self.text[self.rows[-1]] = ""
        for key in ("src", "href"):
            if a.get(key) and not a[key].startswith("#"):
                self.links.append(a[key])

    def handle_data(self, data: str) -> None:
        if self.rows:
            self.text[self.rows[-1]] += data


@pytest.mark.slow
def test_the_gallery_has_a_row_per_case_and_every_link_resolves(tmp_path, capsys, monkeypatch):
    gallery = load_gallery(monkeypatch)
    assert gallery.main(["--out", str(tmp_path), "-j", "2",
                         *(a for c in CASES for a in ("--case", c))]) == 0
    page = tmp_path / "index.html"
    assert page.exists() and "gallery: " in capsys.readouterr().out
    parsed = Links()
    parsed.feed(page.read_text(encoding="utf-8"))
    assert parsed.rows == list(CASES)  # corpus order, one row each
    assert parsed.links and all(not Path(link).is_absolute() and "/" not in link
                                for link in parsed.links)  # files beside the page
    assert all((tmp_path / link).is_file() for link in parsed.links)
    assert {Path(link).suffix for link in parsed.links} == {".png", ".pdf"}
    assert "--no-softmax" in parsed.text["tiny-no-softmax"]
    assert "--no-positional" in parsed.text["random-no-positions"]
    for row in CASES:
        assert " problems" in parsed.text[row], row  # its count (problem lines folded below)
