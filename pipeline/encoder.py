"""Chapter clips without paying for frames that do not change.

Manim hands its file writer a held frame (``self.wait``: nothing moves) once, with a
repeat count, and its segment encoder then converts and encodes the same picture that
many times. Here a held frame is converted and encoded once and stored with the length
of the hold as its duration: the MP4 gets variable frame timing (every timestamp still
on the 1/fps grid), each hold one keyframe. Frames that move are encoded as before,
with the same conversion and the same x264 settings.

`StageClock` adds up where a chapter's time goes (for benchmarks/bench_render.py).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any, ClassVar

import av
from manim.renderer.cairo_renderer import CairoRenderer
from manim.scene.scene_file_writer import SceneFileWriter
from manim.scene.video_segment_encoder import VideoSegmentEncoder
from manim.typing import RGBAPixelArray

from pipeline.video import join

STAGES = ("draw", "convert", "encode", "segments", "join")
# Encoded frame by frame, the first frame of a hold gets a low quantiser from x264's
# lookahead (mb-tree: the identical frames after it all refer to it); a lone frame at the
# same crf gets a high one and looks worse (36 dB against 45.5 dB, 1080p crf 23). Capping
# the hold frame's quantiser at the crf's value gives it back (46.2 dB). qpmax, unlike
# crf, is not written into the PPS, so every segment still joins by stream copy.


@dataclass
class StageClock:
    """Seconds spent per stage of one chapter's render, summed over calls.

    draw: Cairo drawing of the frames (main thread); convert: RGBA → YUV 4:2:0;
    encode: x264 and the MP4 muxer (wall time of the calls: x264's own threads are
    not counted); segments: opening and flushing one encoder per animation;
    join: joining the segments into the chapter clip. convert, encode and segments run
    on the encoder threads, beside the drawing.
    """

    seconds: dict[str, float] = field(default_factory=lambda: dict.fromkeys(STAGES, 0.0))
    frames_shown: int = 0  # frames a constant-rate clip would hold
    frames_stored: int = 0  # frames converted and encoded

    def reset(self) -> None:
        self.seconds = dict.fromkeys(STAGES, 0.0)
        self.frames_shown = self.frames_stored = 0

    @contextmanager
    def timing(self, stage: str) -> Iterator[None]:
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[stage] += time.perf_counter() - t0


CLOCK = StageClock()  # this process's; render_chapter resets it for each chapter


class HeldFrameEncoder(VideoSegmentEncoder):
    """Manim's segment encoder, but a frame repeated n times is encoded once and shown
    for n frame periods (its pts advances by n).

    `holds` is how a held frame is written; benchmarks/bench_render.py compares them:
    "once" (the default), "reuse" (converted once, encoded n times: constant frame
    rate) and "each" (converted and encoded n times, as Manim does).
    """

    holds: ClassVar[str] = "once"

    def __init__(self, *, target: Path, spec: Any) -> None:
        with CLOCK.timing("segments"):
            super().__init__(target=target, spec=spec)
        # Packets carry the frame's duration: the MP4 needs it for a segment's last frame.
        self._stream.codec_context.flags |= av.codec.context.Flags.frame_duration
        self._time_base = Fraction(spec.frame_rate.denominator, spec.frame_rate.numerator)
        self._reformatter = av.video.reformatter.VideoReformatter()

    def write_frame(self, pixels: RGBAPixelArray, *, repeat: int = 1) -> None:
        self._validate_frame(pixels, repeat)
        stored = 1 if self.holds == "once" else repeat
        if stored < repeat and self._next_pts == 0:  # a hold segment: its only frame
            self._sharpen()
        try:
            frame = None
            for _ in range(stored):
                if frame is None or self.holds == "each":
                    with CLOCK.timing("convert"):
                        frame = self._to_yuv(pixels)
                frame.pts, frame.time_base = self._next_pts, self._time_base
                frame.duration = repeat // stored
                self._next_pts += frame.duration
                with CLOCK.timing("encode"):
                    for packet in self._stream.encode(frame):
                        self._container.mux(packet)
        except BaseException as error:
            raise self._operation_error("encode", error) from error
        CLOCK.frames_shown += repeat
        CLOCK.frames_stored += stored

    def _sharpen(self) -> None:
        """Cap the quantiser of a hold's only frame (before the codec opens)."""
        options = dict(self._stream.codec_context.options)
        if "crf" in options:
            params = [p for p in options.get("x264-params", "").split(":") if p]
            options["x264-params"] = ":".join(params + [f"qpmax={options['crf']}"])
            self._stream.codec_context.options = options

    def _to_yuv(self, pixels: RGBAPixelArray) -> av.VideoFrame:
        """The conversion PyAV's encoder would do itself (same scaler, same threads), so
        the pixels are the ones Manim's own encoder produces."""
        cc = self._stream.codec_context
        rgba = av.VideoFrame.from_ndarray(pixels, format="rgba")
        return self._reformatter.reformat(rgba, cc.width, cc.height, cc.pix_fmt,
                                          threads=cc.thread_count)

    def finish(self) -> None:
        with CLOCK.timing("segments"):
            super().finish()


class HeldFrameWriter(SceneFileWriter):
    """Manim's file writer with held frames encoded once."""

    def _create_segment_encoder(self, target: Path) -> VideoSegmentEncoder:
        if self.video_encoder is None:
            raise RuntimeError("Video segment encoding requires resolved settings.")
        return HeldFrameEncoder(target=target, spec=self.video_encoder)

    def combine_to_movie(self) -> None:
        with CLOCK.timing("join"):
            super().combine_to_movie()

    def combine_files(self, input_files: list[str], output_file: Path,
                      create_gif: bool = False, includes_sound: bool = False) -> None:
        """The segments joined by stream copy, decode timestamps derived again (Manim's
        concat demuxer misplaces a segment of one held frame)."""
        if create_gif or includes_sound:
            raise RuntimeError("chapter clips are silent MP4s")
        output_file.parent.mkdir(parents=True, exist_ok=True)
        join([Path(f) for f in input_files], output_file, faststart=False)


class TimedRenderer(CairoRenderer):
    """Manim's Cairo renderer writing through HeldFrameWriter, its drawing timed."""

    def __init__(self, skip_animations: bool = False) -> None:
        super().__init__(file_writer_class=HeldFrameWriter, skip_animations=skip_animations)

    def update_frame(self, *args: Any, **kwargs: Any) -> None:
        with CLOCK.timing("draw"):
            super().update_frame(*args, **kwargs)

    def get_frame(self) -> Any:
        with CLOCK.timing("draw"):
            return super().get_frame()
