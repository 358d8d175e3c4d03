"""Checking what captions claim about their pictures (scenes.claims) against the trace and
against what is on screen when each caption's picture is complete.

A chapter is built as the lint and the storyboard build it (a dry run: every play ends at
once in its final state); a mixin notes which mobjects are on screen, and visible, at each
caption's still (ChapterScene.caption_ends, or as the caption leaves when it has no still).
The facts a claim is checked against are computed here from the trace's Q, K and mask with
plain numpy, not read from attncore.geometry, which the scenes draw from.
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
from attention_video.attncore.settings import Settings
from attention_video.attncore.trace import AttentionTrace
from attention_video.fastmanim.encoder import TimedRenderer
from attention_video.pipeline.commands.app import make_trace
from attention_video.pipeline.run.chapter import manim_config
from attention_video.pipeline.run.render import plan_chapters
from attention_video.scenes import scene_class
from attention_video.scenes.claims import (
    FURTHEST,
    LEAST_ALIGNED,
    NOT_DRAWN,
    RANKING,
    ROW_MARKS,
    Claim,
)
from manim import Mobject, tempconfig

from tests.support.lint_corpus import Case

VISIBLE = 0.01  # an opacity above this is seen
TIE = 1e-9  # scores this close rank either way
TICK_REACH = 0.15  # a tick marks the pattern whose left edge is at most this far right of it


class _Watching:
    """Mixed into a chapter scene: which mobjects are on screen and visible at each
    caption's still, by caption number."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.on_screen: dict[int, set[int]] = {}
        super().__init__(*args, **kwargs)

    def _look(self) -> None:
        if self._caption is not None:
            seen = {id(m) for m in self.get_mobject_family_members() if _visible(m)}
            self.on_screen.setdefault(len(self.subtitles), seen)

    def caption_ends(self) -> None:
        self._look()
        super().caption_ends()

    def caption_leaves(self) -> None:
        self._look()
        super().caption_leaves()


def _visible(m: Mobject) -> bool:
    if not m.has_points():
        return False
    fill = getattr(m, "fill_rgbas", None)
    stroke = getattr(m, "stroke_rgbas", None)
    alphas = [float(a[:, 3].max()) for a in (fill, stroke) if a is not None and len(a)]
    return any(a > VISIBLE for a in alphas) if alphas else True


def _on(mark: Mobject, seen: set[int]) -> bool:
    """Whether `mark` is on screen: every part of it that draws anything is seen."""
    parts = [m for m in mark.get_family() if _visible(m)]
    return bool(parts) and all(id(m) in seen for m in parts)


def build_chapter(slug: str, trace: AttentionTrace, settings: Settings,
                  plan: tuple[str, ...]) -> Any:
    """Chapter `slug` built as a dry run, watched."""
    base = scene_class(slug)
    cls = type(base.__name__, (_Watching, base), {})
    with tempfile.TemporaryDirectory() as texts, \
            tempconfig(manim_config(settings, None, None, Path(texts))):
        scene = cls(trace, settings, plan, skip_animations=True,
                    renderer=TimedRenderer(skip_animations=True))
        scene.render()
    return scene


@dataclass(frozen=True)
class Facts:
    """The followed query's row, computed here: which keys it may see, their scores, the
    cosine of each key's angle to the query (nan for a zero key)."""

    allowed: list[int]
    scores: np.ndarray  # (n_k,)
    cosines: np.ndarray  # (n_k,)
    n_q: int  # query rows of a pattern

    @classmethod
    def of(cls, trace: AttentionTrace) -> Facts:
        h, i = trace.head, trace.focus
        q, K = h.Q[i], h.K  # (d_k,), (n_k, d_k)
        scores = np.array([sum(float(a) * float(b) for a, b in zip(q, k)) for k in K])
        lengths = np.sqrt((K ** 2).sum(axis=1)) * np.sqrt((q ** 2).sum())  # (n_k,)
        with np.errstate(invalid="ignore", divide="ignore"):
            cosines = np.where(lengths > 0, scores / lengths, np.nan)
        return cls([int(j) for j in np.flatnonzero(h.mask[i])], scores, cosines, trace.n_q)

    def ranked(self) -> list[int]:
        return sorted(self.allowed, key=lambda j: -self.scores[j])


def check_claim(c: Claim, seen: set[int], facts: Facts, words: list[str]) -> list[str]:
    """What is wrong with claim `c` (empty: it holds), given the ids of the mobjects on
    screen and visible at its caption's still and the facts of the trace."""
    shown = [k for k, m in c.marks.items() if _on(m, seen)]
    where = f"caption {c.caption + 1} ({c.text!r})"
    wrong = []
    if c.kind == NOT_DRAWN:
        missing = set(facts.allowed) - set(shown)
        if set(c.keys) != missing:
            wrong.append(f"{where} says {len(c.keys)} keys are not drawn "
                         f"({_names(c.keys, words)}); the keys without an arrow on screen are "
                         f"{len(missing)} ({_names(sorted(missing), words)})")
        if c.keys and str(len(c.keys)) not in c.text:  # none: "every other key joins"
            wrong.append(f"{where} does not state the count {len(c.keys)}")
    elif c.kind in (FURTHEST, LEAST_ALIGNED):
        (k,) = c.keys
        if k not in shown:
            wrong.append(f"{where} names {words[k]!r}, whose arrow is not on screen")
        if c.kind == FURTHEST:
            top = max(facts.scores[j] for j in facts.allowed)
            if facts.scores[k] < top - TIE:
                wrong.append(f"{where}: {words[k]!r} scores {facts.scores[k]:.4f}, "
                             f"not the highest ({top:.4f})")
        else:
            aligned = [j for j in facts.allowed if not np.isnan(facts.cosines[j])]
            least = min((facts.cosines[j] for j in aligned), default=np.nan)
            if aligned and facts.cosines[k] > least + TIE:
                wrong.append(f"{where}: {words[k]!r} has cos θ {facts.cosines[k]:.4f}, "
                             f"not the least aligned ({least:.4f})")
    elif c.kind == RANKING:
        wrong += _check_ranking(c, seen, facts, words, where)
    elif c.kind == ROW_MARKS:
        wrong += _check_row_marks(c, seen, facts, where)
    return wrong


def _check_row_marks(c: Claim, seen: set[int], facts: Facts, where: str) -> list[str]:
    """Ticks that mark query row `keys[0]`: each on screen, level with that row of the
    pattern it points into (rows split its height evenly), just left of it."""
    (row,) = c.keys
    wrong = []
    for k, tick in c.marks.items():
        frame = c.frames[k]
        if not _on(tick, seen) or not _on(frame, seen):
            wrong.append(f"{where}: tick {k} or the pattern it marks is not on screen")
            continue
        step = frame.height / facts.n_q
        top = frame.get_top()[1] - row * step
        if not (top - step <= tick.get_y() <= top) or not (
                0 <= frame.get_left()[0] - tick.get_right()[0] <= TICK_REACH):
            wrong.append(f"{where}: tick {k} is not by row {row} of its pattern")
    return wrong


def _check_ranking(c: Claim, seen: set[int], facts: Facts, words: list[str],
                   where: str) -> list[str]:
    """A table that ranks: its rows on screen, top to bottom, are the ranked keys in order,
    each key left out accounted for by a "⋮ n more" row where it would stand."""
    items = [(m.get_y(), k) for k, m in c.marks.items() if _on(m, seen)]
    items += [(m.get_y(), -n) for m, n in c.gaps if _on(m, seen)]  # a gap as −n
    hidden = [k for k, m in c.marks.items() if not _on(m, seen)]
    if hidden:
        return [f"{where}: the ranking's rows of {_names(hidden, words)} are not on screen"]
    ranked, p, wrong = facts.ranked(), 0, []
    for _, item in sorted(items, key=lambda t: -t[0]):
        if item < 0:
            p += -item
            continue
        if p >= len(ranked) or abs(facts.scores[item] - facts.scores[ranked[p]]) > TIE:
            expected = words[ranked[p]] if p < len(ranked) else "nothing"
            wrong.append(f"{where}: row {p + 1} of the ranking is {words[item]!r}, "
                         f"expected {expected!r}")
            return wrong
        p += 1
    if p != len(ranked):
        wrong.append(f"{where}: the ranking accounts for {p} of {len(ranked)} keys")
    return wrong


# Arithmetic a caption writes out with the numbers as drawn: "5.49 × 4.49 × 0.980 gives 24.13"
# (es "da", zh "得到") or "24.13 = 5.49 × 4.40"; "≈" where the drawn factors do not make the
# drawn result on paper, as the picture beside it marks it.
NUM = r"−?\d+(?:\.\d+)?"
GIVES = re.compile(rf"({NUM}(?: × {NUM})+) (gives|da|得到|≈) ({NUM})")
EQUALS = re.compile(rf"({NUM}) (=|≈) ({NUM}(?: × {NUM})+)(?! ×)")


def _decimal(text: str) -> Decimal:
    return Decimal(text.replace("−", "-"))


def _on_paper(factors: str, result: str) -> bool:
    """Whether the factors as written multiply to the result at its decimals."""
    product = Decimal(1)
    for f in factors.split(" × "):
        product *= _decimal(f)
    places = len(result.split(".")[1]) if "." in result else 0
    return abs(product - _decimal(result)) <= Decimal(5) / Decimal(10) ** (places + 1)


def check_arithmetic(text: str) -> list[str]:
    """A product a caption writes out: "=" (or "gives") only where the drawn factors make the
    drawn result on paper, "≈" only where they do not."""
    wrong = []
    found = [(m[1], m[2], m[3]) for m in GIVES.finditer(text)]
    found += [(m[3], m[2], m[1]) for m in EQUALS.finditer(text)]
    for factors, sign, result in found:
        if (sign != "≈") != _on_paper(factors, result):
            wrong.append(f"{text!r}: {factors} {sign} {result}")
    return wrong


def _names(keys, words: list[str]) -> str:
    return ", ".join(words[k] for k in keys) or "none"


@dataclass
class ChapterClaims:
    chapter: str
    claims: list[Claim]
    problems: list[str]


def check_scene(scene: Any, trace: AttentionTrace) -> list[str]:
    """Every claim a built, watched chapter filed, checked."""
    facts = Facts.of(trace)
    words = [t.text for t in trace.key_tokens]
    wrong = []
    for c in scene.claims:
        seen = scene.on_screen.get(c.caption, set())
        wrong += [f"ch {scene.slug}: {w}" for w in check_claim(c, seen, facts, words)]
    for _, _, text in scene.subtitles:
        wrong += [f"ch {scene.slug}: {w}" for w in check_arithmetic(text)]
    return wrong


def check_case(case: Case, chapters: tuple[str, ...] | None = None) -> list[ChapterClaims]:
    """Every chapter the case plays (or those of them in `chapters`), built and checked."""
    settings = case.settings
    trace = make_trace(settings, lambda s: None)
    plan = tuple(plan_chapters(settings, trace))
    out = []
    for slug in plan:
        if chapters is not None and slug not in chapters:
            continue
        scene = build_chapter(slug, trace, settings, plan)
        out.append(ChapterClaims(slug, list(scene.claims), check_scene(scene, trace)))
    return out
