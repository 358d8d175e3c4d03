"""The camera chapters are drawn with: Manim's Cairo camera, quicker at three things."""

from __future__ import annotations

from collections import deque
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
        ctx.new_path()
        xy = points[:, :2].tolist()
        for start, end in _subpaths(vmobject, points, n):
            if end - start < n:
                continue
            ctx.new_sub_path()
            ctx.move_to(*xy[start])
            for i in range(start, end - n + 1, n):
                ctx.curve_to(*xy[i + 1], *xy[i + 2], *xy[i + 3])
            if vmobject.consider_points_equals_2d(points[start], points[end - 1]):
                ctx.close_path()

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
