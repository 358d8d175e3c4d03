"""How long a caption stays on screen: long enough to read it, or to say it.

A caption is up for at least its reading time: its characters at the rate its language's
catalogue gives (15 a second in English, 7 in Chinese), and never under 1.5 s; `pace` scales that time as a player's speed
control does (1.25 a quarter brisker, 0.8 slower). Narrated, it is up until its speech
ends and a short gap after it. The time is made up by holding the frame (one held frame,
fastmanim.encoder), never by slowing an animation.
"""

from __future__ import annotations

import math

from attention_video.scenes.catalogue import reading_rate

MIN_CAPTION_SECONDS = 1.5  # no caption is up for less, however short
HOLD_SHARE = 0.5  # a caption's picture stands complete and still for this share of its time
MIN_HOLD_SECONDS = 1.5  # ... and never for less, before the caption leaves
SPEECH_GAP = 0.4  # seconds between the end of a caption's speech and the next step


def caption_chars(text: str) -> int:
    """The characters a viewer reads: the text as one line, runs of spaces as one."""
    return len(" ".join(text.split()))


def reading_seconds(text: str, language: str, pace: float = 1.0) -> float:
    """The time `text` stays on screen at the least: max(1.5 s, characters ÷ rate) ÷ pace."""
    return max(MIN_CAPTION_SECONDS, caption_chars(text) / reading_rate(language)) / pace


STATE_SECONDS = 3.0  # a state the picture rests on between captions: up this long at most


def state_seconds(texts: list[str], language: str, pace: float = 1.0) -> float:
    """How long a state the picture rests on (a training snapshot's table) stays up: its
    texts' reading time (never under 1.5 s), up to STATE_SECONDS ÷ pace, since a table's
    numbers are looked up, not read one by one."""
    return min(reading_seconds(" ".join(texts), language, pace), STATE_SECONDS / pace)


def whole_frames(seconds: float, fps: float) -> int:
    """The frames that last at least `seconds` (a hold is a whole number of frames)."""
    return max(0, math.ceil(seconds * fps - 1e-6))


def picture_hold(caption_seconds: float) -> float:
    """How long a caption's picture stands complete and still before the caption leaves:
    half the caption's time on screen, never under 1.5 s."""
    return max(HOLD_SHARE * caption_seconds, MIN_HOLD_SECONDS)
