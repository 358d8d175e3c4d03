"""Resolve every number a scene drew back to the trace, independently of the scenes.

Each key names a trace quantity (the softmax parts included: the core computes them and
test_attention checks them against a naive softmax); the few derived keys (a pair's
product, a weighted V cell, a row's sum) are recomputed here with plain numpy, not with
the scenes' code.
"""

from __future__ import annotations

import math

import numpy as np
from attention_video.attncore.trace import AttentionTrace
from attention_video.scenes.text import decimals_of, parse_number


def geometry(q: np.ndarray, k: np.ndarray | None, name: str) -> float:
    """|q|, |k|, θ (degrees, by arccos), cos θ or k's shadow on q's line, by the textbook
    formulas (attncore.geometry works in the pair's plane, with atan2)."""
    nq = math.sqrt(float(np.sum(q * q)))
    if name == "q_norm":
        return nq
    nk = math.sqrt(float(np.sum(k * k)))
    dot = float(np.sum(q * k))
    if name == "k_norm":
        return nk
    if name == "shadow":
        return dot / nq
    cos = max(-1.0, min(1.0, dot / (nq * nk)))
    return cos if name == "cos" else math.degrees(math.acos(cos))


def turned(x: np.ndarray, p: int, base: float) -> np.ndarray:
    """RoPE by complex numbers: pair m (x₂ₘ + i·x₂ₘ₊₁) times e^{i·p·base^(−2m/d)}."""
    d = len(x)
    z = (x[0::2] + 1j * x[1::2]) * np.exp(1j * p * base ** (-np.arange(0, d, 2) / d))
    return np.stack([z.real, z.imag], axis=1).reshape(-1)


def rotary(t: AttentionTrace, key: str, idx: tuple) -> float:
    """The rotary quantities chapter 4 draws: the rows before the turn, the turn of pair m
    at position p (degrees, 0-360) and q·k of the followed head's q_i and k_j placed at
    positions (p_q, p_k)."""
    rope = t.rope
    if key in ("rope_Q_before", "rope_K_before"):
        return float(getattr(rope, key.removeprefix("rope_"))[idx])
    if key == "rope_turn":
        p, m = idx
        return math.degrees(p * rope.base ** (-2 * m / t.d_k)) % 360.0
    if key == "rope_dot":
        i, j, p_q, p_k = idx
        h = t.head_index
        kv = t.kv_heads[h] if t.kv_heads is not None else h
        q, k = rope.Q_before[h, i], rope.K_before[kv, j]
        return float(np.sum(turned(q, p_q, rope.base) * turned(k, p_k, rope.base)))
    raise KeyError(f"unknown drawn key {key!r}")


GEOMETRY = ("q_norm", "k_norm", "angle", "cos", "shadow")  # (i,) for q_norm, else (i, j)


def resolve(t: AttentionTrace, key: str, idx: tuple) -> float:
    """The trace value a drawn number (key, index) stands for."""
    h = t.head
    if key in ("E", "P", "X", "E_q", "P_q", "X_q", "W_O", "output"):
        return float(getattr(t, key)[idx])
    if key in ("W_Q", "W_K", "W_V", "b_Q", "b_K", "b_V", "Q", "K", "V", "scores", "scaled",
               "row_max", "exp_shifted", "exp_sum", "weights", "Z"):
        return float(getattr(h, key)[idx])
    if key in ("Q_before", "K_before"):  # RoPE: the followed head's rows before their turn
        rope = t.rope
        kv = t.kv_heads[t.head_index] if t.kv_heads is not None else t.head_index
        rows = rope.Q_before[t.head_index] if key == "Q_before" else rope.K_before[kv]
        return float(rows[idx])
    if key in ("head_weights", "head_Z"):  # (head, i, j): any head of the layer, not only t.head
        k, i, j = idx
        return float(getattr(t.heads[k], key.removeprefix("head_"))[i, j])
    if key in GEOMETRY:
        return geometry(h.Q[idx[0]], None if key == "q_norm" else h.K[idx[1]], key)
    if key.startswith("xw_product_"):  # (i, m, c): X[i, m] · W[m, c] of Q, K or V
        name = key.removeprefix("xw_product_")
        i, m, c = idx
        return float((t.X_q if name == "Q" else t.X)[i, m] * getattr(h, f"W_{name}")[m, c])
    if key == "qk_product":
        i, j, m = idx
        return float(h.Q[i, m] * h.K[j, m])
    if key == "sqrt_dk":
        return math.sqrt(h.Q.shape[1])
    if key == "weight_sum":
        return float(np.sum(h.weights[idx[0]]))
    if key == "weighted_V":
        i, j, m = idx
        return float(h.weights[i, j] * h.V[j, m])
    if key.startswith("history_") or key.startswith("curve_"):
        hist = t.history
        name = key.removeprefix("history_")
        if name == "products":  # recomputed from the replayed Q and K rows
            s, m = idx
            return float(hist.q[s, m] * hist.k[s, m])
        if name == "scores":
            return float(np.sum(hist.q[idx[0]] * hist.k[idx[0]]))
        if name == "key_scores":  # (s, j): any key's score, from its replayed K row
            s, j = idx
            return float(np.sum(hist.q[s] * hist.keys[s, j]))
        if name in GEOMETRY:  # (s,) for q_norm, else (s, j)
            s = idx[0]
            return geometry(hist.q[s], None if name == "q_norm" else hist.keys[s, idx[1]], name)
        return float(getattr(hist, name)[idx])
    if key.startswith("rope_"):
        return rotary(t, key, idx)
    if key == "weights_rest":
        return float("nan")  # checked separately: depends on which bars were shown
    raise KeyError(f"unknown drawn key {key!r}")


def check_drawn(t: AttentionTrace, entries: list[tuple[str, tuple, str]]) -> list[str]:
    """Every mismatch between a drawn number and the trace at its displayed precision."""
    bad = []
    for key, idx, text in entries:
        value = resolve(t, key, idx)
        if math.isnan(value):
            continue
        shown = parse_number(text)
        tol = 0.5 * 10 ** -decimals_of(text) + 1e-9 + 1e-12 * abs(value)
        if abs(shown - value) > tol:
            bad.append(f"{key}{list(idx)} drawn {text!r}, trace {value!r}")
    return bad
