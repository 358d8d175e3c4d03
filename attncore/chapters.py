"""The chapters of the video: one table that settings, scenes, the planner, the scheduler,
the companion page, the starter config and the cache all read. A chapter not in this table
does not exist anywhere: its row is the only place its title, what it shows and what it
costs are written (tests/attncore/test_chapter_rows.py).

A chapter is known by its slug (`input`, `linear`, …, `summary`); the story is one
ordered tuple, and the number on screen is a chapter's place in it, so the titles always
count up and a subset keeps its numbers.

The story (README, "The chapters"): each chapter is one step of
Attention(Q, K, V) = softmax(Q·Kᵀ/√d_k)·V, in the order the viewer meets it.
"""

from __future__ import annotations

from dataclasses import dataclass


def N_(message: str) -> str:  # noqa: N802 (gettext's name for a marker)
    """Mark a title for extraction (locale/babel.cfg reads this file): the core holds the
    message id only, and scenes.titles looks it up in the caption language's catalogue.
    The same marker as scenes.catalogue.N_, which the core may not import."""
    return message


@dataclass(frozen=True)
class Cost:
    """CPU-seconds its chapter took (the worker's, encoder threads included) in a cold
    `-q l` render of the default sentence, `--jobs 2`, on the development machine (2
    cores): the "CPU s" column of `benchmarks/bench_chapters.py -q l` (small) and of
    `benchmarks/bench_chapters.py -q l --weights pretrained` (large), measured with issue
    45's storyboard changes (the whole render: 37.1 and 36.2 CPU-seconds). CPU-seconds,
    not wall time: the machine was shared (load 14), which stretches wall time several
    fold and CPU time little. Only the order they give the scheduler matters
    (pipeline.run.schedule)."""

    small: float  # measured with a small model: the tiny one, d_model 4, one head
    large: float | None  # with a large real one: the pretrained encoder, 12 heads;
    #                      None: a large model never plays this chapter


@dataclass(frozen=True)
class Chapter:
    slug: str  # its identity: what --chapters, the cache and the scenes call it
    name: str  # short English name for progress lines and errors
    module: str  # the scene module that draws it
    scene: str  # the scene class in that module
    title: str  # its title's message id (scenes.titles shows it translated, numbered)
    shows: tuple[str, ...]  # the trace's quantities it draws (the companion page's SHOWS)
    cost: Cost  # what it takes to render, to order the renders (pipeline.run.schedule)
    one_head_title: str | None = None  # the title for a model of a single head, if other
    # the title for a model whose scores use Q and K turned by RoPE (Q_rot, K_rot), if other
    rotary_title: str | None = None
    # What its scene reads beyond the trace, for the chapter cache's key (pipeline.cache.keys),
    # declared here so that a key is made without importing the scene (or Manim), and
    # enforced by the scene: it can read no other setting and ask of no other chapter.
    reads_focus: bool = True  # the followed word changes what it draws
    reads_plan: tuple[str, ...] = ()  # chapters whose presence in the video it states

    @property
    def number(self) -> int:
        """Its place in the story, from 1: what the title shows."""
        return SLUGS.index(self.slug) + 1


SCENES = "attention_video.scenes.chapters"
CHAPTERS: tuple[Chapter, ...] = (  # the story, in playing order
    Chapter("input", "input", f"{SCENES}.input", "InputScene",
            N_("Input: words become rows of numbers"), ("X",), Cost(1.9, 1.8),
            reads_focus=False),  # the followed word is picked up in the next chapter
    Chapter("linear", "linear layers", f"{SCENES}.linear", "LinearScene",
            N_("Linear layers: X becomes Q, K and V"),
            ("X", "W_Q", "W_K", "W_V", "Q", "K", "V"), Cost(6.7, 5.9)),
    Chapter("factor", "factor matrix", f"{SCENES}.factor", "FactorScene",
            N_("The factor matrix Q·Kᵀ"), ("Q", "K", "scores"), Cost(2.4, 1.9),
            rotary_title=N_("The factor matrix Q_rot·K_rotᵀ")),
    Chapter("dot", "dot product", f"{SCENES}.dot", "DotProductScene",
            N_("One cell: a dot product"), ("Q", "K", "scores"), Cost(5.5, 6.0)),
    Chapter("softmax", "scale and softmax", f"{SCENES}.softmax", "SoftmaxScene",
            N_("Scale and softmax: scores become weights"), ("scores", "scaled", "weights"),
            Cost(2.2, 2.2)),
    Chapter("weighted_sum", "weighted sum", f"{SCENES}.weighted_sum", "WeightedSumScene",
            N_("Weighted sum: mixing the values"), ("weights", "V", "Z"), Cost(3.0, 3.7)),
    Chapter("qkv", "query, key, value", f"{SCENES}.qkv", "QKVScene",
            N_("Query, key, value: who gets attention?"), ("Q", "K", "V", "weights"),
            Cost(1.6, 2.3),
            reads_plan=("learning",)),  # "the next chapter replays its training"
    Chapter("learning", "learning", f"{SCENES}.learning", "LearningScene",
            N_("Learning: training aligns the vectors"), ("Q", "K", "scores", "weights"),
            Cost(10.7, None)),  # a real model has no training history to replay
    Chapter("heads", "heads", f"{SCENES}.heads", "HeadsScene",
            N_("Every head: patterns side by side, then joined"), ("weights", "Z"),
            Cost(1.3, 9.7), one_head_title=N_("One head: its Z row times W_O")),
    Chapter("summary", "summary", f"{SCENES}.summary", "SummaryScene",
            N_("Summary: the whole formula"),
            ("Q", "K", "V", "scores", "scaled", "weights", "Z"), Cost(1.9, 2.6),
            # each term is tied back to the chapter that computed it ("ch. 2: Q = X·W_Q")
            reads_plan=("linear", "factor", "softmax", "weighted_sum")),
)

# The settings every scene reads (the rest reach it through the trace).
SCENE_SETTINGS: tuple[str, ...] = ("theme", "language", "pace", "voice", "captions")
# The settings only a chapter that asks a question reads (attncore.questions: a question is
# asked as the chapter that reveals its answer opens); only those chapters' keys hold them.
QUESTION_SETTINGS: tuple[str, ...] = ("questions", "think_time")
# The settings only a narrated scene reads: --describe with a voice says each caption's
# description after it and holds the picture until it is said (scenes.base); silent, the
# video is the same with or without it, so only narrated clips' keys hold it.
DESCRIBE_SETTINGS: tuple[str, ...] = ("describe",)

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
