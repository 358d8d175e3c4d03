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
from attention_video.pipeline.run.fastforward import play_at_once, wait_at_once
from attention_video.pipeline.run.render import plan_chapters
from attention_video.scenes import scene_class
from attention_video.scenes.claims import (
    AGREEING,
    FURTHEST,
    HIGHEST,
    LABELLED,
    LEAST_ALIGNED,
    MASKED,
    NOT_DRAWN,
    OTHERS,
    PARTNER,
    RANKING,
    ROW_MARKS,
    SNAPSHOTS,
    SPREAD,
    TREND,
    Claim,
)
from manim import Mobject, tempconfig

from tests.support.lint_corpus import Case

VISIBLE = 0.01  # an opacity above this is seen
TIE = 1e-9  # scores this close rank either way
TICK_REACH = 0.15  # a tick marks the pattern whose left edge is at most this far right of it
DOT_REACH = 0.02  # a snapshot's dot on a curve stands this close to its step's x
LEARNING = (PARTNER, HIGHEST, SPREAD, TREND, AGREEING, OTHERS, SNAPSHOTS)


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


class _AtOnce:
    """Mixed into a chapter scene: every play ends at once in its final state, keeping a
    render's time, as the lint and the storyboard build (pipeline.run.fastforward): what is
    on screen as a caption ends or leaves is what a render shows then."""

    def play(self, *args: Any, **kwargs: Any) -> None:
        play_at_once(self, *args, **kwargs)

    def wait(self, duration: float = 1.0, *args: Any, **kwargs: Any) -> None:
        wait_at_once(self, duration)


def build_chapter(slug: str, trace: AttentionTrace, settings: Settings,
                  plan: tuple[str, ...]) -> Any:
    """Chapter `slug` built as the lint builds it, watched."""
    base = scene_class(slug)
    cls = type(base.__name__, (_Watching, _AtOnce, base), {})
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
    focus: int = 0  # the followed query (its position, within one sentence)
    n_heads: int = 1  # heads of the followed layer

    @classmethod
    def of(cls, trace: AttentionTrace) -> Facts:
        h, i = trace.head, trace.focus
        q, K = h.Q[i], h.K  # (d_k,), (n_k, d_k)
        scores = np.array([sum(float(a) * float(b) for a, b in zip(q, k)) for k in K])
        lengths = np.sqrt((K ** 2).sum(axis=1)) * np.sqrt((q ** 2).sum())  # (n_k,)
        with np.errstate(invalid="ignore", divide="ignore"):
            cosines = np.where(lengths > 0, scores / lengths, np.nan)
        return cls([int(j) for j in np.flatnonzero(h.mask[i])], scores, cosines, trace.n_q, i,
                   len(trace.heads))

    def ranked(self) -> list[int]:
        return sorted(self.allowed, key=lambda j: -self.scores[j])


@dataclass(frozen=True)
class Training:
    """The training replay's facts (trace.history), computed here from its Q and K rows and
    its curves: the followed word's weights, its query and every key at each snapshot."""

    weights: np.ndarray  # (s, n_k)
    q: np.ndarray  # (s, d_k)
    keys: np.ndarray  # (s, n_k, d_k)
    partner: int  # the key the caption's scores are about (the history's)
    steps: np.ndarray  # (s,)
    curve_step: np.ndarray  # (c,)
    loss: np.ndarray  # (c,)
    accuracy: np.ndarray  # (c,)
    itself: int | None  # the followed word's own key (None across two sentences)

    @classmethod
    def of(cls, trace: AttentionTrace) -> Training | None:
        h = trace.history
        if h is None:
            return None
        return cls(h.weights, h.q, h.keys, h.partner, h.steps, h.curve_step, h.curve_loss,
                   h.curve_accuracy, None if trace.cross else trace.focus)

    def score(self, s: int, j: int) -> float:
        return sum(float(a) * float(b) for a, b in zip(self.q[s], self.keys[s, j]))

    def angle(self, s: int, j: int) -> float:
        q, k = self.q[s], self.keys[s, j]
        cos = self.score(s, j) / (np.sqrt((q ** 2).sum()) * np.sqrt((k ** 2).sum()))
        return float(np.degrees(np.arccos(np.clip(cos, -1.0, 1.0))))

    def length(self, s: int, j: int) -> float:
        return float(np.sqrt((self.keys[s, j] ** 2).sum()))

    def agreeing(self, s: int) -> int:
        """Pairs q_m, k_m of the partner with the same sign (a positive product)."""
        return int(sum(float(a) * float(b) > 0 for a, b in zip(self.q[s], self.keys[s, self.partner])))

    def change(self, name: str, key: int | None) -> float:
        """The last snapshot's value less the first's."""
        if name == "weight":
            return float(self.weights[-1, key] - self.weights[0, key])
        if name == "score":
            return self.score(-1, key) - self.score(0, key)
        curve = {"loss": self.loss, "accuracy": self.accuracy}[name]
        return float(curve[-1] - curve[0])


def check_training_claim(c: Claim, seen: set[int], t: Training, words: list[str]) -> list[str]:
    """What is wrong with a claim chapter `learning` files (empty: it holds)."""
    where = f"caption {c.caption + 1} ({c.text!r})"
    hidden = [k for k, m in c.marks.items() if not _on(m, seen)]
    wrong = [f"{where}: what shows it ({c.kind}, {hidden}) is not on screen"] if hidden else []
    s = c.values.get("snapshot")
    if c.kind == PARTNER:
        (k,) = c.keys
        others = [j for j in range(t.weights.shape[1]) if j != t.itself] or [k]
        best = max(t.weights[-1, j] for j in others)
        if t.weights[-1, k] < best - TIE:
            wrong.append(f"{where} asks about {words[k]!r} ({t.weights[-1, k]:.4f}), not the "
                         f"key weighed most at the end ({best:.4f})")
    elif c.kind == HIGHEST:
        (k,) = c.keys
        if t.weights[s, k] < t.weights[s].max() - TIE:
            wrong.append(f"{where}: {words[k]!r} is not the largest weight of snapshot {s}")
    elif c.kind == SPREAD:
        if t.weights[s].max() >= 0.5:
            wrong.append(f"{where}: snapshot {s} gives {t.weights[s].max():.4f} to one key")
    elif c.kind == TREND:
        key = c.keys[0] if c.keys else None
        for name, sign in c.values.items():
            moved = t.change(name, key)
            if (0 if abs(moved) < 1e-6 else np.sign(moved)) != sign:
                wrong.append(f"{where} says the {name} went {'up' if sign > 0 else 'down'}; it "
                             f"changed by {t.change(name, key):+.4f}")
    elif c.kind == AGREEING:
        said, found = (c.values["first"], c.values["last"]), (t.agreeing(0), t.agreeing(-1))
        if said != found:
            wrong.append(f"{where} counts {said} pairs agreeing; the rows give {found}")
    elif c.kind == OTHERS:
        wrong += _check_others(c, t, words, where)
    elif c.kind == SNAPSHOTS:
        wrong += _check_snapshot_dots(c, t, where)
    return wrong


def _check_others(c: Claim, t: Training, words: list[str], where: str) -> list[str]:
    """"Of the other n keys drawn, a turned away and b got shorter (…none reaches as far)":
    the counts, from the angles and lengths at the first and last snapshot."""
    keys, wrong = list(c.keys), []
    if str(len(keys)) not in c.text:
        wrong.append(f"{where} does not state the count {len(keys)} of the other keys drawn")
    away = sum(t.angle(-1, j) > t.angle(0, j) for j in keys)
    shorter = sum(t.length(-1, j) < t.length(0, j) for j in keys)
    furthest = all(t.score(-1, t.partner) > t.score(-1, j) for j in keys)  # |q| is common
    found = {"away": away, "shorter": shorter, "furthest": furthest}
    if any(c.values[name] != value for name, value in found.items()):
        wrong.append(f"{where} says {c.values}; the snapshots give {found} "
                     f"(keys {_names(keys, words)})")
    return wrong


def _check_snapshot_dots(c: Claim, t: Training, where: str) -> list[str]:
    """"● the snapshots": one dot per snapshot, each at its step along the curve's box."""
    if sorted(c.marks) != list(range(len(t.steps))):
        return [f"{where}: {len(c.marks)} dots for {len(t.steps)} snapshots"]
    wrong = []
    for s, dot in c.marks.items():
        box = c.frames[s]
        x0, x1 = float(t.steps[0]), float(max(t.curve_step.max(), t.steps[0]))
        want = box.get_left()[0] + box.width * (float(t.steps[s]) - x0) / max(x1 - x0, 1e-9)
        if abs(dot.get_x() - want) > DOT_REACH:
            wrong.append(f"{where}: the dot of snapshot {s} (step {t.steps[s]}) is at "
                         f"x {dot.get_x():.3f}, its step at {want:.3f}")
    return wrong


def check_claim(c: Claim, seen: set[int], facts: Facts, words: list[str]) -> list[str]:
    """What is wrong with claim `c` (empty: it holds), given the ids of the mobjects on
    screen and visible at its caption's still and the facts of the trace."""
    shown = [k for k, m in c.marks.items() if _on(m, seen)]
    where = f"caption {c.caption + 1} ({c.text!r})"
    wrong = []
    if c.kind == NOT_DRAWN:
        pool = range(len(facts.scores)) if c.values.get("among") == "every" else facts.allowed
        missing = set(pool) - set(shown)
        if set(c.keys) != missing:
            wrong.append(f"{where} says {len(c.keys)} keys are not drawn "
                         f"({_names(c.keys, words)}); the keys without an arrow on screen are "
                         f"{len(missing)} ({_names(sorted(missing), words)})")
        if c.keys and str(len(c.keys)) not in c.text:  # none: "every other key joins"
            wrong.append(f"{where} does not state the count {len(c.keys)}")
    elif c.kind == MASKED:
        hidden = set(range(len(facts.scores))) - set(facts.allowed)
        if set(c.keys) != hidden or any(k <= facts.focus for k in c.keys):
            wrong.append(f"{where} says {_names(c.keys, words)} are masked, later words; the "
                         f"mask hides {_names(sorted(hidden), words)} from {words[facts.focus]!r}")
        if str(len(c.keys)) not in c.text:
            wrong.append(f"{where} does not state the count {len(c.keys)}")
    elif c.kind == LABELLED:
        unlabelled = [h for h, m in c.marks.items() if not _on(m, seen)]
        if len(c.marks) != facts.n_heads or unlabelled:
            wrong.append(f"{where}: {len(c.marks)} of {facts.n_heads} heads labelled, "
                         f"heads {unlabelled} not on screen")
        if c.keys and str(len(c.keys)) not in c.text:
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
    facts, training = Facts.of(trace), Training.of(trace)
    words = [t.text for t in trace.key_tokens]
    wrong = []
    for c in scene.claims:
        seen = scene.on_screen.get(c.caption, set())
        found = (check_training_claim(c, seen, training, words) if c.kind in LEARNING
                 else check_claim(c, seen, facts, words))
        wrong += [f"ch {scene.slug}: {w}" for w in found]
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
