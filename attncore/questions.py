"""Questions a viewer can answer before the video shows the answer, made from the trace.

Each question is data: its kind, the chapter whose picture reveals the answer (it is asked
as that chapter opens, never after), its options, which option is right, and the numbers
its one-line reason quotes. The scenes phrase them in the caption language; the quiz bank
and the page read the same records. A question is made only where it is not trivial:
a "which word" question needs at least two candidate words and an answer that is a word
(not an end token a head rests on whatever the sentence).

Pure numpy: the answers are computed here from the trace's numbers, once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from attention_video.attncore import rotary
from attention_video.attncore.geometry import angles as key_angles
from attention_video.attncore.trace import AttentionTrace

# The kinds, each named for what the viewer predicts.
TOP_KEY = "top key"  # which other word will the followed word score highest
SIGN = "sign"  # will this cell of Q·Kᵀ be positive or negative
CLOSEST_ANGLE = "closest angle"  # which key points most nearly the query's way
TOP_WEIGHT = "top weight"  # about how much weight goes to the top word after softmax
ROPE_SHIFT = "rope shift"  # both words moved later by the same places: the same score?
ROPE_DISTANCE = "rope distance"  # the followed word moved further on: the same score?
STEP_ZERO = "step zero"  # before training, how much weight did the partner get
KINDS = (TOP_KEY, SIGN, CLOSEST_ANGLE, TOP_WEIGHT, ROPE_SHIFT, ROPE_DISTANCE, STEP_ZERO)

# Fixed answers (the scenes word them).
POSITIVE, NEGATIVE, SAME, DIFFERENT = "positive", "negative", "the same", "different"
BANDS = ((0.0, 0.25), (0.25, 0.5), (0.5, 0.75), (0.75, 1.0))  # weight bands, [low, high)
MAX_OPTIONS = 4  # word options shown: the answer and the next-ranked words
SHIFT = 4  # places the rotary shift question moves both words by
SHIFTS = (4, 8, 16)  # places the distance question may move the followed word by


@dataclass(frozen=True)
class Option:
    """One choice: a key token (`token`), a fixed answer (`label`), or a band [low, high)."""

    token: int | None = None
    label: str | None = None
    low: float | None = None
    high: float | None = None


@dataclass(frozen=True)
class Question:
    kind: str
    before: str  # the chapter (slug) that reveals the answer: asked as it opens
    reveals: str  # the trace quantity whose drawing gives the answer away ("" if none does)
    query: int  # the followed word (a query row)
    key: int | None  # the key the question is about, if one
    options: tuple[Option, ...]
    answer: int  # index of the right option
    facts: tuple[tuple[str, float], ...]  # the numbers the reason quotes, by name

    def fact(self, name: str) -> float:
        return dict(self.facts)[name]


def questions(trace: AttentionTrace) -> tuple[Question, ...]:
    """Every question this trace can ask, in the order of the chapters that reveal them."""
    made = (top_key(trace), sign(trace), rope_shift(trace), rope_distance(trace),
            closest_angle(trace), top_weight(trace), step_zero(trace))
    return tuple(q for q in made if q is not None)


# ---- which keys a word question offers ---------------------------------------------------
def candidates(trace: AttentionTrace, i: int | None = None) -> list[int]:
    """Keys query i (the followed word by default) may weigh that are words: allowed, not
    itself (in self-attention), not a special token."""
    i = trace.focus if i is None else i
    return [j for j, token in enumerate(trace.key_tokens)
            if trace.head.mask[i, j] and token.kind != "special"
            and not (not trace.cross and j == i)]


def word_options(order: list[int], answer: int) -> tuple[tuple[Option, ...], int]:
    """The answer and the words ranked next to it (up to MAX_OPTIONS), in sentence order."""
    chosen = sorted([answer] + [j for j in order if j != answer][:MAX_OPTIONS - 1])
    return tuple(Option(token=j) for j in chosen), chosen.index(answer)


# ---- the kinds ---------------------------------------------------------------------------
def top_key(trace: AttentionTrace) -> Question | None:
    """Which of these words will the followed word score highest (before Q·Kᵀ is drawn)."""
    i, keys = trace.focus, candidates(trace)
    if len(keys) < 2:
        return None
    scores = trace.head.scores[i]
    order = sorted(keys, key=lambda j: (-scores[j], j))
    best = order[0]
    options, answer = word_options(order, best)
    runner = order[1]
    return Question(TOP_KEY, "factor", "scores", i, best, options, answer,
                    (("score", float(scores[best])), ("runner_up", float(scores[runner])),
                     ("runner_up_key", float(runner))))


def sign(trace: AttentionTrace) -> Question | None:
    """Will a cell of Q·Kᵀ be positive or negative? Asked of a cell whose sign a viewer
    counting the two rows' agreeing signs would get right: the followed word's row first,
    a split count before a unanimous one, a negative cell before a positive one (an answer that is not always "positive"), never
    the top key's cell (the top-key question gives that one away)."""
    head, top = trace.head, top_key(trace)
    fair = []
    for i in range(trace.n_q):
        for j in candidates(trace, i):
            if top is not None and (i, j) == (top.query, top.key):
                continue
            agree = head.agreement(i, j)
            same, opposite = int((agree > 0).sum()), int((agree < 0).sum())
            score = float(head.scores[i, j])
            if same != opposite and (same > opposite) == (score > 0) and score != 0:
                unanimous = same == 0 or opposite == 0  # the count alone gives it away
                fair.append((i != trace.focus, unanimous, score > 0, -abs(score), i, j,
                             same, opposite))
    if not fair:
        return None
    *_, i, j, same, opposite = min(fair)
    score, products = float(head.scores[i, j]), head.products(i, j)
    options = (Option(label=POSITIVE), Option(label=NEGATIVE))
    return Question(SIGN, "factor", "scores", i, j, options, 0 if score > 0 else 1,
                    (("same", same), ("opposite", opposite), ("score", score),
                     ("plus", float(products[products > 0].sum())),
                     ("minus", float(products[products < 0].sum()))))


def closest_angle(trace: AttentionTrace) -> Question | None:
    """Which key points most nearly the way the query does (the smallest angle θ), asked
    before chapter `dot` draws the angles."""
    i = trace.focus
    theta = key_angles(trace.head.Q[i], trace.head.K)  # (n_k,) degrees, NaN: no direction
    keys = [j for j in candidates(trace) if not np.isnan(theta[j])]
    if len(keys) < 2:
        return None
    order = sorted(keys, key=lambda j: (theta[j], j))
    best = order[0]
    top = max(keys, key=lambda j: (trace.head.scores[i, j], -j))
    options, answer = word_options(order, best)
    return Question(CLOSEST_ANGLE, "dot", "angles", i, best, options, answer,
                    (("angle", float(theta[best])), ("top_key", float(top)),
                     ("top_key_angle", float(theta[top]))))


def top_weight(trace: AttentionTrace) -> Question | None:
    """After softmax, about how much of the followed word's weight goes to its top key."""
    if not trace.normalized:
        return None
    i, head = trace.focus, trace.head
    row = np.where(head.mask[i], head.weights[i], -np.inf)
    j = int(np.argmax(row))
    weight = float(head.weights[i, j])
    options = tuple(Option(low=low, high=high) for low, high in BANDS)
    return Question(TOP_WEIGHT, "softmax", "weights", i, j, options, band_of(weight),
                    (("weight", weight), ("allowed", float(head.mask[i].sum()))))


def _rotary_pair(trace: AttentionTrace) -> tuple[np.ndarray, np.ndarray, int, int] | None:
    """The followed word's query and its partner's key before rotation, and their places."""
    if trace.rope is None or not trace.can.rotary:
        return None
    i, j = trace.focus, trace.partner
    if j == i:
        return None
    h = trace.head_index
    kv = trace.kv_heads[h] if trace.kv_heads is not None else h
    return trace.rope.Q_before[h, i], trace.rope.K_before[kv, j], i, j


def rope_shift(trace: AttentionTrace) -> Question | None:
    """Both words moved SHIFT places later, the same distance apart: the same score? (Yes:
    rotary positions make q·k depend on the distance only.)"""
    pair = _rotary_pair(trace)
    if pair is None:
        return None
    q, k, i, j = pair
    here = rotary.rotated_dot(q, k, i, j, trace.rope.base)
    moved = rotary.rotated_dot(q, k, i + SHIFT, j + SHIFT, trace.rope.base)
    same = bool(np.isclose(here, moved, rtol=1e-6, atol=1e-6))
    options = (Option(label=SAME), Option(label=DIFFERENT))
    return Question(ROPE_SHIFT, "factor", "", i, j, options, 0 if same else 1,
                    (("score", here), ("moved", moved), ("shift", SHIFT)))


def rope_distance(trace: AttentionTrace) -> Question | None:
    """The followed word some places further on, its key where it is, so they stand further
    apart: the same score? (No: the turn between them grows with the distance.) Asked with
    the first of SHIFTS that changes the score as the video prints it (two decimals), and
    not at all if none does: a change nobody can see teaches nothing."""
    pair = _rotary_pair(trace)
    if pair is None:
        return None
    q, k, i, j = pair
    here = rotary.rotated_dot(q, k, i, j, trace.rope.base)
    for shift in SHIFTS:
        further = rotary.rotated_dot(q, k, i + shift, j, trace.rope.base)
        if round(further, 2) != round(here, 2):
            options = (Option(label=SAME), Option(label=DIFFERENT))
            return Question(ROPE_DISTANCE, "factor", "", i, j, options, 1,
                            (("score", here), ("further", further), ("shift", shift),
                             ("distance", abs(i - j)), ("further_distance", abs(i + shift - j))))
    return None


def step_zero(trace: AttentionTrace) -> Question | None:
    """Before training (step 0), about how much of the followed word's weight went to the
    word it weighs most once trained? Asked as the learning chapter opens: the surprise is
    that it starts at about an even share."""
    history = trace.history
    if history is None or not trace.can.trained_here:
        return None
    j = history.partner
    weight = float(history.weights[0, j])
    options = tuple(Option(low=low, high=high) for low, high in BANDS)
    return Question(STEP_ZERO, "learning", "history", trace.focus, j, options,
                    band_of(weight),
                    (("weight", weight), ("even", 1.0 / float(history.weights.shape[1])),
                     ("final", float(history.weights[-1, j]))))


def band_of(weight: float) -> int:
    """The band [low, high) that holds a weight (the last band holds 1.0 too)."""
    return next(b for b, (low, high) in enumerate(BANDS)
                if low <= weight < high or (high == 1.0 and weight >= low))
