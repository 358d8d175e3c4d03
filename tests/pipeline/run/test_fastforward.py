"""Plays that end at once (pipeline.run.fastforward), as the storyboard and the lint build
chapters: what a play brings onto the stage is what Manim's own play would bring, in the
same order, though the stage's family is walked once instead of once per object."""

from __future__ import annotations

import pytest
from attention_video.pipeline.run.fastforward import bring_in, leaves
from manim import Circle, FadeIn, Scene, Square, Transform, VGroup, tempconfig


def manims_way(scene, animations):
    """What Scene.play does before the first frame: add_mobjects_from_animations, then
    each animation's _setup_scene (an introducer adds its object)."""
    scene.add_mobjects_from_animations(animations)
    for a in leaves(animations):
        a._setup_scene(scene)


def stages(build):
    """The stage after bring_in and after Manim's way, from two identical scenes."""
    out = []
    for way in (lambda s, a: bring_in(s, a, list(leaves(a))), manims_way):
        with tempconfig({"dry_run": True}):
            scene = Scene()
            parts, animations = build(scene)
            way(scene, animations)
            names = {id(m): name for name, m in parts.items()}
            out.append([names.get(id(m), type(m).__name__) for m in scene.mobjects])
    return out


def new_square(scene):  # shares nothing with the stage: appended
    a, b = Circle(), Square()
    scene.add(a)
    return {"a": a, "b": b}, [FadeIn(b)]


def group_of_one_on_stage(scene):  # the group holds a shown object: the stage regroups
    a, b, c = Circle(), Square(), Circle()
    scene.add(a, b)
    group = VGroup(a, c)
    return {"a": a, "b": b, "c": c, "group": group}, [FadeIn(group)]


def transform_of_one_not_shown(scene):  # an animated object not on stage is added
    a, b = Circle(), Square()
    return {"a": a, "b": b}, [Transform(a, b)]


def shown_already(scene):  # an introducer of a shown object adds nothing
    a, b = Circle(), Square()
    scene.add(VGroup(a, b))
    return {"a": a, "b": b}, [FadeIn(a)]


def two_in_one_play(scene):  # the second one is part of the first: added once
    a, b = Circle(), Square()
    group = VGroup(a, b)
    return {"a": a, "b": b, "group": group}, [FadeIn(group), FadeIn(b)]


@pytest.mark.parametrize("build", [new_square, group_of_one_on_stage,
                                   transform_of_one_not_shown, shown_already,
                                   two_in_one_play])
def test_a_play_brings_onto_the_stage_what_manims_play_would(build):
    ours, manims = stages(build)
    assert ours == manims
