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
    bring_in(scene, animations, played)
    # Fades, Create and Write end with their object exactly as built: no need to run them.
    slow = [a for a in played if type(a) not in (Fade, FadeIn, FadeOut, Create, Write)]
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


def bring_in(scene: Any, animations: list[Any], played: list[Any]) -> None:
    """Add to the scene what the animations bring in, as Scene.play does: first every
    animated object not on stage (Scene.add_mobjects_from_animations), then what each
    introducer brings in (Animation._setup_scene). Manim walks the whole stage's family for
    each introducer and again in each Scene.add (to regroup the stage round the newcomer);
    here the stage is walked once, and an object that shares nothing with it is appended,
    which is all Scene.add does then. Otherwise Scene.add does it, and the stage is walked
    again where Manim would."""
    on_stage = _family_ids(scene)
    regrouped = False
    for a in animations:  # as add_mobjects_from_animations: its first walk, kept up to date
        if not a.is_introducer() and a.mobject is not None and id(a.mobject) not in on_stage:
            regrouped |= _add(scene, a.mobject, on_stage)
            on_stage.update(id(m) for m in a.mobject.get_family())
    if regrouped:
        on_stage = _family_ids(scene)
    for a in played:  # as _setup_scene: the stage as it is now
        if a.is_introducer() and id(a.mobject) not in on_stage:
            if _add(scene, a.mobject, on_stage):
                on_stage = _family_ids(scene)
            else:
                on_stage.update(id(m) for m in a.mobject.get_family())


def _family_ids(scene: Any) -> set[int]:
    return {id(m) for m in scene.get_mobject_family_members()}


def _add(scene: Any, mobject: Any, on_stage: set[int]) -> bool:
    """scene.add(mobject); True when the stage was regrouped (Manim's own add ran)."""
    if (scene.foreground_mobjects or scene.moving_mobjects
            or any(id(m) in on_stage for m in mobject.get_family())):
        scene.add(mobject)
        return True
    scene.mobjects.append(mobject)  # restructuring would have kept every object in place
    return False


def wait_at_once(scene: Any, duration: float) -> None:
    """scene.wait(duration) as time only: gathered into one hold, as a render does."""
    if scene._deferring:
        scene._pending_hold += duration
        return
    scene.renderer.time += duration
    scene.renderer.num_plays += 1
