"""The geometry of a dot product: why q·k measures how well two vectors agree.

    q·k = |q| · |k| · cos θ

Any two vectors, however wide, span a plane; in it their lengths and the angle between
them are true. With the query fixed along one line, each key can be drawn at its own
true angle θⱼ to the query and at its true length: its shadow on the query's line is
|kⱼ| cos θⱼ = q·kⱼ / |q|, so the scores are the shadows, to scale, times |q|. Only the
angles between two keys are not to scale (each is measured from the query alone).

Pure numpy; chapters `dot` and `learning` draw what `query_geometry` returns and compute nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def norms(A: np.ndarray) -> np.ndarray:
    """|a| = √(Σₘ a_m²) for each row of A."""
    return np.sqrt(np.sum(np.asarray(A, dtype=np.float64) ** 2, axis=-1))  # (n,)


def plane_coordinates(q: np.ndarray, K: np.ndarray) -> np.ndarray:
    """Each key in the plane it spans with q, q along the first axis:
    (k·q̂, |k − (k·q̂) q̂|), so the second coordinate is ≥ 0 (the key drawn above q's line).
    A zero q gives every key the first axis alone: (0, |k|)."""
    q = np.asarray(q, dtype=np.float64)  # (d_k,)
    K = np.atleast_2d(np.asarray(K, dtype=np.float64))  # (n, d_k)
    length = float(norms(q))
    if length == 0.0:
        return np.stack([np.zeros(len(K)), norms(K)], axis=1)  # (n, 2)
    unit = q / length  # (d_k,)
    along = K @ unit  # (n,)  the shadow on q's line
    across = norms(K - along[:, None] * unit[None, :])  # (n,)
    return np.stack([along, across], axis=1)  # (n, 2)


def angles(q: np.ndarray, K: np.ndarray) -> np.ndarray:
    """θ between q and each key, in degrees, from 0 (the same direction) to 180 (opposite):
    atan2(across, along) in their plane (exact for vectors of any width, and well
    conditioned near 0° and 180°, unlike arccos). NaN where q or the key is zero: a zero
    vector has no direction."""
    xy = plane_coordinates(q, K)  # (n, 2)
    theta = np.degrees(np.arctan2(xy[:, 1], xy[:, 0]))  # (n,)
    zero = (norms(np.atleast_2d(K)) == 0.0) | (float(norms(q)) == 0.0)
    return np.where(zero, np.nan, theta)


@dataclass(frozen=True, eq=False)
class QueryGeometry:
    """One query against its keys as arrows in the plane: what chapters `dot` and `learning` draw.

    The key j arrow starts where the query's does, at angle θⱼ to it and of length |kⱼ|;
    its shadow on the query's line is |kⱼ| cos θⱼ = scoreⱼ / |q|.
    """

    q_norm: float  # |q|
    k_norms: np.ndarray  # (n_k,) |kⱼ|
    angles: np.ndarray  # (n_k,) θⱼ in degrees, 0-180 (NaN for a zero vector)
    shadows: np.ndarray  # (n_k,) kⱼ·q̂ = |kⱼ| cos θⱼ (0 when q is zero)
    heights: np.ndarray  # (n_k,) |kⱼ| sin θⱼ, the tip's height above the query's line
    scores: np.ndarray  # (n_k,) q·kⱼ = |q| · shadowⱼ
    allowed: np.ndarray  # (n_k,) bool: keys the query may attend to (the mask's row)

    ARRAYS = ("k_norms", "angles", "shadows", "heights", "scores", "allowed")

    def __post_init__(self) -> None:
        # Read-only copies, as the trace's arrays (attncore.trace imports this module, so
        # its `frozen` cannot be imported here).
        for name in self.ARRAYS:
            a = np.array(getattr(self, name), copy=True)
            a.setflags(write=False)
            object.__setattr__(self, name, a)

    @property
    def cosines(self) -> np.ndarray:
        """cos θⱼ (NaN for a zero vector)."""
        return np.cos(np.radians(self.angles))  # (n_k,)

    def by_score(self) -> tuple[int, ...]:
        """The allowed keys, highest score (the longest shadow) first; ties: the first."""
        keys = np.flatnonzero(self.allowed)
        order = np.argsort(-self.scores[keys], kind="stable")
        return tuple(int(j) for j in keys[order])

    def least_aligned(self) -> int:
        """The allowed key at the widest angle to the query (a zero key has none: last)."""
        keys = [j for j in self.by_score() if not np.isnan(self.angles[j])]
        if not keys:
            return self.by_score()[-1]
        return max(keys, key=lambda j: (self.angles[j], -j))


def query_geometry(q: np.ndarray, K: np.ndarray,
                   allowed: np.ndarray | None = None) -> QueryGeometry:
    """Query q against every row of K (masked keys kept, flagged by `allowed`)."""
    q = np.asarray(q, dtype=np.float64)  # (d_k,)
    K = np.atleast_2d(np.asarray(K, dtype=np.float64))  # (n_k, d_k)
    xy = plane_coordinates(q, K)  # (n_k, 2)
    allowed = np.ones(len(K), dtype=bool) if allowed is None else np.asarray(allowed, bool)
    return QueryGeometry(
        q_norm=float(norms(q)), k_norms=norms(K), angles=angles(q, K),
        shadows=xy[:, 0], heights=xy[:, 1], scores=K @ q, allowed=allowed)
