"""attncore.rotary (RoPE's angles, the turn, q·k at other positions) and attncore.sinks,
checked against a naive implementation: plain loops with `math`, pairs as complex numbers."""

from __future__ import annotations

import cmath
import math

import numpy as np
import pytest
from attention_video.attncore.rotary import (
    SHIFT_FORWARD,
    frequencies,
    moved_positions,
    rotary_angles,
    rotary_reading,
    rotate,
    rotated_dot,
    turn_degrees,
)
from attention_video.attncore.sinks import SINK_SHARE, attention_sink

from tests.support.decoder_traces import decoder_trace, settings


def naive_turn(x: list[float], p: int, base: float) -> list[float]:
    """Pair m as x₂ₘ + i·x₂ₘ₊₁, times e^{i·p·base^(−2m/d)}, one pair at a time."""
    d = len(x)
    out = []
    for m in range(d // 2):
        z = complex(x[2 * m], x[2 * m + 1]) * cmath.exp(1j * p * base ** (-2 * m / d))
        out += [z.real, z.imag]
    return out


def naive_dot(a: list[float], b: list[float]) -> float:
    return math.fsum(x * y for x, y in zip(a, b))


def test_frequencies_and_angles_are_the_formula():
    base, d = 10000.0, 8
    A = rotary_angles(np.arange(5), d, base)
    assert A.shape == (5, 4)
    for p in range(5):
        for m in range(4):
            assert A[p, m] == pytest.approx(p * base ** (-2 * m / d), rel=1e-12)
    assert frequencies(d, base)[0] == 1.0  # pair 0 turns one radian per position


def test_rotate_equals_complex_multiplication():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(6, 10))
    got = rotate(X, rotary_angles(np.arange(6), 10, 500.0))
    for p in range(6):
        assert np.allclose(got[p], naive_turn(list(X[p]), p, 500.0), atol=1e-12)
    assert np.allclose(np.linalg.norm(got, axis=1), np.linalg.norm(X, axis=1))  # lengths kept


@pytest.mark.parametrize("base", [10000.0, 100000.0, 7.0])
def test_the_score_depends_on_the_distance_only(base):
    rng = np.random.default_rng(5)
    q, k = rng.normal(size=8), rng.normal(size=8)
    for p_q, p_k in [(5, 2), (3, 0), (40, 37), (0, -3)]:
        want = naive_dot(naive_turn(list(q), p_q, base), naive_turn(list(k), p_k, base))
        assert rotated_dot(q, k, p_q, p_k, base) == pytest.approx(want, abs=1e-10)
        assert rotated_dot(q, k, p_q, p_k, base) == pytest.approx(
            rotated_dot(q, k, 3, 3 - (p_q - p_k), base), abs=1e-10)
    # and it does depend on the distance: one step further apart scores differently
    assert abs(rotated_dot(q, k, 6, 2, base) - rotated_dot(q, k, 5, 2, base)) > 1e-6


def test_turn_degrees_wraps_to_one_turn():
    assert turn_degrees(5.0) == pytest.approx(math.degrees(5.0))
    assert turn_degrees(7.0) == pytest.approx(math.degrees(7.0) - 360.0)
    assert 0.0 <= turn_degrees(-1.0) < 360.0


def test_moved_positions_keep_the_distance():
    assert moved_positions(5, 2) == (3, 0)
    assert moved_positions(4, 0) == (4 + SHIFT_FORWARD, SHIFT_FORWARD)


def test_the_test_decoder_trace_is_consistent():
    """The helper's rows after the turn are its rows before, turned (naively here)."""
    t = decoder_trace()
    n = t.n_q
    for h in range(9):
        for p in range(n):
            assert np.allclose(t.heads[h].Q[p], naive_turn(list(t.rope.Q_before[h, p]), p,
                                                           t.rope.base))
            assert np.allclose(t.heads[h].K[p], naive_turn(list(t.rope.K_before[h // 3, p]), p,
                                                           t.rope.base))
    assert t.kv_heads == (0, 0, 0, 1, 1, 1, 2, 2, 2)
    assert t.model_weights.shape == (30, 9, n, n)


def test_the_reading_is_the_traces_cell_and_the_naive_turn():
    t = decoder_trace()
    i, j = t.focus, t.partner
    r = rotary_reading(t, i, j)
    q, k = list(t.rope.Q_before[t.head_index, i]), list(t.rope.K_before[r.kv_head, j])
    assert r.here.dot == pytest.approx(t.head.scores[i, j], abs=1e-12)
    for place in (r.here, r.moved, r.further):
        want = naive_dot(naive_turn(q, place.p_q, t.rope.base), naive_turn(k, place.p_k, t.rope.base))
        assert place.dot == pytest.approx(want, abs=1e-10)
    assert r.moved.distance == r.here.distance and r.further.distance == r.here.distance + 1
    assert r.moved.dot == pytest.approx(r.here.dot, abs=1e-9)
    assert r.query.radians == pytest.approx(i) and r.key.radians == pytest.approx(j)
    assert np.allclose(r.query.after, naive_turn(q[:2], i, 1.0))
    assert r.unturned == pytest.approx(naive_dot(q, k))


def test_a_sink_is_found_only_when_the_weights_say_so():
    plain = decoder_trace()
    assert plain.head.weights[plain.focus, 0] <= SINK_SHARE and attention_sink(plain) is None
    sunk = decoder_trace(sink=True)
    sink = attention_sink(sunk)
    assert sink is not None and sink.share == sunk.head.weights[sunk.focus, 0] > SINK_SHARE
    first = decoder_trace(settings(query_index=0), sink=True)  # token 0 sees only itself
    assert attention_sink(first) is None
