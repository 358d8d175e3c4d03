"""An independent, deliberately naive attention: explicit Python loops and `math`.

No matrix products, no numpy ufuncs on arrays: every number is computed one at a
time from its formula, so a mistake in the vectorised core cannot hide here too.
Matrices are lists of lists of floats; `to_array` turns them into numpy only for
the comparison with `assert_allclose`.
"""

from __future__ import annotations

import math

Matrix = list[list[float]]


def to_list(a) -> Matrix:
    """A 2-D array-like as a list of lists of Python floats."""
    return [[float(x) for x in row] for row in a]


def to_array(m: Matrix):
    import numpy as np

    return np.array(m, dtype=np.float64)


def positional_encoding(n: int, d_model: int) -> Matrix:
    """PE[pos, 2i] = sin(pos / 10000^(2i/d)),  PE[pos, 2i+1] = cos(pos / 10000^(2i/d))."""
    pe = []
    for pos in range(n):
        row = []
        for j in range(d_model):
            i2 = j - (j % 2)  # the "2i" shared by columns 2i and 2i+1
            angle = pos / (10000.0 ** (i2 / d_model))
            row.append(math.sin(angle) if j % 2 == 0 else math.cos(angle))
        pe.append(row)
    return pe


def matmul(A: Matrix, B: Matrix) -> Matrix:
    """(n, m)·(m, p) by the triple loop."""
    n, m, p = len(A), len(B), len(B[0]) if B else 0
    assert all(len(row) == m for row in A)
    out = []
    for i in range(n):
        row = []
        for j in range(p):
            total = 0.0
            for k in range(m):
                total += A[i][k] * B[k][j]
            row.append(total)
        out.append(row)
    return out


def add_bias(A: Matrix, b: list[float]) -> Matrix:
    return [[A[i][j] + b[j] for j in range(len(b))] for i in range(len(A))]


def dot(u: list[float], v: list[float]) -> float:
    total = 0.0
    for a, b in zip(u, v, strict=True):
        total += a * b
    return total


def scores(Q: Matrix, K: Matrix) -> Matrix:
    """Cell (i, j) = q_i · k_j."""
    return [[dot(q, k) for k in K] for q in Q]


def scale(S: Matrix, d_k: int) -> Matrix:
    r = math.sqrt(d_k)
    return [[x / r for x in row] for row in S]


def causal_mask(n_q: int, n_k: int) -> list[list[bool]]:
    """Query i may see key j only when j ≤ i."""
    return [[j <= i for j in range(n_k)] for i in range(n_q)]


def full_mask(n_q: int, n_k: int) -> list[list[bool]]:
    return [[True] * n_k for _ in range(n_q)]


def softmax_parts(S: Matrix, mask: list[list[bool]] | None = None
                  ) -> tuple[list[float], Matrix, list[float], Matrix]:
    """Row by row: the max over the allowed cells, exp(s_j − max) (0 where not allowed),
    their sum, and the weights exp / Σ. A row with no allowed cell: max 0, all 0."""
    maxes, exps_all, totals, out = [], [], [], []
    for i, row in enumerate(S):
        allowed = [mask[i][j] if mask is not None else True for j in range(len(row))]
        kept = [row[j] for j in range(len(row)) if allowed[j]]
        if not kept:
            maxes.append(0.0)
            exps_all.append([0.0] * len(row))
            totals.append(0.0)
            out.append([0.0] * len(row))
            continue
        m = max(kept)
        exps = [math.exp(row[j] - m) if allowed[j] else 0.0 for j in range(len(row))]
        total = math.fsum(exps)
        maxes.append(m)
        exps_all.append(exps)
        totals.append(total)
        out.append([e / total for e in exps])
    return maxes, exps_all, totals, out


def softmax(S: Matrix, mask: list[list[bool]] | None = None) -> Matrix:
    """Row by row: exp(s_j − max) / Σ exp(s_k − max) over the allowed cells; others 0."""
    return softmax_parts(S, mask)[3]


def mask_raw(S: Matrix, mask: list[list[bool]]) -> Matrix:
    """Without softmax the raw factors weigh V; masked cells are 0."""
    return [[S[i][j] if mask[i][j] else 0.0 for j in range(len(S[i]))] for i in range(len(S))]


def weighted_sum(W: Matrix, V: Matrix) -> Matrix:
    """z_i = Σ_j w_ij · v_j, accumulated vector by vector."""
    d = len(V[0])
    out = []
    for i in range(len(W)):
        z = [0.0] * d
        for j in range(len(V)):
            for c in range(d):
                z[c] += W[i][j] * V[j][c]
        out.append(z)
    return out


def concat(blocks: list[Matrix]) -> Matrix:
    return [[x for block in blocks for x in block[i]] for i in range(len(blocks[0]))]


def head(X_q: Matrix, X_kv: Matrix, W_Q: Matrix, W_K: Matrix, W_V: Matrix,
         mask: list[list[bool]], normalized: bool = True) -> dict[str, Matrix]:
    """Every intermediate of one head, by the loops above."""
    Q, K, V = matmul(X_q, W_Q), matmul(X_kv, W_K), matmul(X_kv, W_V)
    S = scores(Q, K)
    S_scaled = scale(S, len(W_Q[0]))
    A = softmax(S_scaled, mask) if normalized else mask_raw(S, mask)
    return {"Q": Q, "K": K, "V": V, "scores": S, "scaled": S_scaled, "weights": A,
            "Z": weighted_sum(A, V)}


def attention(X_q: Matrix, X_kv: Matrix, head_weights: list[tuple[Matrix, Matrix, Matrix]],
              W_O: Matrix, causal: bool = False, normalized: bool = True) -> dict:
    """All heads and Concat(Z_1, …, Z_h)·W_O, from given inputs and weights."""
    n_q, n_k = len(X_q), len(X_kv)
    mask = causal_mask(n_q, n_k) if causal else full_mask(n_q, n_k)
    heads = [head(X_q, X_kv, WQ, WK, WV, mask, normalized) for WQ, WK, WV in head_weights]
    return {"heads": heads, "mask": mask, "output": matmul(concat([h["Z"] for h in heads]), W_O)}


def norm(u: list[float]) -> float:
    """|u| = √(Σ u_m²), term by term."""
    total = 0.0
    for a in u:
        total += a * a
    return math.sqrt(total)


def angle_degrees(u: list[float], v: list[float]) -> float:
    """θ = arccos(u·v / (|u| |v|)) in degrees (the textbook formula, clamped to [−1, 1]);
    NaN when either vector is zero."""
    nu, nv = norm(u), norm(v)
    if nu == 0.0 or nv == 0.0:
        return math.nan
    return math.degrees(math.acos(max(-1.0, min(1.0, dot(u, v) / (nu * nv)))))


def shadow(k: list[float], q: list[float]) -> float:
    """The length of k's shadow on q's line: |k| cos θ (0 for a zero q)."""
    nq = norm(q)
    return 0.0 if nq == 0.0 else dot(k, q) / nq


# ---- a Llama-style decoder block (RMSNorm, RoPE, grouped-query attention, SwiGLU) ----------

def columns(W: Matrix, start: int, stop: int) -> Matrix:
    """Columns start … stop−1 of W."""
    return [row[start:stop] for row in W]


def linear(X: Matrix, W: Matrix) -> Matrix:
    """X·W with W's columns read once: out[i][j] = Σ_k X[i][k]·W[k][j] (W given as rows)."""
    cols = [list(c) for c in zip(*W)]
    return [[dot(x, c) for c in cols] for x in X]


def rms_norm(X: Matrix, gain: list[float], eps: float) -> Matrix:
    """x_j / √(Σ x² / d + ε) · g_j, row by row."""
    out = []
    for x in X:
        r = math.sqrt(math.fsum(a * a for a in x) / len(x) + eps)
        out.append([a / r * g for a, g in zip(x, gain)])
    return out


def rope(row: list[float], position: int, base: float) -> list[float]:
    """Turn pair m = (row[2m], row[2m+1]) by position · base^(−2m/d)."""
    d = len(row)
    out = []
    for m in range(d // 2):
        theta = position * base ** (-2 * m / d)
        a, b = row[2 * m], row[2 * m + 1]
        out += [a * math.cos(theta) - b * math.sin(theta), a * math.sin(theta) + b * math.cos(theta)]
    return out


def decoder_block(H: Matrix, w: dict, heads: int, kv_heads: int, base: float, eps: float
                  ) -> tuple[Matrix, list[Matrix]]:
    """One block: (its output, each query head's causal softmax weights).

    w holds lists: attn_norm, W_Q, W_K, W_V, W_O, ffn_norm, W_gate, W_up, W_down (in, out)."""
    n = len(H)
    X = rms_norm(H, w["attn_norm"], eps)
    Q_all, K_all, V_all = linear(X, w["W_Q"]), linear(X, w["W_K"]), linear(X, w["W_V"])
    d_k = len(Q_all[0]) // heads
    mask = causal_mask(n, n)
    Zs, weights = [], []
    for h in range(heads):
        g = h * kv_heads // heads  # query heads h·G/H … share kv head g (h // (H/G))
        Q = [rope(r, i, base) for i, r in enumerate(columns(Q_all, h * d_k, (h + 1) * d_k))]
        K = [rope(r, i, base) for i, r in enumerate(columns(K_all, g * d_k, (g + 1) * d_k))]
        V = columns(V_all, g * d_k, (g + 1) * d_k)
        A = softmax(scale(scores(Q, K), d_k), mask)
        weights.append(A)
        Zs.append(weighted_sum(A, V))
    attn = linear(concat(Zs), w["W_O"])
    H = [[a + b for a, b in zip(x, y)] for x, y in zip(H, attn)]
    F = rms_norm(H, w["ffn_norm"], eps)
    gate, up = linear(F, w["W_gate"]), linear(F, w["W_up"])
    act = [[gv / (1.0 + math.exp(-gv)) * uv for gv, uv in zip(gr, ur)] for gr, ur in zip(gate, up)]
    down = linear(act, w["W_down"])
    return [[a + b for a, b in zip(x, y)] for x, y in zip(H, down)], weights
