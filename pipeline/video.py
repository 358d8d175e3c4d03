"""Join finished chapter clips by stream copy (never re-encode) and probe videos, with PyAV."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import av


@dataclass(frozen=True)
class VideoInfo:
    width: int
    height: int
    codec: str
    pix_fmt: str
    fps: float
    duration: float  # seconds
    frames: int


def probe(path: str | Path) -> VideoInfo:
    """Read the video stream's format; counts packets for an exact duration."""
    with av.open(str(path)) as c:
        s = c.streams.video[0]
        end, n = 0, 0
        for pkt in c.demux(s):
            if pkt.pts is None:
                continue
            n += 1
            end = max(end, pkt.pts + (pkt.duration or 0))
        tb = s.time_base or Fraction(1, 1)
        return VideoInfo(s.codec_context.width, s.codec_context.height, s.codec_context.name,
                         s.codec_context.pix_fmt or "", float(s.average_rate or 0),
                         float(end * tb), n)


def join(clips: list[Path], out: Path, container: str = "mp4") -> float:
    """Concatenate clips of identical format into `out` by copying packets; returns seconds.

    Timestamps of each clip are shifted by the length of the clips before it. The moov
    atom goes first (faststart) so the file plays while it loads in browsers and slides.
    `container` is "mp4" or "mov" (the output's extension; `out` may be a temporary name).
    """
    if not clips:
        raise ValueError("no clips to join")
    offset = Fraction(0)  # seconds
    with av.open(str(out), "w", format=container, options={"movflags": "+faststart"}) as dst:
        with av.open(str(clips[0])) as first:
            ostream = dst.add_stream_from_template(first.streams.video[0])
        for clip in clips:
            with av.open(str(clip)) as src:
                s = src.streams.video[0]
                tb = s.time_base
                shift = int(round(offset / ostream.time_base)) if ostream.time_base else 0
                end = 0
                for pkt in src.demux(s):
                    if pkt.dts is None:
                        continue
                    end = max(end, pkt.pts + (pkt.duration or 0))
                    if tb != ostream.time_base:
                        pkt.pts = int(round(pkt.pts * tb / ostream.time_base))
                        pkt.dts = int(round(pkt.dts * tb / ostream.time_base))
                        if pkt.duration:
                            pkt.duration = int(round(pkt.duration * tb / ostream.time_base))
                    pkt.pts += shift
                    pkt.dts += shift
                    pkt.stream = ostream
                    dst.mux(pkt)
                offset += end * tb
    return float(offset)
