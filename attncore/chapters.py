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
    title_en: str  # the on-screen title
    title_zh: str
    # What its scene reads beyond the trace, for the chapter cache's key (pipeline.cache.keys),
    # declared here so that a key is made without importing the scene (or Manim), and
    # enforced by the scene: it can read no other setting and ask of no other chapter.
    reads_focus: bool = True  # the followed word changes what it draws
    reads_plan: tuple[str, ...] = ()  # chapters whose presence in the video it states
    # The title when the model has a single head, if it is not the same (en, zh).
    one_head: tuple[str, str] | None = None

    @property
    def number(self) -> int:
        """Its place in the story, from 1: what the title shows."""
        return SLUGS.index(self.slug) + 1

    def title(self, language: str, heads: int) -> str:
        """The title on screen and on the storyboard: "9 · Every head: …", in `language`,
        for a model of `heads` heads."""
        en, zh = self.one_head if heads == 1 and self.one_head else (self.title_en, self.title_zh)
        return f"{self.number} · {zh if language == 'zh' else en}"


CHAPTERS: tuple[Chapter, ...] = (  # the story, in playing order
    Chapter("input", "input", "attention_video.scenes.chapters.input", "InputScene",
            "Input: words become rows of numbers", "输入：词变成一行行数字",
            reads_focus=False),  # the followed word is picked up in the next chapter
    Chapter("linear", "linear layers", "attention_video.scenes.chapters.linear", "LinearScene",
            "Linear layers: X becomes Q, K and V", "线性层：X 变成 Q、K、V"),
    Chapter("factor", "factor matrix", "attention_video.scenes.chapters.factor", "FactorScene",
            "The factor matrix Q·Kᵀ", "因子矩阵 Q·Kᵀ"),
    Chapter("dot", "dot product", "attention_video.scenes.chapters.dot", "DotProductScene",
            "One cell: a dot product", "一个格子：点积"),
    Chapter("softmax", "scale and softmax", "attention_video.scenes.chapters.softmax", "SoftmaxScene",
            "Scale and softmax: scores become weights", "缩放与 softmax：分数变成权重"),
    Chapter("weighted_sum", "weighted sum", "attention_video.scenes.chapters.weighted_sum", "WeightedSumScene",
            "Weighted sum: mixing the values", "加权求和：把值混合起来"),
    Chapter("qkv", "query, key, value", "attention_video.scenes.chapters.qkv", "QKVScene",
            "Query, key, value: who gets attention?", "查询、键、值：注意力给了谁？",
            reads_plan=("learning",)),  # "the next chapter replays its training"
    Chapter("learning", "learning", "attention_video.scenes.chapters.learning", "LearningScene",
            "Learning: training aligns the vectors", "学习：训练让向量对齐"),
    Chapter("heads", "heads", "attention_video.scenes.chapters.heads", "HeadsScene",
            "Every head: patterns side by side, then joined", "每个头：并排的模式，再拼接起来",
            one_head=("One head: its Z row times W_O", "单个头：Z 行乘以 W_O")),
    Chapter("summary", "summary", "attention_video.scenes.chapters.summary", "SummaryScene",
            "Summary: the whole formula", "总结：完整的公式",
            reads_plan=("linear", "factor", "softmax", "weighted_sum")),  # "ch. 2: Q = X·W_Q"
)

# The settings every scene reads (the rest reach it through the trace).
SCENE_SETTINGS: tuple[str, ...] = ("theme", "language", "pace", "voice")

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
