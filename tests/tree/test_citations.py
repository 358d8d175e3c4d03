"""Every document the repository cites is in it: a comment, docstring or page that points
at `DESIGN.md`, `STYLE.md` or any other Markdown file names a file git tracks here, so a
reader of a clone can follow every citation."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from tests.support.paths import ROOT

# A Markdown file's name, not inside a web address (a URL's page is not ours to keep).
CITED = re.compile(r"(?<![\w./:-])((?:[\w-]+/)*[\w-]+\.md)\b")


def tracked() -> list[str]:
    return subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout.split()


def cited_in(text: str) -> set[str]:
    return set(CITED.findall(text))


def missing(files: list[str], read) -> dict[str, set[str]]:
    """Each file → the Markdown files it cites that are neither a tracked path nor the
    name of one (a bare `README.md` names the README)."""
    paths = set(files)
    names = {Path(f).name for f in files}
    out = {}
    for f in files:
        text = read(f)
        if text is None:
            continue
        gone = {c for c in cited_in(text) if c not in paths and c not in names}
        if gone:
            out[f] = gone
    return out


def _text(name: str) -> str | None:
    try:
        return (ROOT / name).read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError):  # binary data, or a link
        return None


def test_every_cited_document_is_in_the_repository():
    this = Path(__file__).resolve().relative_to(ROOT).as_posix()  # its examples cite none
    assert missing([f for f in tracked() if f != this], _text) == {}


def test_the_check_finds_a_document_that_is_not_here():
    files = {"a.py": '"""As DESIGN.md says ("Pacing").', "b.md": "see STYLE.md and docs/x.md",
             "README.md": "https://example.org/CHANGELOG.md is theirs; README.md is ours",
             "docs/x.md": ""}
    assert missing(list(files), files.get) == {"a.py": {"DESIGN.md"}, "b.md": {"STYLE.md"}}
