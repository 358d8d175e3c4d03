"""The numpy BERT forward against Hugging Face transformers' reference values (no torch here).

Reference data: tests/data/bert_reference, made by scripts/make_bert_reference.py (see its
meta.json for the versions). Skips only when all-MiniLM-L6-v2 cannot be found.
"""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest
from attention_video.attncore import Settings, SettingsError, build_trace
from attention_video.attncore.pretrained import (
    choose_head,
    encode,
    find_model,
    format_heads,
    head_pattern,
    head_table,
    list_heads,
    load,
    positional_offset,
    run,
)
from attention_video.attncore.pretrained.heads import special_share
from attention_video.scenes.catalogue import Translate
from attention_video.scenes.reasons import head_reason

from tests.support.paths import DATA as TEST_DATA

DATA = TEST_DATA / "bert_reference"
META = json.loads((DATA / "meta.json").read_text(encoding="utf-8"))
TOKENIZER_CASES = json.loads((DATA / "tokenizer_ids.json").read_text(encoding="utf-8"))
ATOL = 1e-5


def _missing_model() -> str | None:
    try:
        find_model()
    except SettingsError as e:
        return e.message
    return None


pytestmark = pytest.mark.skipif(_missing_model() is not None, reason=str(_missing_model()))


@pytest.fixture(scope="module")
def ck():
    return load(find_model())


@pytest.fixture(scope="module")
def ref():
    return np.load(DATA / "reference.npz")


def pretrained(**kw) -> Settings:
    return Settings(weights="pretrained", **kw)


def test_reference_data_records_versions():
    assert {"transformers", "torch"} <= set(META["versions"])


def test_the_model_found_is_the_file_the_reference_used():
    path = find_model().path / "model.safetensors"
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    assert digest == META["model_safetensors_sha256"], (
        f"{path} differs from the checkpoint that produced tests/data/bert_reference")


@pytest.mark.parametrize("case", TOKENIZER_CASES, ids=lambda c: c["text"][:20])
def test_tokenizer_ids_match_reference_tokenizer(ck, case):
    enc = ck.tokenizer.encode(case["text"])
    assert list(enc.ids) == case["ids"]
    assert [t.text for t in enc.tokens] == case["tokens"]


def test_every_layer_and_head_matches_reference(ck, ref):
    """Sentence 0: attention weights of all 6×12 heads and all 7 hidden states to 1e-5."""
    s = META["all_heads_sentence"]
    enc = ck.tokenizer.encode(META["forward_sentences"][s])
    assert list(enc.ids) == ref[f"s{s}_ids"].tolist()
    fw = encode(ck, enc.ids)
    np.testing.assert_allclose(fw.attention, ref[f"s{s}_attention"], rtol=0, atol=ATOL)
    np.testing.assert_allclose(np.stack(fw.hidden), ref[f"s{s}_hidden"], rtol=0, atol=ATOL)


@pytest.mark.parametrize("s", [1, 2, 3])
def test_other_sentences_match_reference(ck, ref, s):
    """Accents/punctuation/numbers, unknown words, Chinese: chosen heads and last layer."""
    enc = ck.tokenizer.encode(META["forward_sentences"][s])
    assert list(enc.ids) == ref[f"s{s}_ids"].tolist()
    fw = encode(ck, enc.ids)
    for layer, head in META["few_heads"]:
        np.testing.assert_allclose(fw.attention[layer, head],
                                   ref[f"s{s}_attention_L{layer}_H{head}"], rtol=0, atol=ATOL)
    np.testing.assert_allclose(fw.hidden[-1], ref[f"s{s}_hidden_last"], rtol=0, atol=ATOL)


def test_trace_holds_the_real_heads_of_the_chosen_layer(ck, ref):
    t = build_trace(pretrained(layer=3, head=7))
    assert (t.source, t.model_name) == ("pretrained", "all-MiniLM-L6-v2")
    assert (t.layer, t.head_index) == (3, 7)
    assert t.trained and len(t.heads) == 12 and t.d_model == 384 and t.d_k == 32
    assert [x.text for x in t.query_tokens] == ["[CLS]", "the", "black", "cat", "drank", "the",
                                                "milk", "[SEP]"]
    assert t.query_tokens[0].kind == "special" and t.query_tokens[-1].kind == "special"
    np.testing.assert_allclose(t.X, ref["s0_hidden"][3], atol=ATOL)
    for h, head in enumerate(t.heads):
        np.testing.assert_allclose(head.weights, ref["s0_attention"][3, h], atol=ATOL)
        assert head.W_Q.shape == (384, 32) and head.b_Q.shape == (32,)
        np.testing.assert_allclose(head.Q, t.X @ head.W_Q + head.b_Q)
        assert head.mask.all()
    lw = ck.layers[3]
    np.testing.assert_array_equal(t.heads[7].W_K, lw.W_K[:, 7 * 32:8 * 32])
    np.testing.assert_allclose(t.output, np.concatenate([h.Z for h in t.heads], 1) @ t.W_O)
    assert t.x_label == "H2"


def test_layer_zero_input_is_layer_norm_of_embeddings(ck, ref):
    t = build_trace(pretrained(layer=0, head=0))
    np.testing.assert_allclose(t.X, ref["s0_hidden"][0], atol=ATOL)
    assert t.x_label == "LayerNorm(E + P)"
    np.testing.assert_allclose(t.E, ck.word_embeddings[list(ref["s0_ids"])], atol=1e-7)
    np.testing.assert_allclose(t.P, ck.position_embeddings[:8] + ck.token_type_embeddings[0])


def test_without_softmax_the_raw_scores_weigh_v():
    t = build_trace(pretrained(layer=1, head=2, softmax=False))
    assert not t.normalized
    np.testing.assert_allclose(t.head.weights, t.head.scores)
    np.testing.assert_allclose(t.head.Z, t.head.scores @ t.head.V)


def summaries_of(s: Settings):
    """Every head's summary for the settings' sentence (the layer × head table's rows)."""
    return list_heads(s)


def _positional(A: np.ndarray) -> bool:
    """Independent check: the inner tokens give ≥ 0.5 on average to one fixed neighbour."""
    n = A.shape[0]
    prev = np.mean([A[i, i - 1] for i in range(1, n - 1)])
    nxt = np.mean([A[i, i + 1] for i in range(1, n - 1)])
    return max(prev, nxt) >= 0.5


def test_auto_head_is_the_largest_weight_to_another_word(ck):
    s = pretrained(head="auto")
    t = build_trace(s)
    fw = encode(ck, ck.tokenizer.encode(s.sentence).ids)
    focus = t.focus
    assert t.query_tokens[focus].text == "milk"  # default: the last word
    others = [j for j, tok in enumerate(t.query_tokens)
              if tok.kind in ("word", "subword") and j != focus]
    positional = {(L, H) for L in range(6) for H in range(12) if _positional(fw.attention[L, H])}
    assert (0, 2) in positional  # the previous-token head of all-MiniLM-L6-v2
    fixed = {(h.layer, h.head) for h in summaries_of(s) if h.kind}  # stripes, end tokens too
    assert positional <= fixed  # (tests/attncore/test_head_choice.py checks the kinds by loops)
    best = max((fw.attention[L, H, focus, j], L, H) for L in range(6) for H in range(12)
               for j in others if (L, H) not in fixed)
    assert (t.layer, t.head_index) == (best[1], best[2])
    assert t.head.weights[focus, others].max() == pytest.approx(best[0], abs=1e-12)
    reason = head_reason(t.head_choice, Translate("en"))  # the core's data, phrased
    assert reason.startswith(f"layer {t.layer}, head {t.head_index}: 'milk' gives ")
    assert f"{best[0]:.3f}" in reason  # a weight: three decimals (scenes.precision)
    assert f"; {len(fixed)} heads with a fixed pattern whatever the words (" in reason
    j = int(np.argmax(np.where(np.isin(np.arange(8), others), t.head.weights[focus], -1)))
    assert (", the token just before it" in reason) == (j == focus - 1)


def test_auto_head_can_keep_positional_heads():
    choice = choose_head(run(pretrained(head="auto")), skip_positional=False)
    layer, head, reason = choice.layer, choice.head, head_reason(choice, Translate("en"))
    assert (layer, head) == (0, 2)
    assert (choice.rule, choice.offset, choice.skipped) == (choice.STRONGEST_LINK, -1, ())
    assert (f"'milk' gives {choice.weight:.3f} of its attention to 'the', the token just before it"
            in reason)
    assert "positional" not in reason


def test_positional_offset_reads_the_numbers():
    n = 6
    prev = np.eye(n, k=-1)
    prev[0, 0] = 1.0
    assert positional_offset(prev) == -1
    assert positional_offset(np.eye(n, k=1)) == 1
    assert positional_offset(np.full((n, n), 1 / n)) is None
    assert positional_offset(np.eye(3, k=-1)) is None  # one inner token: no pattern to see


def test_head_pattern_tags_cls_sep_heads_from_the_numbers():
    n = 6
    special = np.zeros((n, n))
    special[:, 0], special[:, -1] = 0.5, 0.3  # the words give [CLS] + [SEP] 0.8
    special[:, 2] = 0.2
    assert special_share(special) == pytest.approx(0.8)
    assert head_pattern(special) == "[CLS]/[SEP]"
    special[:, -1], special[:, 3] = 0.1, 0.2  # 0.6: below the share, the words matter
    assert head_pattern(special) is None
    prev = np.eye(n, k=-1)
    prev[0, 0] = 1.0
    assert head_pattern(prev) == "previous token"  # position first
    assert head_pattern(np.full((n, n), 1 / n)) is None


def test_cls_sep_heads_are_those_whose_words_look_at_the_ends():
    fw = run(pretrained()).forward
    for row in list_heads(pretrained()):
        A = fw.attention[row.layer, row.head]  # (n, n)
        share = np.mean([A[i, 0] + A[i, -1] for i in range(1, A.shape[0] - 1)])  # by loop
        if row.pattern == "[CLS]/[SEP]":
            assert share >= 0.75 and row.offset is None
        elif row.pattern is None:
            assert share < 0.75


def test_auto_head_skips_pieces_of_the_same_word():
    r = run(pretrained(sentence="the unbelievableness", query="unbelievableness", head="auto"))
    assert [t.text for t in r.tokens] == ["[CLS]", "the", "unbelievable", "##ness", "[SEP]"]
    choice = choose_head(r)
    reason = head_reason(choice, Translate("en"))
    assert "'the'" in reason and "##ness" not in reason
    assert r.tokens[choice.word].text == "the"


def test_list_heads_covers_every_head_and_formats_a_table():
    rows = list_heads(pretrained(query="cat"))
    assert len(rows) == 72 and {(h.layer, h.head) for h in rows} == {
        (L, H) for L in range(6) for H in range(12)}
    assert all(h.word not in ("cat", "[CLS]", "[SEP]") for h in rows)
    assert all(0.0 <= h.word_weight <= h.top_weight <= 1.0 for h in rows)
    table = format_heads(rows, "cat", (rows[5].layer, rows[5].head))
    special = any(h.pattern == "[CLS]/[SEP]" for h in rows)
    assert len(table.splitlines()) == 72 + 4 + special and "top other word" in table
    assert table.splitlines()[3 + 5].startswith("*")
    assert table.splitlines()[3 + 2].endswith("previous token")  # layer 0 head 2
    assert sum(h.positional for h in rows) == sum(
        line.endswith(("previous token", "next token")) for line in table.splitlines())
    assert sum(h.kind == "ends" for h in rows) == sum(
        line.endswith("[CLS]/[SEP]") for line in table.splitlines())
    assert sum(h.kind == "stripe" for h in rows) == sum(
        "one column ('" in line for line in table.splitlines())
    assert head_table(pretrained(query="cat")).count("*") == 2


@pytest.mark.parametrize("kw, index", [
    ({}, 6),  # the last word
    ({"sentence": "The cat drank the milk."}, 5),  # not the final full stop or [SEP]
    ({"query": "Drank"}, 4),  # case-insensitive
    ({"query": "the"}, 1),  # the first of a repeated word
    ({"query_index": 5}, 5),  # counts [CLS] as 0
    ({"query_index": 5, "query": "the"}, 5),
    ({"query_index": 0}, 0),
    ({"sentence": "the unbelievableness", "query": "unbelievableness"}, 2),  # first piece
    ({"sentence": "the unbelievableness", "query": "##ness"}, 3),
    ({"sentence": "the unbelievableness"}, 2),  # a split last word: its first piece
    ({"sentence": "Le café", "query": "café"}, 2),  # accents stripped like the model
])
def test_followed_word(kw, index):
    assert run(pretrained(**kw)).focus == index


@pytest.mark.parametrize("kw, field, words", [
    ({"causal": True}, "causal", "--weights random"),
    ({"target": "La bola es azul"}, "target", "--weights random"),
    ({"positional": False}, "positional", "--weights random"),
    ({"layer": 6}, "layer", "0 to 5"),
    ({"head": 12}, "head", "0 to 11"),
    ({"query": "milj"}, "query", "'milk'"),
    ({"query_index": 8}, "query_index", "0 to 7"),
    ({"query_index": 2, "query": "milk"}, "query_index", "'black'"),
    ({"sentence": "one two three four", "max_tokens": 5}, "sentence",
     "6 tokens (4 word pieces plus [CLS] and [SEP]); the limit is 5"),
    ({"sentence": "\u200b\u200b"}, "sentence", "no visible words"),
    ({"model": "/nonexistent/folder"}, "model", "does not exist"),
])
def test_bad_settings_name_the_field(kw, field, words):
    with pytest.raises(SettingsError) as e:
        build_trace(pretrained(**kw))
    assert e.value.field == field and words in e.value.message


def test_loading_is_cached_per_folder():
    a, b = load(find_model()), load(find_model())
    assert a is b
