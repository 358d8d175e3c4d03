"""The trace as JSON (and back) and as CSV tables, for handouts and spreadsheets.

Returns text; writing files is the pipeline's job.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
from typing import Any

import numpy as np
from attention_video.attncore.tokenize import Token
from attention_video.attncore.trace import (
    AttentionTrace,
    HeadChoice,
    HeadTrace,
    RotaryTrace,
    TrainingHistory,
)

FORMAT = "attention-trace/1"
# With RoPE, the rows X·W_Q and X·W_K are Q and K (the trace's rope.Q_before, K_before), and
# the rows the scores use, turned, are Q_rot and K_rot (the trace's heads[h].Q, .K): the
# names the video and the page give them, written beside them in the JSON and in the CSV.
ROTARY_NAMES = {"Q_before": "Q = X·W_Q", "K_before": "K = X·W_K",
                "heads.Q": "Q_rot = RoPE(Q)", "heads.K": "K_rot = RoPE(K)",
                "angles": "θ[p, m] = p · base^(−2m/d_k)"}
_SCALARS = ("focus", "head_index", "source", "model_name", "layer", "causal", "cross",
            "normalized", "seed", "x_label", "x_from", "source_reason", "x_label_q",
            "positional")
_HISTORY_SCALARS = ("partner", "task")


def _tokens(ts: tuple[Token, ...]) -> list[dict[str, str]]:
    return [{"text": t.text, "kind": t.kind} for t in ts]


def trace_to_dict(trace: AttentionTrace, settings: dict[str, Any] | None = None) -> dict[str, Any]:
    """Tokens, every matrix by its formula name (per head), and the settings that made it
    (for the reader: a trace read back does not need them)."""
    d: dict[str, Any] = {"format": FORMAT}
    d["query_tokens"] = _tokens(trace.query_tokens)
    d["key_tokens"] = _tokens(trace.key_tokens)
    d.update({k: getattr(trace, k) for k in _SCALARS})
    d.update({k: getattr(trace, k).tolist() for k in AttentionTrace.ARRAYS})
    d["heads"] = [
        {"layer": h.layer, "head": h.head, "pattern": h.pattern,
         **{k: getattr(h, k).tolist() for k in HeadTrace.ARRAYS}}
        for h in trace.heads
    ]
    d["head_choice"] = choice_to_dict(trace.head_choice)
    hist = trace.history
    d["history"] = None if hist is None else {
        **{k: getattr(hist, k) for k in _HISTORY_SCALARS},
        "examples": [list(e) for e in hist.examples],
        **{k: getattr(hist, k).tolist() for k in TrainingHistory.ARRAYS}}
    d["query_inputs"] = None if trace.query_inputs is None else _tokens(trace.query_inputs)
    mw = trace.model_weights
    d["model_weights"] = None if mw is None else mw.tolist()
    rope = trace.rope
    d["rope"] = None if rope is None else {
        "base": rope.base, **{k: getattr(rope, k).tolist() for k in RotaryTrace.ARRAYS},
        "names": ROTARY_NAMES}
    d["kv_heads"] = None if trace.kv_heads is None else list(trace.kv_heads)
    d["settings"] = settings or {}
    return d


def choice_to_dict(c: HeadChoice | None) -> dict[str, Any] | None:
    return None if c is None else dataclasses.asdict(c)


def choice_from_dict(d: dict[str, Any] | None) -> HeadChoice | None:
    if d is None:
        return None
    return HeadChoice(**{**d, "skipped": tuple(tuple(p) for p in d["skipped"]),
                         "skipped_sides": tuple(d["skipped_sides"]),
                         "skipped_kinds": tuple(d.get("skipped_kinds", ()))})


def rope_from_dict(d: dict[str, Any] | None) -> RotaryTrace | None:
    if d is None:
        return None
    return RotaryTrace(base=float(d["base"]),
                       **{k: np.array(d[k], dtype=np.float64) for k in RotaryTrace.ARRAYS})


def trace_from_dict(d: dict[str, Any]) -> AttentionTrace:
    if d.get("format") != FORMAT:
        raise ValueError(f"not an attention trace (format {d.get('format')!r}, expected {FORMAT!r})")
    heads = tuple(
        HeadTrace(layer=h["layer"], head=h["head"], pattern=h.get("pattern"),
                  **{k: np.array(h[k], dtype=bool if k == "mask" else np.float64)
                     for k in HeadTrace.ARRAYS})
        for h in d["heads"]
    )
    hist = d.get("history")
    history = None if hist is None else TrainingHistory(
        **{k: hist[k] for k in _HISTORY_SCALARS},
        examples=tuple(tuple(e) for e in hist.get("examples", ())),
        **{k: np.array(hist[k], dtype=np.float64) for k in TrainingHistory.ARRAYS})
    return AttentionTrace(
        query_tokens=tuple(Token(**t) for t in d["query_tokens"]),
        key_tokens=tuple(Token(**t) for t in d["key_tokens"]),
        heads=heads, history=history, head_choice=choice_from_dict(d.get("head_choice")),
        query_inputs=None if d.get("query_inputs") is None else tuple(
            Token(**t) for t in d["query_inputs"]),
        model_weights=None if d.get("model_weights") is None else np.array(
            d["model_weights"], dtype=np.float64),
        rope=rope_from_dict(d.get("rope")),
        kv_heads=None if d.get("kv_heads") is None else tuple(int(g) for g in d["kv_heads"]),
        **{k: np.array(d[k], dtype=np.float64) for k in AttentionTrace.ARRAYS},
        **{k: d.get(k) for k in _SCALARS if k != "x_from"},
        x_from=d.get("x_from", AttentionTrace.EMBEDDING),  # files written before it was kept
    )


def to_json(trace: AttentionTrace, indent: int | None = 1,
            settings: dict[str, Any] | None = None) -> str:
    """Full-precision JSON: floats round-trip exactly."""
    return json.dumps(trace_to_dict(trace, settings), ensure_ascii=False, indent=indent)


def from_json(text: str) -> AttentionTrace:
    return trace_from_dict(json.loads(text))


def _table(rows: list[str], cols: list[str], a: np.ndarray) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([""] + cols)
    for name, row in zip(rows, np.atleast_2d(a)):
        w.writerow([name] + [repr(float(x)) for x in row])
    return buf.getvalue()


def csv_tables(trace: AttentionTrace) -> dict[str, str]:
    """One CSV per matrix, rows labelled by word and columns by word or dimension.

    Keys are file stems: "X", "head0_Q", "head0_weights", … With RoPE, "head0_Q" and
    "head0_K" are X·W_Q and X·W_K, "head0_Q_rot" and "head0_K_rot" the turned rows the scores
    use (ROTARY_NAMES), and "rope_angles" every position's angle of every pair.
    """
    qn = [t.text for t in trace.query_tokens]
    kn = [t.text for t in trace.key_tokens]
    dm = [f"d{i}" for i in range(trace.d_model)]
    out = {"E": _table(kn, dm, trace.E), "P": _table(kn, dm, trace.P), "X": _table(kn, dm, trace.X)}
    if trace.cross:
        out |= {"E_q": _table(qn, dm, trace.E_q), "P_q": _table(qn, dm, trace.P_q),
                "X_q": _table(qn, dm, trace.X_q)}
    for index, h in enumerate(trace.heads):
        dk = [f"k{i}" for i in range(h.Q.shape[1])]
        p = f"head{h.head}_"
        out |= {
            p + "W_Q": _table(dm, dk, h.W_Q), p + "W_K": _table(dm, dk, h.W_K),
            p + "W_V": _table(dm, dk, h.W_V),
            p + "Q": _table(qn, dk, h.Q), p + "K": _table(kn, dk, h.K), p + "V": _table(kn, dk, h.V),
            p + "scores": _table(qn, kn, h.scores), p + "scaled": _table(qn, kn, h.scaled),
            p + "weights": _table(qn, kn, h.weights), p + "Z": _table(qn, dk, h.Z),
        }
        if trace.rope is not None:  # Q and K as made, then turned (ROTARY_NAMES)
            kv = trace.kv_heads[index] if trace.kv_heads is not None else index
            out |= {p + "Q": _table(qn, dk, trace.rope.Q_before[index]),
                    p + "K": _table(kn, dk, trace.rope.K_before[kv]),
                    p + "Q_rot": _table(qn, dk, h.Q), p + "K_rot": _table(kn, dk, h.K)}
    if trace.rope is not None:
        angles = trace.rope.angles  # (n, d_k/2)
        out["rope_angles"] = _table(qn, [f"pair{m}" for m in range(angles.shape[1])], angles)
    out["output"] = _table(qn, dm, trace.output)
    hist = trace.history
    if hist is not None:  # the followed word's row at each training snapshot
        steps = [f"step {int(x)}" for x in hist.steps]
        out["history_weights"] = _table(steps, kn, hist.weights)
        out["history_products"] = _table(steps, [f"k{i}" for i in range(hist.q.shape[1])],
                                         hist.products)
    return out
