"""Chapter clips without paying for frames that do not change.

Manim hands its file writer a held frame (``self.wait``: nothing moves) once, with a
repeat count, and its segment encoder then converts and encodes the same picture that
many times. Here a held frame is converted once and stored with the length of the hold
as its duration: the MP4 gets variable frame timing (every timestamp still on the 1/fps
grid), each hold one keyframe. Frames that move are converted and encoded as before,
with the same x264 settings.

Manim also opens a new encoder for every animation. A chapter is written as one stream
instead (ChapterStream), each animation still starting on a keyframe.

`StageClock` adds up where a chapter's time goes (for benchmarks/bench_render.py).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from fractions import Fraction
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

import av
import numpy as np
from attention_video.fastmanim.camera import SPARE_FRAMES, PathCamera
from manim.animation.composition import AnimationGroup
from manim.renderer.cairo_renderer import CairoRenderer
from manim.scene.scene_file_writer import SceneFileWriter
from manim.scene.video_segment_encoder import VideoSegmentEncoder
from manim.typing import RGBAPixelArray

NO_TYPE = av.video.frame.PictureType.NONE  # x264 chooses the frame's type
STAGES = ("draw", "convert", "encode", "segments", "join")
# How finished clips are joined by stream copy (the pipeline's pipeline.outputs.video.join):
# (clips, out, faststart=...) → seconds. The renderer is handed it: Manim's speed-ups sit
# below the pipeline and never import it.
Join = Callable[..., float]


@dataclass
class StageClock:
    """Seconds spent per stage of one chapter's render, summed over calls.

    draw: Cairo drawing of the frames (main thread); convert: RGBA → YUV 4:2:0;
    encode: x264 and the MP4 muxer (wall time of the calls: x264's own threads are
    not counted); segments: opening and flushing one encoder per animation;
    join: joining the segments into the chapter clip. convert, encode and segments run
    on the encoder threads, beside the drawing.

    `cpu` holds the CPU seconds of the thread that ran each stage (time.thread_time): on
    a shared machine wall time says little. Threads the stage starts itself (x264's,
    swscale's) are not in it: the chapter's process CPU, less these, is theirs.
    """

    seconds: dict[str, float] = field(default_factory=lambda: dict.fromkeys(STAGES, 0.0))
    cpu: dict[str, float] = field(default_factory=lambda: dict.fromkeys(STAGES, 0.0))
    frames_shown: int = 0  # frames a constant-rate clip would hold
    frames_stored: int = 0  # frames converted and encoded

    def reset(self) -> None:
        self.seconds = dict.fromkeys(STAGES, 0.0)
        self.cpu = dict.fromkeys(STAGES, 0.0)
        self.frames_shown = self.frames_stored = 0

    @contextmanager
    def timing(self, stage: str) -> Iterator[None]:
        t0, c0 = time.perf_counter(), time.thread_time()
        try:
            yield
        finally:
            self.seconds[stage] += time.perf_counter() - t0
            self.cpu[stage] += time.thread_time() - c0


CLOCK = StageClock()  # this process's; render_chapter resets it for each chapter


class HeldFrameEncoder(VideoSegmentEncoder):
    """Manim's segment encoder, but a frame repeated n times is encoded once and shown
    for n frame periods (its pts advances by n).

    `holds` is how a held frame is written; benchmarks/bench_render.py compares them:
    "once" (the default), "reuse" (converted once, encoded n times: constant frame
    rate) and "each" (converted and encoded n times, as Manim does).
    """

    holds: ClassVar[str] = "once"

    def __init__(self, *, target: Path, spec: Any, one_stream: bool = False) -> None:
        with CLOCK.timing("segments"):
            super().__init__(target=target, spec=spec)
        self.one_stream = one_stream  # a whole chapter's stream (ChapterStream), not a segment
        # Packets carry the frame's duration: the MP4 needs it for a segment's last frame.
        self._stream.codec_context.flags |= av.codec.context.Flags.frame_duration
        self._time_base = Fraction(spec.frame_rate.denominator, spec.frame_rate.numerator)
        self._reformatter = av.video.reformatter.VideoReformatter()
        self._shown: dict[int, int] = {}  # a frame's pts → frame periods it is shown

    def write_frame(self, pixels: RGBAPixelArray, *, repeat: int = 1,
                    keyframe: bool = False) -> None:
        """`keyframe`: start a new group of pictures here (a segment of a ChapterStream)."""
        self._validate_frame(pixels, repeat)
        durations = self._durations(repeat)
        if len(durations) < repeat and self._next_pts == 0 and not self.one_stream:
            self._sharpen()  # a hold segment: its only frame
        try:
            frame = None
            for duration in durations:
                if frame is None or self.holds == "each":
                    with CLOCK.timing("convert"):
                        frame = self._to_yuv(pixels)
                frame.pts, frame.time_base = self._next_pts, self._time_base
                frame.pict_type = av.video.frame.PictureType.I if keyframe else NO_TYPE
                keyframe = False
                frame.duration = duration
                self._next_pts += duration
                self._shown[frame.pts] = duration
                with CLOCK.timing("encode"):
                    self._mux(self._stream.encode(frame))
        except BaseException as error:
            raise self._operation_error("encode", error) from error
        stored = len(durations)
        CLOCK.frames_shown += repeat
        CLOCK.frames_stored += stored
        SPARE_FRAMES.give(pixels)  # converted: the camera may draw its next frame into it

    def _durations(self, repeat: int) -> list[int]:
        """How long each stored copy of a frame repeated `repeat` times is shown.

        In a ChapterStream a hold is its picture, shown for one frame, and a copy (an
        all-skip P-frame of a few hundred bytes) shown for the rest: x264's macroblock tree
        weighs each frame by how long it is shown, so the copy makes it spend its bits on
        the picture (alone, the picture came out 4.5 dB worse; a segment of its own has its
        quantiser capped instead, see _sharpen)."""
        if self.holds != "once" or repeat == 1:
            return [1] * repeat
        return [1, repeat - 1] if self.one_stream else [repeat]

    def _sharpen(self) -> None:
        """Cap the quantiser of a hold's only frame (before the codec opens).

        Encoded frame by frame, the first frame of a hold gets a low quantiser from x264's
        lookahead (mb-tree: the identical frames after it all refer to it); a lone frame
        at the same crf gets a high one and looks worse (36 dB against 45.5 dB, 1080p crf
        23). Capped at the crf's value it gets it back (46.2 dB). qpmax, unlike crf, is not
        written into the PPS, so every segment still joins by stream copy."""
        options = dict(self._stream.codec_context.options)
        if "crf" in options:
            params = [p for p in options.get("x264-params", "").split(":") if p]
            options["x264-params"] = ":".join(params + [f"qpmax={options['crf']}"])
            self._stream.codec_context.options = options

    def _to_yuv(self, pixels: RGBAPixelArray) -> av.VideoFrame:
        """The conversion PyAV's encoder would do itself (same scaler, same threads), so
        the pixels are the ones Manim's own encoder produces."""
        cc = self._stream.codec_context
        # Manim hands the array over (it never writes to it again): wrap it, no copy.
        rgba = av.VideoFrame.from_numpy_buffer(pixels, format="rgba")
        return self._reformatter.reformat(rgba, cc.width, cc.height, cc.pix_fmt,
                                          threads=cc.thread_count)

    def _mux(self, packets: list[av.Packet]) -> None:
        """Each packet with its own frame's duration: x264 reorders frames, and the
        durations libavcodec passes along follow the frames' input order, so after a hold
        the hold's length lands on the wrong packet (and the clip ends late)."""
        for packet in packets:
            if packet.pts is not None:
                packet.duration = self._shown.pop(packet.pts, packet.duration)
            self._container.mux(packet)

    def finish(self) -> None:
        """Flush the encoder (its packets with their own durations) and close the file."""
        with CLOCK.timing("segments"):
            if self._closed:
                return
            self._closed = True
            try:
                self._mux(self._stream.encode())
            except Exception as error:
                with suppress(Exception):
                    self._container.close()
                raise self._operation_error("finish", error) from error
            try:
                self._container.close()
            except Exception as error:
                raise self._operation_error("finish", error) from error


class ChapterStream:
    """One x264 encoder for a whole chapter, fed by Manim's segments (one per animation)
    in the order Manim opened them, each starting on a keyframe.

    Manim opens, flushes and closes an encoder for every animation, and that costs about
    as much as a dozen frames of a 1080p chapter whatever the animation holds (x264 sets
    up its lookahead and frame threads, and its first frames go through them alone): a
    fifth of a chapter's encoding. Here the segments are parts of one stream. Each still
    starts on a keyframe (a --slides step is cut by stream copy where a caption's picture
    is complete), and a hold is still one frame shown for its whole length.

    Manim encodes each segment on its own thread, and a segment's thread may still be
    writing when the next one's starts: a segment waits for its turn (the previous one
    finished or aborted) before it writes its first frame."""

    def __init__(self, target: Path, spec: Any) -> None:
        self.target = target
        self._encoder = HeldFrameEncoder(target=target, spec=spec, one_stream=True)
        self._turn = self._tickets = 0
        self._ready = threading.Condition()
        self.failed: BaseException | None = None
        self._closed = False

    def segment(self, target: Path) -> StreamSegment:
        self._tickets += 1
        return StreamSegment(self, target, self._tickets - 1)

    def write(self, ticket: int, pixels: RGBAPixelArray, repeat: int, first: bool) -> None:
        with self._ready:
            self._ready.wait_for(lambda: self._turn == ticket)
        if self.failed is not None:
            raise RuntimeError(f"an earlier segment of {self.target} failed") from self.failed
        try:
            self._encoder.write_frame(pixels, repeat=repeat, keyframe=first)
        except BaseException as error:
            self.failed = error
            raise

    def done(self, ticket: int, error: BaseException | None = None) -> None:
        """The segment `ticket` has written its last frame (or failed): the next one's turn."""
        with self._ready:
            self._ready.wait_for(lambda: self._turn == ticket)
            if error is not None and self.failed is None:
                self.failed = error
            self._turn += 1
            self._ready.notify_all()

    def close(self) -> None:
        """Flush and close the stream (every segment has had its turn)."""
        if self._closed:
            return
        self._closed = True
        if self.failed is not None:
            self._encoder.abort()
            raise RuntimeError(f"a segment of {self.target} failed") from self.failed
        self._encoder.finish()


class StreamSegment:
    """One animation's part of a ChapterStream, with the interface Manim's encode jobs
    use (`target`, `write_frame`, `finish`, `abort`). No file is written for it."""

    def __init__(self, stream: ChapterStream, target: Path, ticket: int) -> None:
        self.stream, self.target, self.ticket = stream, target, ticket
        self._first = True
        self._done = False

    def write_frame(self, pixels: RGBAPixelArray, *, repeat: int = 1) -> None:
        self.stream.write(self.ticket, pixels, repeat, self._first)
        self._first = False

    def finish(self) -> None:
        if not self._done:
            self._done = True
            self.stream.done(self.ticket)

    def abort(self) -> None:
        if not self._done:
            self._done = True
            self.stream.done(self.ticket, RuntimeError(f"segment {self.target} aborted"))


class HeldFrameWriter(SceneFileWriter):
    """Manim's file writer with held frames encoded once, the chapter written as one
    stream (ChapterStream), and the result joined by `join` (which derives the decode
    times again). `one_stream` False: one encoder per animation, each its own segment
    file, as Manim writes them (benchmarks/bench_render.py compares the two)."""

    one_stream: ClassVar[bool] = True

    def __init__(self, settings: Any, join: Join) -> None:
        super().__init__(settings)
        self.join = join
        self._stream: ChapterStream | None = None

    def _create_segment_encoder(self, target: Path) -> Any:
        if self.video_encoder is None:
            raise RuntimeError("Video segment encoding requires resolved settings.")
        if not self.one_stream:
            return HeldFrameEncoder(target=target, spec=self.video_encoder)
        if self._stream is None:
            self._stream = ChapterStream(target.with_name("chapter-stream.mp4"),
                                         self.video_encoder)
        return self._stream.segment(target)

    def combine_to_movie(self) -> None:
        with CLOCK.timing("join"):
            if self._stream is None:  # segment files (or no animation at all)
                super().combine_to_movie()
            else:  # no segment file exists: Manim's own would list and touch them
                self.combine_files([], self.movie_file_path)

    def combine_files(self, input_files: list[str], output_file: Path,
                      create_gif: bool = False, includes_sound: bool = False) -> None:
        """The segments joined by stream copy, decode timestamps derived again (Manim's
        concat demuxer misplaces a segment of one held frame); one stream: copied alone,
        for the same decode times."""
        if create_gif or includes_sound:
            raise RuntimeError("chapter clips are silent MP4s")
        output_file.parent.mkdir(parents=True, exist_ok=True)
        if self._stream is not None:
            with CLOCK.timing("segments"):
                self._stream.close()
            input_files = [str(self._stream.target)]
        self.join([Path(f) for f in input_files], output_file, faststart=False)


class TimedRenderer(CairoRenderer):
    """Manim's Cairo renderer writing through HeldFrameWriter, drawing less and timed.

    Manim redraws, every frame of an animation, every object drawn after the first one
    that moves, so that objects above a moving one stay above it. Most of them lie far
    from anything that moves (a caption fading at the bottom, a matrix at the top), and
    drawing order matters only where objects overlap: an object that does not move and
    whose box (plus a margin for strokes and anti-aliasing) meets no moving group's box
    goes into the static picture instead. The boxes are checked again every frame; the
    first frame one meets a moving group, the static picture is drawn again without it
    and the animation goes on as Manim plays it. Frames stay pixel for pixel the same.

    A dry run (skip_animations) draws nothing at all. Manim's renderer still draws the
    static picture of every play and the last frame of every animation when it skips
    them (update_frame ignores skipping by default), for frames nobody reads: half of a
    chapter's dry run, which the chapter cache's checks, `--dry-run` and the tests do.
    """

    MARGIN = 0.15  # scene units (20 px at 1080p) around every box: strokes, anti-aliasing
    park: ClassVar[bool] = True  # False: Manim's own way (tests compare the two)

    def __init__(self, join: Join | None = None, skip_animations: bool = False) -> None:
        writer = partial(HeldFrameWriter, join=join or _cannot_join)
        super().__init__(file_writer_class=writer, camera_class=PathCamera,
                         skip_animations=skip_animations)
        self._plan: _DrawPlan | None = None
        self.draws = not skip_animations  # False: a dry run, no frame is ever drawn

    def save_static_frame_data(self, scene: Any, static_mobjects: Any) -> Any:
        if not self.draws:
            self.static_image = None
            return None
        self.camera.remember_paths()  # a new animation: the paths of its objects alone
        self._plan = (_DrawPlan.of(scene, self.MARGIN)
                      if self.park and not self.skip_animations else None)
        if self._plan is None:
            return super().save_static_frame_data(scene, static_mobjects)
        self.static_image = None
        self._draw_each(scene, list(static_mobjects) + self._plan.parked)
        self.static_image = self.get_frame()
        return self.static_image

    def update_frame(self, scene: Any, mobjects: Any = None, *args: Any, **kwargs: Any) -> None:
        if not self.draws:
            return
        plan = self._plan
        if plan is not None and mobjects is scene.moving_mobjects:
            if plan.clear():
                self._draw_each(scene, plan.drawn)
                return
            # Something moving reached a parked object: back to Manim's way.
            self._plan = None
            super().save_static_frame_data(scene, scene.static_mobjects)
        with CLOCK.timing("draw"):
            super().update_frame(scene, mobjects, *args, **kwargs)

    def _draw_each(self, scene: Any, mobjects: list[Any]) -> None:
        """Draw these family members over the static picture, each without its
        submobjects (the lists hold whole families already, some parked, some not)."""
        with CLOCK.timing("draw"):
            if self.static_image is not None:
                self.camera.set_frame_to_background(self.static_image)
            else:
                self.camera.reset()
            self.camera.capture_mobjects([m for m in mobjects if len(m.points)],
                                         include_submobjects=False)

    def get_frame(self) -> Any:
        """The frame drawn, handed over without a copy (PathCamera.take_frame): it goes to
        the encoder, which gives it back once converted, or becomes the static picture."""
        with CLOCK.timing("draw"):
            return self.camera.take_frame()


@dataclass
class _DrawPlan:
    """For one animation: the objects Manim would redraw every frame, split into those
    that still are (`drawn`) and those parked in the static picture (`parked`)."""

    drawn: list[Any]
    parked: list[Any]
    groups: list[tuple[list[Any], list[np.ndarray]]]  # each moving family, and the boxes
    margin: float                                      # of parked objects drawn above it

    @classmethod
    def of(cls, scene: Any, margin: float) -> _DrawPlan | None:
        moving = list(scene.moving_mobjects)  # families, in drawing order
        if not moving or any(m.z_index for m in moving + list(scene.static_mobjects)):
            return None  # z-indexes reorder the drawing: leave it to Manim
        order = {id(m): i for i, m in enumerate(moving)}
        groups = [g for g in _moving_groups(scene) if any(id(m) in order for m in g)]
        live = {id(m) for g in groups for m in g}
        boxes = {id(m): _box(m.points, margin) for m in moving
                 if id(m) not in live and len(m.points)}
        firsts = [min(order.get(id(m), len(moving)) for m in g) for g in groups]
        for g, first in zip(groups, firsts):  # what meets a group now stays drawn
            box = _group_box(g)
            if box is not None:
                for i in [i for i in boxes if order[i] > first and _meet(boxes[i], box)]:
                    del boxes[i]
        if not boxes:
            return None
        above = [[b for i, b in boxes.items() if order[i] > first] for first in firsts]
        return cls(drawn=[m for m in moving if id(m) not in boxes],
                   parked=[m for m in moving if id(m) in boxes],
                   groups=list(zip(groups, above)), margin=margin)

    def clear(self) -> bool:
        """Whether no moving group meets a parked object it was drawn under."""
        for group, above in self.groups:
            if not above:
                continue
            box = _group_box(group)
            if box is not None and any(_meet(b, box) for b in above):
                return False
        return True


def _cannot_join(*args: Any, **kwargs: Any) -> float:
    raise RuntimeError("TimedRenderer(join=...) writes clips: give it the pipeline's join "
                       "(pipeline.outputs.video.join)")


def _moving_groups(scene: Any) -> list[list[Any]]:
    """The families that can change during the animation, as Manim decides it: each
    animation's object (nested animations too), every object with updaters (its whole
    family), the foreground objects."""
    groups: list[list[Any]] = []

    def animations(anims: Any) -> None:
        for a in anims:
            groups.append(a.mobject.get_family())
            if isinstance(a, AnimationGroup):
                animations(a.animations)

    def updated(mobjects: Any) -> None:
        for m in mobjects:
            if m.updaters:
                groups.append(m.get_family())
            else:
                updated(m.submobjects)

    animations(scene.animations or [])
    updated(scene.mobjects)
    groups += [m.get_family() for m in scene.foreground_mobjects]
    return groups


def _box(points: np.ndarray, margin: float) -> np.ndarray:
    return np.concatenate([points[:, :2].min(axis=0) - margin, points[:, :2].max(axis=0) + margin])


def _group_box(group: list[Any]) -> np.ndarray | None:
    pts = [m.points for m in group if len(m.points)]
    return _box(np.concatenate(pts), 0.0) if pts else None


def _meet(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether boxes (x0, y0, x1, y1) overlap."""
    return bool(a[0] <= b[2] and b[0] <= a[2] and a[1] <= b[3] and b[1] <= a[3])
