"""How many examples a Hypothesis test tries: the number it names in the slow tier and in
CI, a quarter of it (five at least) in the fast tier, where a few tests that build a trace,
a label or a model file per example took most of its Hypothesis time.

    @settings(max_examples=examples(40), deadline=None)

tests/conftest.py sets `fast_tier` before the tests are collected: true when the `-m`
expression deselects the slow tests (README's fast tier, `-m "not slow"`)."""

from __future__ import annotations

FAST_SHARE = 4  # the fast tier tries 1/FAST_SHARE of a test's examples
FAST_FLOOR = 5

fast_tier = False


def examples(full: int) -> int:
    """`full` examples, or a quarter of them (at least FAST_FLOOR) in the fast tier."""
    return max(FAST_FLOOR, full // FAST_SHARE) if fast_tier else full
