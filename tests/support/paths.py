"""Where the tests find the repository and their data, wherever a test module sits."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the repository: tests/support/ is two below
DATA = ROOT / "tests" / "data"  # reference values and the lint corpus
