"""More formats from the finished MP4, with PyAV and no re-render: a GIF for slide tools
that cannot play video (palette-optimised, 480p by default, silent) and a WebM (VP9, and
Opus when the video is narrated) for web pages. Each is written atomically beside the
video, with the same stem."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import av
import av.filter
from attention_video.pipeline.outputs import audio
from attention_video.pipeline.outputs import video as video_io
from attention_video.pipeline.outputs.files import atomic_output

FORMATS = ("mp4", "gif", "webm")  # what --format takes; mp4 is the video itself, the source
GIF_HEIGHT = 480  # pixels; never scaled up
GIF_FPS = 10  # frames per second: enough for fades, a quarter of the size of 30
WEBM_CRF = "33"  # VP9 constant quality (0 best … 63 worst): text stays sharp
# libvpx "realtime", cpu-used 8: ~8× quicker than "good"/5 on these flat frames, a little larger.


@dataclass(frozen=True)
class Derived:
    format: str
    path: Path
    size: int  # bytes


def parse_formats(text: str) -> tuple[str, ...]:
    """'gif,webm' → ('mp4', 'gif', 'webm'): the video is always made; ValueError names
    the unknown format and the allowed ones."""
    asked = [f.strip().lower().lstrip(".") for f in text.split(",") if f.strip()]
    unknown = [f for f in asked if f not in FORMATS]
    if unknown or not asked:
        raise ValueError(f"{unknown[0] if unknown else text!r} is not a format; allowed: "
                         f"{', '.join(FORMATS)} (any of them, comma-separated)")
    return tuple(f for f in FORMATS if f == "mp4" or f in asked)


def _frames(video: Path, steps: list[tuple[str, str]]) -> Iterator[av.VideoFrame]:
    """The video's frames through a chain of FFmpeg filters, (name, arguments)."""
    with av.open(str(video)) as src:
        stream = src.streams.video[0]
        graph = av.filter.Graph()
        chain = [graph.add_buffer(template=stream)]
        for name, args in steps:
            chain.append(graph.add(name, args))
        chain.append(graph.add("buffersink"))
        graph.link_nodes(*chain).configure()
        for frame in src.decode(stream):
            graph.push(frame)
            yield from _pull(graph)
        graph.push(None)
        yield from _pull(graph)


def _pull(graph: av.filter.Graph) -> Iterator[av.VideoFrame]:
    while True:
        try:
            yield graph.pull()
        except (av.BlockingIOError, av.EOFError):
            return


def _scale(video: Path, height: int) -> str:
    """Arguments of FFmpeg's scale filter: `height` pixels high (never scaled up), even width."""
    with av.open(str(video)) as src:
        height = min(height, src.streams.video[0].height)
    return f"-2:{height - height % 2}:flags=lanczos"


def write_gif(video: Path, out: Path, height: int = GIF_HEIGHT, fps: int = GIF_FPS) -> int:
    """A looping GIF of `video`: one palette made for the whole video (first pass), then
    every frame mapped onto it, only the changed rectangle stored (second pass). Sampled
    at `fps` by timestamp (a held frame fills as many GIF frames as its hold covers), each
    GIF frame the picture the video shows when it starts (round=up: never a picture early)."""
    scale_args = _scale(video, height)
    palettes = _frames(video, [("fps", f"{fps}:round=up"), ("scale", scale_args),
                               ("palettegen", "stats_mode=diff:max_colors=256")])
    palette = next(iter(palettes), None)  # palettegen gives one frame, after the last
    if palette is None:
        raise ValueError(f"{video} has no frames")
    with av.open(str(video)) as src:
        stream = src.streams.video[0]
        graph = av.filter.Graph()
        source = graph.add_buffer(template=stream)
        pal_src = graph.add_buffer(width=palette.width, height=palette.height,
                                   format=palette.format.name, time_base=Fraction(1, 1))
        fps_node = graph.add("fps", f"{fps}:round=up")
        scale = graph.add("scale", scale_args)
        use = graph.add("paletteuse", "dither=bayer:bayer_scale=3:diff_mode=rectangle")
        sink = graph.add("buffersink")
        source.link_to(fps_node)
        fps_node.link_to(scale)
        scale.link_to(use, 0, 0)
        pal_src.link_to(use, 0, 1)
        use.link_to(sink)
        graph.configure()
        palette.pts, palette.time_base = 0, Fraction(1, 1)
        pal_src.push(palette)
        pal_src.push(None)  # one palette for every frame (framesync repeats the last)
        with av.open(str(out), "w", format="gif", options={"loop": "0"}) as dst:
            gif = None
            for frame in src.decode(stream):
                source.push(frame)
                for mapped in _pull(graph):
                    if gif is None:
                        gif = dst.add_stream("gif", rate=fps)
                        gif.width, gif.height, gif.pix_fmt = mapped.width, mapped.height, "pal8"
                    dst.mux(gif.encode(mapped))
            source.push(None)
            for mapped in _pull(graph):
                dst.mux(gif.encode(mapped))
            dst.mux(gif.encode(None))
    return out.stat().st_size


def grid_rate(stream: av.VideoStream) -> Fraction:
    """The frame rate every timestamp of `stream` is a multiple of (FFmpeg's r_frame_rate).

    Not the average rate: a held frame is stored once and shown for the whole hold
    (fastmanim.encoder), so frames ÷ seconds is a fraction of the real rate (4.5 against
    15 on the default video), and an encoder on that clock puts several frames on one
    timestamp."""
    return Fraction(stream.base_rate or stream.guessed_rate or stream.average_rate or 30)


def _timed(src: av.container.InputContainer,
           stream: av.VideoStream) -> Iterator[av.VideoFrame]:
    """`stream`'s frames as yuv420p, each lasting until the next one starts and the last
    until the video's end: the encoder and the muxer take a frame's length from its
    duration, so a held last frame would otherwise end the WebM when the hold begins."""
    end = (stream.duration + (stream.start_time or 0)) if stream.duration else None
    before = None
    for frame in src.decode(stream):
        if before is not None:
            before.duration = frame.pts - before.pts
            yield before
        before = frame.reformat(format="yuv420p")  # (a reformatted frame has no duration)
        before.pts, before.time_base, before.duration = frame.pts, frame.time_base, frame.duration
    if before is not None:
        if end is not None and end > before.pts:
            before.duration = end - before.pts
        yield before


def write_webm(video: Path, out: Path, crf: str = WEBM_CRF) -> int:
    """A WebM (VP9, constant quality) of `video` at its own size and timing: every frame
    at its own timestamp on the video's frame grid, a held frame stored once for its whole
    hold; its narration, if it has one, as Opus (encoded from the decoded sound, never
    copied; its peaks limited again, lower: Opus's decoded peaks overshoot more than AAC's).
    With --describe, the described narration too, a second Opus track named and in the
    language of the MP4's (WebM keeps no visually-impaired flag: its name says its role)."""
    sounds = [audio.read_track(video, index=k) for k in range(audio.track_count(video))]
    # each at the video's loudness, with room for Opus's overshoot
    sounds = [audio.normalise(s, ceiling=audio.OPUS_CEILING_DBTP) for s in sounds]
    with av.open(str(video)) as src, av.open(str(out), "w", format="webm") as dst:
        stream = src.streams.video[0]
        vp9 = dst.add_stream("libvpx-vp9", rate=grid_rate(stream),
                             options={"crf": crf, "b:v": "0", "deadline": "realtime",
                                      "cpu-used": "8", "row-mt": "1", "threads": "4"})
        vp9.width, vp9.height, vp9.pix_fmt = stream.width, stream.height, "yuv420p"
        pending = []
        for sound, role in zip(sounds, _roles(src)):
            opus = audio.add_stream(dst, "libopus")
            audio.label(opus, role)
            pending += audio.encode(opus, sound)
        pending.sort(key=lambda p: float((p.pts or 0) * p.time_base), reverse=True)
        dst.set_chapters(src.chapters())  # the MP4's chapter marks, for the player's menu
        track = video_io.subtitle_track(video)  # --captions soft/both: the MP4's, as WebVTT
        cues = video_io.add_subtitle_track(dst, "webvtt", *track) if track else []
        # (sorted latest first: popped from the end, the earliest first)

        shown: dict[Fraction, Fraction] = {}  # each frame's start → its length, in seconds

        def mux(packets: list[av.Packet]) -> None:  # each with the sound up to its time
            for p in packets:
                t = float(p.pts * p.time_base) if p.pts is not None else 0.0
                if p.pts is not None and p.pts * p.time_base in shown:  # (libvpx sets none)
                    p.duration = round(shown[p.pts * p.time_base] / p.time_base)
                while pending and float((pending[-1].pts or 0) * pending[-1].time_base) <= t:
                    dst.mux(pending.pop())
                dst.mux(p)

        for frame in _timed(src, stream):
            shown[frame.pts * frame.time_base] = frame.duration * frame.time_base
            mux(vp9.encode(frame))
        mux(vp9.encode(None))
        while pending:
            dst.mux(pending.pop())
        for p in cues:
            dst.mux(p)
    return out.stat().st_size


def _roles(src: av.container.InputContainer) -> list[audio.Role | None]:
    """The roles of a video's audio tracks (None: a lone narration, as it was)."""
    tracks = src.streams.audio
    if len(tracks) < 2:
        return [None] * len(tracks)
    return audio.roles(len(tracks), tracks[0].metadata.get("language", "und"))


WRITERS = {"gif": write_gif, "webm": write_webm}


def derive_formats(video: Path, formats: tuple[str, ...]) -> list[Derived]:
    """Write each asked format but mp4 beside `video` (same stem), atomically."""
    video = Path(video)
    made = []
    for fmt in formats:
        if fmt not in WRITERS:
            continue
        final = video.with_suffix(f".{fmt}")
        with atomic_output(final) as tmp:
            size = WRITERS[fmt](video, tmp)
        made.append(Derived(fmt, final, size))
    return made
