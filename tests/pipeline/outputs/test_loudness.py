"""Loudness (pipeline.outputs.audio.normalise): the narration at −16 LUFS integrated with
no true peak over −1 dBTP (EBU R128, as web video and podcasts are), measured by FFmpeg's
ebur128 meter. Fast: the normaliser on speech-like sound, silence, a quiet signal and a
joined video's track. The real narration (MP4, WebM, each deck step) is measured in
tests/scenes/test_narration.py's slow tier."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from attention_video.pipeline.outputs import audio

RATE = audio.RATE


def speech_like(seconds: float = 12.0, seed: int = 0) -> np.ndarray:
    """Syllables of a voiced sound (a 100-140 Hz buzz with its first harmonics, rising and
    falling in 30 ms), separated by pauses, one syllable in five stressed: loud peaks over
    a quieter average, as Piper speaks (about −21 LUFS, 0 dBFS)."""
    rng = np.random.default_rng(seed)
    x = np.zeros(round(seconds * RATE))
    t = 0.3
    while t < seconds - 0.5:
        n = round(rng.uniform(0.12, 0.3) * RATE)
        a = round(t * RATE)
        k = np.arange(n) / RATE
        f0 = rng.uniform(100, 140)
        voiced = sum(np.sin(2 * np.pi * f0 * h * k + rng.uniform(0, 6)) / h for h in range(1, 6))
        edge = np.sin(np.linspace(0, np.pi / 2, round(0.03 * RATE))) ** 2
        envelope = np.ones(n)
        envelope[:len(edge)], envelope[-len(edge):] = edge, edge[::-1]
        level = 1.0 if rng.uniform() < 0.2 else rng.uniform(0.15, 0.4)
        x[a:a + n] += voiced * envelope * level
        t += n / RATE + rng.uniform(0.03, 0.4)
    return np.round(x / np.abs(x).max() * 32767).astype(np.int16)


def test_the_meter_reads_a_full_scale_sine_as_the_standard_says():
    """A 997 Hz sine at full scale is −3.01 LUFS (BS.1770's K-weighting passes 997 Hz at
    +0.69 dB, which the −0.691 of the formula takes back) and its true peak 0 dBTP."""
    k = np.arange(10 * RATE)
    sine = np.round(32767 * np.sin(2 * np.pi * 997 * k / RATE)).astype(np.int16)
    measured = audio.loudness(sine)
    assert measured.integrated == pytest.approx(-3.01, abs=0.05)
    assert measured.true_peak == pytest.approx(0.0, abs=0.05)


def test_speech_like_sound_comes_out_at_minus_16_lufs_under_the_ceiling():
    before = audio.loudness(speech_like())
    assert before.integrated < -18 and before.true_peak > -0.5  # as Piper's speech comes
    after = audio.loudness(audio.normalise(speech_like()))
    assert after.integrated == pytest.approx(audio.TARGET_LUFS, abs=0.1)
    assert after.true_peak <= audio.CEILING_DBTP + 0.05


def test_a_quiet_signal_without_loud_peaks_is_only_raised():
    """A steady hum at −40 dBFS (its peaks 3 dB over its loudness): raised to −16 LUFS it
    has nothing to limit, so the output is the input times one gain."""
    k = np.arange(8 * RATE)
    quiet = np.round(328 * np.sin(2 * np.pi * 220 * k / RATE)).astype(np.int16)
    out = audio.normalise(quiet)
    assert audio.loudness(out).integrated == pytest.approx(audio.TARGET_LUFS, abs=0.1)
    loud = np.abs(quiet) > 100
    ratio = out[loud] / quiet[loud]
    assert ratio.std() < 0.01 * ratio.mean()


def test_the_limiter_moves_the_gain_smoothly():
    """The limiter's gain (output over input where the input is not small) changes by
    under 0.5 dB from one millisecond to the next (it falls by up to 8 dB over 40 ms before
    a peak): no click, where a hard limiter would jump by the whole 8 dB at once."""
    x = speech_like()
    out = audio.normalise(x)
    loud = np.abs(x) > 3000
    gain = np.full(len(x), np.nan)
    gain[loud] = 20 * np.log10(out[loud] / x[loud])
    ms = RATE // 1000
    blocks = gain[:len(gain) // ms * ms].reshape(-1, ms)  # (milliseconds, samples)
    kept = ~np.isnan(blocks).all(axis=1)
    per_ms = np.full(len(blocks), np.nan)
    per_ms[kept] = np.nanmedian(blocks[kept], axis=1)
    steps = np.abs(np.diff(per_ms))
    assert np.nanmax(steps) < 0.5


def test_silence_and_nothing_stay_as_they_are():
    assert not audio.normalise(np.zeros(RATE, np.int16)).any()
    assert len(audio.normalise(np.zeros(0, np.int16))) == 0


def test_a_joined_video_and_its_webm_carry_the_narration_at_the_standard(tmp_path: Path):
    """The MP4's AAC and the WebM's Opus, as a player decodes them (Opus's peaks overshoot
    its input's by up to 1.3 dB: the WebM's sound is limited lower before it is encoded)."""
    from attention_video.pipeline.outputs.formats import write_webm
    from attention_video.pipeline.outputs.video import join

    from tests.scenes.test_narration import silent_clip

    a, b = silent_clip(tmp_path / "a.mp4", 6.0), silent_clip(tmp_path / "b.mp4", 6.0)
    audio.add_track(a, speech_like(6.0, seed=1))
    audio.add_track(b, speech_like(6.0, seed=2))
    join([a, b], tmp_path / "joined.mp4")
    write_webm(tmp_path / "joined.mp4", tmp_path / "joined.webm")
    for name in ("joined.mp4", "joined.webm"):
        measured = audio.loudness(audio.read_track(tmp_path / name))
        assert measured.integrated == pytest.approx(audio.TARGET_LUFS, abs=0.3), name
        assert measured.true_peak <= audio.PEAK_DBTP, name
