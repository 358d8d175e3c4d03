"""Chapter scenes played without animating: every play() ends at once in its final state,
keeping the time a render would take. The storyboard's stills (run.stills) and the
picture lint (run.lint) both build chapters this way."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


def leaves(animations) -> Iterator[Any]:
    """The animations themselves, out of their groups (AnimationGroup, LaggedStart, ...)."""
    for a in animations:
        inner = getattr(a, "animations", None)
        if inner is not None:
            yield from leaves(inner)
        else:
            yield a


def play_at_once(scene: Any, *args: Any, **kwargs: Any) -> list[Any]:
    """What scene.play(*args) would show when it ends, with the caption's still taken
    first when what it explains starts to leave; returns the animations played."""
    # Lazy on purpose: these import Manim, which only a scene being built needs.
    from attention_video.fastmanim.fades import Fade
    from manim import Create, FadeIn, FadeOut, Write

    # the holds gathered before it, and the caption leaving with its picture, as a
    # render plays them (scenes.base)
    animations = scene.prepare_play(*args, **kwargs)
    played = list(leaves(animations))
    if scene._caption is not None and any(
            a.is_remover() and a.mobject is not scene._caption for a in played):
        scene.caption_ends()  # what the caption explains starts to leave: its still now
    scene.add_mobjects_from_animations(animations)
    # Fades, Create and Write end with their object exactly as built: no need to run them.
    slow = [a for a in played if type(a) not in (Fade, FadeIn, FadeOut, Create, Write)]
    for a in played:
        a._setup_scene(scene)  # adds what an introducer brings in
    for a in slow:
        a.begin()
    for a in slow:
        a.finish()
    for a in played:
        if type(a) is FadeOut or (type(a) is Fade and not a.fade_in):
            scene.remove(a.mobject)
        elif a in slow:
            a.clean_up_from_scene(scene)
    scene.renderer.time += scene.get_run_time(animations)
    scene.renderer.num_plays += 1
    return played


def wait_at_once(scene: Any, duration: float) -> None:
    """scene.wait(duration) as time only: gathered into one hold, as a render does."""
    if scene._deferring:
        scene._pending_hold += duration
        return
    scene.renderer.time += duration
    scene.renderer.num_plays += 1
