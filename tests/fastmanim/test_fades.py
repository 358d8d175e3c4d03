"""fastmanim.fades: a fade that neither shifts nor scales changes opacities alone, exactly as
Manim's Transform-based FadeIn and FadeOut would, without their copies."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from attention_video.fastmanim import fades
from attention_video.scenes.text import make_text
from manim import UP, Group, ImageMobject, Rectangle, Scene, VGroup, linear
from manim import FadeIn as ManimFadeIn
from manim import FadeOut as ManimFadeOut

STYLE = ("fill_rgbas", "stroke_rgbas", "background_stroke_rgbas", "stroke_width")


def cell() -> VGroup:
    box = Rectangle(width=2, height=1, stroke_width=1, stroke_color="#333333")
    return VGroup(box.set_fill("#ff0000", 0.55), make_text("0.53", 24, "#ffffff"))


def state(group: VGroup) -> list[np.ndarray]:
    return [np.array(getattr(p, name)) for p in group.family_members_with_points()
            for name in STYLE]


def points(group: VGroup) -> np.ndarray:
    return np.concatenate([p.points for p in group.family_members_with_points()])


@pytest.mark.parametrize("fade_in", [True, False], ids=["in", "out"])
@pytest.mark.parametrize("kwargs", [{}, {"rate_func": linear}, {"lag_ratio": 0.3}],
                         ids=["smooth", "linear", "lagged"])
def test_every_alpha_gives_manims_opacities_exactly(fade_in, kwargs):
    """The points stay as built: Manim's own fade moves them by rounding errors only (its
    faded copy is scaled by 1 about its centre), far below a pixel."""
    ours, theirs = cell(), cell()
    built = points(ours)
    quick = (fades.FadeIn if fade_in else fades.FadeOut)(ours, **kwargs)
    manim = (ManimFadeIn if fade_in else ManimFadeOut)(theirs, **kwargs)
    assert isinstance(quick, fades.Fade)
    quick.begin()
    manim.begin()
    for alpha in (0.0, 0.1, 0.37, 0.5, 0.9, 1.0):
        quick.interpolate(alpha)
        manim.interpolate(alpha)
        for a, b in zip(state(ours), state(theirs), strict=True):
            assert np.array_equal(a, b)
        assert np.array_equal(points(ours), built)
        assert np.allclose(points(theirs), built, rtol=0, atol=1e-12)


def test_a_fade_in_adds_its_object_and_a_fade_out_removes_it_and_restores_it():
    scene = Scene()
    shown = cell()
    before = state(shown)
    scene.play(fades.FadeIn(shown), run_time=0.1)
    assert shown in scene.mobjects and all(
        np.array_equal(a, b) for a, b in zip(state(shown), before, strict=True))
    scene.play(fades.FadeOut(shown), run_time=0.1)
    assert shown not in scene.mobjects
    assert all(np.array_equal(a, b) for a, b in zip(state(shown), before, strict=True))


@pytest.mark.parametrize("make, kwargs", [
    (cell, {"shift": UP}),
    (cell, {"scale": 1.5}),
    (lambda: Group(ImageMobject(np.zeros((4, 4, 3), np.uint8)), cell()), {}),
], ids=["shift", "scale", "image"])
def test_anything_but_a_plain_fade_is_left_to_manim(make, kwargs):
    assert isinstance(fades.FadeIn(make(), **kwargs), ManimFadeIn)
    assert isinstance(fades.FadeOut(make(), **kwargs), ManimFadeOut)


def test_several_objects_fade_as_one_group_and_give_manims_opacities():
    """A FadeIn of several objects fell back to Manim's slow path without saying so."""
    ours, theirs = (cell(), cell()), (cell(), cell())
    quick, manim = fades.FadeIn(*ours), ManimFadeIn(*theirs)
    assert isinstance(quick, fades.Fade)
    quick.begin()
    manim.begin()
    for alpha in (0.0, 0.3, 1.0):
        quick.interpolate(alpha)
        manim.interpolate(alpha)
        for a, b in zip([s for g in ours for s in state(g)], [s for g in theirs for s in state(g)],
                        strict=True):
            assert np.array_equal(a, b)
    scene = Scene()
    scene.play(fades.FadeIn(*ours), run_time=0.1)
    assert all(m in scene.get_mobject_family_members() for m in ours)
    scene.play(fades.FadeOut(*ours), run_time=0.1)
    assert not any(m in scene.get_mobject_family_members() for m in ours)


@pytest.mark.slow
def test_a_chapter_draws_the_same_frames_with_either_fade(tmp_path, monkeypatch):
    """Chapter 4, rendered with Manim's fades and with these: every frame handed to the
    encoder is the same."""
    from attention_video.attncore import Settings, build_trace
    from attention_video.fastmanim import encoder
    from attention_video.pipeline.run.chapter import ChapterJob, render_chapter

    settings = Settings(sentence="The black cat drank the milk", quality="l")
    trace = build_trace(settings)
    seen: list[tuple[str, int]] = []
    write = encoder.HeldFrameEncoder.write_frame

    def record(self, pixels, *, repeat=1, **kwargs):
        seen.append((hashlib.sha1(pixels.tobytes()).hexdigest(), repeat))
        return write(self, pixels, repeat=repeat, **kwargs)

    monkeypatch.setattr(encoder.HeldFrameEncoder, "write_frame", record)
    frames = {}
    for name, only_fades in [("manim", lambda *a: False), ("quick", fades._only_fades)]:
        monkeypatch.setattr(fades, "_only_fades", only_fades)
        seen.clear()
        render_chapter(ChapterJob("dot", trace, settings, clip=tmp_path / f"{name}.mp4",
                                  work_dir=tmp_path / name))
        frames[name] = list(seen)
    assert len(frames["quick"]) > 100 and frames["quick"] == frames["manim"]


def test_the_chapters_namespace_holds_our_fades_not_manims():
    """`from attention_video.fastmanim import *` gives fastmanim's FadeIn and FadeOut,
    whatever order an import sorter puts the lines of fastmanim/__init__.py in (once it
    put Manim's star import last, and five frames of a chapter's fade changed)."""
    import attention_video.fastmanim as namespace

    assert namespace.FadeIn is fades.FadeIn and namespace.FadeOut is fades.FadeOut
    scope: dict = {}
    exec("from attention_video.fastmanim import *", scope)
    assert scope["FadeIn"] is fades.FadeIn and scope["FadeOut"] is fades.FadeOut
