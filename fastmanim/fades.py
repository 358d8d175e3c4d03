"""FadeIn and FadeOut that cost what a fade should.

Manim's fades are Transforms: a FadeIn copies its object twice (a faded copy to start
from, a copy of the target) and then, every frame, interpolates every point and seven
style attributes of every part between the two. When the fade neither shifts nor
scales, the points never change and only the opacities of fills and strokes do. These
classes change only those, with the same arithmetic (manim's `interpolate` between the
same arrays), so every frame has the same pixels (tests/test_fades.py compares them).
A fade that shifts or scales, or an object that is not made of vector paths (an image),
is left to Manim's own classes.

Several objects fade as one group of them, as Manim's own fades do. Chapters get these
through `from attention_video.fastmanim import *`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from manim import Animation, VGroup, VMobject
from manim import FadeIn as ManimFadeIn
from manim import FadeOut as ManimFadeOut
from manim.utils.bezier import interpolate

OPACITIES = ("fill_rgbas", "stroke_rgbas", "background_stroke_rgbas")  # what fade(1) zeroes


class Fade(Animation):
    """An object's fills and strokes going from transparent to as built (fade_in) or
    the other way; a fade-out removes the object and then leaves it as it was, as
    Manim's FadeOut does."""

    def __init__(self, mobject: VMobject, *, fade_in: bool, **kwargs: Any):
        self.fade_in = fade_in
        super().__init__(mobject, introducer=fade_in, remover=not fade_in, **kwargs)

    def begin(self) -> None:
        self._parts = []
        for part in self.mobject.family_members_with_points():
            built = {name: getattr(part, name).copy() for name in OPACITIES}
            clear = {name: a.copy() for name, a in built.items()}
            for a in clear.values():
                a[:, 3] = 0.0  # fade(1): every opacity times 0, the colours kept
            self._parts.append((part, clear, built) if self.fade_in else (part, built, clear))
        super().begin()

    def create_starting_mobject(self) -> VMobject:
        return self.mobject  # never read: interpolate_mobject works from _parts

    def interpolate_mobject(self, alpha: float) -> None:
        for i, (part, start, end) in enumerate(self._parts):
            t = self.get_sub_alpha(alpha, i, len(self._parts))  # the rate function, as Manim's
            for name in OPACITIES:
                value = end[name].copy() if t == 1.0 else interpolate(start[name], end[name], t)
                setattr(part, name, value)

    def clean_up_from_scene(self, scene: Any) -> None:
        super().clean_up_from_scene(scene)
        if not self.fade_in:
            self.interpolate(0)


def _only_fades(mobjects: tuple, kwargs: dict) -> bool:
    """Whether Manim's fade of these would change only opacities."""
    if not mobjects or any(kwargs.get(k) is not None for k in ("shift", "target_position")):
        return False
    if kwargs.get("scale", 1) != 1 or not all(isinstance(m, VMobject) for m in mobjects):
        return False
    parts = [p for m in mobjects for p in m.family_members_with_points()]
    return bool(parts) and all(isinstance(p, VMobject) and all(
        getattr(p, name, None) is not None and np.ndim(getattr(p, name)) == 2
        for name in OPACITIES) for p in parts)


def FadeIn(*mobjects: Any, **kwargs: Any) -> Animation:  # noqa: N802 - Manim's name
    """Manim's FadeIn, by opacities alone when that is all it would change."""
    if _only_fades(mobjects, kwargs):
        kwargs = {k: v for k, v in kwargs.items() if k not in ("shift", "target_position", "scale")}
        return Fade(_one(mobjects), fade_in=True, **kwargs)
    return ManimFadeIn(*mobjects, **kwargs)


def FadeOut(*mobjects: Any, **kwargs: Any) -> Animation:  # noqa: N802 - Manim's name
    """Manim's FadeOut, by opacities alone when that is all it would change."""
    if _only_fades(mobjects, kwargs):
        kwargs = {k: v for k, v in kwargs.items() if k not in ("shift", "target_position", "scale")}
        return Fade(_one(mobjects), fade_in=False, **kwargs)
    return ManimFadeOut(*mobjects, **kwargs)


def _one(mobjects: tuple) -> VMobject:
    """The object a fade of these animates: itself, or a group of them (Manim's fades group
    several the same way)."""
    return mobjects[0] if len(mobjects) == 1 else VGroup(*mobjects)
