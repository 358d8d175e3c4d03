"""The narration's sound, with PyAV: each chapter's speech laid on its timeline and kept in
its clip, then one audio track for the whole video.

A chapter clip carries its narration as FLAC (lossless), so it travels with the clip: into
the cache, and back from a Dask worker as the clip's bytes. The joined video gets one AAC
track encoded from the whole timeline (pipeline.outputs.video.join), brought to −16 LUFS
with no true peak over −1 dBTP (EBU R128, as web video and podcasts are; Piper speaks at
about −21 LUFS with peaks at full scale): AAC is never stream-copied
from clip to clip, since each encoding starts with its own priming samples. That encoding
is kept in the cache folder under the hash of the timeline's samples, so a video joined
again from the same clips copies it whole. A WebM gets
Opus from the video's track (pipeline.outputs.formats); each step of a deck, AAC of its own
stretch (pipeline.outputs.slides), brought to the same standard.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import av
import av.filter
import numpy as np
from attention_video.pipeline.cache.disk import free_space, is_full
from attention_video.pipeline.cache.limits import human_size, touch
from attention_video.pipeline.cache.paths import cache_dir
from attention_video.pipeline.cache.store import sha256_of
from attention_video.pipeline.records import OutputError
from scipy.ndimage import minimum_filter1d, uniform_filter1d

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
    add_tracks(clip, [samples], codec)


def add_tracks(clip: Path, tracks: list[np.ndarray], codec: str = "flac") -> None:
    """Give `clip` (a silent MP4) one audio track per array of `tracks`, in that order (a
    chapter clip: the narration, then, with --describe, the described narration)."""
    tmp = clip.with_name(f".{clip.name}.audio.mp4")
    try:
        with av.open(str(clip)) as src, av.open(str(tmp), "w", format="mp4",
                                                options={"movflags": "+faststart"}) as dst:
            template = src.streams.video[0]
            video = dst.add_stream_from_template(template)
            sounds = [add_stream(dst, codec) for _ in tracks]
            packets = [p for p in src.demux(template) if p.pts is not None]
            for p in packets:
                p.stream = video
            interleave(dst, packets, [p for s, t in zip(sounds, tracks) for p in encode(s, t)])
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


def aac_track_name(timeline: np.ndarray) -> str:
    """The kept track's file name: the hash of the timeline and of how it is encoded."""
    h = hashlib.sha256(f"aac fast {AAC_BITRATE} {RATE} {av.__version__} R128 {TARGET_LUFS} "
                       f"{CEILING_DBTP} {LIMITER_SECONDS} recorded ".encode())  # (tracks before records: unread)
    h.update(np.ascontiguousarray(timeline, dtype="<i2").tobytes())
    return f"{h.hexdigest()[:32]}.m4a"


@contextmanager
def aac_track(timeline: np.ndarray, spare: Path, keep: bool = True,
              warn: Callable[[str], None] = lambda s: None) -> Iterator[Path]:
    """An .m4a file holding the AAC encoding of `timeline` (int16 mono at RATE) brought to
    the online loudness standard (normalise), for the block's length.

    Kept in the cache folder's TRACKS and served only if its size and SHA-256 are the
    recorded ones (else made again, with one `warn` line; a folder or file in the way is
    removed). Not kept (`keep` False: --no-cache; the cache's disk full or unwritable): made
    in `spare`, the output's own folder, and removed after. A full `spare` is one
    OutputError line naming its folder."""
    folder = cache_dir() / TRACKS
    path = folder / aac_track_name(timeline)
    if keep and not is_full(folder):
        kept = _kept_track(path, warn)
        if kept is None:
            try:
                kept = _keep_track(path, timeline)
            except OSError as e:
                warn(f"the audio track cannot be kept in {folder} ({e.strerror or e}); "
                     "making it beside the output")
        if kept is not None:
            yield kept
            return
    spare = Path(spare)
    try:
        fd, tmp = tempfile.mkstemp(prefix=".audio-track.", suffix=".m4a", dir=spare)
        os.close(fd)
    except OSError as e:
        raise _no_room(spare, e) from None
    try:
        try:
            _encode_track(Path(tmp), timeline)
        except OSError as e:
            raise _no_room(spare, e) from None
        yield Path(tmp)
    finally:
        Path(tmp).unlink(missing_ok=True)


def _no_room(folder: Path, e: OSError) -> OSError:
    """An error about the output's folder that names it, never a hidden file in it."""
    if e.errno == errno.ENOSPC:
        return OutputError(f"the disk of {folder} is full ({human_size(free_space(folder) or 0)} "
                           "free) while writing the video's audio track; free some space "
                           "and rerun (earlier output left as it was)")
    return OutputError(f"the video's audio track cannot be written in {folder} "
                       f"({e.strerror or e})")


def _record(path: Path) -> Path:
    return path.with_suffix(".json")


def _kept_track(path: Path, warn: Callable[[str], None]) -> Path | None:
    """The kept track at `path` if it is the recorded one (size, SHA-256); None when
    missing or damaged (with one `warn` line)."""
    if not os.path.lexists(path):
        return None
    try:
        record = json.loads(_record(path).read_text(encoding="utf-8"))
        if not path.is_file():
            raise ValueError("it is not a file")
        if path.stat().st_size != record["size"] or sha256_of(path) != record["sha256"]:
            raise ValueError("it is not the one recorded")
    except FileNotFoundError:
        why = "its record is missing"
    except (OSError, ValueError, KeyError, TypeError) as e:
        why = str(e) if isinstance(e, ValueError) and str(e).startswith("it") else \
            f"it cannot be read: {getattr(e, 'strerror', None) or e}"
    else:
        touch(path)
        return path
    warn(f"the kept audio track {path} is damaged ({why}); making it again")
    return None


def _keep_track(path: Path, timeline: np.ndarray) -> Path:
    """Encode the track into the cache: under a unique name, then renamed, its record
    first (a reader that finds the track finds its record)."""
    folder = path.parent
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        folder.unlink()  # a file where the folder belongs: the folder is ours to make
    folder.mkdir(parents=True, exist_ok=True)
    for p in (path, _record(path)):
        if p.is_symlink() or (p.exists() and not p.is_file()):
            shutil.rmtree(p) if p.is_dir() and not p.is_symlink() else p.unlink()
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=".m4a", dir=folder)
    os.close(fd)
    try:
        _encode_track(Path(tmp), timeline)
        record = {"size": Path(tmp).stat().st_size, "sha256": sha256_of(Path(tmp))}
        with open(tmp + ".json", "w", encoding="utf-8") as f:
            json.dump(record, f)
        os.replace(tmp + ".json", _record(path))
        os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)
        Path(tmp + ".json").unlink(missing_ok=True)
    return path


def _encode_track(path: Path, timeline: np.ndarray) -> None:
    with av.open(str(path), "w", format="mp4") as dst:
        stream = add_stream(dst, "aac")
        for p in encode(stream, normalise(timeline)):
            dst.mux(p)


def add_kept_track(container: av.container.OutputContainer, track: Path,
                   video: list[av.Packet]) -> None:
    """Mux `video` with the AAC packets of `track` (one encoding, copied whole)."""
    add_kept_tracks(container, [(track, None)], video)


@dataclass(frozen=True)
class Role:
    """What a video's audio track is, as players list it: its language, its name and its
    disposition (a described narration is flagged for the visually impaired)."""

    title: str
    language: str  # ISO 639-2, as MP4 and Matroska store it
    default: bool = False
    described: bool = False


NARRATION = "Narration"  # the names players list the tracks by
DESCRIBED = "Narration with descriptions of the picture"


def roles(count: int, language: str) -> list[Role]:
    """The roles of a video's `count` audio tracks: the narration (on by default), then,
    with --describe, the described narration."""
    both = [Role(NARRATION, language, default=True), Role(DESCRIBED, language, described=True)]
    return both[:count]


def label(stream: av.AudioStream, role: Role | None) -> None:
    """Name a track for the players' lists: language, title, handler name, disposition."""
    if role is None:
        return
    stream.metadata["language"] = role.language
    stream.metadata["title"] = stream.metadata["handler_name"] = role.title
    flags = av.stream.Disposition(0)
    if role.default:
        flags |= av.stream.Disposition.default
    if role.described:
        flags |= av.stream.Disposition.visual_impaired | av.stream.Disposition.descriptions
    stream.disposition = flags


def add_kept_tracks(container: av.container.OutputContainer,
                    tracks: list[tuple[Path, Role | None]], video: list[av.Packet]) -> None:
    """Mux `video` with the AAC packets of each kept track (each one encoding, copied
    whole), each labelled with its role."""
    audio_packets: list[av.Packet] = []
    for track, role in tracks:
        with av.open(str(track)) as src:
            template = src.streams.audio[0]
            stream = container.add_stream_from_template(template)
            label(stream, role)
            packets = [p for p in src.demux(template) if p.size]
        for p in packets:
            p.stream = stream
        audio_packets += packets
    interleave(container, video, audio_packets)


def track_count(path: Path) -> int:
    """How many audio tracks a file has."""
    with av.open(str(path)) as c:
        return len(c.streams.audio)


def read_track(path: Path, start: float = 0.0, end: float | None = None,
               index: int = 0) -> np.ndarray | None:
    """Audio track `index` of a file as int16 mono at RATE, from `start` to `end` seconds
    (None: to its end); None when it has no such track."""
    with av.open(str(path)) as c:
        if len(c.streams.audio) <= index:
            return None
        stream = c.streams.audio[index]
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


# ---- loudness: the online standard (EBU R128 measurement, −16 LUFS, true peak ≤ −1 dBTP) --
TARGET_LUFS = -16.0  # integrated loudness of the narration in every output (podcasts, web video)
PEAK_DBTP = -1.0  # highest true peak allowed in every output
CEILING_DBTP = -2.0  # what the limiter aims for before AAC, whose decoded peaks rise ≤ 0.1 dB
OPUS_CEILING_DBTP = -3.0  # before Opus, whose decoded peaks rose up to 1.3 dB on the narration
LIMITER_SECONDS = 0.04  # the gain falls over this long before a peak and rises as long after
OVERSAMPLE = 4  # true peaks are read 4× oversampled (ITU-R BS.1770's way)
_TAPS = 24  # each side of the interpolating filter


@dataclass(frozen=True)
class Loudness:
    integrated: float  # LUFS (−inf for silence)
    true_peak: float  # dBTP


def loudness(samples: np.ndarray, rate: int = RATE, peak: bool = True) -> Loudness:
    """Integrated loudness and true peak of int16 mono `samples`, by FFmpeg's ebur128
    filter (ITU-R BS.1770-4 with the R128 gates; true peak 4× oversampled; without `peak`,
    quicker, and the peak is nan)."""
    graph = av.filter.Graph()
    source = graph.add_abuffer(format="s16", sample_rate=rate, layout="mono",
                               time_base=Fraction(1, rate))
    meter = graph.add("ebur128", "metadata=1" + (":peak=true" if peak else ""))
    sink = graph.add("abuffersink")
    graph.link_nodes(source, meter, sink).configure()
    found: dict[str, str] = {}

    def drain() -> None:
        while True:
            try:
                found.update(sink.pull().metadata)
            except (av.BlockingIOError, av.EOFError):
                return

    for a in range(0, len(samples), 4800):
        frame = av.AudioFrame.from_ndarray(
            np.ascontiguousarray(samples[None, a:a + 4800], dtype=np.int16),
            format="s16", layout="mono")
        frame.sample_rate, frame.pts, frame.time_base = rate, a, Fraction(1, rate)
        source.push(frame)
        drain()
    source.push(None)
    drain()
    top = float(found.get("lavfi.r128.true_peak", "nan"))
    return Loudness(float(found.get("lavfi.r128.I", "-inf")),
                    20 * np.log10(top) if top > 0 else (-np.inf if top == 0 else np.nan))


def _true_peaks(x: np.ndarray) -> np.ndarray:
    """Each sample's true peak: the largest magnitude of it and the OVERSAMPLE − 1 values
    between it and the next, interpolated by a Hann-windowed sinc (what a DAC draws)."""
    k = np.arange(-_TAPS, _TAPS + 1)
    peaks = np.abs(x)  # (N,)
    for phase in range(1, OVERSAMPLE):
        h = np.sinc(k + phase / OVERSAMPLE) * np.hanning(len(k) + 2)[1:-1]  # (2 TAPS + 1,)
        peaks = np.maximum(peaks, np.abs(np.convolve(x, h / h.sum(), mode="same")))
    return peaks


def _limit(x: np.ndarray, peaks: np.ndarray, ceiling: float, rate: int) -> np.ndarray:
    """`x` (float, full scale 1; `peaks` its true peaks) with every true peak brought under
    `ceiling` (linear) by a smooth gain: the gain each sample needs, the least of it within
    ±LIMITER_SECONDS, averaged over as long: never above what any sample needs, and without
    clicks."""
    needed = np.minimum(1.0, ceiling / np.maximum(peaks, 1e-12))  # (N,)
    width = 2 * round(LIMITER_SECONDS * rate) + 1
    gain = uniform_filter1d(minimum_filter1d(needed, width, mode="nearest"), width,
                            mode="nearest")
    return x * np.minimum(gain, needed)  # (the average's rounding never lets a peak through)


def normalise(samples: np.ndarray, rate: int = RATE, target: float = TARGET_LUFS,
              ceiling: float = CEILING_DBTP) -> np.ndarray:
    """int16 mono `samples` at `target` LUFS integrated with no true peak over `ceiling`
    dBTP (EBU R128 as the web and podcasts use it: Piper's speech comes at about −21 LUFS
    with peaks at full scale). A gain to the target, then the peaks limited; limiting takes
    some loudness away, so the gain is found again from each measurement (the secant
    through the last two), to within 0.1 LU. Silence stays as it is."""
    measured = loudness(samples, rate).integrated
    if len(samples) == 0 or not np.isfinite(measured):
        return samples
    x = samples.astype(np.float64) / 32768
    peaks, limit = _true_peaks(x), 10 ** (ceiling / 20)
    tried: list[tuple[float, float]] = []  # (gain in dB, loudness it gave)
    gain_db, out = target - measured, samples
    for _ in range(6):
        gain = 10 ** (gain_db / 20)
        out = np.round(_limit(x * gain, peaks * gain, limit, rate) * 32768)
        out = np.clip(out, -32768, 32767).astype(np.int16)
        tried.append((gain_db, loudness(out, rate, peak=False).integrated))
        if abs(tried[-1][1] - target) < 0.1:
            break
        slope = 1.0  # LU per dB of gain: 1 without limiting, less with it
        if len(tried) > 1 and tried[-1][0] != tried[-2][0]:
            slope = max(0.1, (tried[-1][1] - tried[-2][1]) / (tried[-1][0] - tried[-2][0]))
        gain_db += (target - tried[-1][1]) / slope
    return out
