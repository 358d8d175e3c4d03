"""The narration's sound, with PyAV: each chapter's speech laid on its timeline and kept in
its clip, then one audio track for the whole video.

A chapter clip carries its narration as FLAC (lossless), so it travels with the clip: into
the cache, and back from a Dask worker as the clip's bytes. The joined video gets one AAC
track encoded from the whole timeline (pipeline.outputs.video.join): AAC is never stream-copied
from clip to clip, since each encoding starts with its own priming samples. That encoding
is kept in the cache folder under the hash of the timeline's samples, so a video joined
again from the same clips copies it whole. A WebM gets
Opus from the video's track (pipeline.outputs.formats); each step of a deck, AAC of its own
stretch (pipeline.outputs.slides).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
from attention_video.pipeline.cache.paths import cache_dir

RATE = 48_000  # samples a second of every track written here
AAC_BITRATE = 96_000  # mono speech
OPUS_BITRATE = 64_000


def resample(samples: np.ndarray, rate: int) -> np.ndarray:
    """Mono int16 `samples` at `rate` as int16 at RATE (FFmpeg's resampler)."""
    if rate == RATE or len(samples) == 0:
        return samples.astype(np.int16, copy=False)
    resampler = av.AudioResampler(format="s16", layout="mono", rate=RATE)
    frame = av.AudioFrame.from_ndarray(np.ascontiguousarray(samples, dtype=np.int16)[None, :],
                                       format="s16", layout="mono")
    frame.sample_rate, frame.pts, frame.time_base = rate, 0, Fraction(1, rate)
    out = [f.to_ndarray().reshape(-1) for f in resampler.resample(frame)]
    out += [f.to_ndarray().reshape(-1) for f in resampler.resample(None)]
    return np.concatenate(out).astype(np.int16) if out else np.zeros(0, np.int16)


def mix(placed: list[tuple[float, np.ndarray, int]], seconds: float) -> np.ndarray:
    """A timeline `seconds` long (int16 at RATE) with each (start, samples, rate) laid on
    it at its start; what would run past the end is cut."""
    track = np.zeros(round(seconds * RATE), dtype=np.int32)
    for start, samples, rate in placed:
        s = resample(samples, rate)
        a = round(start * RATE)
        s = s[:max(0, len(track) - a)]
        track[a:a + len(s)] += s
    return np.clip(track, -32768, 32767).astype(np.int16)


def _frames(samples: np.ndarray, size: int) -> Iterator[av.AudioFrame]:
    """int16 mono samples as frames of `size` samples (the last one shorter)."""
    for a in range(0, len(samples), size):
        frame = av.AudioFrame.from_ndarray(np.ascontiguousarray(samples[None, a:a + size]),
                                           format="s16", layout="mono")
        frame.sample_rate, frame.pts, frame.time_base = RATE, a, Fraction(1, RATE)
        yield frame


def encode(stream: av.AudioStream, samples: np.ndarray) -> list[av.Packet]:
    """Every packet of `samples` encoded by `stream`'s encoder (converted to its format and
    frame size first), flushed at the end."""
    cc = stream.codec_context
    size = cc.frame_size or 4096
    fifo = av.AudioResampler(format=cc.format.name, layout=cc.layout.name, rate=RATE,
                             frame_size=size)
    packets: list[av.Packet] = []
    for frame in _frames(samples, size):
        for converted in fifo.resample(frame):
            packets += stream.encode(converted)
    for converted in fifo.resample(None):
        packets += stream.encode(converted)
    packets += stream.encode(None)
    return packets


def add_stream(container: av.container.OutputContainer, codec: str) -> av.AudioStream:
    """An audio stream of `codec` at RATE, mono. AAC with FFmpeg's "fast" coder: 2.5x
    quicker than its default two-loop search (0.5 s against 1.2 s for 96 s of speech),
    and the listener of tests/test_narration.py hears no difference."""
    bit_rate = {"aac": AAC_BITRATE, "libopus": OPUS_BITRATE}.get(codec)
    options = {"aac_coder": "fast"} if codec == "aac" else {}
    stream = container.add_stream(codec, rate=RATE, layout="mono", options=options)
    if bit_rate:
        stream.codec_context.bit_rate = bit_rate
    return stream


def add_track(clip: Path, samples: np.ndarray, codec: str = "flac") -> None:
    """Give `clip` (a silent MP4) the audio track `samples`: its video packets copied as
    they are, the sound encoded with `codec` (FLAC in chapter clips, AAC in a deck's
    steps). The clip is rewritten in place."""
    tmp = clip.with_name(f".{clip.name}.audio.mp4")
    try:
        with av.open(str(clip)) as src, av.open(str(tmp), "w", format="mp4",
                                                options={"movflags": "+faststart"}) as dst:
            template = src.streams.video[0]
            video = dst.add_stream_from_template(template)
            sound = add_stream(dst, codec)
            packets = [p for p in src.demux(template) if p.pts is not None]
            for p in packets:
                p.stream = video
            interleave(dst, packets, encode(sound, samples))
        tmp.replace(clip)
    finally:
        tmp.unlink(missing_ok=True)


def interleave(container: av.container.OutputContainer, video: list[av.Packet],
               audio: list[av.Packet]) -> None:
    """Mux both lists of packets in the order of their decode times, as players read."""
    def at(p: av.Packet) -> float:
        t = p.dts if p.dts is not None else p.pts
        return float(t * p.time_base) if t is not None else 0.0

    for p in sorted(video + audio, key=at):  # (sorted is stable: each list keeps its order)
        container.mux(p)


TRACKS = "audio-tracks"  # kept AAC encodings of whole timelines, inside the cache folder


def aac_track(timeline: np.ndarray) -> Path:
    """An .m4a file holding the AAC encoding of `timeline` (int16 mono at RATE): kept in
    the cache folder, made when missing (written under a unique name, then renamed)."""
    h = hashlib.sha256(f"aac fast {AAC_BITRATE} {RATE} {av.__version__} ".encode())
    h.update(np.ascontiguousarray(timeline, dtype="<i2").tobytes())
    folder = cache_dir() / TRACKS
    path = folder / f"{h.hexdigest()[:32]}.m4a"
    if path.is_file():
        try:
            os.utime(path)  # just used: the cache's pruning removes the least recently used
        except OSError:
            pass
        return path
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=".m4a", dir=folder)
    os.close(fd)
    try:
        with av.open(tmp, "w", format="mp4") as dst:
            stream = add_stream(dst, "aac")
            for p in encode(stream, timeline):
                dst.mux(p)
        os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)
    return path


def add_kept_track(container: av.container.OutputContainer, track: Path,
                   video: list[av.Packet]) -> None:
    """Mux `video` with the AAC packets of `track` (one encoding, copied whole)."""
    with av.open(str(track)) as src:
        template = src.streams.audio[0]
        stream = container.add_stream_from_template(template)
        packets = [p for p in src.demux(template) if p.size]
        for p in packets:
            p.stream = stream
        interleave(container, video, packets)


def read_track(path: Path, start: float = 0.0, end: float | None = None) -> np.ndarray | None:
    """The audio of a file as int16 mono at RATE, from `start` to `end` seconds (None: to
    its end); None when it has no audio."""
    with av.open(str(path)) as c:
        if not c.streams.audio:
            return None
        stream = c.streams.audio[0]
        resampler = av.AudioResampler(format="s16", layout="mono", rate=RATE)
        parts = []
        for frame in c.decode(stream):
            parts += [f.to_ndarray().reshape(-1) for f in resampler.resample(frame)]
        parts += [f.to_ndarray().reshape(-1) for f in resampler.resample(None)]
    samples = np.concatenate(parts) if parts else np.zeros(0, np.int16)
    a = round(start * RATE)
    return samples[a:] if end is None else samples[a:round(end * RATE)]


def fit(samples: np.ndarray | None, seconds: float) -> np.ndarray:
    """`samples` cut or padded with silence to `seconds` (silence for no samples)."""
    n = round(seconds * RATE)
    out = np.zeros(n, dtype=np.int16)
    if samples is not None:
        out[:min(n, len(samples))] = samples[:n]
    return out
