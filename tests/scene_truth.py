"""Resolve every number a scene drew back to the trace, independently of the scenes.

Each key names a trace quantity; derived keys are recomputed here from the trace's own
arrays with plain numpy (not with the scenes' code).
"""

from __future__ import annotations

import math

import numpy as np

from attncore.trace import AttentionTrace


def _row_max(t: AttentionTrace, i: int) -> float:
    h = t.head
    return float(np.max(h.scaled[i][h.mask[i]]))


def _exp_shifted(t: AttentionTrace, i: int, j: int) -> float:
    h = t.head
    return math.exp(h.scaled[i, j] - _row_max(t, i)) if h.mask[i, j] else 0.0


def resolve(t: AttentionTrace, key: str, idx: tuple) -> float:
    """The trace value a drawn number (key, index) stands for."""
    h = t.head
    if key in ("E", "P", "X", "E_q", "P_q", "X_q", "output"):
        return float(getattr(t, key)[idx])
    if key in ("W_Q", "W_K", "W_V", "b_Q", "b_K", "b_V", "Q", "K", "V", "scores", "scaled",
               "weights", "Z"):
        return float(getattr(h, key)[idx])
    if key == "qk_product":
        i, j, m = idx
        return float(h.Q[i, m] * h.K[j, m])
    if key == "sqrt_dk":
        return math.sqrt(h.Q.shape[1])
    if key == "row_max":
        return _row_max(t, idx[0])
    if key == "exp_shifted":
        return _exp_shifted(t, *idx)
    if key == "exp_sum":
        return sum(_exp_shifted(t, idx[0], j) for j in range(t.n_k))
    if key == "weight_sum":
        return float(np.sum(h.weights[idx[0]]))
    if key == "weighted_V":
        i, j, m = idx
        return float(h.weights[i, j] * h.V[j, m])
    if key == "weights_rest":
        return float("nan")  # checked separately: depends on which bars were shown
    raise KeyError(f"unknown drawn key {key!r}")


def decimals_of(text: str) -> int:
    core = text.replace("−", "-").strip()
    return len(core.split(".")[1]) if "." in core else 0


def check_drawn(t: AttentionTrace, entries: list[tuple[str, tuple, str]]) -> list[str]:
    """Every mismatch between a drawn number and the trace at its displayed precision."""
    bad = []
    for key, idx, text in entries:
        value = resolve(t, key, idx)
        if math.isnan(value):
            continue
        shown = float(text.replace("−", "-").replace(",", ""))
        tol = 0.5 * 10 ** -decimals_of(text) + 1e-9 + 1e-12 * abs(value)
        if abs(shown - value) > tol:
            bad.append(f"{key}{list(idx)} drawn {text!r}, trace {value!r}")
    return bad
