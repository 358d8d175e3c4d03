"""The chapters of the video: one table that settings, scenes, the planner, the starter
config and the cache all read. A chapter not in this table does not exist anywhere.

The story follows the article (DESIGN.md): each chapter is one step of
Attention(Q, K, V) = softmax(Q·Kᵀ/√d_k)·V, in the order the viewer meets it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Chapter:
    number: int  # what --chapters and the title show; stable once published
    name: str  # short English name for progress lines and errors
    module: str  # the scene module that draws it
    scene: str  # the scene class in that module
    title_en: str  # the on-screen title
    title_zh: str


# The order is the playing order; numbers stay stable, so chapter 10 (added later) plays
# before the summary.
CHAPTERS: tuple[Chapter, ...] = (
    Chapter(1, "input", "scenes.ch1_input", "InputScene",
            "Input: words become rows of numbers", "输入：词变成一行行数字"),
    Chapter(2, "linear layers", "scenes.ch2_linear", "LinearScene",
            "Linear layers: X becomes Q, K and V", "线性层：X 变成 Q、K、V"),
    Chapter(3, "factor matrix", "scenes.ch3_factor", "FactorScene",
            "The factor matrix Q·Kᵀ", "因子矩阵 Q·Kᵀ"),
    Chapter(4, "dot product", "scenes.ch4_dot", "DotProductScene",
            "One cell: a dot product", "一个格子：点积"),
    Chapter(5, "scale and softmax", "scenes.ch5_softmax", "SoftmaxScene",
            "Scale and softmax: scores become weights", "缩放与 softmax：分数变成权重"),
    Chapter(6, "weighted sum", "scenes.ch6_weighted_sum", "WeightedSumScene",
            "Weighted sum: mixing the values", "加权求和：把值混合起来"),
    Chapter(7, "query, key, value", "scenes.ch7_qkv", "QKVScene",
            "Query, key, value: who gets attention?", "查询、键、值：注意力给了谁？"),
    Chapter(8, "learning", "scenes.ch8_learning", "LearningScene",
            "Learning: training aligns the vectors", "学习：训练让向量对齐"),
    Chapter(10, "heads", "scenes.ch10_heads", "HeadsScene",
            "Every head: patterns side by side, then joined", "每个头：并排的模式，再拼接起来"),
    Chapter(9, "summary", "scenes.ch9_summary", "SummaryScene",
            "Summary: the whole formula", "总结：完整的公式"),
)

BY_NUMBER: dict[int, Chapter] = {c.number: c for c in CHAPTERS}
NUMBERS: tuple[int, ...] = tuple(c.number for c in CHAPTERS)
SOFTMAX_CHAPTER = 5  # dropped from the plan when softmax is switched off
LEARNING_CHAPTER = 8  # dropped when the weights have no training history (not the tiny model)


def chapter(number: int) -> Chapter:
    return BY_NUMBER[number]


def describe_numbers() -> str:
    """The chapter numbers as a user types them, in playing order: '1-8, 10, 9'."""
    runs: list[list[int]] = []
    for n in NUMBERS:
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    return ", ".join(f"{r[0]}-{r[-1]}" if len(r) > 2 else ", ".join(map(str, r)) for r in runs)
