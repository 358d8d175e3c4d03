"""The questions a viewer answers before a reveal (attncore.questions): every answer and
every number of its reason recomputed here independently (plain Python loops over the
trace's Q and K rows, tests.support.naive; the rotary turn with complex numbers), and no
question asked after a chapter has drawn its answer."""

from __future__ import annotations

import cmath

import pytest
from attention_video.attncore import Settings, chapters
from attention_video.attncore import questions as qs
from attention_video.attncore.trace import AttentionTrace

from tests.support import naive
from tests.support.builds import trace_of

pytestmark = pytest.mark.xdist_group("decoder")  # one worker loads the decoder once

DEFAULT = "The black cat drank the milk"
CASES = {
    "default": Settings(sentence=DEFAULT),
    "decoder": Settings(sentence=DEFAULT, weights="decoder"),
    "chinese": Settings(sentence="小狗在公园里跑", weights="multilingual"),
    "time flies": Settings(sentence="Time flies like an arrow and fruit flies like a banana",
                           weights="pretrained", head="auto"),
    "random": Settings(sentence=DEFAULT, weights="random"),
}


def asked(trace: AttentionTrace) -> dict[str, qs.Question]:
    made = qs.questions(trace)
    assert len({q.kind for q in made}) == len(made), "one question of each kind at most"
    return {q.kind: q for q in made}


def words(trace: AttentionTrace, i: int) -> list[int]:
    """The keys a word question may offer, worked out again: allowed, a word, not itself."""
    return [j for j in range(trace.n_k) if trace.head.mask[i][j]
            and trace.key_tokens[j].kind != "special" and (trace.cross or j != i)]


def score(trace: AttentionTrace, i: int, j: int) -> float:
    return naive.dot(list(trace.head.Q[i]), list(trace.head.K[j]))


@pytest.fixture(scope="module", params=list(CASES))
def trace(request) -> AttentionTrace:
    return trace_of(CASES[request.param])


def test_every_option_list_holds_its_answer_once_and_offers_only_words(trace):
    for q in qs.questions(trace):
        assert 0 <= q.answer < len(q.options) <= qs.MAX_OPTIONS
        assert len(set(q.options)) == len(q.options)
        tokens = [o.token for o in q.options if o.token is not None]
        assert all(j in words(trace, q.query) for j in tokens)
        if tokens:
            assert tokens == sorted(tokens), "word options stand in sentence order"


def test_top_key_is_the_highest_dot_product_among_the_offered_words(trace):
    q = asked(trace).get(qs.TOP_KEY)
    keys = words(trace, trace.focus)
    if len(keys) < 2:
        assert q is None
        return
    best = max(keys, key=lambda j: (score(trace, trace.focus, j), -j))
    assert q.options[q.answer].token == best == q.key
    assert q.fact("score") == pytest.approx(score(trace, trace.focus, best), abs=1e-9)
    runner = int(q.fact("runner_up_key"))
    assert runner != best and score(trace, trace.focus, runner) == pytest.approx(
        max(score(trace, trace.focus, j) for j in keys if j != best), abs=1e-9)


def test_sign_question_is_right_and_fair_to_a_viewer_counting_signs(trace):
    q = asked(trace).get(qs.SIGN)
    if q is None:
        return
    qrow, krow = list(trace.head.Q[q.query]), list(trace.head.K[q.key])
    same = sum(1 for a, b in zip(qrow, krow) if a * b > 0)
    opposite = sum(1 for a, b in zip(qrow, krow) if a * b < 0)
    s = naive.dot(qrow, krow)
    assert q.options[q.answer].label == (qs.POSITIVE if s > 0 else qs.NEGATIVE)
    assert (q.fact("same"), q.fact("opposite")) == (same, opposite)
    assert q.fact("plus") == pytest.approx(sum(a * b for a, b in zip(qrow, krow) if a * b > 0))
    assert q.fact("minus") == pytest.approx(sum(a * b for a, b in zip(qrow, krow) if a * b < 0))
    assert (same > opposite) == (s > 0), "counting agreeing signs gives the right answer"
    top = asked(trace).get(qs.TOP_KEY)
    assert top is None or (q.query, q.key) != (top.query, top.key)


def test_closest_angle_is_the_smallest_angle_between_query_and_key(trace):
    q = asked(trace).get(qs.CLOSEST_ANGLE)
    if q is None:
        return
    query = list(trace.head.Q[trace.focus])
    theta = {j: naive.angle_degrees(query, list(trace.head.K[j]))
             for j in words(trace, trace.focus)}
    best = min(theta, key=lambda j: (theta[j], j))
    assert q.options[q.answer].token == best
    assert q.fact("angle") == pytest.approx(theta[best], abs=1e-6)


def test_top_weight_band_holds_the_softmax_weight_of_the_top_key(trace):
    q = asked(trace).get(qs.TOP_WEIGHT)
    assert q is not None  # every case here uses softmax
    i = trace.focus
    scaled = naive.scale([[score(trace, i, j) for j in range(trace.n_k)]], trace.d_k)
    row = naive.softmax(scaled, [list(trace.head.mask[i])])[0]
    top = max(row)
    band = q.options[q.answer]
    assert band.low <= top < band.high or (band.high == 1.0 and top <= 1.0)
    assert q.fact("weight") == pytest.approx(top, abs=1e-9)


def turned_score(q: list[float], k: list[float], p_q: int, p_k: int, base: float) -> float:
    """q at place p_q and k at place p_k, each pair turned as a complex number."""
    total = 0.0
    half = len(q) // 2
    for m in range(half):
        freq = base ** (-2 * m / len(q))
        a = complex(q[2 * m], q[2 * m + 1]) * cmath.exp(1j * p_q * freq)
        b = complex(k[2 * m], k[2 * m + 1]) * cmath.exp(1j * p_k * freq)
        total += (a * b.conjugate()).real
    return total


def test_rotary_questions_only_for_rotary_models_and_answered_by_the_turn(trace):
    found = asked(trace)
    if trace.rope is None:
        assert qs.ROPE_SHIFT not in found and qs.ROPE_DISTANCE not in found
        return
    h = trace.head_index
    kv = trace.kv_heads[h] if trace.kv_heads is not None else h
    i, j = trace.focus, trace.partner
    q, k = list(trace.rope.Q_before[h, i]), list(trace.rope.K_before[kv, j])
    here = turned_score(q, k, i, j, trace.rope.base)
    assert here == pytest.approx(score(trace, i, j), rel=1e-6), "the trace's scores are turned"
    shift = found[qs.ROPE_SHIFT]
    moved = turned_score(q, k, i + qs.SHIFT, j + qs.SHIFT, trace.rope.base)
    assert shift.options[shift.answer].label == qs.SAME and moved == pytest.approx(here)
    assert shift.fact("moved") == pytest.approx(moved, rel=1e-9)
    visible = [s for s in qs.SHIFTS
               if round(turned_score(q, k, i + s, j, trace.rope.base), 2) != round(here, 2)]
    distance = found.get(qs.ROPE_DISTANCE)
    if not visible:
        assert distance is None, "a change nobody can see is not asked about"
        return
    further = turned_score(q, k, i + visible[0], j, trace.rope.base)
    assert distance.options[distance.answer].label == qs.DIFFERENT
    assert distance.fact("shift") == visible[0]
    assert distance.fact("further") == pytest.approx(further, rel=1e-9)


def test_step_zero_asks_the_partners_weight_before_training():
    trace = trace_of(CASES["default"])
    assert trace.can.trained_here, "the default sentence is told by the tiny trained model"
    q = asked(trace)[qs.STEP_ZERO]
    h = trace.history
    scaled = naive.scale([[naive.dot(list(h.q[0]), list(key)) for key in h.keys[0]]], trace.d_k)
    start = naive.softmax(scaled)[0][h.partner]
    band = q.options[q.answer]
    assert band.low <= start < band.high
    assert q.fact("weight") == pytest.approx(start, abs=1e-6)
    assert q.fact("final") > q.fact("weight"), "training moved the weight to the partner"
    assert qs.STEP_ZERO not in asked(trace_of(CASES["chinese"])), "no training to replay"


def test_no_question_is_asked_after_a_chapter_has_drawn_its_answer(trace):
    """A question is asked as the chapter named `before` opens: no chapter playing earlier
    may draw what it reveals (the chapter rows' `shows`; the angles are drawn by `dot`
    alone, the training by `learning` alone)."""
    drawn_by = {"angles": ("dot",), "history": ("learning",)}
    for q in qs.questions(trace):
        assert q.before in chapters.SLUGS
        revealing = drawn_by.get(q.reveals) or tuple(
            c.slug for c in chapters.CHAPTERS if q.reveals in c.shows)
        earlier = chapters.SLUGS[:chapters.SLUGS.index(q.before)]
        assert not set(revealing) & set(earlier), (q.kind, q.before, revealing)
        if q.reveals:
            assert q.before in revealing


@pytest.mark.slow
def test_over_the_lint_corpus_every_answer_holds_and_no_question_follows_its_reveal():
    """Every case of the lint corpus (Latin, CJK, right-to-left, long, every model): each
    kind's own independent check above, and the chapter order."""
    from tests.support.lint_corpus import load_cases

    asked = 0
    for case in load_cases():
        trace = trace_of(case.settings)
        asked += len(qs.questions(trace))
        for check in (test_every_option_list_holds_its_answer_once_and_offers_only_words,
                      test_top_key_is_the_highest_dot_product_among_the_offered_words,
                      test_sign_question_is_right_and_fair_to_a_viewer_counting_signs,
                      test_closest_angle_is_the_smallest_angle_between_query_and_key,
                      test_rotary_questions_only_for_rotary_models_and_answered_by_the_turn,
                      test_no_question_is_asked_after_a_chapter_has_drawn_its_answer):
            check(trace)
        if trace.normalized:
            test_top_weight_band_holds_the_softmax_weight_of_the_top_key(trace)
    assert asked >= 3 * len(load_cases()), asked  # the checks above ran on real questions
