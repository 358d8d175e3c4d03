"""The camera chapters are drawn with: Manim's Cairo camera, quicker at three things."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import cairo
import numpy as np
from manim.camera.camera import Camera


class FramePool:
    """Spare frame arrays, thread-safe: a frame handed to the encoder comes back here once
    it has been converted (fastmanim.encoder), and the camera draws its next frame into it
    instead of a new 8 MB array (at 1080p a new array costs its page faults every frame)."""

    def __init__(self, keep: int = 16) -> None:
        self._spares: deque[np.ndarray] = deque(maxlen=keep)  # append/pop are atomic

    def take(self, like: np.ndarray) -> np.ndarray:
        while self._spares:
            try:
                spare = self._spares.pop()
            except IndexError:  # taken meanwhile
                break
            if spare.shape == like.shape and spare.dtype == like.dtype:
                return spare
        return np.empty_like(like)

    def give(self, frame: np.ndarray) -> None:
        self._spares.append(frame)


SPARE_FRAMES = FramePool()  # this process's


class PathCamera(Camera):
    """Manim's Cairo camera, drawing the same pixels (tests/test_held_frames.py) quicker:

    - the path of each object goes to Cairo with the same calls and the same numbers, but
      Manim's dozen small numpy operations per object are replaced by slices, and every
      control point is read from one Python list instead of as a numpy scalar;
    - an object whose points have not changed since it was last drawn (a caption fading
      in, a matrix under a highlight) hands Cairo the path it was given then
      (`remember_paths`);
    - a finished frame is handed over, not copied (`take_frame`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # id(vmobject) -> (what its path was made from, the path); None: not remembered
        self._paths: dict[int, tuple[tuple, cairo.Path]] | None = None

    def remember_paths(self, on: bool = True) -> None:
        """From now on keep each object's path for the next frame (forgetting those kept
        before): the renderer calls this at the start of each animation, so only the paths
        of one animation's objects are ever held."""
        self._paths = {} if on else None

    def set_cairo_context_path(self, ctx: Any, vmobject: Any) -> PathCamera:
        raw = vmobject.points
        if len(raw) == 0:
            return self  # (as Manim: nothing is drawn for it)
        paths = self._paths
        made_of = None
        if paths is not None:
            # The path depends on the points and these two numbers alone; the bytes compare
            # the points exactly (a copy of a few kilobytes, cheaper than an array compare).
            made_of = (raw.tobytes(), raw.shape, vmobject.n_points_per_cubic_curve,
                       vmobject.tolerance_for_point_equality)
            kept = paths.get(id(vmobject))
            if kept is not None and kept[0] == made_of:
                ctx.new_path()
                ctx.append_path(kept[1])
                return self
        self._make_path(ctx, vmobject, self.transform_points_pre_display(vmobject, raw))
        if paths is not None:
            paths[id(vmobject)] = (made_of, ctx.copy_path())
        return self

    def _make_path(self, ctx: Any, vmobject: Any, points: np.ndarray) -> None:
        """Manim's Camera.set_cairo_context_path, the same calls with the same numbers."""
        n = vmobject.n_points_per_cubic_curve
        trace_path(ctx, points[:, :2].tolist(), path_spans(vmobject, points, n), n)

    def take_frame(self) -> np.ndarray:
        """The frame just drawn, handed over instead of copied: the camera draws on into a
        spare array (every frame starts by overwriting it with the background or the static
        picture). The caller owns the frame; give it back to SPARE_FRAMES when done."""
        frame = self.pixel_array
        # Cairo's context for it goes too: contexts are kept by the array's id, which a
        # new array could be given once this one is gone.
        self.pixel_array_to_cairo_context.pop(id(frame), None)
        self.pixel_array = SPARE_FRAMES.take(frame)
        self.pixel_array_to_cairo_context.pop(id(self.pixel_array), None)
        return frame


class RecordingCamera(PathCamera):
    """PathCamera that can hand every Cairo call of a frame to a recorder as well, while it
    draws the frame (`recording`): the storyboard takes a still's pixels and its vector copy
    for the PDF handout in one pass, instead of building every path twice.

    The recorder is any object with the Cairo context's drawing methods the camera calls
    (colours, line styles, fill and stroke) and two of its own: `path(xy, spans, n)`, one
    whole path (what `trace_path` draws), and `image(pixels, x0, y0, x1, y1)`, an image
    mobject's RGBA pixels filling a box in scene units (the camera draws those into the
    frame, not through Cairo). Objects with a background image and point clouds are drawn
    but not recorded."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._recorder: Any = None
        # id(vmobject) -> (what its path was made from, its points drawn, its spans, the
        # path): most objects stay put from one recorded frame to the next
        self._recorded: dict[int, tuple[tuple, np.ndarray, tuple, cairo.Path]] = {}

    @contextmanager
    def recording(self, recorder: Any) -> Iterator[Any]:
        """Within the block, every frame drawn is recorded into `recorder` too."""
        self._recorder = recorder
        try:
            yield recorder
        finally:
            self._recorder = None

    def display_multiple_non_background_colored_vmobjects(self, vmobjects: Any,
                                                           pixel_array: np.ndarray) -> None:
        if self._recorder is None:
            super().display_multiple_non_background_colored_vmobjects(vmobjects, pixel_array)
            return
        ctx = _Tee(self.get_cairo_context(pixel_array), self._recorder)
        for vmobject in vmobjects:
            self.display_vectorized(vmobject, ctx)

    def set_cairo_context_path(self, ctx: Any, vmobject: Any) -> RecordingCamera:
        if not isinstance(ctx, _Tee):
            return super().set_cairo_context_path(ctx, vmobject)
        raw = vmobject.points
        if len(raw) == 0:
            return self  # (as Manim: nothing is drawn for it)
        n = vmobject.n_points_per_cubic_curve
        made_of = (raw.tobytes(), raw.shape, n, vmobject.tolerance_for_point_equality)
        kept = self._recorded.get(id(vmobject))
        if kept is not None and kept[0] == made_of:  # as in the last frame: its path again
            _, xy, spans, path = kept
            ctx.drawn.new_path()
            ctx.drawn.append_path(path)
        else:
            points = self.transform_points_pre_display(vmobject, raw)
            spans = tuple(path_spans(vmobject, points, n))
            xy = np.array(points[:, :2], dtype=np.float64)  # (points, 2), the numbers drawn
            trace_path(ctx.drawn, xy.tolist(), spans, n)
            self._recorded[id(vmobject)] = (made_of, xy, spans, ctx.drawn.copy_path())
        ctx.recorder.path(xy, spans, n)
        return self

    def display_image_mobject(self, image_mobject: Any, pixel_array: np.ndarray) -> None:
        if self._recorder is not None:
            from manim import DL, UR

            (x0, y0, _), (x1, y1, _) = image_mobject.get_corner(DL), image_mobject.get_corner(UR)
            self._recorder.image(image_mobject.get_pixel_array(), float(x0), float(y0),
                                 float(x1), float(y1))
        super().display_image_mobject(image_mobject, pixel_array)


class _Tee:
    """A Cairo context that hands each call to a recorder too (the recorder first)."""

    def __init__(self, drawn: Any, recorder: Any) -> None:
        self.drawn, self.recorder = drawn, recorder

    def __getattr__(self, name: str) -> Any:
        real, copy = getattr(self.drawn, name), getattr(self.recorder, name)

        def both(*args: Any) -> Any:
            copy(*args)
            return real(*args)
        setattr(self, name, both)  # looked up once per context
        return both


def trace_path(ctx: Any, xy: list, spans: list[tuple[int, int, bool]], n: int) -> None:
    """Draw a path into `ctx` as Manim's camera does: a new path, then for each span
    (start, end, closed) a sub-path from xy[start] through the cubic curves of
    xy[start:end], `n` points a curve, closed when its ends meet."""
    ctx.new_path()
    for start, end, closed in spans:
        ctx.new_sub_path()
        ctx.move_to(*xy[start])
        for i in range(start, end - n + 1, n):
            ctx.curve_to(*xy[i + 1], *xy[i + 2], *xy[i + 3])
        if closed:
            ctx.close_path()


def path_spans(vmobject: Any, points: np.ndarray, n: int) -> list[tuple[int, int, bool]]:
    """(start, end, closed) of each sub-path Manim's camera draws of `points`: those of at
    least one curve, closed when their first and last points are equal."""
    return [(start, end, bool(vmobject.consider_points_equals_2d(points[start], points[end - 1])))
            for start, end in _subpaths(vmobject, points, n) if end - start >= n]


def _subpaths(vmobject: Any, points: np.ndarray, n: int) -> list[tuple[int, int]]:
    """(start, end) point indices of each subpath: a new one wherever a curve does not
    start where the one before ended (np.isclose's tolerances in x and y), as
    VMobject.get_subpath_split_indices_from_points(points, n_dims=2) finds them."""
    count = len(points)
    if count < n or count % n:
        return [tuple(map(int, r)) for r in
                vmobject.get_subpath_split_indices_from_points(points, n_dims=2)]
    ends, starts = points[n - 1:-1:n, :2], points[n::n, :2]  # each curve's end, the next's start
    diffs = np.abs(ends - starts)
    if not np.isfinite(diffs).all():
        return [tuple(map(int, r)) for r in
                vmobject.get_subpath_split_indices_from_points(points, n_dims=2)]
    close = (diffs <= vmobject.tolerance_for_point_equality + 1.0e-5 * np.abs(starts)).all(axis=1)
    edges = [0, *((np.flatnonzero(~close) + 1) * n).tolist(), count]
    return list(zip(edges[:-1], edges[1:]))
