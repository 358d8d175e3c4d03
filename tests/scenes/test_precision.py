"""One precision per quantity (scenes.precision, issue 39): a quantity reads the same in every
chapter and caption of a video, so a number met in chapter 5 is met again unchanged in
chapters 6, 7, 9 and 10. Every number a chapter draws or says is recorded (scenes.widgets
Recorder); here the recorded texts of every chapter of the default video are grouped by the
quantity they show and each group must use one number of decimals."""

from __future__ import annotations

from collections import defaultdict

import pytest
from attention_video.pipeline.commands.app import make_trace
from attention_video.pipeline.run.render import plan_chapters
from attention_video.scenes.text import decimals_of

from tests.support.claims import build_chapter
from tests.support.lint_corpus import load_cases

CASES = {c.name: c for c in load_cases()}
# The recorded keys that show one quantity: the followed word's softmax weights, wherever
# they are drawn (the softmax table, the weight column, the bars, every head's label, the
# training replay's rows, their sums).
SAME_QUANTITY = {
    "weights": ("weights", "weight_sum", "weights_rest", "head_weights", "history_weights"),
}


def precisions(name: str) -> dict[str, dict[int, set[str]]]:
    """Per recorded key: the numbers of decimals its texts use, with the chapters using each."""
    settings = CASES[name].settings
    trace = make_trace(settings, lambda s: None)
    plan = tuple(plan_chapters(settings, trace))
    seen: dict[str, dict[int, set[str]]] = defaultdict(lambda: defaultdict(set))
    for slug in plan:
        scene = build_chapter(slug, trace, settings, plan)
        for key, _, text in scene.drawn.entries:
            if any(ch.isdigit() for ch in text):
                seen[key][decimals_of(text)].add(slug)
    return seen


def mixed(seen: dict[str, dict[int, set[str]]]) -> list[str]:
    """The quantities drawn at more than one precision, with where."""
    groups = {key: (key,) for key in seen}
    for name, keys in SAME_QUANTITY.items():
        for key in keys:
            groups.pop(key, None)
        groups[name] = keys
    wrong = []
    for name, keys in groups.items():
        used: dict[int, set[str]] = defaultdict(set)
        for key in keys:
            for decimals, slugs in seen.get(key, {}).items():
                used[decimals] |= {f"{slug}:{key}" for slug in slugs}
        if len(used) > 1:
            wrong.append(f"{name}: " + "; ".join(f"{d} decimals in {sorted(s)}"
                                                for d, s in sorted(used.items())))
    return wrong


@pytest.mark.parametrize("name", ["tiny-default", pytest.param("decoder", marks=pytest.mark.slow)])
def test_every_quantity_has_one_precision_in_every_chapter(name):
    seen = precisions(name)
    assert {"weights", "exp_shifted", "scores"} <= set(seen)
    assert mixed(seen) == []


def test_a_quantity_drawn_at_two_precisions_is_caught():
    seen = {"weights": {2: {"softmax"}}, "history_weights": {3: {"learning"}},
            "scores": {2: {"factor", "dot"}}}
    assert mixed(seen) == ["weights: 2 decimals in ['softmax:weights']; "
                           "3 decimals in ['learning:history_weights']"]
    seen["history_weights"] = {2: {"learning"}}
    assert mixed(seen) == []
