"""README's accessibility statement names the tests and scripts that back each claim: every
one it names is in the repository (a test renamed or removed leaves a claim unbacked)."""

from __future__ import annotations

import re

from tests.support.paths import ROOT

NAMED = re.compile(r"`((?:tests|scripts)/[\w/*.]+\.py)")


def statement() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("\n## Accessibility\n")
    return text[start:text.index("\n## ", start + 1)]


def test_every_test_and_script_the_statement_names_is_there():
    named = NAMED.findall(statement())
    assert len(named) >= 8
    missing = [path for path in named if not list(ROOT.glob(path))]
    assert not missing, f"the accessibility statement names what is not there: {missing}"


def test_the_statement_covers_each_criterion_it_promises():
    table = statement()
    for criterion in ("1.2.1", "1.2.2", "1.2.3", "1.2.5", "1.2.7", "1.2.8", "1.4.3", "1.4.11"):
        assert f"| {criterion} " in table, criterion
