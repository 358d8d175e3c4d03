"""The chapters of the video: one table that settings, scenes, the planner, the starter
config and the cache all read. A chapter not in this table does not exist anywhere.

A chapter is known by its slug (`input`, `linear`, …, `summary`); the story is one
ordered tuple, and the number on screen is a chapter's place in it, so the titles always
count up and a subset keeps its numbers.

The story follows the article (DESIGN.md): each chapter is one step of
Attention(Q, K, V) = softmax(Q·Kᵀ/√d_k)·V, in the order the viewer meets it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Chapter:
    slug: str  # its identity: what --chapters, the cache and the scenes call it
    name: str  # short English name for progress lines and errors
    module: str  # the scene module that draws it
    scene: str  # the scene class in that module
    # What its scene reads beyond the trace, for the chapter cache's key (pipeline.cache.keys),
    # declared here so that a key is made without importing the scene (or Manim), and
    # enforced by the scene: it can read no other setting and ask of no other chapter.
    reads_focus: bool = True  # the followed word changes what it draws
    reads_plan: tuple[str, ...] = ()  # chapters whose presence in the video it states

    @property
    def number(self) -> int:
        """Its place in the story, from 1: what the title shows."""
        return SLUGS.index(self.slug) + 1


CHAPTERS: tuple[Chapter, ...] = (  # the story, in playing order
    Chapter("input", "input", "attention_video.scenes.chapters.input", "InputScene",
            reads_focus=False),  # the followed word is picked up in the next chapter
    Chapter("linear", "linear layers", "attention_video.scenes.chapters.linear", "LinearScene"),
    Chapter("factor", "factor matrix", "attention_video.scenes.chapters.factor", "FactorScene"),
    Chapter("dot", "dot product", "attention_video.scenes.chapters.dot", "DotProductScene"),
    Chapter("softmax", "scale and softmax", "attention_video.scenes.chapters.softmax", "SoftmaxScene"),
    Chapter("weighted_sum", "weighted sum", "attention_video.scenes.chapters.weighted_sum", "WeightedSumScene"),
    Chapter("qkv", "query, key, value", "attention_video.scenes.chapters.qkv", "QKVScene",
            reads_plan=("learning",)),  # "the next chapter replays its training"
    Chapter("learning", "learning", "attention_video.scenes.chapters.learning", "LearningScene"),
    Chapter("heads", "heads", "attention_video.scenes.chapters.heads", "HeadsScene"),
    Chapter("summary", "summary", "attention_video.scenes.chapters.summary", "SummaryScene",
            reads_plan=("linear", "factor", "softmax", "weighted_sum")),  # "ch. 2: Q = X·W_Q"
)

# The settings every scene reads (the rest reach it through the trace).
SCENE_SETTINGS: tuple[str, ...] = ("theme", "language", "pace", "voice", "captions")

SLUGS: tuple[str, ...] = tuple(c.slug for c in CHAPTERS)
BY_SLUG: dict[str, Chapter] = {c.slug: c for c in CHAPTERS}
SOFTMAX = "softmax"  # dropped from the plan when softmax is switched off
LEARNING = "learning"  # dropped when the weights have no training history (not the tiny model)


def chapter(slug: str) -> Chapter:
    return BY_SLUG[slug]


def number(slug: str) -> int:
    """The chapter's place in the story (1 for `input`): the number its title shows."""
    return SLUGS.index(slug) + 1


def by_number(n: int) -> str | None:
    """The slug of the chapter at place `n` of the story, or None."""
    return SLUGS[n - 1] if 1 <= n <= len(SLUGS) else None


def in_story_order(slugs) -> tuple[str, ...]:
    """The given chapters in playing order, each once."""
    chosen = set(slugs)
    return tuple(s for s in SLUGS if s in chosen)


def describe() -> str:
    """The chapters as a user may type them: '1-10, or by name: input, linear, …'."""
    return f"1-{len(SLUGS)}, or by name: {', '.join(SLUGS)}"
