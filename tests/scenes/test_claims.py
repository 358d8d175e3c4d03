"""Captions that count, name, rank or point are claims about their pictures (DESIGN, "What a
lecture-grade picture is"): each is filed as data (scenes.claims) from the record its words
and the picture were made from, and checked here against the trace and against what is on
screen when its picture is complete (tests/support/claims.py).

Fast tier: chapter `dot` of a few lint-corpus cases (keys left out of the arrows, of the
table, a query that ranks itself), a real model's overview (chapter `heads`) and the tiny
model's training replay (chapter `learning`). Slow tier: every chapter of every lint-corpus
case (the tiny model's cases play chapter `learning`)."""

from __future__ import annotations

import numpy as np
import pytest
from attention_video.scenes.claims import (
    LABELLED,
    MASKED,
    NOT_DRAWN,
    OTHERS,
    PARTNER,
    RANKING,
    ROW_MARKS,
    SNAPSHOTS,
    TREND,
    Claim,
)
from manim import LEFT, Dot, Line, Rectangle, VGroup

from tests.support.claims import (
    Facts,
    Training,
    check_arithmetic,
    check_case,
    check_claim,
    check_training_claim,
)
from tests.support.lint_corpus import Case, load_cases

CASES = {c.name: c for c in load_cases()}
# A causal model followed at a word with later words: the mask's counts (the corpus follows
# the last word of its causal cases).
CASES["decoder-query-cat"] = Case("decoder-query-cat", "The black cat drank the milk",
                                  {"weights": "decoder", "query": "cat"})
# chapter 4: 6 keys, all drawn; 19 keys, the table cut with gaps, keys without arrows.
# Chapter 9: a real model's overview, its ticks on the followed word's row. Chapter 8: the
# training replay (the partner, its weight rising, the pairs agreeing, what the other keys
# did, the curves' trend and their snapshot dots). (10 keys, 3 without arrows, in Chinese,
# is the slow tier's, with every chapter of every case.)
FAST = (("tiny-default", "dot", 3), pytest.param("chinese-pretrained", "dot", 4, marks=pytest.mark.slow),
        ("pretrained-19-tokens", "dot", 4), ("pretrained-layer-3", "heads", 1),
        ("tiny-default", "learning", 9), ("decoder-query-cat", "softmax", 1))


def problems(name: str, chapters: tuple[str, ...] | None = None) -> tuple[int, list[str]]:
    got = check_case(CASES[name], chapters)
    return sum(len(c.claims) for c in got), [p for c in got for p in c.problems]


@pytest.mark.parametrize(("name", "chapter", "least"), FAST,
                         ids=[f"{n}-{c}" for n, c, _ in (getattr(f, "values", f) for f in FAST)])
@pytest.mark.slow
def test_a_chapter_s_claims_hold_on_screen(name, chapter, least):
    claims, wrong = problems(name, (chapter,))
    assert claims >= least, "the claims the chapter makes were not all filed"
    assert not wrong, "\n".join(wrong)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES))
def test_every_chapter_s_claims_hold_in_every_corpus_case(name):  # (and decoder-query-cat)
    _, wrong = problems(name)
    assert not wrong, "\n".join(wrong)


# ---- the checker catches a false claim ------------------------------------------------------
class _Trace:
    """Just what Facts reads: one query, three keys (scores 3, 2, 1), none masked."""

    class head:  # noqa: N801 - a trace's field
        Q = np.array([[1.0, 0.0]])
        K = np.array([[3.0, 0.0], [2.0, 1.0], [1.0, -1.0]])
        mask = np.ones((1, 3), dtype=bool)

    focus = 0
    n_q = 1
    heads = (head,)


FACTS = Facts.of(_Trace)
WORDS = ["a", "b", "c"]


def test_a_count_that_the_picture_does_not_show_is_caught():
    arrows = {0: Dot(), 1: Dot(), 2: Dot()}
    seen = {id(arrows[0]), id(arrows[1])}  # c's arrow is not on screen
    right = Claim(NOT_DRAWN, (2,), arrows, text="(1 more is not drawn)")
    wrong = Claim(NOT_DRAWN, (1, 2), arrows, text="(2 more are not drawn)")
    assert check_claim(right, seen, FACTS, WORDS) == []
    assert check_claim(wrong, seen, FACTS, WORDS)


def test_a_count_of_masked_words_or_of_rows_left_out_that_is_false_is_caught():
    facts = Facts([0, 1], np.zeros(3), np.ones(3), n_q=3, focus=1)  # c, after b, is masked
    words_masked = "; 1 later word is masked."
    assert check_claim(Claim(MASKED, (2,), text=words_masked), set(), facts, WORDS) == []
    assert check_claim(Claim(MASKED, (1, 2), text="2 later words"), set(), facts, WORDS)
    early = Facts([1, 2], np.zeros(3), np.ones(3), n_q=3, focus=1)  # a is masked, not later
    assert check_claim(Claim(MASKED, (0,), text=words_masked), set(), early, WORDS)
    rows = {0: Dot()}  # a table of one row: "… 2 more words", masked c among them
    every = {"among": "every"}
    assert check_claim(Claim(NOT_DRAWN, (1, 2), rows, values=every, text="… 2 more words"),
                       {id(rows[0])}, facts, WORDS) == []
    assert check_claim(Claim(NOT_DRAWN, (1, 2), rows, text="… 2 more words"),
                       {id(rows[0])}, facts, WORDS)  # among the allowed keys, 1 is left out


def test_heads_said_to_be_labelled_that_are_not_are_caught():
    facts = Facts([0], np.zeros(1), np.ones(1), n_q=1, n_heads=3)
    labels = {0: Dot(), 1: Dot(), 2: Dot()}
    seen = {id(m) for m in labels.values()}
    text = "head 1 → a (0.5), and 1 more, each labelled."
    assert check_claim(Claim(LABELLED, (2,), labels, text=text), seen, facts, WORDS) == []
    assert check_claim(Claim(LABELLED, (2,), labels, text=text), seen - {id(labels[2])},
                       facts, WORDS)
    assert check_claim(Claim(LABELLED, (2,), {0: labels[0], 2: labels[2]}, text=text), seen,
                       facts, WORDS)  # one head has no label at all


def test_a_ranking_that_drops_a_key_silently_is_caught():
    rows = {j: VGroup(Dot()).move_to([0, -j, 0]) for j in range(3)}
    seen = {id(r[0]) for r in rows.values()}
    assert check_claim(Claim(RANKING, (0, 1, 2), rows), seen, FACTS, WORDS) == []
    two = {0: rows[0], 2: rows[2]}  # b left out, no "⋮ 1 more" where it would stand
    assert check_claim(Claim(RANKING, (0, 2), two), seen, FACTS, WORDS)
    gap = Dot().move_to([0, -1, 0])
    assert check_claim(Claim(RANKING, (0, 2), two, ((gap, 1),)), seen | {id(gap)},
                       FACTS, WORDS) == []
    swapped = {0: rows[1], 1: rows[0], 2: rows[2]}
    assert check_claim(Claim(RANKING, (0, 1, 2), swapped), seen, FACTS, WORDS)


def test_a_tick_beside_another_row_is_caught():
    frame = Rectangle(width=1.0, height=3.0)  # three query rows, each 1 high
    left = frame.get_left()[0]
    right_tick = Line([left - 0.1, 1.0, 0], [left - 0.01, 1.0, 0])  # level with row 0
    wrong_tick = Line([left - 0.1, 0.0, 0], [left - 0.01, 0.0, 0])  # level with row 1
    facts = Facts([0, 1, 2], np.zeros(3), np.ones(3), n_q=3)
    for tick, holds in ((right_tick, True), (wrong_tick, False)):
        claim = Claim(ROW_MARKS, (0,), {0: tick}, frames={0: frame})
        assert (check_claim(claim, {id(tick), id(frame)}, facts, WORDS) == []) is holds


def test_a_product_written_with_the_wrong_sign_is_caught():
    """5.49 × 4.49 × 0.980 = 24.156…: it gives 24.16, and 24.13 is only ≈ (the cell, made from
    the unrounded numbers)."""
    assert check_arithmetic("5.49 × 4.49 × 0.980 gives 24.16, the same value as the cell.") == []
    assert check_arithmetic("5.49 × 4.49 × 0.980 ≈ 24.13, the value in the cell") == []
    assert check_arithmetic("5.49 × 4.49 × 0.980 gives 24.13, the same value as the cell.")
    assert check_arithmetic("the highest score, 24.13 = 5.49 × 4.40.")
    assert check_arithmetic("the highest score, 24.13 ≈ 5.49 × 4.40.") == []
    assert check_arithmetic("所以得分最高，73.00 ≈ 5.79 × 12.60。") == []


# ---- the training replay's claims (chapter learning) -----------------------------------------
def _training() -> Training:
    """Two snapshots, three keys; the query (1, 0) and key 0, the partner, is its own word."""
    q = np.array([[1.0, 0.0], [1.0, 0.0]])
    keys = np.array([[[-1.0, 1.0], [1.0, 1.0], [0.0, 1.0]],  # step 0
                     [[3.0, 0.5], [0.5, 2.0], [0.0, 2.0]]])  # step 10: key 1 turned away, grew
    weights = np.array([[0.3, 0.4, 0.3], [0.8, 0.1, 0.1]])
    return Training(weights, q, keys, 0, np.array([0, 10]), np.array([0, 5, 10]),
                    np.array([1.0, 0.5, 0.2]), np.array([0.4, 0.6, 0.9]), None)


def test_a_false_claim_about_training_is_caught():
    t, words = _training(), ["a", "b", "c"]
    arrows = {1: Dot(), 2: Dot()}
    seen = {id(a) for a in arrows.values()}
    text = "Of the other 2 keys drawn, 1 turned away and none got shorter"
    said = {"away": 1, "shorter": 0, "furthest": True}
    assert check_training_claim(Claim(OTHERS, (1, 2), arrows, values=said, text=text),
                                seen, t, words) == []
    for wrong in ({**said, "away": 2}, {**said, "shorter": 1}, {**said, "furthest": False}):
        assert check_training_claim(Claim(OTHERS, (1, 2), arrows, values=wrong, text=text),
                                    seen, t, words)
    assert check_training_claim(Claim(OTHERS, (1, 2), arrows, values=said, text=text),
                                {id(arrows[1])}, t, words)  # an arrow it counts is not drawn
    assert check_training_claim(Claim(PARTNER, (0,)), set(), t, words) == []
    assert check_training_claim(Claim(PARTNER, (1,)), set(), t, words)
    for name, up in (("weight", 1), ("score", 1), ("loss", -1), ("accuracy", 1)):
        assert check_training_claim(Claim(TREND, (0,), values={name: up}), set(), t, words) == []
        assert check_training_claim(Claim(TREND, (0,), values={name: -up}), set(), t, words)


def test_a_snapshot_dot_at_another_step_is_caught():
    t = _training()
    box = Rectangle(width=4.0, height=1.0)  # steps 0 to 10 across its width
    left = box.get_left()[0]
    dots = {0: Dot([left, 0, 0]), 1: Dot([left + 4.0, 0, 0])}
    seen = {id(d) for d in dots.values()}
    claim = Claim(SNAPSHOTS, (0, 1), dots, frames={0: box, 1: box})
    assert check_training_claim(claim, seen, t, []) == []
    dots[1].shift(0.4 * LEFT)  # drawn at step 9
    assert check_training_claim(claim, seen, t, [])
