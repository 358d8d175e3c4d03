"""attncore.geometry: lengths, angles and shadows of a query against its keys, checked
against the naive loops of tests/support/naive.py, and the identity the chapters draw:
q·k = |q| · |k| · cos θ = |q| · shadow."""

from __future__ import annotations

import math

import numpy as np
import pytest
from attention_video.attncore import Settings, build_trace
from attention_video.attncore.geometry import angles, norms, plane_coordinates, query_geometry

from tests.support import naive


@pytest.mark.parametrize("d_k", [2, 3, 4, 32, 64])
def test_lengths_angles_and_shadows_match_the_naive_formulas(d_k):
    rng = np.random.default_rng(d_k)
    q, K = rng.normal(size=d_k), rng.normal(size=(7, d_k))
    g = query_geometry(q, K)
    assert g.q_norm == pytest.approx(naive.norm(list(q)), rel=1e-12)
    for j, k in enumerate(K):
        assert g.k_norms[j] == pytest.approx(naive.norm(list(k)), rel=1e-12)
        assert g.angles[j] == pytest.approx(naive.angle_degrees(list(q), list(k)), abs=1e-7)
        assert g.shadows[j] == pytest.approx(naive.shadow(list(k), list(q)), abs=1e-12)
        assert g.scores[j] == pytest.approx(naive.dot(list(q), list(k)), abs=1e-12)


def test_the_score_is_q_times_k_times_cos_theta_and_q_times_the_shadow():
    rng = np.random.default_rng(1)
    q, K = rng.normal(size=5), rng.normal(size=(9, 5))
    g = query_geometry(q, K)
    np.testing.assert_allclose(g.q_norm * g.k_norms * g.cosines, K @ q, atol=1e-12)
    np.testing.assert_allclose(g.q_norm * g.shadows, K @ q, atol=1e-12)
    # the tip is at its true distance: shadow² + height² = |k|²
    np.testing.assert_allclose(np.hypot(g.shadows, g.heights), g.k_norms, atol=1e-12)
    assert (g.heights >= 0).all() and ((0 <= g.angles) & (g.angles <= 180)).all()


def test_angles_at_the_ends_are_exact():
    q = np.array([1.0, 2.0, -2.0])
    K = np.array([2 * q, -3 * q, [2.0, -1.0, 0.0]])  # the same way, opposite, at a right angle
    np.testing.assert_allclose(angles(q, K), [0.0, 180.0, 90.0], atol=1e-12)
    np.testing.assert_allclose(plane_coordinates(q, K)[:, 1], [0, 0, math.sqrt(5)], atol=1e-12)


def test_a_zero_vector_has_no_angle():
    q = np.zeros(3)
    g = query_geometry(q, np.array([[1.0, 0, 0], [0, 0, 0]]))
    assert np.isnan(g.angles).all() and (g.shadows == 0).all() and g.q_norm == 0
    g = query_geometry(np.array([1.0, 0, 0]), np.array([[0.0, 0, 0], [0, 1, 0]]))
    assert np.isnan(g.angles[0]) and g.angles[1] == pytest.approx(90)
    assert g.least_aligned() == 1  # a zero key has no angle to compare
    assert norms(np.zeros((2, 3))).tolist() == [0, 0]


def test_ranking_by_score_and_the_least_aligned_key_follow_the_mask():
    q = np.array([1.0, 0.0])
    K = np.array([[2.0, 0.1], [0.5, 0.0], [-1.0, 0.2], [-3.0, 0.0]])
    g = query_geometry(q, K, allowed=np.array([True, True, True, False]))
    assert g.by_score() == (0, 1, 2)  # the masked key is left out
    assert g.least_aligned() == 2


def test_the_trace_keeps_the_readings_for_its_followed_word_and_every_snapshot():
    t = build_trace(Settings())
    g = t.head.geometry(t.focus)
    np.testing.assert_allclose(g.scores, t.head.scores[t.focus], atol=1e-12)
    assert g.by_score()[0] == int(np.argmax(t.head.scores[t.focus]))
    h = t.history
    assert h.keys.shape == (len(h.steps), t.n_k, t.d_k)
    np.testing.assert_allclose(h.keys[:, h.partner], h.k)  # the partner's row is the one kept
    np.testing.assert_allclose(h.keys[-1], t.head.K)  # the final snapshot is the model shown
    for s in range(len(h.steps)):
        assert h.geometry(s).scores[h.partner] == pytest.approx(h.scores[s], abs=1e-9)


def test_the_translation_history_keeps_every_source_key():
    t = build_trace(Settings(sentence="The ball is blue", translate=True))
    h = t.history
    assert h.keys.shape == (len(h.steps), t.n_k, t.d_k)
    np.testing.assert_allclose(h.keys[-1], t.head.K, atol=1e-12)
    np.testing.assert_allclose(h.keys[:, h.partner], h.k)


def test_projection_terms_sum_to_the_entry():
    t = build_trace(Settings(weights="random"))
    for name, X in (("Q", t.X_q), ("K", t.X), ("V", t.X)):
        terms = t.projection_terms(name, t.focus, 1)
        W = getattr(t.head, f"W_{name}")
        assert terms.tolist() == pytest.approx([X[t.focus][m] * W[m][1] for m in range(len(W))])
        assert terms.sum() + getattr(t.head, f"b_{name}")[1] == pytest.approx(
            getattr(t.head, name)[t.focus, 1])
