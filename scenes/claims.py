"""What a caption claims about its picture, kept as data beside the caption.

A caption that counts, names, ranks or points ("3 more are not drawn", "drank reaches
furthest", "the least aligned key", the table "longest first", "the ticks mark the row of
milk", "its weight for drank rises", "1 turned away") is generated from the same
record the scene draws from; the scene also files that record as a `Claim`, with the marks
that show it on screen, under the caption it belongs to. tests/support/claims.py checks
every claim against the trace and against what is on screen when the caption's picture is
complete (ChapterScene.caption_ends). No Manim here: marks are whatever the scene drew.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# What a claim says (its `kind`):
NOT_DRAWN = "not_drawn"  # "N more are not drawn": `keys` are the allowed keys without an arrow
#                          (or a row, a bar; every key without one if `values["among"]` is
#                          "every"); `marks` hold the arrow of every key of the picture
MASKED = "masked"  # "N later words are masked": `keys` are the keys the mask hides from the
#                    followed word, each after it
LABELLED = "labelled"  # "and N more heads, each labelled": `marks` hold every head's label (by
#                        head), `keys` the heads the count stands for
FURTHEST = "furthest"  # "`keys[0]` reaches furthest / has the highest score": its arrow in `marks`
LEAST_ALIGNED = "least_aligned"  # "the least aligned key, `keys[0]`": its arrow in `marks`
RANKING = "ranking"  # a table "longest first": `marks` hold each listed key's row, `gaps`
#                      each "⋮ n more" row with its n, standing for the keys left out there
ROW_MARKS = "row_marks"  # "the ticks mark the row of `keys[0]`" (a query row): `marks` hold
#                          each tick, `frames` the attention pattern it points into (same key)
# Chapter `learning`, about the snapshots of training (trace.history; s is a snapshot):
PARTNER = "partner"  # "why does the word look at `keys[0]`": the key it weighs most at the end
#                      (itself aside); `marks` hold what points at it
HIGHEST = "highest"  # "at step N it already gives w to `keys[0]`": the largest weight of snapshot
#                      `values["snapshot"]`; `marks` hold that row
SPREAD = "spread"  # "at step N it spreads its attention": no weight of snapshot
#                    `values["snapshot"]` reaches half; `marks` hold that row
TREND = "trend"  # "rises", "grew", "lowered": `values` maps a history quantity ("weight" of
#                  `keys[0]`, "score", "loss", "accuracy") to +1 (up) or −1 (down) from the
#                  first snapshot to the last; `marks` hold what shows it
AGREEING = "agreeing"  # "a of d pairs agree in sign; after training b": `values` "first" and
#                        "last" (the counts said), `marks` the two rows of products
OTHERS = "others"  # "of the other n keys drawn, a turned away and b got shorter …": `keys` the
#                    other keys drawn, `marks` their arrows at the last snapshot, `values`
#                    "away", "shorter" and "furthest" (the partner still reaches furthest)
SNAPSHOTS = "snapshots"  # "● the snapshots": `marks` one dot per snapshot on a curve, `frames`
#                          the curve's box (the same for each dot of one curve)
KINDS = (NOT_DRAWN, MASKED, LABELLED, FURTHEST, LEAST_ALIGNED, RANKING, ROW_MARKS, PARTNER, HIGHEST, SPREAD, TREND,
         AGREEING, OTHERS, SNAPSHOTS)


@dataclass(frozen=True, eq=False)
class Claim:
    """One claim of one caption: what it says (`kind`), about which keys, and what on the
    picture shows it."""

    kind: str
    keys: tuple[int, ...]  # the keys it names, counts or ranks (in that order)
    marks: dict[int, Any] = field(default_factory=dict)  # key → the mobject that shows it
    gaps: tuple[tuple[Any, int], ...] = ()  # RANKING: (the "⋮ n more" row, n)
    frames: dict[int, Any] = field(default_factory=dict)  # ROW_MARKS: what each mark points into
    values: dict[str, Any] = field(default_factory=dict)  # what else it states (see its kind)
    caption: int = -1  # which caption of the chapter (0-based); ChapterScene.claim files it
    text: str = ""  # that caption's words, or the words of the label that makes the claim

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown claim {self.kind!r} (one of {', '.join(KINDS)})")
