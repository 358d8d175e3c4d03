"""Join finished chapter clips by stream copy (never re-encode) and probe videos, with PyAV.

Clips may have variable frame timing: a held frame is stored once with the length of the
hold as its duration (fastmanim.encoder). Every timestamp stays on the 1/fps grid.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
from attention_video.pipeline.outputs import audio
from attention_video.pipeline.outputs.mp4box import switch_off_subtitles
from attention_video.pipeline.outputs.subtitles import (
    ASS_HEADER,
    cue_text,
    kept_cues,
    mov_text_cue,
    mov_text_payload,
)

Cues = list[tuple[float, float, str]]
SUBTITLE_TB = Fraction(1, 1000)  # cue times in milliseconds, as .srt and .vtt keep them
TRACK_NAMES = {True: "Captions", False: "Captions (also drawn in the picture)"}


@dataclass(frozen=True)
class VideoInfo:
    width: int
    height: int
    codec: str
    pix_fmt: str
    fps: float  # the frame rate every timestamp is a multiple of (not frames ÷ seconds)
    duration: float  # seconds
    frames: int  # frames shown at fps: a held frame counts once per frame period
    stored: int = 0  # frames stored in the file


def probe(path: str | Path) -> VideoInfo:
    """Read the video stream's format and length (the stream's own, else from its packets)."""
    with av.open(str(path)) as c:
        s = c.streams.video[0]
        end, n = 0, 0
        for pkt in c.demux(s):
            if pkt.pts is None:
                continue
            n += 1
            end = max(end, pkt.pts + (pkt.duration or 0))
        if s.duration is not None:  # the edit list's: read durations are decode-time steps
            end = s.duration + (s.start_time or 0)
        tb = s.time_base or Fraction(1, 1)
        fps = s.base_rate or s.average_rate or 0  # FFmpeg's r_frame_rate: the timestamp grid
        return VideoInfo(s.codec_context.width, s.codec_context.height, s.codec_context.name,
                         s.codec_context.pix_fmt or "", float(fps), float(end * tb),
                         round(float(end * tb * fps)), n)


def frame_at(path: str | Path, seconds: float) -> np.ndarray:
    """The picture shown `seconds` into the video, as an RGB array (height, width, 3):
    the last frame that starts at or before that time. Seeks like a player does (to the
    keyframe before, by decode time), so a wrong decode time shows as a wrong picture."""
    try:
        return _frame_at(path, seconds, seek=True)
    except av.error.InvalidDataError:  # a WebM without cues can seek off a keyframe
        return _frame_at(path, seconds, seek=False)


def _frame_at(path: str | Path, seconds: float, seek: bool) -> np.ndarray:
    with av.open(str(path)) as c:
        s = c.streams.video[0]
        if seek:
            c.seek(int(seconds / s.time_base), stream=s, backward=True)
        shown = None
        for frame in c.decode(s):
            if frame.time is not None and frame.time > seconds + 1e-6:
                break
            shown = frame
        if shown is None:
            raise ValueError(f"{path} has no frame at {seconds} s")
        return shown.to_ndarray(format="rgb24")


def join(clips: list[Path], out: Path, container: str = "mp4",
         faststart: bool = True, keep_track: bool = True,
         warn: Callable[[str], None] = lambda s: None, cues: Cues | None = None,
         cues_on: bool = True, language: str = "en",
         marks: Cues | None = None) -> float:
    """Concatenate clips of identical format into `out` by copying packets; returns seconds.

    Narrated clips (an audio track each, pipeline.outputs.audio; with --describe a second,
    the described narration) give `out` one AAC track per track: their
    sound decoded, laid at each clip's start and encoded once for the whole video (kept,
    pipeline.outputs.audio.aac_track, unless `keep_track` is False: then made beside `out`
    and removed; `warn` hears of a damaged kept track); the video packets are still copied.

    Each clip's timestamps are shifted by the length of the clips before it, and the
    decode timestamps of the whole are derived again (decode_times): a held frame stored
    once is followed by a clip whose B-frames start decoding before its first frame shows.
    The moov atom goes first (faststart) so the file plays while it loads in browsers and
    slides. `container` is "mp4" or "mov" (the output's extension; `out` may be a
    temporary name). `cues` (video seconds) become a mov_text subtitle track, switched on
    by default only when `cues_on` (off when the picture shows the captions already).
    `marks` (start, end, title in video seconds) become the file's chapters, which players
    list and jump between (ffprobe -show_chapters).
    """
    if not clips:
        raise ValueError("no clips to join")
    options = {"movflags": "+faststart"} if faststart else {}
    with av.open(str(out), "w", format=container, options=options) as dst:
        with av.open(str(clips[0])) as first:
            template = first.streams.video[0]
            ostream = dst.add_stream_from_template(template)
            rate = template.base_rate or template.average_rate or 30
        subtitles = (add_subtitle_track(dst, "mov_text", cues, cues_on, language)
                     if cues is not None else [])
        if marks:
            dst.set_chapters(chapter_list(marks))
        packets: list[av.Packet] = []
        offset = 0  # in ostream's time base, once muxing has fixed it
        sounds: list[tuple[int, int, Path]] = []  # (start, end, clip) of each clip with sound
        tracks = 0  # the most audio tracks of a clip: the narration, the described one
        for clip in clips:
            with av.open(str(clip)) as src:
                narrated = bool(src.streams.audio)
                tracks = max(tracks, len(src.streams.audio))
                s = src.streams.video[0]
                tb, otb = s.time_base, ostream.time_base or s.time_base
                end = last = offset
                for pkt in src.demux(s):
                    if pkt.pts is None:
                        continue
                    pkt.pts = offset + round(pkt.pts * tb / otb)
                    # The clip ends when the frame shown last does. An MP4 stores a frame's
                    # length as the gap to the next decode time, so a frame decoded just
                    # before a hold's jump in decode times reads as long as the hold.
                    if pkt.pts >= last:
                        last = pkt.pts
                        end = pkt.pts + round((pkt.duration or 0) * tb / otb)
                    pkt.time_base, pkt.stream = otb, ostream
                    packets.append(pkt)
                if narrated:
                    sounds.append((offset, end, clip))
                offset = end
        otb = ostream.time_base or Fraction(1)
        period = max(1, round(1 / (rate * otb)))  # one frame, in ticks of otb
        times = decode_times([p.pts for p in packets], period)
        # Each frame shows until the next one starts (a held frame for the whole hold), the
        # last until the end: the muxer's edit list ends the video at the latest pts + duration.
        shown = sorted(p.pts for p in packets) + [offset]
        until = dict(zip(shown, shown[1:]))
        for pkt, dts in zip(packets, times):
            pkt.dts, pkt.duration = dts, until[pkt.pts] - pkt.pts
        seconds = float(offset * otb)
        if sounds:
            timelines = [audio.fit(None, seconds) for _ in range(tracks)]
            for start, end, clip in sounds:
                a, b = (round(float(t * otb) * audio.RATE) for t in (start, end))
                for k, timeline in enumerate(timelines):  # a clip that described nothing
                    # has the narration alone: it is its described narration too
                    sound = audio.read_track(clip, index=k) if k else None
                    if sound is None:
                        sound = audio.read_track(clip)
                    timeline[a:b] = audio.fit(sound, (b - a) / audio.RATE)
            with ExitStack() as kept:
                made = [kept.enter_context(audio.aac_track(t, Path(out).parent, keep_track, warn))
                        for t in timelines]
                roles = audio.roles(len(made), _iso639_2(language)) if len(made) > 1 else [None]
                audio.add_kept_tracks(dst, list(zip(made, roles)), packets)
        else:
            for pkt in packets:
                dst.mux(pkt)
        for pkt in subtitles:  # the muxer interleaves them (a few hundred small packets)
            dst.mux(pkt)
    if cues is not None and not cues_on:  # the muxer enabled it anyway: off, as asked (mp4box)
        switch_off_subtitles(Path(out))
    return seconds


MARK_TIME_BASE = Fraction(1, 1000)  # chapters in milliseconds


def chapter_list(marks: Cues) -> list[dict]:
    """Chapters as PyAV writes them: (start, end, title) in seconds → its Chapter records."""
    return [{"id": n, "start": round(a / MARK_TIME_BASE), "end": round(b / MARK_TIME_BASE),
             "time_base": MARK_TIME_BASE, "metadata": {"title": title}}
            for n, (a, b, title) in enumerate(marks, 1)]


def add_subtitle_track(dst: av.container.OutputContainer, codec: str, cues: Cues,
                       on: bool, language: str = "en") -> list[av.Packet]:
    """Add a text subtitle stream (mov_text for MP4/MOV, webvtt for WebM) to `dst`, before
    anything is muxed, and return its packets to mux. `on`: flagged default, which players
    show without being asked; otherwise it is listed, switchable, and off."""
    stream = dst.add_stream(codec)
    stream.time_base = SUBTITLE_TB
    stream.codec_context.subtitle_header = ASS_HEADER  # the encoders refuse to open without
    stream.metadata["language"] = _iso639_2(language)
    # The name players list it by; it also tells a later WebM whether the track was on (an
    # MP4 muxer enables the only subtitle track whatever the flag: join switches it off).
    stream.metadata["title"] = stream.metadata["handler_name"] = TRACK_NAMES[on]
    stream.disposition = av.stream.Disposition.default if on else av.stream.Disposition(0)
    packets = []
    for start, end, text in kept_cues(cues):
        data = mov_text_payload(text) if codec == "mov_text" else cue_text(text).encode("utf-8")
        pkt = av.Packet(data)
        pkt.stream, pkt.time_base = stream, SUBTITLE_TB
        pkt.pts = pkt.dts = round(start * 1000)
        pkt.duration = round(end * 1000) - pkt.pts
        packets.append(pkt)
    return packets


def subtitle_track(path: str | Path) -> tuple[Cues, bool, str] | None:
    """The first subtitle track of a video as (cues in seconds, on by default, language),
    or None when it has none."""
    with av.open(str(path)) as c:
        if not c.streams.subtitles:
            return None
        s = c.streams.subtitles[0]
        name = s.metadata.get("handler_name") or s.metadata.get("title")
        on = name != TRACK_NAMES[False] and bool(s.disposition & av.stream.Disposition.default)
        language = s.metadata.get("language", "und")
        cues = []
        for pkt in c.demux(s):
            if pkt.pts is None or not pkt.size:
                continue
            text = mov_text_cue(bytes(pkt)) if s.codec_context.name == "mov_text" \
                else bytes(pkt).decode("utf-8", errors="replace")
            if text:
                start = float(pkt.pts * pkt.time_base)
                cues.append((start, start + float((pkt.duration or 0) * pkt.time_base), text))
        return cues, on, language


_ISO639_2 = {"en": "eng", "zh": "chi", "es": "spa"}


def _iso639_2(language: str) -> str:
    """The three-letter code MP4 and Matroska store (two-letter codes pass through)."""
    return _ISO639_2.get(language, language)


def decode_times(pts: list[int], period: int) -> list[int]:
    """Decode timestamps for packets in decode order shown at `pts`: each as late as it
    can be, never after its own pts and at least one `period` before the next packet's.

    MP4 demuxers seek by decode time, so a keyframe after a long held frame must not
    decode long before it shows: counting d packets back through the sorted pts (as
    x264 does) would give it the held frame's time, and a seek into the hold would land
    on it. Within constant-rate stretches this gives x264's own timestamps.
    """
    times = list(pts)
    for i in range(len(times) - 2, -1, -1):
        times[i] = min(times[i], times[i + 1] - period)
    return times
