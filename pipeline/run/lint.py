"""--lint: build every chapter as the storyboard does (a dry run in which each play ends at
once in its final state) and check each caption's picture with scenes.lint at the two
moments that matter: when its picture is complete (where the storyboard takes its still,
ChapterScene.caption_ends) and when the caption leaves (ChapterScene.caption_leaves).
Every play is timed as a render times it, so the lint also knows how long each picture
stood still before its caption left, and what moved after its still.

The fast-forwarding mirrors the storyboard's (pipeline.outputs.storyboard._FastForward)
rather than importing a private name of a module that is being moved; once the stills
renderer settles in pipeline/run/, both should share one fast-forward mixin.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from attention_video.attncore.chapters import chapter, number
from attention_video.attncore.settings import Settings
from attention_video.attncore.trace import AttentionTrace
from attention_video.pipeline.cache.paths import cache_dir
from attention_video.pipeline.run.chapter import manim_config
from attention_video.pipeline.run.fastforward import play_at_once, wait_at_once
from attention_video.pipeline.run.render import plan_chapters
from attention_video.pipeline.run.schedule import longest_first
from attention_video.pipeline.run.workers import LocalPool

if TYPE_CHECKING:
    from attention_video.scenes.lint import CaptionPicture, Problem

Progress = Callable[[str], None]
# LAZY: Manim, the scenes and scenes.lint are imported inside the functions that build a
# chapter: pipeline.commands.app imports this module, and a run that makes only cached
# clips never loads Manim (~2 s).
RULES = ("overlap", "crossing", "safe-area", "size", "contrast", "hold", "moves", "colour",
         "numbers", "lines", "label", "chart", "state")


class LintFailed(Exception):
    """The lint found problems (they have been printed); the message is the summary."""


@dataclass
class ChapterLint:
    chapter: str
    captions: int
    problems: list[Problem]
    seconds: float = 0.0


@dataclass
class LintResult:
    chapters: list[ChapterLint] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def problems(self) -> list[Problem]:
        return [p for c in self.chapters for p in c.problems]

    @property
    def captions(self) -> int:
        return sum(c.captions for c in self.chapters)

    def counts(self) -> Counter:
        """Problems per rule."""
        return Counter(p.rule for p in self.problems)

    def summary(self) -> str:
        counts = self.counts()
        n = len(self.chapters)
        chapters = f"{n} chapter{'' if n == 1 else 's'}"  # "1 chapter", "2 chapters"
        if not counts:
            return (f"lint: {self.captions} captions in {chapters}, "
                    f"no problems ({self.seconds:.1f} s)")
        by_rule = ", ".join(f"{counts[r]} {r}" for r in RULES if counts[r])
        return (f"lint: {sum(counts.values())} problems in {self.captions} captions of "
                f"{chapters} ({by_rule}; {self.seconds:.1f} s)")


class _Linting:
    """Mixed into a chapter scene: every play() ends at once in its final state (as the
    storyboard's stills are made), keeping the time a render would take, and each caption's
    picture is read at its still and as it leaves."""

    speaks = False  # the lint needs no speech

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        from attention_video.scenes.lint import MarkCache  # (lazy: LAZY)

        self.lint_pictures: list[CaptionPicture] = []  # one per caption
        self._read = MarkCache()  # what the chapter's pictures read off their objects
        self._in_say = False
        self._still_marks: list | None = None  # this caption's picture at its still
        # ... and its objects, kept alive until the caption leaves: the marks follow an
        # object by its id(), which a new object may take once the old one is freed
        self._still_objects: list = []
        self._still_at = 0.0
        self._settled = 0.0  # when the picture (not a caption) last changed
        self._after_still: list[str] = []  # what was played on the picture after the still
        self._played: list = []  # this caption's findings while plays ran (crossfades)
        self.framing: list = []  # the captions and title: kept in the title-safe area
        # The texts up now, to time each state of the picture (scenes.lint.brief_states):
        # id → (text, look, when first seen, longest rest while up)
        self._up: dict[int, tuple[str, tuple, float, float]] = {}
        self._looked_at = 0.0  # when the texts were last looked at
        self._play_ended = 0.0  # when the last play on the picture ended
        super().__init__(*args, **kwargs)

    def say(self, *args: Any, **kwargs: Any) -> None:
        self._in_say = True  # its play only swaps captions
        try:
            super().say(*args, **kwargs)
        finally:
            self._in_say = False
        self._frame_it(self._caption)
        self._still_marks, self._after_still, self._still_objects = None, [], []

    def play(self, *args: Any, **kwargs: Any) -> None:
        from attention_video.scenes.lint import describe  # (lazy: Manim, see LAZY)

        leaves = play_at_once(self, *args, **kwargs)
        if not self._in_say:
            self._look_at_texts(rest=0.0)
            self._play_ended = self.renderer.time
            self._played += self._crossfades(leaves)
            if self._still_marks is not None:
                self._after_still += [self._name(a, describe) for a in leaves]
            else:
                self._settled = self.renderer.time

    def prepare_play(self, *args: Any, **kwargs: Any) -> list[Any]:
        """The gathered holds played (scenes.base): then the picture has rested, and its
        texts are looked at before the play changes them."""
        animations = super().prepare_play(*args, **kwargs)
        if not self._in_say:
            self._look_at_texts(rest=self.renderer.time - self._play_ended)
        return animations

    def _look_at_texts(self, rest: float) -> None:
        """Which texts are up now (the caption aside): those gone or changed since the last
        look end their state, then (by what came and went together) each state is checked
        for its reading time; `rest`: how long the picture stood still before this look."""
        from attention_video.scenes.lint import Shown, brief_states, text_look  # (lazy: LAZY)
        from attention_video.scenes.pacing import state_seconds

        now, before = self.renderer.time, self._looked_at
        title = getattr(self, "title_mob", None)
        seen = text_look(self.mobjects, skip=[*self.framing, self._caption, title])
        states: dict[tuple[float, float], list[str]] = {}
        for key, (text, look, came, rested) in list(self._up.items()):
            if seen.get(key, (None, None))[1] != look:
                del self._up[key]
                if text == getattr(self, "title_text", None):
                    continue  # the title, looked at as it came in: it is the framing
                group = states.setdefault((came, rested), [])
                group.append(text)
        for key, (text, look) in seen.items():
            if key not in self._up:  # came by a cut since the last look, or by the last play
                self._up[key] = (text, look, before if rest else now, 0.0)
            t, lk, came, rested = self._up[key]
            self._up[key] = (t, lk, came, max(rested, rest))
        language, pace = self.settings.language, self.settings.pace
        shown = [Shown(tuple(texts), came, before, rested,
                       state_seconds(texts, language, pace))
                 for (came, rested), texts in states.items()]
        self._played += brief_states(shown, 1 / self.camera.frame_rate)
        self._looked_at = now

    def _crossfades(self, leaves: list) -> list:
        """A number fading in over one fading out in the same play (scenes.lint.crossfades):
        what leaves keeps its points once removed, what comes in is where it ends."""
        from attention_video.scenes.lint import crossfades, marks_of  # (lazy: LAZY)

        out = [a.mobject for a in leaves if a.is_remover() and a.mobject is not self._caption]
        come = [a.mobject for a in leaves if a.is_introducer() and a.mobject is not self._caption]
        if not out or not come:
            return []
        return crossfades(marks_of(out, self._read), marks_of(come, self._read))

    def _name(self, animation: Any, describe: Callable[[Any], str]) -> str:
        """An animation as a problem line names it; a cover fading in clears the stage."""
        from manim import Rectangle  # (lazy: LAZY)

        m = animation.mobject
        if (isinstance(m, Rectangle) and m.get_fill_opacity() >= 1
                and m.get_fill_color().to_hex().lower() == self.theme.background.lower()
                and m.width >= self.camera.frame_width - 1e-3):
            return "the stage is cleared (a cover fades in)"
        name = type(animation).__name__
        return f"{'.animate' if name == '_MethodAnimation' else name} of {describe(m)}"

    def wait(self, duration: float = 1.0, *args: Any, **kwargs: Any) -> None:
        wait_at_once(self, duration)

    def caption_ends(self) -> None:
        super().caption_ends()
        if self._caption is not None and self._still_marks is None:
            self._still_marks = self._marks()
            self._still_objects = self.get_mobject_family_members()
            self._still_at = self.renderer.time

    def caption_leaves(self) -> None:
        from attention_video.scenes.lint import CaptionPicture, CaptionTiming  # (lazy: LAZY)

        super().caption_leaves()
        now = self.renderer.time
        still = self._still_marks if self._still_marks is not None else self._marks()
        still_at = self._still_at if self._still_marks is not None else now
        timing = CaptionTiming(shown=self._caption_start, reading=self._caption_need,
                               settled=self._settled, still=still_at, leaves=now,
                               changes=tuple(dict.fromkeys(self._after_still)))
        number = len(self.lint_pictures) + 1
        self.lint_pictures.append(CaptionPicture(number, self._caption_text, still,
                                                 self._marks(), timing,
                                                 tuple(dict.fromkeys(self._played))))
        self._still_marks, self._after_still, self._played = None, [], []
        self._still_objects = []

    def _marks(self) -> list:
        from attention_video.scenes.lint import marks_of  # (lazy: LAZY)

        self._frame_it(self._caption)
        self._frame_it(getattr(self, "title_mob", None))
        return marks_of(self.mobjects, self._read, framed=self.framing)

    def _frame_it(self, m: Any) -> None:
        """Keep a caption or the title among those held to the title-safe area."""
        if m is not None and all(m is not f for f in self.framing):
            self.framing.append(m)


def word_colors(scene: Any) -> list[tuple[str, str]]:
    """(word, colour) of every token the scene colours: keys, and queries when they differ."""
    pairs = list(zip(scene.k_labels, scene.k_colors))
    if scene.q_colors is not scene.k_colors:
        pairs += list(zip(scene.q_labels, scene.q_colors))
    return [(w, c.lower()) for w, c in pairs]


def lint_chapter(slug: str, trace: AttentionTrace, settings: Settings,
                 plan: tuple[str, ...]) -> ChapterLint:
    """Build chapter `slug` of a video that plays `plan` without animating and check
    each caption's picture."""
    from attention_video.fastmanim.texts import use_text_cache  # (lazy: LAZY)
    from attention_video.scenes import scene_class
    from attention_video.scenes.lint import caption_findings, confusable, gather
    from manim import tempconfig

    use_text_cache(cache_dir() / "text-objects")
    start = time.perf_counter()
    base = scene_class(slug)
    cls = type(base.__name__, (_Linting, base), {})
    text_dir = Path(tempfile.mkdtemp(prefix="manim-texts-"))
    try:
        with tempconfig(manim_config(settings, None, None, text_dir)):
            scene = cls(trace, settings, plan, skip_animations=True)
            scene.render()
    finally:
        shutil.rmtree(text_dir, ignore_errors=True)
    confusions = confusable(word_colors(scene))
    background = scene.theme.background.lower()
    signs = (scene.theme.positive.lower(), scene.theme.negative.lower())
    words = {c.lower() for c in (*scene.k_colors, *scene.q_colors)}
    tokens = (*scene.k_labels, *scene.q_labels)  # shown as written, "_" and all
    findings = [(p.caption, caption_findings(p, background, confusions, signs, words, tokens))
                for p in scene.lint_pictures]
    return ChapterLint(slug, len(scene.lint_pictures), gather(number(slug), findings),
                       time.perf_counter() - start)


def lint_video(settings: Settings, trace: AttentionTrace, *, jobs: int | None = None,
               progress: Progress = lambda s: None) -> LintResult:
    """Every planned chapter linted by `jobs` worker processes (1: here), in plan order."""
    start = time.perf_counter()
    plan = plan_chapters(settings, trace, progress)
    whole = tuple(plan)
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(plan)))
    results: dict[str, ChapterLint] = {}
    if jobs == 1:
        for ch in plan:
            results[ch] = lint_chapter(ch, trace, settings, whole)
    else:
        pool = LocalPool(jobs)
        try:
            futures = [pool.submit(lint_chapter, ch, trace, settings, whole)
                       for ch in longest_first(plan, trace, settings)]
            for done in as_completed(futures):
                got = done.result()
                results[got.chapter] = got
        except BaseException:
            pool.stop()
            raise
        pool.shutdown(wait=False)
    for ch in plan:
        r = results[ch]
        progress(f"chapter {number(ch)} ({chapter(ch).name}): {r.captions} captions, "
                 f"{len(r.problems)} problems")
    return LintResult([results[ch] for ch in plan], time.perf_counter() - start)
