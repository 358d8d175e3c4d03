"""Rotary position embedding (RoPE): position by rotation, and why it makes q·k relative.

A decoder with RoPE adds no P to X. It turns pair m (entries 2m, 2m+1) of every q and k
row of the word at position p by the angle

    θ(p, m) = p · base^(−2m/d_k)

so pair 0 turns by p radians, and later pairs ever more slowly. Turning q by θ(p) and k
by θ(p′) turns the angle between each pair by θ(p) − θ(p′) = (p − p′) · base^(−2m/d_k):

    rot(q, p) · rot(k, p′) = Σₘ |qₘ| |kₘ| cos(φₘ + (p − p′) · base^(−2m/d_k))

which depends on p − p′ alone, not on where the two words stand. Chapter `linear` shows the
turn with the followed query and its partner key (their pair 0 before and after it, every
pair's angle); chapter `dot` ends with the same two vectors placed at other positions, the
same distance apart (the same q·k) and one step further apart (another).

Pure numpy; the trace (attncore.trace.RotaryTrace) holds the angles and the rows before
the turn, and `rotary_reading` returns the numbers of both.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from attention_video.attncore.trace import AttentionTrace

SHIFT_FORWARD = 10  # where the pair moves when its key already stands at position 0


def frequencies(d_k: int, base: float) -> np.ndarray:
    """base^(−2m/d_k) for each pair m: how many radians pair m turns per position."""
    m = np.arange(d_k // 2, dtype=np.float64)  # (d_k/2,)
    return base ** (-2.0 * m / d_k)  # (d_k/2,)


def rotary_angles(positions: np.ndarray, d_k: int, base: float) -> np.ndarray:
    """θ(p, m) = p · base^(−2m/d_k), one row per position."""
    p = np.asarray(positions, dtype=np.float64).reshape(-1, 1)  # (n, 1)
    return p * frequencies(d_k, base)[None, :]  # (n, d_k/2)


def rotate(X: np.ndarray, angles: np.ndarray) -> np.ndarray:
    """Turn pair m = (x₂ₘ, x₂ₘ₊₁) of each row by its angle:

        x′₂ₘ = x₂ₘ cos θ − x₂ₘ₊₁ sin θ,   x′₂ₘ₊₁ = x₂ₘ sin θ + x₂ₘ₊₁ cos θ
    """
    X = np.atleast_2d(np.asarray(X, dtype=np.float64))  # (n, d_k)
    A = np.atleast_2d(np.asarray(angles, dtype=np.float64))  # (n, d_k/2)
    even, odd = X[:, 0::2], X[:, 1::2]  # (n, d_k/2) each
    cos, sin = np.cos(A), np.sin(A)  # (n, d_k/2) each
    out = np.empty_like(X)  # (n, d_k)
    out[:, 0::2] = even * cos - odd * sin
    out[:, 1::2] = even * sin + odd * cos
    return out


def rotated_dot(q: np.ndarray, k: np.ndarray, p_q: int, p_k: int, base: float) -> float:
    """rot(q, p_q) · rot(k, p_k): the score q and k would have at those positions."""
    d_k = len(q)
    q_rot = rotate(q, rotary_angles([p_q], d_k, base))[0]  # (d_k,)
    k_rot = rotate(k, rotary_angles([p_k], d_k, base))[0]  # (d_k,)
    return float(q_rot @ k_rot)


def turn_degrees(radians: float) -> float:
    """An angle of turn as drawn: in degrees, 0 to 360 (a whole turn changes nothing)."""
    return float(np.degrees(radians) % 360.0)


@dataclass(frozen=True)
class PairTurn:
    """Pair 0 of one row, before and after its turn (what chapter `linear` draws as two arrows)."""

    position: int
    before: tuple[float, float]  # (x₀, x₁) before the turn
    after: tuple[float, float]  # … after: the row the scores use
    radians: float  # θ(position, 0) = position radians

    @property
    def degrees(self) -> float:
        return turn_degrees(self.radians)

    @property
    def length(self) -> float:
        """A turn keeps the pair's length."""
        return float(np.hypot(*self.before))


@dataclass(frozen=True)
class Placement:
    """The same q and k rows (before their turn) placed at positions (p_q, p_k)."""

    p_q: int
    p_k: int
    dot: float  # rot(q, p_q) · rot(k, p_k)

    @property
    def distance(self) -> int:
        return self.p_q - self.p_k


@dataclass(frozen=True)
class RotaryReading:
    """What chapters `linear` and `dot` show of RoPE for the followed query i and its partner
    key j."""

    head: int  # the query head
    kv_head: int  # the key/value head it reads
    query: PairTurn
    key: PairTurn
    here: Placement  # (i, j): the cell of Q·Kᵀ
    moved: Placement  # the same distance elsewhere: the same q·k
    further: Placement  # one step further apart: another q·k
    unturned: float  # q·k before any turn (what the cell would be without positions)


def kv_head_of(trace: AttentionTrace, head: int) -> int:
    """The key/value head query head `head` reads (its own without grouped-query attention)."""
    return trace.kv_heads[head] if trace.kv_heads is not None else head


def moved_positions(i: int, j: int) -> tuple[int, int]:
    """Where the pair (i, j) moves, keeping its distance: the key to position 0, or, when it
    is there already, both SHIFT_FORWARD places on."""
    shift = -j if j > 0 else SHIFT_FORWARD
    return i + shift, j + shift


def rotary_reading(trace: AttentionTrace, i: int, j: int) -> RotaryReading:
    """Pair 0 of the followed head's q_i and k_j before and after the turn, and q·k with the
    same two rows placed at (i, j), at another place the same distance apart, and one
    step further apart. Needs trace.rope."""
    rope = trace.rope
    h = trace.head_index
    kv = kv_head_of(trace, h)
    q, k = rope.Q_before[h, i], rope.K_before[kv, j]  # (d_k,) each
    q_after, k_after = trace.head.Q[i], trace.head.K[j]  # (d_k,) each
    query = PairTurn(i, (float(q[0]), float(q[1])), (float(q_after[0]), float(q_after[1])),
                     float(rope.angles[i, 0]))
    key = PairTurn(j, (float(k[0]), float(k[1])), (float(k_after[0]), float(k_after[1])),
                   float(rope.angles[j, 0]))
    mi, mj = moved_positions(i, j)
    fi, fj = i + 1, j  # the query one step later: one step further apart
    return RotaryReading(
        head=h, kv_head=kv, query=query, key=key,
        here=Placement(i, j, float(q_after @ k_after)),
        moved=Placement(mi, mj, rotated_dot(q, k, mi, mj, rope.base)),
        further=Placement(fi, fj, rotated_dot(q, k, fi, fj, rope.base)),
        unturned=float(q @ k))
