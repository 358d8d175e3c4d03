"""The camera chapters are drawn with: Manim's Cairo camera, quicker at one thing."""

from __future__ import annotations

from typing import Any

import numpy as np
from manim.camera.camera import Camera


class PathCamera(Camera):
    """Manim's Cairo camera, with the path of each object handed to Cairo quicker: the
    same calls with the same numbers, so the same pixels (tests/test_held_frames.py).

    Manim finds an object's subpaths with a dozen small numpy operations, then reads every
    control point as a numpy scalar, six per curve. Here the subpaths come from slices
    (Manim's own function still decides any object with a coordinate that is not finite),
    and the points are read from one Python list."""

    def set_cairo_context_path(self, ctx: Any, vmobject: Any) -> PathCamera:
        points = self.transform_points_pre_display(vmobject, vmobject.points)
        if len(points) == 0:
            return self
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
        return self


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
