"""Every setting a video depends on, in one typed object, validated once.

Settings come from command-line flags or a TOML file (flags win). Each invalid value
raises SettingsError naming the field and what is allowed.
"""

from __future__ import annotations

import dataclasses
import difflib
import tomllib
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

QUALITIES = {  # flag → (height, width, fps, name)
    "l": (480, 854, 15, "480p15"),
    "m": (720, 1280, 30, "720p30"),
    "h": (1080, 1920, 30, "1080p30"),
    "k": (2160, 3840, 60, "2160p60"),
}
THEMES = ("dark", "light")
LANGUAGES = ("en", "zh")
WEIGHT_SOURCES = ("random", "pretrained")
ALL_CHAPTERS = (1, 2, 3, 4, 5, 6, 7, 8, 9)
MAX_TOKENS_LIMIT = 64
MAX_DIM = 64
MAX_HEADS = 16


class SettingsError(ValueError):
    """One invalid setting: says which field, what is wrong and what is allowed."""

    def __init__(self, name: str, message: str):
        super().__init__(f"{name}: {message}")
        self.field = name
        self.message = message


@dataclass(frozen=True)
class Settings:
    """Everything a video depends on. Defaults make the README's default video."""

    sentence: str = "The black cat drank the milk"  # the sentence whose attention is shown
    query: str | None = None  # the followed word; None: the last word of the sentence
    query_index: int | None = None  # 0-based token index, for a repeated word
    target: str | None = None  # a second sentence: cross-attention, queries from it
    weights: str = "random"  # "random" (untrained, small) or "pretrained"
    model: str | None = None  # pretrained checkpoint folder; None: look it up
    layer: int = 0  # pretrained: which encoder layer (0-based)
    head: int | str = 0  # which head the video follows; "auto" picks one (pretrained)
    seed: int = 0  # random weights: same seed, same numbers
    d_model: int = 4  # width of an embedding row (random weights)
    d_k: int | None = None  # width of a query/key/value row; None: d_model // heads
    heads: int = 1  # number of heads (random weights)
    causal: bool = False  # decoder masking: no word attends to a later one
    softmax: bool = True  # scale by √d_k and softmax; False: raw factors, as the article does
    positional: bool = True  # add sinusoidal positional encoding to the embeddings
    max_tokens: int = 32  # longest sentence accepted
    chapters: tuple[int, ...] = ALL_CHAPTERS  # which chapters the video plays
    theme: str = "dark"  # "dark" or "light"
    language: str = "en"  # caption language: "en" or "zh"
    quality: str = "h"  # l 480p15, m 720p30, h 1080p30, k 2160p60
    output: str | None = None  # where the video goes; None: media/<sentence>.mp4

    def __post_init__(self) -> None:
        validate(self)

    @property
    def dk(self) -> int:
        """The per-head width actually used."""
        return self.d_k if self.d_k is not None else max(1, self.d_model // self.heads)

    @property
    def resolution(self) -> tuple[int, int, int]:
        """(height, width, fps) for the chosen quality."""
        h, w, fps, _ = QUALITIES[self.quality]
        return h, w, fps

    def replace(self, **changes: Any) -> Settings:
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["chapters"] = list(self.chapters)
        return d


FIELD_NAMES = tuple(f.name for f in fields(Settings))
_FIELD_TYPES = {  # for TOML type checking: field → (accepted python types, description)
    "sentence": ((str,), "a string"),
    "query": ((str, type(None)), "a word of the sentence"),
    "query_index": ((int, type(None)), "a whole number"),
    "target": ((str, type(None)), "a string"),
    "weights": ((str,), "a string"),
    "model": ((str, type(None)), "a folder path"),
    "layer": ((int,), "a whole number"),
    "head": ((int, str), 'a whole number or "auto"'),
    "seed": ((int,), "a whole number"),
    "d_model": ((int,), "a whole number"),
    "d_k": ((int, type(None)), "a whole number"),
    "heads": ((int,), "a whole number"),
    "causal": ((bool,), "true or false"),
    "softmax": ((bool,), "true or false"),
    "positional": ((bool,), "true or false"),
    "max_tokens": ((int,), "a whole number"),
    "chapters": ((list, tuple), "a list of chapter numbers such as [1, 3, 6]"),
    "theme": ((str,), "a string"),
    "language": ((str,), "a string"),
    "quality": ((str,), "a string"),
    "output": ((str, type(None)), "a file path"),
}


def _one_of(name: str, value: Any, allowed: tuple) -> None:
    if value not in allowed:
        shown = ", ".join(str(a) for a in allowed)
        raise SettingsError(name, f"{value!r} is not allowed; choose one of: {shown}")


def _int_range(name: str, value: int, lo: int, hi: int) -> None:
    if not lo <= value <= hi:
        raise SettingsError(name, f"{value} is out of range; allowed: {lo} to {hi}")


def check_types(values: dict[str, Any]) -> None:
    """Reject unknown keys (suggesting the closest) and values of the wrong type."""
    for name, value in values.items():
        if name not in _FIELD_TYPES:
            close = difflib.get_close_matches(name, FIELD_NAMES, n=1, cutoff=0.5)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise SettingsError(name, f"unknown setting{hint} (known: {', '.join(FIELD_NAMES)})")
        types, desc = _FIELD_TYPES[name]
        ok = isinstance(value, types) and not (isinstance(value, bool) and bool not in types)
        if not ok:
            raise SettingsError(name, f"expected {desc}, got {type(value).__name__} {value!r}")


def validate(s: Settings) -> None:
    """Check every field; raise SettingsError for the first invalid one."""
    check_types({f.name: getattr(s, f.name) for f in fields(s)})
    if not s.sentence.strip():
        raise SettingsError("sentence", "the sentence is empty: type at least one word")
    if s.target is not None and not s.target.strip():
        raise SettingsError("target", "the target sentence is empty")
    _one_of("weights", s.weights, WEIGHT_SOURCES)
    _one_of("theme", s.theme, THEMES)
    _one_of("language", s.language, LANGUAGES)
    _one_of("quality", s.quality, tuple(QUALITIES))
    _int_range("max_tokens", s.max_tokens, 1, MAX_TOKENS_LIMIT)
    _int_range("heads", s.heads, 1, MAX_HEADS)
    _int_range("d_model", s.d_model, 1, MAX_DIM)
    if s.d_k is not None:
        _int_range("d_k", s.d_k, 1, MAX_DIM)
    if s.d_model % s.heads:
        raise SettingsError(
            "heads", f"d_model {s.d_model} is not divisible by heads {s.heads}; "
            f"allowed heads for d_model {s.d_model}: "
            + ", ".join(str(h) for h in range(1, min(s.d_model, MAX_HEADS) + 1) if s.d_model % h == 0)
        )
    if s.seed < 0 or s.seed >= 2**32:
        raise SettingsError("seed", f"{s.seed} is out of range; allowed: 0 to {2**32 - 1}")
    if s.layer < 0:
        raise SettingsError("layer", f"{s.layer} is out of range; layers count from 0")
    if isinstance(s.head, str):
        if s.head != "auto":
            raise SettingsError("head", f"{s.head!r} is not allowed; give a head number or 'auto'")
    elif s.head < 0 or (s.weights == "random" and s.head >= s.heads):
        hi = s.heads - 1 if s.weights == "random" else "the model's last head"
        raise SettingsError("head", f"{s.head} is out of range; allowed: 0 to {hi}")
    if s.causal and s.target is not None:
        raise SettingsError("causal", "causal masking is for self-attention; with a target sentence "
                            "(cross-attention) every target word sees the whole source: drop one")
    if s.query_index is not None and s.query_index < 0:
        raise SettingsError("query_index", f"{s.query_index} is out of range; indices count from 0")
    if not s.chapters:
        raise SettingsError("chapters", "no chapter chosen; allowed: 1 to 9")
    for c in s.chapters:
        if isinstance(c, bool) or not isinstance(c, int) or c not in ALL_CHAPTERS:
            raise SettingsError("chapters", f"{c!r} is not a chapter; allowed: 1 to 9")
    if s.output is not None and not s.output.strip():
        raise SettingsError("output", "the output path is empty")


def parse_chapters(text: str) -> tuple[int, ...]:
    """'1,3,6' or '2-5' → (1, 3, 6) / (2, 3, 4, 5); sorted, without repeats."""
    out: set[int] = set()
    for part in text.replace(" ", "").split(","):
        if not part:
            continue
        try:
            if "-" in part:
                a, b = (int(x) for x in part.split("-", 1))
                for c in (a, b):
                    if c not in ALL_CHAPTERS:
                        raise SettingsError("chapters", f"{c} is not a chapter; allowed: 1 to 9")
                out.update(range(a, b + 1))
            else:
                out.add(int(part))
        except ValueError:
            raise SettingsError("chapters", f"{part!r} is not a chapter number; allowed: 1 to 9, "
                                "as a list such as 1,3,6 or a range such as 2-5") from None
    bad = sorted(c for c in out if c not in ALL_CHAPTERS)
    if bad:
        raise SettingsError("chapters", f"{bad[0]} is not a chapter; allowed: 1 to 9")
    if not out:
        raise SettingsError("chapters", "no chapter chosen; allowed: 1 to 9")
    return tuple(sorted(out))


def read_toml(path: str | Path) -> dict[str, Any]:
    """Read a settings TOML file into a dict of raw values (not yet validated)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SettingsError("config", f"{p} does not exist") from None
    except IsADirectoryError:
        raise SettingsError("config", f"{p} is a folder, not a TOML file") from None
    except PermissionError:
        raise SettingsError("config", f"{p} cannot be read (permission denied)") from None
    except UnicodeDecodeError:
        raise SettingsError("config", f"{p} is not UTF-8 text") from None
    except OSError as e:
        raise SettingsError("config", f"{p} cannot be read ({e.strerror})") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise SettingsError("config", f"{p} is not valid TOML: {e}") from None
    check_types(data)
    return data


def build_settings(toml_path: str | Path | None = None, **flags: Any) -> Settings:
    """TOML values, overridden by the flags that were given (None = not given)."""
    values: dict[str, Any] = read_toml(toml_path) if toml_path else {}
    values.update({k: v for k, v in flags.items() if v is not None})
    check_types(values)
    if "chapters" in values:
        values["chapters"] = tuple(values["chapters"])
    return Settings(**values)
