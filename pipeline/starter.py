"""A commented starter config: every setting, its default and its allowed values."""

from __future__ import annotations

import json
from pathlib import Path

from attncore.settings import FIELD_NAMES, QUALITIES, Settings
from pipeline.files import check_writable_folder, write_text_atomic

HELP = {
    "sentence": "the sentence whose attention the video shows (any language; up to max_tokens tokens)",
    "query": "the word the video follows; unset: the last word of the sentence",
    "query_index": "0-based token index of the followed word, for a word that appears twice",
    "target": "a second sentence: cross-attention, queries from it, keys and values from `sentence`",
    "weights": '"pretrained" (a real trained model) or "random" (small untrained model, every number hand-checkable)',
    "model": "pretrained checkpoint folder in Hugging Face layout; unset: all-MiniLM-L6-v2",
    "layer": "pretrained: encoder layer, 0-based",
    "head": 'the head the video follows: a number from 0, or "auto" (pretrained: the head that links the followed word most strongly to another word)',
    "seed": "random weights: same seed, same numbers (0 to 4294967295)",
    "d_model": "random weights: width of an embedding row (1 to 64)",
    "d_k": "random weights: width of a query/key/value row (1 to 64); unset: d_model / heads",
    "heads": "random weights: number of heads (1 to 16, must divide d_model)",
    "causal": "decoder masking: no word attends to a later one (self-attention only)",
    "softmax": "false skips chapter 5 and lets the raw factors weigh V, as the article does",
    "positional": "add sinusoidal positional encoding to the embeddings (random weights)",
    "max_tokens": "longest sentence accepted (1 to 64)",
    "chapters": "chapters to play, from 1 input, 2 linear layers, 3 factor matrix, 4 dot product, "
                "5 scale and softmax, 6 weighted sum, 7 query/key/value, 8 learning, 9 summary",
    "theme": '"dark" or "light"',
    "language": 'caption language: "en" or "zh"',
    "quality": " | ".join(f'"{k}" {v[3]}' for k, v in QUALITIES.items()),
    "output": "video path; unset: media/<sentence>.mp4 (subtitles go beside it as .srt)",
}


EXAMPLES = {"query": "cat", "query_index": 4, "target": "La bola es azul",
            "model": "/path/to/checkpoint", "d_k": 4, "output": "media/lecture.mp4"}


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (tuple, list)):
        return "[" + ", ".join(str(x) for x in v) + "]"
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    return str(v)


def starter_text(defaults: Settings | None = None) -> str:
    d = defaults or Settings(weights="pretrained", head="auto")
    lines = ["# Attention explainer settings. Render with:  render.py --config THIS_FILE",
             "# Command-line flags override what is set here. Unset settings are commented out.",
             ""]
    for name in FIELD_NAMES:
        lines.append(f"# {HELP[name]}")
        value = getattr(d, name)
        if value is None:
            lines.append(f"# {name} = {_toml_value(EXAMPLES[name])}")
        else:
            lines.append(f"{name} = {_toml_value(value)}")
        lines.append("")
    return "\n".join(lines)


def write_starter(path: Path) -> None:
    path = Path(path)
    if path.exists():
        from pipeline.files import OutputError

        raise OutputError(f"{path} exists already; give a new file name")
    check_writable_folder(path)
    write_text_atomic(path, starter_text())
