"""What a run of either trained model on one sentence keeps per head, read-only."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def read_only(a: np.ndarray) -> np.ndarray:
    """A float64 copy that cannot be written to."""
    out = np.array(a, dtype=np.float64)
    out.setflags(write=False)
    return out


@dataclass(frozen=True, eq=False)
class HeadRun:
    """One head on one sentence: the same fields as attncore.trace.HeadTrace (no biases)."""

    head: int
    W_Q: np.ndarray  # (d, d_k)
    W_K: np.ndarray  # (d, d_k)
    W_V: np.ndarray  # (d, d_k)
    Q: np.ndarray  # (n, d_k)
    K: np.ndarray  # (n, d_k)
    V: np.ndarray  # (n, d_k)
    scores: np.ndarray  # (n, n)  Q·Kᵀ
    scaled: np.ndarray  # (n, n)  Q·Kᵀ/√d_k
    weights: np.ndarray  # (n, n)  softmax rows
    Z: np.ndarray  # (n, d_k)  weights·V
